"""Layers: SINGA's construction and naming rules, and outputs and gradients
against torch.nn/torch.autograd with the same weights (torch is an oracle)."""
import numpy as np
import pytest
import torch

from singa import autograd, layer, tensor

# NOTE: float32 forward and backward through different kernels (oneDNN vs
# torch's); sums over up to a few hundred terms.
RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True)
def _training():
    autograd.training = True
    yield
    autograd.training = False


def _t(a, **kw):
    return tensor.Tensor(data=np.asarray(a), dtype=tensor.from_numpy(np.asarray(a)).dtype, **kw)


def _np(t):
    return tensor.to_numpy(t)


def _check_grads(ours, loss, torch_params, names):
    """Backward from `loss` (ours) against torch grads of the named params."""
    grads = {p.name: _np(g) for p, g in autograd.backward(loss)}
    for name, tp in zip(names, torch_params):
        assert name in grads, f"no gradient for {name}; got {sorted(grads)}"
        np.testing.assert_allclose(grads[name], tp.grad.numpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=name)


def _name(l):
    for k, p in l.get_params().items():
        p.name = k


def test_linear_forms_and_grads():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    l1, l2 = layer.Linear(3), layer.Linear(5, 3)
    for l in (l1, l2):
        y = l(_t(x))
        assert y.shape == (4, 3)
        assert set(l.get_params()) == {"W", "b"} and l.get_params()["W"].shape == (5, 3)
    with pytest.raises(ValueError, match="Linear"):
        l2(_t(np.zeros((4, 6), np.float32)))
    _name(l1)
    ref = torch.nn.Linear(5, 3)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(_np(l1.get_params()["W"]).T))
        ref.bias.copy_(torch.from_numpy(rng.standard_normal(3).astype(np.float32)))
    l1.set_params({"b": ref.bias.detach().numpy()})
    w = rng.standard_normal((4, 3)).astype(np.float32)
    y = l1(_t(x))
    np.testing.assert_allclose(_np(y), ref(torch.from_numpy(x)).detach().numpy(), rtol=RTOL,
                               atol=ATOL)
    (ref(torch.from_numpy(x)) * torch.from_numpy(w)).sum().backward()
    loss = autograd.reduce_sum(autograd.mul(y, _t(w)), keepdims=0)
    grads = {p.name: _np(g) for p, g in autograd.backward(loss)}
    np.testing.assert_allclose(grads["W"], ref.weight.grad.numpy().T, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(grads["b"], ref.bias.grad.numpy(), rtol=RTOL, atol=ATOL)


def test_linear_on_3d_input():
    l = layer.Linear(6)
    assert l(_t(np.ones((2, 3, 4), np.float32))).shape == (2, 3, 6)


def test_embedding():
    e = layer.Embedding(10, 4)
    idx = np.array([[1, 2], [9, 1]], np.int64)
    y = e(_t(idx))
    w = _np(e.get_params()["W"])
    np.testing.assert_array_equal(_np(y), w[idx])
    _name(e)
    loss = autograd.reduce_sum(y, keepdims=0)
    (p, g), = list(autograd.backward(loss))
    expect = np.zeros_like(w)
    np.add.at(expect, idx, 1.0)
    np.testing.assert_allclose(_np(g), expect)


def _copy_rnn(ours, ref):
    with torch.no_grad():
        for name, p in ref.named_parameters():
            p.copy_(torch.from_numpy(_np(ours.get_params()[name])))


@pytest.mark.parametrize("kind", ["RNN", "LSTM"])
@pytest.mark.parametrize("cfg", [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(batch_first=True, num_layers=2, bidirectional=True),
], ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()) or "default")
def test_recurrent_matches_torch(kind, cfg):
    rng = np.random.default_rng(1)
    T, N, I, H = 4, 3, 5, 6
    shape = (N, T, I) if cfg.get("batch_first") else (T, N, I)
    x = rng.standard_normal(shape).astype(np.float32)
    ours = getattr(layer, kind)(I, H, **cfg)
    ref = getattr(torch.nn, kind)(I, H, **cfg)
    y, state = ours(_t(x, requires_grad=False))
    _name(ours)
    _copy_rnn(ours, ref)
    y, state = ours(_t(x, requires_grad=False))
    ty, tstate = ref(torch.from_numpy(x))
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
    h = state[0] if kind == "LSTM" else state
    th = tstate[0] if kind == "LSTM" else tstate
    np.testing.assert_allclose(_np(h), th.detach().numpy(), rtol=RTOL, atol=ATOL)
    w = rng.standard_normal(ty.shape).astype(np.float32)
    (ty * torch.from_numpy(w)).sum().backward()
    loss = autograd.reduce_sum(autograd.mul(y, _t(w)), keepdims=0)
    names = [n for n, _ in ref.named_parameters()]
    _check_grads(ours, loss, [p for _, p in ref.named_parameters()], names)


