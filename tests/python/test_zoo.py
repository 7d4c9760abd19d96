"""The ONNX model zoo through sonnx, against onnxruntime.

- Every architecture of the zoo table (examples/onnx/zoo_models.py, small
  configs, random weights) exported by torch at opset 11 and at the newest
  opset its exporter writes, run at batch 1 and 2 (the transformers also at
  another sequence length): outputs match onnxruntime's.
- The model-zoo graphs that onnx ships in onnx/backend/test/data/light, as
  shipped (opset 9) and converted to opset 11 by onnx's version converter:
  outputs match the shipped expected output (with onnx's tolerances for
  these cases) and onnxruntime's.
- Each examples/onnx script runs (small config, batch 2, --check).

A model that needs an op (or op version) singa does not register is an
expected failure naming it (strict: it must fail, with NotImplementedError,
until the op lands; then the mark lifts itself).
"""
import os
import runpy
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper, version_converter

from singa import _singa, sonnx, tensor

ZOO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "onnx")
sys.path.insert(0, ZOO_DIR)
import zoo_models as zm  # noqa: E402

# float32 kernels that sum in another order than onnxruntime's (oneDNN's
# blocked convolutions, GEMM tiling) differ by a few ulps of the outputs.
RTOL, ATOL = 1e-4, 1e-5
LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _unsupported(ops, opset):
    return sorted(op for op in set(ops) if _singa.find_op(op, opset) is None)


def _xfail_missing(ops, opset):
    missing = _unsupported(ops, opset)
    if not missing:
        return []
    return [pytest.mark.xfail(strict=True, raises=NotImplementedError,
                              reason=f"singa has no {', '.join(missing)} for opset {opset} yet")]


