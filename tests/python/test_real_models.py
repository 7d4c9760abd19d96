"""The real-exporter-style models of bench/real_models.py (the models of
bench/real_bench.py): each passes onnx's full check, has the traits of the
exporter it imitates, runs in onnxruntime, and singa's outputs match
onnxruntime's (float32 tolerances: rtol 1e-3, atol 1e-4; atol 1e-3 for the
LSTM models and the detector's pixel coordinates, bench/real_models.py's
SPECS), also at other widths and batches of the dynamic models and
with the streaming model's state carried from call to call."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

from singa import autograd, sonnx, tensor

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
sys.path.insert(0, BENCH)
import real_models as rm  # noqa: E402

ort = pytest.importorskip("onnxruntime")

# name -> (opset, op types the graph must contain, the inputs' symbolic dims)
TRAITS = {
    "paddle_textline_op9": (9, {"Clip", "Div", "GlobalAveragePool", "Shape", "Gather",
                                "Unsqueeze", "Concat", "Reshape", "BatchNormalization"},
                            {"batch", "width"}),
    "paddle_textline_op15": (15, {"Clip", "Div", "GlobalAveragePool", "Shape", "Gather",
                                  "Unsqueeze", "Concat", "Reshape", "BatchNormalization"},
                             {"batch", "width"}),
    "paddle_docori_op9": (9, {"Clip", "Div", "Shape", "Reshape"}, {"batch", "width"}),
    "paddle_docori_op15": (15, {"Clip", "Div", "Shape", "Reshape"}, {"batch", "width"}),
    "yolo_op11": (11, {"Sigmoid", "Mul", "Resize", "Split", "Concat", "Transpose", "Softmax",
                       "MaxPool", "Slice"}, set()),
    "yolo_op17": (17, {"Sigmoid", "Mul", "Resize", "Split", "Concat", "Transpose", "Softmax",
                       "MaxPool", "Slice"}, {"batch"}),
    "crnn_op12": (12, {"LSTM", "Reshape", "Transpose", "MatMul", "Softmax"}, {"width"}),
    "dbnet_op11": (11, {"ConvTranspose", "Concat", "Sigmoid", "Resize"},
                   {"batch", "height", "width"}),
    "stream_op13": (13, {"If", "LSTM"}, set()),
    "gemm_op11": (11, {"Gemm", "Relu"}, set()),
}


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    d = tmp_path_factory.mktemp("real_models")
    return {name: rm.write(name, str(d)) for name in rm.NAMES}


@pytest.fixture(autouse=True)
def _inference():
    autograd.training = False


def _session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _singa_run(rep, feeds):
    return [tensor.to_numpy(t) for t in rep.run(feeds)]


def _assert_match(name, got, want, what=""):
    spec = rm.SPECS[name]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"{name}{what} output {i}: {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g, w, rtol=spec.rtol, atol=spec.atol,
                                   err_msg=f"{name}{what} output {i}")


def test_every_model_has_traits():
    assert set(TRAITS) == set(rm.NAMES)


@pytest.mark.parametrize("name", rm.NAMES)
def test_model_passes_full_check_with_exporter_traits(name, paths):
    model = onnx.load(paths[name])
    onnx.checker.check_model(model, full_check=True)
    opset, ops, dims = TRAITS[name]
    assert model.opset_import[0].version == opset
    types = {n.op_type for n in model.graph.node}
    assert ops <= types, f"{name} lacks {ops - types}"
    symbolic = {d.dim_param for i in model.graph.input for d in i.type.tensor_type.shape.dim
                if d.dim_param}
    assert symbolic == dims


def test_paddle_style_spellings(paths):
    """Clip's bounds are attributes at opset 9 and inputs at 15; depthwise
    convolutions have one group per channel; the SE blocks' HardSigmoid is
    decomposed (no HardSigmoid or HardSwish op)."""
    for name, n_inputs in (("paddle_textline_op9", 1), ("paddle_textline_op15", 3)):
        model = onnx.load(paths[name])
        clips = [n for n in model.graph.node if n.op_type == "Clip"]
        assert clips and all(len(n.input) == n_inputs for n in clips)
        bounds = {"min", "max"} if n_inputs == 1 else set()
        assert {a.name for a in clips[0].attribute} == bounds
        types = {n.op_type for n in model.graph.node}
        assert not types & {"HardSigmoid", "HardSwish"}
        weights = {i.name: i.dims for i in model.graph.initializer}
        groups = [({a.name: a.i for a in n.attribute}["group"], weights[n.input[1]])
                  for n in model.graph.node if n.op_type == "Conv"]
        depthwise = [(g, w) for g, w in groups if g > 1]
        assert len(depthwise) == 10
        assert all(w[0] == g and w[1] == 1 for g, w in depthwise)


@pytest.mark.parametrize("name", rm.NAMES)
def test_singa_matches_onnxruntime(name, paths):
    feeds = rm.feeds(name)
    want = _session(paths[name]).run(None, feeds)
    assert all(np.isfinite(w).all() for w in want)
    _assert_match(name, _singa_run(sonnx.prepare(paths[name]), feeds), want)


def test_dynamic_widths_and_batches(paths):
    """New input shapes on one prepared model: the CRNN at two more widths,
    the text-direction classifier at batch 2 and width 112, the DB detector
    at 256x384."""
    cases = [("crnn_op12", [rm.feeds("crnn_op12", width=64), rm.feeds("crnn_op12", width=200)]),
             ("paddle_textline_op15", [rm.feeds("paddle_textline_op15", batch=2, width=112)]),
             ("dbnet_op11", [{"x": np.random.default_rng(0).standard_normal((1, 3, 256, 384),
                                                                            np.float32)}])]
    for name, feeds in cases:
        sess, rep = _session(paths[name]), sonnx.prepare(paths[name])
        for f in feeds:
            shape = next(iter(f.values())).shape
            _assert_match(name, _singa_run(rep, f), sess.run(None, f), f" at {shape}")


def test_streaming_state_and_both_branches(paths):
    """Five frames with the LSTM state fed back, alternating the If's 16 kHz
    and 8 kHz branches: singa's state and probability follow onnxruntime's."""
    name = "stream_op13"
    sess, rep = _session(paths[name]), sonnx.prepare(paths[name])
    ours, peer = rm.feeds(name), rm.feeds(name)
    for i in range(5):
        frame = rm.feeds(name, seed=i)["frame"]
        sr = np.array(16000 if i % 2 == 0 else 8000, np.int64)
        ours.update(frame=frame, sr=sr)
        peer.update(frame=frame, sr=sr)
        got = _singa_run(rep, ours)
        want = sess.run(None, peer)
        _assert_match(name, got, want, f" frame {i}")
        ours["h"], ours["c"] = got[1], got[2]
        peer["h"], peer["c"] = want[1], want[2]
    assert np.abs(peer["h"]).max() > 0.01  # the state did carry


def test_unknown_model_is_one_line_error():
    with pytest.raises(ValueError, match="unknown model 'resnet'"):
        rm.build("resnet")
    with pytest.raises(ValueError, match="unknown model 'resnet'"):
        rm.feeds("resnet")


def test_bench_sections_are_wired_into_run():
    """bench/run.py's --only real selects every real-model section (and
    --only infer none of them), each with its own table's columns."""
    import real_bench
    import run
    for title, fn, part in real_bench.SECTIONS:
        assert "real" in title.lower() and "infer" not in title.lower()
        assert run.COLUMNS[title] == real_bench.COLUMNS[title]


@pytest.mark.parametrize("runtime", ["singa", "onnxruntime"])
def test_fresh_process_child_reports(runtime):
    """The fresh-process measurement of the load, memory rows: load time,
    time to the first result and peak RSS growth, as one JSON line."""
    out = subprocess.run([sys.executable, os.path.join(BENCH, "real_bench.py"), "--child",
                          "fresh", runtime, "gemm_op11", "2"],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert 0 < got["load"] < got["first"]
    assert got["peak"] > 0