def test_lstm_takes_singa_list_form_and_initial_states():
    rng = np.random.default_rng(2)
    lstm = layer.LSTM(3, 4)
    xs = [_t(rng.standard_normal((2, 3)).astype(np.float32)) for _ in range(5)]
    h0 = _t(np.zeros((1, 2, 4), np.float32))
    c0 = _t(np.ones((1, 2, 4), np.float32))
    ys, (h, c) = lstm(xs, (h0, c0))
    assert isinstance(ys, list) and len(ys) == 5 and ys[0].shape == (2, 4)
    np.testing.assert_allclose(_np(ys[-1]), _np(h)[0], rtol=1e-6)
    with pytest.raises(ValueError, match="initial state"):
        lstm(xs, (_t(np.zeros((2, 2, 4), np.float32)), c0))


def test_python_layer_registers_by_attribute():
    class Block(layer.Layer):
        def __init__(self):
            super().__init__()
            self.fc = layer.Linear(3)
            self.act = layer.ReLU()

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(layer.Layer):
        def __init__(self):
            super().__init__()
            self.b1 = Block()
            self.b2 = Block()

        def forward(self, x):
            return self.b2(self.b1(x))

    n = Net()
    n(_t(np.ones((2, 4), np.float32)))
    assert list(n.get_params()) == ["b1.fc.W", "b1.fc.b", "b2.fc.W", "b2.fc.b"]
    with pytest.raises(ValueError, match="no parameter named 'b3.fc.W'"):
        n.set_params({"b3.fc.W": np.zeros((3, 3), np.float32)})
    with pytest.raises(ValueError, match="'b1.fc.W' is"):
        n.set_params({"b1.fc.W": np.zeros((3, 3), np.float32)})


def test_the_registry_is_the_cpp_layers():
    """Python layers are C++ nn::Layers: what get_params and set_params
    see is the C++ registry, in registration order, and re-assigning an
    attribute replaces its registration."""
    from singa import _singa

    class Net(layer.Layer):
        def __init__(self):
            super().__init__()
            self.z = layer.Linear(3)
            self.a = layer.Linear(2)

        def forward(self, x):
            return self.a(self.z(x))

    n = Net()
    assert isinstance(n, _singa.nn.Layer) and isinstance(n.z, layer.Layer)
    n(_t(np.ones((2, 4), np.float32)))
    assert list(n.get_params()) == ["z.W", "z.b", "a.W", "a.b"]
    n.z = layer.Linear(3)
    n(_t(np.ones((2, 4), np.float32)))
    assert list(n.get_params()) == ["a.W", "a.b", "z.W", "z.b"]
    n.z = None
    assert list(n.get_params()) == ["a.W", "a.b"]
    n.register_state("count", _t(np.zeros(1, np.float32)))
    assert list(n.get_states()) == ["count", "a.W", "a.b"]

    class Early(layer.Layer):
        def __init__(self):
            self.fc = layer.Linear(2)

    with pytest.raises(AttributeError, match="must call super"):
        Early()


