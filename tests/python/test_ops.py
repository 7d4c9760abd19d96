"""Drives the op table (op_cases.py): every row, for every dtype it sweeps, is
checked against onnx's reference evaluator, against the op's plain-loop
reference kernel where it has one, and with non-contiguous inputs. Rows
that run on values (sequences, optionals, graph attributes: MODEL_CASES) run
as a one-node model through sonnx, twice (the plan's build run and its
replay), against the reference evaluator on the same model or the row's
oracle."""
import numpy as np
import pytest

from singa import _singa
from op_harness import (NEWEST, RNG_SEED, Case, T, assert_close, assert_values_close,
                        build_model, default_tolerance, is_model_row, make_array,
                        noncontiguous, run_reference, run_reference_model, run_singa_model,
                        singa_attrs, to_numpy, to_singa)
from op_cases import CASES, ERROR_CASES, MODEL_CASES, REQUIRED_OPS

UPCAST = {"float16", "bfloat16"}  # oracle computed in float32 on the rounded inputs
# ImageDecoder rows that a build without the codec libraries (SINGA_IMAGE=OFF)
# still decodes: those of BMP and PNM.
WITHOUT_CODECS = ("bmp", "ppm")


def _schema(case):
    s = _singa.find_op(case.op, case.opset or NEWEST, case.domain)
    assert s is not None, f"{case.op} is not registered for opset {case.opset or NEWEST}"
    return s


def _swept_dtypes(case):
    if case.dtypes is not None:
        return list(case.dtypes)
    if not any(isinstance(x, T) for x in case.inputs):
        return ["float32"]
    first_t = next(i for i, x in enumerate(case.inputs) if isinstance(x, T))
    for allowed, inputs in _schema(case).dtype_rules:
        if first_t in inputs or (inputs and first_t >= inputs[-1] and
                                 _schema(case).inputs[-1].endswith("...")):
            return [_singa.dtype_name(d) for d in allowed]
    return ["float32"]


def _params():
    for case in CASES + MODEL_CASES:
        for dt in _swept_dtypes(case):
            yield pytest.param(case, dt, id=case.name(dt))


def _run(case, dtype, tensors, reference=False):
    schema = _schema(case)
    n_out = case.outputs if case.outputs is not None else -1
    outs = _singa.call_op(case.op, tensors, singa_attrs(case.attrs), case.opset or NEWEST, n_out,
                          reference, case.domain)
    return [to_numpy(o) for o in outs]


def _tolerance(case, dtype):
    rtol, atol = default_tolerance(dtype)
    if case.rtol is not None:
        assert case.why, f"{case.op}: a tolerance override needs its reason in `why`"
        rtol, atol = case.rtol, case.atol if case.atol is not None else atol
    return rtol, atol


def _test_model_row(case: Case, dtype: str):
    """A value row: the op as one node of a model, through sonnx, against
    the reference evaluator on the same model (or the row's oracle)."""
    row = build_model(case, dtype, np.random.default_rng(RNG_SEED))
    if case.oracle is not None:
        want = case.oracle(row.inputs, row.attrs, row.feeds)
    else:
        want = run_reference_model(row)
    assert len(want) == row.num_outputs, f"{case.name(dtype)}: the oracle gave {len(want)} outputs"
    rtol, atol = _tolerance(case, dtype)
    for run, ours in enumerate(run_singa_model(row)):
        assert len(ours) == row.num_outputs, \
            f"{case.name(dtype)}: {len(ours)} outputs, expected {row.num_outputs}"
        for i, (got, exp) in enumerate(zip(ours, want)):
            assert_values_close(got, exp, rtol, atol, f"{case.name(dtype)} output {i} run {run}")


@pytest.mark.parametrize("case,dtype", list(_params()))
def test_op(case: Case, dtype: str):
    if (case.op == "ImageDecoder" and not _singa.build_info()["image_codecs"]
            and not case.id.startswith(WITHOUT_CODECS)):
        pytest.skip("singa was built without the image codecs (SINGA_IMAGE=OFF)")
    if is_model_row(case):
        _test_model_row(case, dtype)
        return
    rng = np.random.default_rng(RNG_SEED)
    arrays = [make_array(spec, dtype, rng) for spec in case.inputs]
    tensors = [to_singa(a) for a in arrays]
    ours = _run(case, dtype, tensors)

    rtol, atol = _tolerance(case, dtype)
    oracle_in = [a.astype(np.float32) if a is not None and dtype in UPCAST and isinstance(s, T)
                 else a for a, s in zip(arrays, case.inputs)]
    want = run_reference(case.op, oracle_in, case.attrs, case.opset or NEWEST, len(ours),
                         case.domain)
    for i, (got, exp) in enumerate(zip(ours, want)):
        what = f"{case.name(dtype)} output {i}"
        if dtype in UPCAST and exp.dtype == np.float32:
            exp = exp.astype(got.dtype)
        if exp.dtype.kind == "U":  # the oracle gives numpy str arrays; ours come back as object
            exp = exp.astype(object)
        assert got.dtype == exp.dtype, f"{what}: dtype {got.dtype} != expected {exp.dtype}"
        assert_close(got, exp, rtol, atol, what)

    if _schema(case).has_reference:
        ref = _run(case, dtype, tensors, reference=True)
        for i, (got, exp) in enumerate(zip(ours, ref)):
            assert_close(got, exp, rtol, atol, f"{case.name(dtype)} output {i} vs reference kernel")

    if case.noncontig and any(t is not None and t.ndim() >= 2 for t in tensors):
        strided = _run(case, dtype, [noncontiguous(t) if isinstance(s, T) else t
                                     for t, s in zip(tensors, case.inputs)])
        for i, (got, exp) in enumerate(zip(strided, ours)):
            assert_close(got, exp, rtol, atol, f"{case.name(dtype)} output {i} non-contiguous")


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: f"{c.op}-{c.match[:30]}")
def test_op_error(case):
    rng = np.random.default_rng(RNG_SEED)
    if is_model_row(case):
        # Through a model: the message names the node ('case') and the op.
        row = build_model(case, case.dtype, rng)
        with pytest.raises(case.error, match=case.match) as info:
            run_singa_model(row, runs=1)
        assert "'case'" in str(info.value), f"the message must name the node: {info.value}"
        assert case.op in str(info.value), f"the message must name the op: {info.value}"
        return
    tensors = [to_singa(make_array(spec, case.dtype, rng)) for spec in case.inputs]
    with pytest.raises(case.error, match=case.match) as info:
        _singa.call_op(case.op, tensors, singa_attrs(case.attrs), case.opset or NEWEST,
                       domain=case.domain)
    assert case.op in str(info.value), f"the message must name the op: {info.value}"


def test_every_registered_op_has_cases():
    covered = {c.op for c in CASES + MODEL_CASES}
    # Internal ops (domain ai.singa, e.g. ConvGradData) have no ONNX oracle:
    # test_grads.py checks them through the backward of the ops that use them.
    onnx_ops = {s.name for s in _singa.op_schemas() if s.domain != "ai.singa"}
    missing = sorted(onnx_ops - covered)
    assert not missing, f"ops without rows in op_cases.py: {missing}"


def test_required_ops_are_registered():
    registered = {s.name for s in _singa.op_schemas()}
    missing = [op for op in REQUIRED_OPS if op not in registered]
    assert not missing, f"required ops not registered: {missing}"
