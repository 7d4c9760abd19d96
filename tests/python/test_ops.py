"""Drives the op table (op_cases.py): every row, for every dtype it sweeps, is
checked against onnx's reference evaluator, against the op's plain-loop
reference kernel where it has one, and with non-contiguous inputs."""
import numpy as np
import onnx
import pytest

from singa import _singa
from op_harness import (RNG_SEED, Case, T, assert_close, default_tolerance, make_array,
                        noncontiguous, run_reference, singa_attrs, to_numpy, to_singa)
from op_cases import CASES, ERROR_CASES, REQUIRED_OPS

NEWEST = min(onnx.defs.onnx_opset_version(), _singa.LATEST_OPSET)
UPCAST = {"float16", "bfloat16"}  # oracle computed in float32 on the rounded inputs


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
    for case in CASES:
        for dt in _swept_dtypes(case):
            yield pytest.param(case, dt, id=case.name(dt))


def _run(case, dtype, tensors, reference=False):
    schema = _schema(case)
    n_out = case.outputs if case.outputs is not None else -1
    outs = _singa.call_op(case.op, tensors, singa_attrs(case.attrs), case.opset or NEWEST, n_out,
                          reference, case.domain)
    return [to_numpy(o) for o in outs]


@pytest.mark.parametrize("case,dtype", list(_params()))
def test_op(case: Case, dtype: str):
    rng = np.random.default_rng(RNG_SEED)
    arrays = [make_array(spec, dtype, rng) for spec in case.inputs]
    tensors = [to_singa(a) for a in arrays]
    ours = _run(case, dtype, tensors)

    rtol, atol = default_tolerance(dtype)
    if case.rtol is not None:
        assert case.why, f"{case.op}: a tolerance override needs its reason in `why`"
        rtol, atol = case.rtol, case.atol if case.atol is not None else atol
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
    tensors = [to_singa(make_array(spec, case.dtype, rng)) for spec in case.inputs]
    with pytest.raises(case.error, match=case.match) as info:
        _singa.call_op(case.op, tensors, singa_attrs(case.attrs), case.opset or NEWEST,
                       domain=case.domain)
    assert case.op in str(info.value), f"the message must name the op: {info.value}"


def test_every_registered_op_has_cases():
    covered = {c.op for c in CASES}
    # Internal ops (domain ai.singa, e.g. ConvGradData) have no ONNX oracle:
    # test_grads.py checks them through the backward of the ops that use them.
    onnx_ops = {s.name for s in _singa.op_schemas() if s.domain != "ai.singa"}
    missing = sorted(onnx_ops - covered)
    assert not missing, f"ops without rows in op_cases.py: {missing}"


def test_required_ops_are_registered():
    registered = {s.name for s in _singa.op_schemas()}
    missing = [op for op in REQUIRED_OPS if op not in registered]
    assert not missing, f"required ops not registered: {missing}"