def test_losses_match_torch():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 5)
    onehot = np.eye(4, dtype=np.float32)[labels]
    tx = torch.from_numpy(x)
    ce = torch.nn.functional.cross_entropy(tx, torch.from_numpy(labels)).item()
    for t in (_t(labels.astype(np.int32)), _t(onehot)):
        loss = autograd.softmax_cross_entropy(_t(x), t)
        assert loss.shape == (1,)
        assert float(_np(loss)[0]) == pytest.approx(ce, rel=1e-5)
    p = 1 / (1 + np.exp(-x))
    y = (rng.random((5, 4)) < 0.5).astype(np.float32)
    bce = torch.nn.functional.binary_cross_entropy(torch.from_numpy(p), torch.from_numpy(y))
    # SINGA's binary cross entropy averages over the batch only.
    assert float(_np(autograd.binary_cross_entropy(_t(p), _t(y)))[0]) == pytest.approx(
        bce.item() * 4, rel=1e-5)
    mse = torch.nn.functional.mse_loss(tx, torch.from_numpy(y)).item()
    assert float(_np(autograd.mse_loss(_t(x), _t(y)))[0]) == pytest.approx(mse, rel=1e-5)
    sm = np.exp(x) / np.exp(x).sum(1, keepdims=True)
    assert float(_np(autograd.cross_entropy(_t(sm), _t(onehot)))[0]) == pytest.approx(ce, rel=1e-5)
    cos = torch.nn.functional.cosine_similarity(tx, torch.from_numpy(y + 0.1)).numpy()
    np.testing.assert_allclose(_np(autograd.cossim(_t(x), _t(y + 0.1))), cos, rtol=1e-5)
    pos, neg = rng.random(5).astype(np.float32), rng.random(5).astype(np.float32)
    expect = np.maximum(0, 0.2 - (pos - neg)).mean()
    assert float(_np(autograd.ranking_loss(_t(pos), _t(neg)))[0]) == pytest.approx(expect,
                                                                                   rel=1e-5)
    with pytest.raises(ValueError, match="labels"):
        autograd.softmax_cross_entropy(_t(x), _t(np.zeros(4, np.int32)))


def _copy(ours, ref, mapping):
    with torch.no_grad():
        for ours_name, (ref_param, fn) in mapping.items():
            ref_param.copy_(torch.from_numpy(fn(_np(ours.get_params()[ours_name]))))


@pytest.mark.parametrize("cfg", [dict(stride=1, padding=1, group=1),
                                 dict(stride=2, padding=0, group=2),
                                 dict(stride=1, padding=1, group=8)],
                         ids=["plain", "strided-groups", "depthwise"])