def _ort(path_or_model, feeds):
    src = path_or_model if isinstance(path_or_model, str) else path_or_model.SerializeToString()
    sess = ort.InferenceSession(src, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _assert_outputs(rep, feeds, want, what):
    got = rep.run(feeds)
    assert len(got) == len(want), what
    for g, w, info in zip(got, want, rep.outputs):
        g = tensor.to_numpy(g)
        assert g.shape == w.shape, f"{what}, output {info.name}: {g.shape} != {w.shape}"
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{what}, output {info.name}")


# ---- the zoo table -------------------------------------------------------------------


def _zoo_params():
    for name, spec in zm.ZOO.items():
        for opset in zm.OPSETS:
            yield pytest.param(name, opset, id=f"{name}-opset{opset}",
                               marks=_xfail_missing(spec.needs_ops, opset))


@pytest.mark.parametrize("name, opset", list(_zoo_params()))
def test_zoo_model_matches_onnxruntime(name, opset):
    spec = zm.ZOO[name]
    path = zm.export(name, opset)
    assert onnx.load(path, load_external_data=False).opset_import[0].version == opset
    rep = sonnx.prepare(path)
    assert [v.name for v in rep.inputs] == spec.input_names()
    assert rep.inputs[0].dims[0] < 0, "the batch axis is dynamic"
    runs = [(1, None), (2, None)]
    if spec.is_text:  # the sequence axis is dynamic too
        runs.append((2, spec.small["seq"] - 3))
    for batch, seq in runs:
        feeds = zm.sample_feeds(name, batch, seed=batch, seq=seq)
        _assert_outputs(rep, feeds, _ort(path, feeds),
                        f"{name} opset {opset} batch {batch} sequence {seq}")


# ---- onnx's light model-zoo graphs ------------------------------------------------------


def _light_cases():
    """(name, path, rtol, atol) of onnx's "real" model cases (onnx's own
    tolerances for them: rtol 1e-3 or 2e-3, atol 1e-7)."""
    from onnx.backend.test.case.model import collect_testcases
    root = os.path.dirname(os.path.dirname(onnx.__file__))
    return [(c.model_name, os.path.join(root, c.url), c.rtol, c.atol)
            for c in collect_testcases() if c.kind == "real" and c.url
            and c.url.startswith("onnx/backend/test/data/light/")]


LIGHT = _light_cases()
LIGHT_OPSET = 11


def _light_params():
    for name, path, rtol, atol in LIGHT:
        model = onnx.load(path)
        ops = [n.op_type for n in model.graph.node]
        shipped = model.opset_import[0].version
        yield pytest.param(name, None, id=f"{name}-opset{shipped}",
                           marks=_xfail_missing(ops, shipped))
        yield pytest.param(name, LIGHT_OPSET, id=f"{name}-converted-opset{LIGHT_OPSET}",
                           marks=_xfail_missing(ops, LIGHT_OPSET))


def test_light_models_are_found():
    assert len(LIGHT) >= 9 and all(os.path.exists(c[1]) for c in LIGHT)


@pytest.mark.parametrize("name, convert_to", list(_light_params()))
def test_light_model_matches_expected_output_and_onnxruntime(name, convert_to):
    (_, path, rtol, atol), = [c for c in LIGHT if c[0] == name]
    model = onnx.load(path)
    if convert_to is not None:
        model = version_converter.convert_version(model, convert_to)
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for x in model.graph.input:
        if x.name in inits:
            continue
        # onnx's runner feeds these graphs arange(n) / n in the declared shape
        shape = [d.dim_value or 1 for d in x.type.tensor_type.shape.dim]
        n = int(np.prod(shape))
        feeds[x.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    rep = sonnx.prepare(model)
    logits = _softmax_logits(model)
    if logits is not None:
        want = _ort(_with_output(model, logits), feeds)[0]
        scale = float(np.abs(want).max())
        if scale * 2 ** -20 > rtol:
            # These graphs' constant weights (no normalization) grow the
            # logits to ~1e10, all equal. A float32 sum in another order moves
            # a logit by a few ulps, thousands here, and the softmax then
            # gives that class 0: its probabilities are decided by the
            # kernels' summation order, not by the model. The logits are
            # compared instead, relative to their scale.
            got = tensor.to_numpy(rep.run(feeds, aux_output=[logits])[-1])
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=RTOL * scale,
                                       err_msg=f"{name}: onnxruntime, logits {logits}")
            return
    (got,) = [tensor.to_numpy(t) for t in rep.run(feeds)]
    want = numpy_helper.to_array(onnx.load_tensor(path[:-len(".onnx")] + "_output_0.pb"))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{name}: shipped output")
    _assert_outputs(rep, feeds, _ort(model, feeds), f"{name}: onnxruntime")


def _softmax_logits(model):
    """The input of the graph's last node when that node is a Softmax giving
    the only output, else None."""
    last = model.graph.node[-1]
    outputs = [o.name for o in model.graph.output]
    return last.input[0] if last.op_type == "Softmax" and outputs == [last.output[0]] else None


def _with_output(model, name):
    """A copy of `model` whose only output is value `name`."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    m.graph.output.extend([onnx.helper.make_empty_tensor_value_info(name)])
    return m


# ---- examples/onnx ----------------------------------------------------------------------

EXPECT = {"classify": "top-5 classes", "detect": "best boxes", "embed": "cosine with the mirrored",
          "emotion": "emotions:", "qa": "answer span", "sentiment": "sentiment:",
          "lm": "next token after"}


def _run_example(script, argv, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [script] + argv)
    with pytest.raises(SystemExit) as done:
        runpy.run_path(script, run_name="__main__")
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    return out


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=_xfail_missing(s.needs_ops, zm.NEWEST_OPSET)) for n, s in zm.ZOO.items()])
def test_example_runs_and_matches_onnxruntime(name, monkeypatch, capsys):
    script = os.path.join(ZOO_DIR, f"{name}.py")
    out = _run_example(script, ["--size", "small", "--batch", "2", "--check"], monkeypatch, capsys)
    assert EXPECT[zm.ZOO[name].kind] in out, out
    assert "matches onnxruntime" in out and "DIFFERS" not in out, out


def test_example_takes_a_model_file(tmp_path, monkeypatch, capsys):
    path = zm.export("resnet18", 11, path=str(tmp_path / "resnet18.onnx"))
    out = _run_example(os.path.join(ZOO_DIR, "resnet18.py"), ["--model", path, "--check"],
                       monkeypatch, capsys)
    assert path in out and "(opset 11)" in out and "matches onnxruntime" in out, out
