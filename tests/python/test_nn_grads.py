"""Gradients of Conv, the pools, BatchNormalization and LayerNormalization in
float32 against torch.autograd, on shapes like a conv net's. These run the
fast (oneDNN) backward kernels, which the float64 gradient check
(test_grads.py) never reaches. torch is an oracle only."""
import numpy as np
import pytest

from singa import _singa
from op_harness import RNG_SEED, to_numpy, to_singa

torch = pytest.importorskip("torch")
F = torch.nn.functional

# NOTE: float32 gradients are sums of up to N*H*W = 392 products (dW) or of
# C*k*k terms (dX) taken in different orders by oneDNN and torch; 1e-4
# relative to the largest magnitude covers their round-off.
RTOL = 1e-4


def _check(ours, theirs, what):
    theirs = theirs.detach().numpy()
    assert ours is not None, f"{what}: no gradient"
    scale = max(float(np.abs(theirs).max()), 1e-6)
    np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=RTOL * scale, err_msg=what)


def _singa_grads(op, arrays, attrs, n_out=-1, opset=_singa.LATEST_OPSET, dy=None, combine=None):
    """Runs op with every input marked stores_grad, back-propagates dy through
    output 0 (or through `combine(outputs)`), returns (outputs, grads)."""
    tensors = [to_singa(a) if a is not None else None for a in arrays]
    for t in tensors:
        if t is not None:
            t.stores_grad = True
    outs = _singa.call_op(op, tensors, attrs, opset, n_out)
    y = combine(outs) if combine else outs[0]
    grads = {}
    for p, g in _singa.backward(y, to_singa(dy) if dy is not None else None):
        for i, t in enumerate(tensors):
            if t is not None and t.same_tensor(p):
                grads[i] = to_numpy(g)
    return outs, [grads.get(i) for i in range(len(arrays))]


def _leaf(a):
    return torch.tensor(a, requires_grad=True)


