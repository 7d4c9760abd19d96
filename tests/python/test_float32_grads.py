"""Gradient checks of ops whose types exclude float64 (test_grads.py checks
float64 only), or whose float64 oracle rows cannot run: float32 central
differences of sum over outputs of w * output, through every output."""
import numpy as np
import pytest

from singa import _singa
from op_harness import RNG_SEED, to_numpy, to_singa

# (op, input shapes, attrs, opset, outputs)
ROWS = [
    ("CausalConvWithState", [(2, 3, 5), (3, 1, 3), (3,), (2, 3, 2)], {"activation": "silu"},
     27, 2),
    ("CausalConvWithState", [(2, 3, 2), (3, 1, 4)], {}, 27, 1),
    ("RotaryEmbedding", [(1, 2, 3, 4), (1, 3, 2), (1, 3, 2)], {}, 23, 1),
    ("RotaryEmbedding", [(1, 3, 8), (1, 3, 2), (1, 3, 2)],
     {"num_heads": 2, "interleaved": 1}, 23, 1),
    ("MeanVarianceNormalization", [(2, 3, 2, 2)], {}, 13, 1),
    # LinearAttention: 2 heads of d_k 2, d_v 3 over 3 tokens.
    ("LinearAttention", [(2, 3, 4), (2, 3, 4), (2, 3, 6), (2, 2, 2, 3), (2, 3, 4), (2, 3, 2)],
     {"q_num_heads": 2, "kv_num_heads": 2}, 27, 2),
    ("LinearAttention", [(1, 3, 8), (1, 3, 4), (1, 3, 6), (1, 2, 2, 3), (1, 3, 2), (1, 3, 1)],
     {"q_num_heads": 4, "kv_num_heads": 2}, 27, 2),
    ("LinearAttention", [(1, 3, 4), (1, 3, 4), (1, 3, 6)],
     {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "linear"}, 27, 1),
    ("LinearAttention", [(1, 3, 4), (1, 3, 4), (1, 3, 6), (1, 2, 2, 3), (1, 3, 4)],
     {"q_num_heads": 2, "kv_num_heads": 2, "update_rule": "gated", "scale": 0.5}, 27, 2),
]
# Only X of RotaryEmbedding gets a gradient (the caches are tables).
NO_GRAD = {"RotaryEmbedding": {1, 2}}
# float32 differences with step 1e-2 on values O(1): error O(step^2 * f''')
# plus rounding O(1e-7 / step).
STEP, RTOL, ATOL = 1e-2, 2e-3, 2e-4


def _run(op, arrays, attrs, opset, outputs, grad):
    _singa.set_grad_enabled(grad)
    try:
        tensors = [to_singa(a.astype(np.float32)) for a in arrays]
        for t in tensors:
            t.stores_grad = grad
        return tensors, _singa.call_op(op, tensors, attrs, opset, outputs)
    finally:
        _singa.set_grad_enabled(False)


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r[0]}-{len(r[1])}in-{r[4]}out")
def test_float32_gradient(row):
    op, shapes, attrs, opset, outputs = row
    rng = np.random.default_rng(RNG_SEED)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    tensors, ys = _run(op, arrays, attrs, opset, outputs, True)
    ws = [rng.standard_normal(y.shape) for y in ys]
    _singa.set_grad_enabled(True)
    try:
        total = None
        for y, w in zip(ys, ws):
            prod = _singa.call_op("Mul", [y, to_singa(w.astype(np.float32))])[0]
            term = _singa.call_op("ReduceSum", [prod], {"keepdims": 0})[0]
            total = term if total is None else _singa.call_op("Add", [total, term])[0]
        grads = {}
        for p, g in _singa.backward(total):
            for i, t in enumerate(tensors):
                if t.same_tensor(p):
                    grads[i] = to_numpy(g)
    finally:
        _singa.set_grad_enabled(False)

    def loss(arrs):
        _, outs = _run(op, arrs, attrs, opset, outputs, False)
        return sum(float(np.sum(to_numpy(y).astype(np.float64) * w)) for y, w in zip(outs, ws))

    for i, a in enumerate(arrays):
        if i in NO_GRAD.get(op, ()):
            continue
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += STEP
            minus[i][idx] -= STEP
            numeric[idx] = (loss(plus) - loss(minus)) / (2 * STEP)
        assert i in grads, f"{op}: no gradient for input {i}"
        np.testing.assert_allclose(grads[i], numeric, rtol=RTOL, atol=ATOL,
                                   err_msg=f"{op} d/d input {i}")
