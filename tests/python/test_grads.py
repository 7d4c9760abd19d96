"""Gradient check for every differentiable row of the op table: the
backward of each op (registered in its op file) against central finite
differences of the forward, in float64."""
import numpy as np
import pytest

from singa import _singa
from op_harness import RNG_SEED, T, make_array, singa_attrs, to_numpy, to_singa
from op_cases import CASES
from test_ops import NEWEST, _schema, _swept_dtypes

MAX_ELEMENTS = 300  # finite differences cost two forward runs per element
EPS = 1e-6
# NOTE: central differences in float64 have error O(eps^2 * f''') + O(1e-16 / eps);
# 1e-5 relative covers both for the smooth functions in the table.
RTOL, ATOL = 1e-5, 1e-7


def _grad_cases():
    for case in CASES:
        schema = _schema(case)
        if not case.grad or not schema.has_backward or "float64" not in _swept_dtypes(case):
            continue
        t_inputs = [x for x in case.inputs if isinstance(x, T)]
        sizes = [int(np.prod(x.shape)) for x in t_inputs]
        if not t_inputs or sum(sizes) > MAX_ELEMENTS or 0 in sizes:
            continue
        yield pytest.param(case, id=case.name("float64"))


def _forward(case, arrays, requires):
    tensors = []
    for a, req in zip(arrays, requires):
        t = to_singa(a)
        if t is not None and req:
            t.stores_grad = True
        tensors.append(t)
    n_out = case.outputs if case.outputs is not None else -1
    outs = _singa.call_op(case.op, tensors, singa_attrs(case.attrs), case.opset or NEWEST, n_out,
                          domain=case.domain)
    return tensors, outs[0]


@pytest.mark.parametrize("case", list(_grad_cases()))
def test_gradient(case):
    rng = np.random.default_rng(RNG_SEED)
    arrays = [make_array(spec, "float64", rng) for spec in case.inputs]
    requires = [isinstance(s, T) for s in case.inputs]
    tensors, y = _forward(case, arrays, requires)
    w = rng.standard_normal(y.shape)
    grads = {}
    for p, g in _singa.backward(y, to_singa(w)):
        for i, t in enumerate(tensors):
            if t is not None and t.same_tensor(p):
                grads[i] = to_numpy(g)

    def f(arrs):
        with_grad = _singa.grad_enabled()
        _singa.set_grad_enabled(False)
        try:
            _, out = _forward(case, arrs, [False] * len(arrs))
        finally:
            _singa.set_grad_enabled(with_grad)
        return float(np.sum(to_numpy(out) * w))

    for i, (a, req) in enumerate(zip(arrays, requires)):
        if not req:
            continue
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() if x is not None else None for x in arrays]
            minus = [x.copy() if x is not None else None for x in arrays]
            plus[i][idx] += EPS
            minus[i][idx] -= EPS
            numeric[idx] = (f(plus) - f(minus)) / (2 * EPS)
        assert i in grads, f"{case.op}: no gradient reported for input {i}"
        np.testing.assert_allclose(grads[i], numeric, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{case.name('float64')} d/d input {i}")


def test_backward_accumulates_over_reuse():
    x = to_singa(np.array([1.0, 2.0, 3.0]))
    x.stores_grad = True
    y = _singa.call_op("Mul", [x, x])[0]          # x^2
    z = _singa.call_op("Add", [y, x])[0]          # x^2 + x
    (p, g), = _singa.backward(z)
    assert p.same_tensor(x)
    np.testing.assert_allclose(to_numpy(g), 2 * np.array([1.0, 2.0, 3.0]) + 1)


def test_no_grad_records_structure_only():
    x = to_singa(np.ones(3))
    x.stores_grad = True
    _singa.set_grad_enabled(False)
    try:
        y = _singa.call_op("Mul", [x, x])[0]
    finally:
        _singa.set_grad_enabled(True)
    # The record the export reads, but nothing for backward.
    assert y.creator_op == "Mul" and not y.requires_grad
    assert _singa.backward(y) == []
    _singa.set_recording(False)
    try:
        assert _singa.call_op("Mul", [x, x])[0].creator_op is None
    finally:
        _singa.set_recording(True)
    assert _singa.call_op("Mul", [x, x])[0].requires_grad