def _rand(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


# (x shape, w shape, bias, attrs) with symmetric pads (torch's padding).
CONV = [
    ((2, 16, 14, 14), (32, 16, 3, 3), True, {"pads": [1, 1, 1, 1]}),
    ((2, 16, 14, 14), (32, 16, 3, 3), False, {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((2, 16, 14, 14), (16, 1, 3, 3), True, {"group": 16, "pads": [1, 1, 1, 1]}),
    ((2, 16, 14, 14), (16, 1, 3, 3), False,
     {"group": 16, "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    ((2, 16, 14, 14), (32, 16, 1, 1), True, {}),
    ((2, 16, 14, 14), (32, 16, 1, 1), False, {"strides": [2, 2]}),
    ((2, 16, 14, 14), (32, 4, 3, 3), True, {"group": 4, "pads": [2, 2, 2, 2],
                                            "dilations": [2, 2]}),
    ((2, 3, 32, 32), (16, 3, 7, 7), False, {"pads": [3, 3, 3, 3], "strides": [2, 2]}),
    ((2, 8, 20), (16, 8, 5), True, {"pads": [2, 2], "strides": [2]}),
    ((1, 8, 6, 8, 8), (8, 8, 3, 3, 3), True, {"pads": [1, 1, 1, 1, 1, 1]}),
]


@pytest.mark.parametrize("xs,ws,bias,attrs", CONV, ids=lambda v: str(v).replace(" ", ""))
def test_conv(xs, ws, bias, attrs):
    rng = np.random.default_rng(RNG_SEED)
    x, w = _rand(rng, *xs), _rand(rng, *ws)
    b = _rand(rng, ws[0]) if bias else None
    nd = len(xs) - 2
    conv = [F.conv1d, F.conv2d, F.conv3d][nd - 1]
    tx, tw = _leaf(x), _leaf(w)
    tb = _leaf(b) if bias else None
    ty = conv(tx, tw, tb, stride=attrs.get("strides", [1] * nd),
              padding=attrs.get("pads", [0] * nd)[:nd],
              dilation=attrs.get("dilations", [1] * nd), groups=attrs.get("group", 1))
    dy = _rand(rng, *ty.shape)
    ty.backward(torch.from_numpy(dy))
    outs, grads = _singa_grads("Conv", [x, w, b], attrs, dy=dy)
    np.testing.assert_allclose(to_numpy(outs[0]), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    _check(grads[0], tx.grad, "dX")
    _check(grads[1], tw.grad, "dW")
    if bias:
        _check(grads[2], tb.grad, "dB")


def test_conv_asymmetric_pads():
    rng = np.random.default_rng(RNG_SEED)
    x, w = _rand(rng, 2, 16, 13, 14), _rand(rng, 16, 1, 3, 3)
    tx, tw = _leaf(x), _leaf(w)
    # ONNX pads are [top, left, bottom, right]; F.pad takes (left, right, top, bottom).
    ty = F.conv2d(F.pad(tx, (0, 1, 1, 0)), tw, stride=2, groups=16)
    dy = _rand(rng, *ty.shape)
    ty.backward(torch.from_numpy(dy))
    _, grads = _singa_grads("Conv", [x, w], {"group": 16, "pads": [1, 0, 0, 1],
                                              "strides": [2, 2]}, dy=dy)
    _check(grads[0], tx.grad, "dX")
    _check(grads[1], tw.grad, "dW")


POOL = [
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                     "count_include_pad": 1}),
    ("AveragePool", {"kernel_shape": [2, 2], "strides": [2, 2]}),
]


@pytest.mark.parametrize("op,attrs", POOL, ids=lambda v: str(v).replace(" ", ""))
def test_pool(op, attrs):
    rng = np.random.default_rng(RNG_SEED)
    x = _rand(rng, 2, 16, 15, 15)
    tx = _leaf(x)
    k, s = attrs["kernel_shape"], attrs["strides"]
    p = attrs.get("pads", [0] * 4)[:2]
    if op == "MaxPool":
        ty = F.max_pool2d(tx, k, s, p, ceil_mode=bool(attrs.get("ceil_mode", 0)))
    else:
        ty = F.avg_pool2d(tx, k, s, p, count_include_pad=bool(attrs.get("count_include_pad", 0)))
    dy = _rand(rng, *ty.shape)
    ty.backward(torch.from_numpy(dy))
    _, grads = _singa_grads(op, [x], attrs, dy=dy)
    _check(grads[0], tx.grad, "dX")


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool(op):
    rng = np.random.default_rng(RNG_SEED)
    x = _rand(rng, 2, 16, 7, 7)
    tx = _leaf(x)
    ty = tx.mean((2, 3), keepdim=True) if op == "GlobalAveragePool" else tx.amax((2, 3), True)
    dy = _rand(rng, *ty.shape)
    ty.backward(torch.from_numpy(dy))
    _, grads = _singa_grads(op, [x], {}, dy=dy)
    _check(grads[0], tx.grad, "dX")


def _bn_inputs(rng, c):
    return [_rand(rng, c, low=0.5, high=1.5), _rand(rng, c), _rand(rng, c),
            _rand(rng, c, low=0.5, high=2.0)]


@pytest.mark.parametrize("shape", [(2, 16, 14, 14), (8, 32, 7, 7), (16, 24)])
@pytest.mark.parametrize("mode", ["train14", "train9", "infer"])
def test_batch_norm(shape, mode):
    rng = np.random.default_rng(RNG_SEED)
    x = _rand(rng, *shape, low=-2, high=3)
    scale, b, mean, var = _bn_inputs(rng, shape[1])
    eps = 1e-5
    tx, ts, tb, tm, tv = map(_leaf, (x, scale, b, mean, var))
    bshape = (1, -1) + (1,) * (len(shape) - 2)
    if mode == "infer":
        ty = (tx - tm.view(bshape)) / torch.sqrt(tv.view(bshape) + eps) * ts.view(bshape) + \
            tb.view(bshape)
    else:
        ty = F.batch_norm(tx, tm.detach().clone(), tv.detach().clone(), ts, tb, training=True,
                          eps=eps)
    dy = _rand(rng, *shape)
    ty.backward(torch.from_numpy(dy))
    if mode == "train14":
        attrs, n_out, opset = {"training_mode": 1, "epsilon": eps}, 3, 15
    elif mode == "train9":
        attrs, n_out, opset = {"epsilon": eps}, 5, 9
    else:
        attrs, n_out, opset = {"epsilon": eps}, 1, 15
    outs, grads = _singa_grads("BatchNormalization", [x, scale, b, mean, var], attrs, n_out,
                               opset, dy=dy)
    np.testing.assert_allclose(to_numpy(outs[0]), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    _check(grads[0], tx.grad, "dX")
    _check(grads[1], ts.grad, "dscale")
    _check(grads[2], tb.grad, "dB")
    if mode == "infer":
        _check(grads[3], tm.grad, "dmean")
        _check(grads[4], tv.grad, "dvar")
    else:  # the running statistics have no gradient
        assert not grads[3].any() and not grads[4].any()


@pytest.mark.parametrize("xs,axis,ps", [((4, 10, 64), -1, (64,)), ((2, 16, 7, 7), 1, (16, 7, 7)),
                                        ((3, 5, 8), 1, (1, 8))])
def test_layer_norm(xs, axis, ps):
    rng = np.random.default_rng(RNG_SEED)
    x, s, b = _rand(rng, *xs, low=-2, high=3), _rand(rng, *ps), _rand(rng, *ps)
    eps = 1e-5
    tx, ts, tb = map(_leaf, (x, s, b))
    dims = tuple(range(axis % len(xs), len(xs)))
    tm = tx.mean(dims, keepdim=True)
    ti = 1 / torch.sqrt(tx.var(dims, unbiased=False, keepdim=True) + eps)
    ty = (tx - tm) * ti * ts + tb
    dy, dm, di = _rand(rng, *ty.shape), _rand(rng, *tm.shape), _rand(rng, *ti.shape)
    ((ty * torch.from_numpy(dy)).sum() + (tm * torch.from_numpy(dm)).sum() +
     (ti * torch.from_numpy(di)).sum()).backward()

    def loss(outs):
        terms = [_singa.call_op("Mul", [o, to_singa(c)])[0] for o, c in zip(outs, (dy, dm, di))]
        sums = [_singa.call_op("ReduceSum", [t], {"keepdims": 0})[0] for t in terms]
        return _singa.call_op("Sum", sums)[0]

    _, grads = _singa_grads("LayerNormalization", [x, s, b], {"axis": axis, "epsilon": eps}, 3,
                            combine=loss)
    _check(grads[0], tx.grad, "dX")
    _check(grads[1], ts.grad, "dScale")
    _check(grads[2], tb.grad, "dB")