def test_conv_bn_pool_stack_matches_torch(cfg):
    """Conv2d -> BatchNorm2d (training) -> ReLU -> MaxPool2d -> AvgPool2d,
    outputs, parameter gradients and running statistics against torch."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 8, 10, 10)).astype(np.float32)
    conv = layer.Conv2d(8, 3, stride=cfg["stride"], padding=cfg["padding"], group=cfg["group"])
    bn = layer.BatchNorm2d(momentum=0.9)
    mp, ap = layer.MaxPool2d(2, 1), layer.AvgPool2d(2)
    autograd.training = False
    bn(conv(_t(x, requires_grad=False)))
    autograd.training = True
    for name, l in (("conv", conv), ("bn", bn)):
        for k, p in l.get_states().items():
            p.name = f"{name}.{k}"
    tconv = torch.nn.Conv2d(8, 8, 3, stride=cfg["stride"], padding=cfg["padding"],
                            groups=cfg["group"])
    tbn = torch.nn.BatchNorm2d(8, momentum=0.1)
    _copy(conv, tconv, {"W": (tconv.weight, lambda a: a), "b": (tconv.bias, lambda a: a)})
    y = ap(mp(autograd.relu(bn(conv(_t(x, requires_grad=False))))))
    ty = torch.nn.functional.avg_pool2d(
        torch.nn.functional.max_pool2d(torch.relu(tbn(tconv(torch.from_numpy(x)))), 2, 1), 2)
    np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=RTOL, atol=ATOL)
    w = rng.standard_normal(ty.shape).astype(np.float32)
    (ty * torch.from_numpy(w)).sum().backward()
    loss = autograd.reduce_sum(autograd.mul(y, _t(w)), keepdims=0)
    _check_grads(None, loss, [tconv.weight, tconv.bias, tbn.weight, tbn.bias],
                 ["conv.W", "conv.b", "bn.scale", "bn.bias"])
    states = bn.get_states()
    np.testing.assert_allclose(_np(states["running_mean"]), tbn.running_mean.numpy(), rtol=1e-5,
                               atol=1e-6)
    # NOTE: torch updates running_var with the unbiased batch variance, ONNX
    # (and so singa) with the population variance: compare after correcting.
    n = ty.shape[0] * (tconv(torch.from_numpy(x)).shape[2] * tconv(torch.from_numpy(x)).shape[3])
    biased = (tbn.running_var.numpy() - 0.9) * (n - 1) / n + 0.9
    np.testing.assert_allclose(_np(states["running_var"]), biased, rtol=1e-4, atol=1e-5)


def test_python_operator_subclass():
    class Cube(autograd.Operator):
        def forward(self, x):
            self.x = x
            return x * x * x

        def backward(self, dy):
            return dy * 3.0 * self.x * self.x

    w = tensor.Tensor(data=np.array([1.0, -2.0, 0.5], np.float32), stores_grad=True, name="w")
    y = Cube()(autograd.mul(w, _t(np.float32(2.0))))
    assert y.creator == "Function"
    loss = autograd.reduce_sum(y, keepdims=0)
    (p, g), = list(autograd.backward(loss))
    assert p.name == "w"
    np.testing.assert_allclose(_np(g), 3 * (2 * _np(w)) ** 2 * 2, rtol=1e-6)


@pytest.mark.parametrize("make,shape,out_shape,params", [
    (lambda: layer.Gemm(5), (3, 4), (3, 5), {"W": (5, 4), "b": (5,)}),
    (lambda: layer.Gemm(5, transB=False, bias=False), (3, 4), (3, 5), {"W": (4, 5)}),
    (lambda: layer.Conv2d(3, 6, 3, padding=1), (2, 3, 5, 5), (2, 6, 5, 5),
     {"W": (6, 3, 3, 3), "b": (6,)}),
    (lambda: layer.Conv2d(4, 3, pad_mode="SAME_UPPER", activation="RELU"), (1, 2, 5, 5),
     (1, 4, 5, 5), {"W": (4, 2, 3, 3), "b": (4,)}),
    (lambda: layer.SeparableConv2d(8, 3, padding=1), (2, 4, 6, 6), (2, 8, 6, 6),
     {"depthwise.W": (4, 1, 3, 3), "pointwise.W": (8, 4, 1, 1)}),
    (lambda: layer.MaxPool2d(2), (1, 2, 6, 6), (1, 2, 3, 3), {}),
    (lambda: layer.AvgPool2d(3, 1, 1), (1, 2, 6, 6), (1, 2, 6, 6), {}),
    (lambda: layer.MaxPool1d(2), (1, 2, 6), (1, 2, 3), {}),
    (lambda: layer.AvgPool1d(3, 3), (1, 2, 9), (1, 2, 3), {}),
    (lambda: layer.BatchNorm2d(4), (2, 4, 3, 3), (2, 4, 3, 3), {"scale": (4,), "bias": (4,)}),
    (lambda: layer.Flatten(), (2, 3, 4), (2, 12), {}),
    (lambda: layer.SoftMax(), (2, 3), (2, 3), {}),
    (lambda: layer.Sigmoid(), (2, 3), (2, 3), {}),
], ids=["gemm", "gemm-nt", "conv-in-out", "conv-same-relu", "separable", "maxpool2d",
        "avgpool2d", "maxpool1d", "avgpool1d", "batchnorm", "flatten", "softmax", "sigmoid"])
def test_layer_shapes_and_parameters(make, shape, out_shape, params):
    l = make()
    x = _t(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    y = l(x)
    assert y.shape == out_shape
    assert {k: tuple(v.shape) for k, v in l.get_params().items()} == params
    if params:
        _name(l)
        loss = autograd.reduce_sum(autograd.mul(y, y), keepdims=0)
        assert {p.name for p, _ in autograd.backward(loss)} == set(params)


def test_parameterless_layers():
    a = _t(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(_np(layer.Add()(a, a)), 2.0)
    assert layer.Cat(1)([a, a]).shape == (2, 6)
    assert layer.Reshape()(a, (3, 2)).shape == (3, 2)
    np.testing.assert_array_equal(_np(layer.ReLU()(_t(np.array([-1.0, 2.0], np.float32)))),
                                  [0.0, 2.0])
