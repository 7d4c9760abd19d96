"""The Python API's conveniences: containers of layers, the model summary,
singa.data's batches, the layers over registry ops (LayerNorm, GELU,
MultiHeadAttention, Embedding's padding_idx), autograd.call_op, the
arguments that configure (optimizer dtype, Embedding initializer, Gemm
bias_shape, BatchNorm2d momentum) and Model's compile rules. Layers are
checked against torch (forward and gradients) and their export against
onnxruntime."""
import warnings

import numpy as np
import onnxruntime as ort
import pytest
import torch

from singa import _singa, autograd, data, layer, model, opt, sonnx, tensor

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True)
def _training():
    autograd.training = True
    yield
    autograd.training = False


def _t(a, grad=False):
    a = np.asarray(a)
    return tensor.Tensor(data=a, dtype=a.dtype, requires_grad=True, stores_grad=grad)


def _np(t):
    return tensor.to_numpy(t)


def _ort(proto, *inputs):
    sess = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), inputs)})


def _grads(loss):
    return {p.name: _np(g) for p, g in autograd.backward(loss)}


def _weighted_sum(y, w):
    return autograd.reduce_sum(autograd.mul(y, _t(w)), keepdims=0)


class _Net(model.Model):
    """Layers in a list, a tuple, a Sequential and a ModuleList."""

    def __init__(self):
        super().__init__()
        self.blocks = [layer.Linear(6), layer.Linear(6)]
        self.pair = (layer.Linear(6), layer.ReLU())
        self.head = layer.Sequential(layer.ReLU(), layer.Linear(3))
        self.extra = layer.ModuleList()
        self.extra.append(layer.Linear(3))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        x = self.pair[1](self.pair[0](x))
        return self.extra[0](self.head(x))

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.mse_loss(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss


NET_PARAMS = ["blocks.0.W", "blocks.0.b", "blocks.1.W", "blocks.1.b", "pair.0.W", "pair.0.b",
              "head.1.W", "head.1.b", "extra.0.W", "extra.0.b"]


def _compiled_net():
    m = _Net()
    m.optimizer = opt.SGD(lr=0.1)
    m.compile([tensor.PlaceHolder((4, 5))], is_train=True, use_graph=False)
    return m


# ---- containers -----------------------------------------------------------
def test_layers_in_lists_tuples_and_containers_are_registered_with_dotted_names():
    m = _compiled_net()
    assert list(m.get_params()) == NET_PARAMS
    assert isinstance(m.blocks, layer.ModuleList) and isinstance(m.pair, layer.ModuleList)
    assert len(m.blocks) == 2 and isinstance(m.blocks[1], layer.Linear)


def test_layers_in_containers_train_save_load_and_export(tmp_path):
    m = _compiled_net()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = rng.standard_normal((4, 3)).astype(np.float32)
    before = {k: _np(v).copy() for k, v in m.get_params().items()}
    m(_t(x), _t(y))
    after = {k: _np(v) for k, v in m.get_params().items()}
    assert all(not np.array_equal(before[k], after[k]) for k in NET_PARAMS if k.endswith("W"))

    m.save_states(tmp_path / "net.zip")
    other = _compiled_net()
    other.load_states(tmp_path / "net.zip")
    for k, v in other.get_params().items():
        np.testing.assert_array_equal(_np(v), after[k], err_msg=k)

    m.eval()
    proto = sonnx.to_onnx([_t(x)], m)
    assert set(NET_PARAMS) <= {i.name for i in proto.graph.initializer}
    np.testing.assert_allclose(_ort(proto, x)[0], _np(m.forward(_t(x))), rtol=RTOL, atol=ATOL)


def test_sequential_runs_its_layers_in_order_and_is_indexable():
    seq = layer.Sequential(layer.Linear(4), layer.ReLU(), layer.Linear(2))
    x = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    y = seq(_t(x))
    p = {k: _np(v) for k, v in seq.get_params().items()}
    assert list(p) == ["0.W", "0.b", "2.W", "2.b"]
    ref = np.maximum(x @ p["0.W"] + p["0.b"], 0) @ p["2.W"] + p["2.b"]
    np.testing.assert_allclose(_np(y), ref, rtol=RTOL, atol=ATOL)
    assert len(seq) == 3 and isinstance(seq[1], layer.ReLU)
    tail = seq[1:]
    assert isinstance(tail, layer.Sequential) and len(tail) == 2
    assert _np(tail(_t(np.ones((3, 4), np.float32)))).shape == (3, 2)
    with pytest.raises(TypeError, match="Sequential"):
        layer.Sequential([layer.ReLU()])


def test_module_list_registers_what_is_appended_inserted_replaced_or_deleted():
    blocks = layer.ModuleList([layer.Linear(2)])
    x = _t(np.ones((1, 3), np.float32))
    extra = layer.Linear(2)
    blocks.append(extra).extend([layer.Linear(2)])
    assert blocks.index(extra) == 1 and extra in blocks
    for b in blocks:
        b(x)
    assert list(blocks.get_params()) == ["0.W", "0.b", "1.W", "1.b", "2.W", "2.b"]
    first = blocks[0]
    del blocks[0]
    assert blocks[0] is extra and list(blocks.get_params()) == ["0.W", "0.b", "1.W", "1.b"]
    blocks.insert(0, first)
    assert [blocks.index(b) for b in (first, extra)] == [0, 1]
    assert blocks.get_params()["0.W"].data.same_tensor(first.get_params()["W"].data)
    replacement = layer.Linear(2)
    replacement(x)
    blocks[2] = replacement
    assert blocks.get_params()["2.W"].data.same_tensor(replacement.get_params()["W"].data)
    assert blocks.pop() is replacement and len(blocks) == 2


def test_a_list_filled_after_its_assignment_is_registered_at_compile():
    class Late(model.Model):
        def __init__(self):
            super().__init__()
            self.blocks = []
            for _ in range(2):
                self.blocks.append(layer.Linear(3))

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    m = Late()
    m.compile([tensor.PlaceHolder((2, 4))], is_train=False)
    assert list(m.get_params()) == ["blocks.0.W", "blocks.0.b", "blocks.1.W", "blocks.1.b"]
    assert m.get_params()["blocks.1.W"].name == "blocks.1.W"


def test_a_list_of_layers_that_are_attributes_too_is_not_registered_twice():
    class Aliased(layer.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = []
            for i in range(2):
                setattr(self, f"fc{i}", layer.Linear(3))
                self.blocks.append(getattr(self, f"fc{i}"))
            self.same = [self.fc0, self.fc1]

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    a = Aliased()
    a(_t(np.ones((2, 3), np.float32)))
    assert list(a.get_params()) == ["fc0.W", "fc0.b", "fc1.W", "fc1.b"]
    assert type(a.blocks) is list and type(a.same) is list

    class Partly(layer.Layer):
        def __init__(self):
            super().__init__()
            self.fc = layer.Linear(3)
            self.blocks = [self.fc, layer.Linear(3)]

    with pytest.raises(TypeError, match="Partly.blocks: some of its layers are attributes"):
        Partly()


def test_lists_mixing_layers_and_other_values_and_calling_a_module_list_are_refused():
    class Mixed(layer.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = [layer.Linear(3), "relu"]

    with pytest.raises(TypeError, match=r"Mixed.blocks: .*item 1 is a str"):
        Mixed()
    with pytest.raises(TypeError, match="ModuleList is not called"):
        layer.ModuleList([layer.ReLU()])(_t(np.ones(2, np.float32)))


# ---- summary and parameter views -----------------------------------------
def test_print_shows_one_line_per_layer_with_shapes_then_totals():
    class Small(layer.Layer):
        def __init__(self):
            super().__init__()
            self.fc = layer.Linear(4)
            self.bn = layer.BatchNorm2d()
            self.blocks = [layer.Linear(2)]

        def forward(self, x):
            y = self.fc(x)
            self.bn(autograd.reshape(y, (y.shape[0], 4, 1, 1)))
            return self.blocks[0](y)

    s = Small()
    assert "(not initialized)" in str(s) and "not initialized yet" in str(s)
    s(_t(np.ones((2, 3), np.float32)))
    lines = str(s).splitlines()
    assert lines[0] == "Small"
    rows = [line.split() for line in lines[1:-1]]
    assert rows[0][:2] == ["fc", "Linear"] and "W (3, 4), b (4,)" in lines[1]
    assert rows[1][:2] == ["bn", "BatchNorm2d"] and "buffers running_mean (4,)" in lines[2]
    assert [r[:2] for r in rows[2:]] == [["blocks", "ModuleList"], ["blocks.0", "Linear"]]
    assert lines[-1] == "parameters: 34 (trainable: 34), buffers: 8"
    s.fc.get_params()["b"].stores_grad = False
    assert str(s).splitlines()[-1] == "parameters: 34 (trainable: 30), buffers: 8"
    # A layer's own tensors (an imported model's initializers) get a line each.
    assert [line.split() for line in str(s.fc).splitlines()[1:3]] == [
        ["W", "parameter", "(3,", "4)"], ["b", "parameter", "(4,)"]]


def test_parameters_named_parameters_and_named_buffers():
    bn = layer.BatchNorm2d()
    bn(_t(np.ones((2, 3, 2, 2), np.float32)))
    names = [k for k, _ in bn.named_parameters()]
    assert names == ["scale", "bias"]
    assert [k for k, _ in bn.named_buffers()] == ["running_mean", "running_var"]
    params = bn.parameters()
    assert len(params) == 2 and all(isinstance(p, tensor.Tensor) for p in params)
    assert params[0].data.same_tensor(bn.get_params()["scale"].data)


# ---- singa.data -----------------------------------------------------------
def test_batches_cover_the_rows_in_order_and_drop_last_leaves_the_short_batch():
    x = np.arange(10).reshape(5, 2)
    y = np.arange(5)
    got = list(data.batches(x, y, batch_size=2))
    assert len(data.batches(x, y, batch_size=2)) == 3 and len(got) == 3
    np.testing.assert_array_equal(got[2][0], x[4:])
    np.testing.assert_array_equal(np.concatenate([b[1] for b in got]), y)
    full = data.batches(x, y, batch_size=2, drop_last=True)
    assert len(full) == 2 and [len(b[1]) for b in full] == [2, 2]
    single = list(data.batches(y, batch_size=4))
    assert isinstance(single[0], np.ndarray) and [len(b) for b in single] == [4, 1]


def test_shuffled_batches_are_seeded_keep_rows_together_and_change_each_pass():
    x = np.arange(20)
    b = data.batches(x, x * 10, batch_size=5, shuffle=True, seed=3)
    first = [xb for xb, _ in b]
    second = [xb for xb, _ in b]
    assert not all(np.array_equal(p, q) for p, q in zip(first, second))
    for xb, yb in b:
        np.testing.assert_array_equal(yb, xb * 10)
    assert sorted(np.concatenate(first).tolist()) == list(range(20))
    again = data.batches(x, x * 10, batch_size=5, shuffle=True, seed=3)
    assert all(np.array_equal(p, q[0]) for p, q in zip(first, again))
    order = np.random.default_rng(3).permutation(20)
    np.testing.assert_array_equal(np.concatenate(first), order)


def test_batches_name_bad_input():
    with pytest.raises(ValueError, match="same length"):
        data.batches(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="batch_size"):
        data.batches(np.zeros(3), batch_size=0)
    with pytest.raises(TypeError, match="at least one array"):
        data.batches()


# ---- layers over registry ops, against torch and onnxruntime ---------------
def test_layer_norm_matches_torch_forward_and_gradients_and_exports():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = rng.standard_normal(x.shape).astype(np.float32)
    ln = layer.LayerNorm((4, 5), eps=1e-4)
    tx = _t(x)
    y = ln(tx)
    ln.set_params({"scale": rng.standard_normal((4, 5)), "bias": rng.standard_normal((4, 5))})
    for k, v in ln.get_params().items():
        v.name = k
    ref = torch.nn.LayerNorm((4, 5), eps=1e-4)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(_np(ln.get_params()["scale"])))
        ref.bias.copy_(torch.from_numpy(_np(ln.get_params()["bias"])))
    xt = torch.from_numpy(x).requires_grad_()
    (ref(xt) * torch.from_numpy(w)).sum().backward()
    y = ln(tx)
    np.testing.assert_allclose(_np(y), ref(xt).detach().numpy(), rtol=RTOL, atol=ATOL)
    grads = _grads(_weighted_sum(y, w))
    np.testing.assert_allclose(grads["scale"], ref.weight.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(grads["bias"], ref.bias.grad.numpy(), rtol=RTOL, atol=ATOL)

    proto = sonnx.to_onnx([tx], ln)
    assert "LayerNormalization" in [n.op_type for n in proto.graph.node]
    np.testing.assert_allclose(_ort(proto, x)[0], _np(y), rtol=RTOL, atol=ATOL)

    lazy, plain = layer.LayerNorm(), layer.LayerNorm(5, elementwise_affine=False)
    np.testing.assert_allclose(_np(lazy(tx)), _np(plain(tx)), rtol=RTOL, atol=ATOL)
    assert lazy.normalized_shape == (5,) and plain.get_params() == {}
    np.testing.assert_allclose(
        _np(plain(tx)), torch.nn.functional.layer_norm(torch.from_numpy(x), (5,)).numpy(),
        rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_ort(sonnx.to_onnx([tx], plain), x)[0], _np(plain(tx)),
                               rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="normalized_shape"):
        ln(_t(np.ones((2, 5, 4), np.float32)))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch_forward_and_gradient_and_exports(approximate):
    x = np.random.default_rng(3).standard_normal((3, 7)).astype(np.float32)
    w = np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape)
    tx = _t(x, grad=True)
    tx.name = "x"
    g = layer.GELU(approximate)
    y = g(tx)
    xt = torch.from_numpy(x).requires_grad_()
    ref = torch.nn.functional.gelu(xt, approximate=approximate)
    (ref * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(_np(y), ref.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_grads(_weighted_sum(y, w))["x"], xt.grad.numpy(), rtol=RTOL,
                               atol=ATOL)
    proto = sonnx.to_onnx([tx], [y])
    assert [n.op_type for n in proto.graph.node] == ["Gelu"]
    np.testing.assert_allclose(_ort(proto, x)[0], _np(y), rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="approximate"):
        layer.GELU("erf")


def _torch_mha(mha, kdim=None):
    """torch.nn.MultiheadAttention with mha's weights (ours are W [in, out])."""
    p = {k: _np(v) for k, v in mha.get_params().items()}
    e = mha.embed_dim
    ref = torch.nn.MultiheadAttention(e, mha.num_heads, kdim=kdim, vdim=kdim)
    with torch.no_grad():
        if kdim is None:
            ref.in_proj_weight.copy_(torch.from_numpy(
                np.concatenate([p[f"{n}_proj.W"].T for n in "qkv"])))
        else:
            for n in "qkv":
                getattr(ref, f"{n}_proj_weight").copy_(torch.from_numpy(p[f"{n}_proj.W"].T))
        ref.in_proj_bias.copy_(torch.from_numpy(np.concatenate([p[f"{n}_proj.b"] for n in "qkv"])))
        ref.out_proj.weight.copy_(torch.from_numpy(p["out_proj.W"].T))
        ref.out_proj.bias.copy_(torch.from_numpy(p["out_proj.b"]))
    return ref


def test_multi_head_attention_matches_torch_forward_and_gradients_and_exports():
    rng = np.random.default_rng(4)
    L, N, E = 5, 2, 8
    x = rng.standard_normal((L, N, E)).astype(np.float32)
    w = rng.standard_normal((L, N, E)).astype(np.float32)
    mha = layer.MultiHeadAttention(E, 2)
    tx = _t(x, grad=True)
    tx.name = "x"
    mha(tx)
    mha.set_params({k: rng.standard_normal(v.shape) * 0.5 for k, v in mha.get_params().items()})
    for k, v in mha.get_params().items():
        v.name = k
    ref = _torch_mha(mha)
    xt = torch.from_numpy(x).requires_grad_()
    causal = torch.from_numpy(np.triu(np.full((L, L), -np.inf, np.float32), 1))
    out, _ = ref(xt, xt, xt, attn_mask=causal, need_weights=False)
    (out * torch.from_numpy(w)).sum().backward()

    y = mha(tx, is_causal=True)
    np.testing.assert_allclose(_np(y), out.detach().numpy(), rtol=RTOL, atol=ATOL)
    grads = _grads(_weighted_sum(y, w))
    np.testing.assert_allclose(grads["x"], xt.grad.numpy(), rtol=RTOL, atol=ATOL)
    torch_w = ref.in_proj_weight.grad.numpy()
    for i, n in enumerate("qkv"):
        np.testing.assert_allclose(grads[f"{n}_proj.W"], torch_w[i * E:(i + 1) * E].T,
                                   rtol=RTOL, atol=ATOL, err_msg=n)
    np.testing.assert_allclose(grads["out_proj.b"], ref.out_proj.bias.grad.numpy(), rtol=RTOL,
                               atol=ATOL)
    # A boolean mask keeps the True positions (ONNX's convention).
    keep = np.tril(np.ones((L, L), bool))
    np.testing.assert_allclose(_np(mha(tx, attn_mask=keep)), _np(y), rtol=RTOL, atol=ATOL)

    proto = sonnx.to_onnx([tx], lambda t: mha(t, is_causal=True))
    assert "Attention" in [n.op_type for n in proto.graph.node]
    np.testing.assert_allclose(_ort(proto, x)[0], _np(y), rtol=RTOL, atol=ATOL)


def test_multi_head_attention_batch_first_with_other_key_sizes():
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, 3, 4)).astype(np.float32)
    kv = rng.standard_normal((2, 6, 5)).astype(np.float32)
    mha = layer.MultiHeadAttention(4, 2, batch_first=True, kdim=5, vdim=5)
    y = mha(_t(q), _t(kv), _t(kv))
    ref = _torch_mha(mha, kdim=5)
    out, _ = ref(*(torch.from_numpy(a).transpose(0, 1) for a in (q, kv, kv)), need_weights=False)
    np.testing.assert_allclose(_np(y), out.transpose(0, 1).detach().numpy(), rtol=RTOL,
                               atol=ATOL)
    with pytest.raises(ValueError, match="multiple of num_heads"):
        layer.MultiHeadAttention(6, 4)


def test_embedding_padding_idx_starts_at_zero_gets_no_gradient_and_exports():
    idx = np.array([[1, 3, 0], [3, 3, 2]], np.int64)
    w = np.random.default_rng(6).standard_normal((2, 3, 4)).astype(np.float32)
    e = layer.Embedding(5, 4, padding_idx=3)
    y = e(_t(idx))
    table = _np(e.get_params()["W"]).copy()
    np.testing.assert_array_equal(table[3], 0)
    e.get_params()["W"].name = "W"
    ref = torch.nn.Embedding(5, 4, padding_idx=3)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(table))
    (ref(torch.from_numpy(idx)) * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(_np(y), ref(torch.from_numpy(idx)).detach().numpy())
    grad = _grads(_weighted_sum(y, w))["W"]
    np.testing.assert_allclose(grad, ref.weight.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(grad[3], 0)

    proto = sonnx.to_onnx([_t(idx)], e)
    np.testing.assert_allclose(_ort(proto, idx)[0], _np(y))
    assert layer.Embedding(5, 4, padding_idx=-1).padding_idx == 4
    with pytest.raises(ValueError, match="padding_idx 5"):
        layer.Embedding(5, 4, padding_idx=5)


def test_call_op_runs_registered_ops_with_gradients_and_exports():
    x = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    w = np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape)
    tx = _t(x, grad=True)
    tx.name = "x"
    y = autograd.call_op("LogSoftmax", autograd.call_op("HardSwish", tx), axis=0)
    xt = torch.from_numpy(x).requires_grad_()
    ref = torch.log_softmax(torch.nn.functional.hardswish(xt), 0)
    (ref * torch.from_numpy(w)).sum().backward()
    np.testing.assert_allclose(_np(y), ref.detach().numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_grads(_weighted_sum(y, w))["x"], xt.grad.numpy(), rtol=RTOL,
                               atol=ATOL)
    proto = sonnx.to_onnx([tx], [y])
    assert [n.op_type for n in proto.graph.node] == ["HardSwish", "LogSoftmax"]
    np.testing.assert_allclose(_ort(proto, x)[0], _np(y), rtol=RTOL, atol=ATOL)

    # Several outputs, constants from arrays and numbers, an older opset.
    out, mean, inv_std = autograd.call_op("LayerNormalization", tx, np.ones(4, np.float32),
                                          None, num_outputs=3)
    np.testing.assert_allclose(_np(mean)[:, 0], x.mean(1), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_np(autograd.call_op("Add", tx, 2)), x + 2)
    # Softmax-1 flattens from axis on: over all 12 values here.
    s1 = _np(autograd.call_op("Softmax", tx, axis=0, opset=11))
    np.testing.assert_allclose(s1, np.exp(x) / np.exp(x).sum(), rtol=RTOL, atol=ATOL)
    with pytest.raises(NotImplementedError, match="NoSuchOp"):
        autograd.call_op("NoSuchOp", tx)


# ---- arguments that configure ---------------------------------------------
def test_optimizer_dtype_keeps_the_states_and_the_update_in_that_dtype():
    g = np.array([1e-3, -2e-3, 4e-4], np.float32)
    p16 = tensor.Tensor(data=np.array([1.0, 0.5, -0.25]), dtype=tensor.float16,
                        stores_grad=True)
    p16.name = "p"
    sgd = opt.SGD(lr=1.0, momentum=0.9, dtype=tensor.float32)
    ref_p, ref_buf = np.array([1.0, 0.5, -0.25], np.float32), np.zeros(3, np.float32)
    for step in range(3):
        sgd.update(p16, tensor.Tensor(data=g, dtype=tensor.float16))
        sgd.step()
        g16 = g.astype(np.float16).astype(np.float32)
        ref_buf = g16 if step == 0 else 0.9 * ref_buf + g16
        ref_p = (ref_p.astype(np.float16).astype(np.float32) - ref_buf)
    state = sgd.get_states()["p:momentum"]
    assert state.dtype == tensor.float32 and p16.dtype == tensor.float16
    np.testing.assert_allclose(_np(state), ref_buf, rtol=1e-6)
    np.testing.assert_allclose(_np(p16).astype(np.float32), ref_p.astype(np.float16),
                               rtol=1e-3)

    p32 = tensor.Tensor(data=np.ones(2, np.float32), stores_grad=True)
    p32.name = "w"
    for o in (opt.SGD(momentum=0.9, dtype="float64"), opt.RMSProp(dtype=tensor.float64),
              opt.AdaGrad(dtype=np.float64), opt.Adam(dtype=tensor.float64)):
        o.update(p32, tensor.Tensor(data=np.full(2, 0.5, np.float32)))
        states = [v for k, v in o.get_states().items() if k.startswith("w:")
                  and not k.endswith(":count")]
        assert states and all(s.dtype == tensor.float64 for s in states), type(o).__name__
    assert opt.Adam(dtype=tensor.float16).dtype == tensor.float32
    with pytest.raises(ValueError, match="dtype"):
        opt.SGD(dtype=tensor.int32)


class _Half(model.Model):
    def __init__(self):
        super().__init__()
        self.fc = layer.Linear(3)

    def forward(self, x):
        return self.fc(x)

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.mse_loss(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
def test_float16_model_trains_with_float32_optimizer_states(graph):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 5)).astype(np.float16)
    y = rng.standard_normal((4, 3)).astype(np.float16)
    tx, ty = tensor.from_numpy(x), tensor.from_numpy(y)
    m = _Half()
    m.optimizer = opt.Adam(lr=0.01, dtype=tensor.float32)
    m.compile([tx], is_train=True, use_graph=graph)
    w0 = _np(m.get_params()["fc.W"]).astype(np.float32)
    losses = [float(_np(m(tx, ty)[1]).reshape(-1)[0]) for _ in range(5)]
    assert m.get_params()["fc.W"].dtype == tensor.float16
    assert not np.array_equal(_np(m.get_params()["fc.W"]).astype(np.float32), w0)
    assert losses[-1] < losses[0]
    states = m.optimizer.get_states()
    assert states["fc.W:m"].dtype == tensor.float32 and states["fc.W:count"].item() == 5


def test_embedding_initializer_is_applied():
    idx = _t(np.array([0, 1, 2, 3], np.int64))
    zeros = layer.Embedding(4, 3, initializer="zeros")
    assert not _np(zeros(idx)).any()
    uni = layer.Embedding(50, 20, initializer="uniform")
    uni(idx)
    w = _np(uni.get_params()["W"])
    assert w.min() >= -1 and w.max() <= 1 and w.std() < 0.7  # N(0, 1) has std 1
    fill = layer.Embedding(4, 3, initializer=lambda t: np.arange(12).reshape(4, 3))
    np.testing.assert_array_equal(_np(fill(idx)), np.arange(12).reshape(4, 3))
    in_place = layer.Embedding(4, 3, initializer=lambda t: t.set_value(0.5))
    np.testing.assert_array_equal(_np(in_place(idx)), np.full((4, 3), 0.5))
    with pytest.raises(ValueError, match="initializer 'xavier'"):
        layer.Embedding(4, 3, initializer="xavier")


def test_gemm_bias_shape_is_the_bias_shape():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    g = layer.Gemm(4, alpha=0.5, beta=2.0, bias_shape=(1, 4))
    g(_t(x))
    params = g.get_params()
    assert list(params) == ["W", "b"] and params["b"].shape == (1, 4)
    b = rng.standard_normal((1, 4)).astype(np.float32)
    g.set_params({"b": b})
    g.get_params()["b"].name = "b"
    y = g(_t(x))
    np.testing.assert_allclose(_np(y), 0.5 * x @ _np(params["W"]).T + 2.0 * b, rtol=RTOL,
                               atol=ATOL)
    assert _grads(autograd.reduce_sum(y, keepdims=0))["b"].shape == (1, 4)
    assert layer.Gemm(4)(_t(x)) is not None
    with pytest.raises(ValueError, match="bias_shape"):
        layer.Gemm(4, bias_shape=(3,))


def test_batchnorm_momentum_is_singa_convention_and_torch_values_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bn = layer.BatchNorm2d(momentum=0.9)
    x = np.random.default_rng(10).standard_normal((4, 2, 3, 3)).astype(np.float32)
    bn(_t(x))
    running = _np(bn.get_states()["running_mean"])
    np.testing.assert_allclose(running, 0.1 * x.mean((0, 2, 3)), rtol=RTOL, atol=ATOL)
    with pytest.warns(UserWarning, match=r"momentum=0.1.*momentum=0.9 here"):
        layer.BatchNorm2d(momentum=0.1)
    with pytest.raises(ValueError, match="momentum"):
        layer.BatchNorm2d(momentum=1.5)


# ---- Model: compile before calling; sequential ----------------------------
class _Tiny(model.Model):
    def __init__(self):
        super().__init__()
        self.fc = layer.Linear(2)

    def forward(self, x):
        return self.fc(x)


def test_calling_a_model_before_compile_raises_naming_compile():
    m = _Tiny()
    x = _t(np.ones((2, 3), np.float32))
    with pytest.raises(_singa.Error, match=r"_Tiny is not compiled: call _tiny.compile\("):
        m(x)
    with pytest.raises(RuntimeError, match="not compiled"):
        m(x, x)
    m.compile([x], is_train=False)
    assert _np(m(x)).shape == (2, 2)


def test_an_uncompiled_model_inside_another_layer_runs_and_trains_as_a_layer():
    class Outer(model.Model):
        def __init__(self):
            super().__init__()
            self.inner = _Tiny()

        def forward(self, x):
            return self.inner(x)

        def train_one_batch(self, x, y):
            loss = autograd.mse_loss(self.forward(x), y)
            self.optimizer.backward_and_update(loss)
            return loss

    m = Outer()
    m.optimizer = opt.SGD(lr=0.1)
    x, y = _t(np.ones((2, 3), np.float32)), _t(np.zeros((2, 2), np.float32))
    m.compile([x], is_train=True)
    for _ in range(2):  # the second call finds the inner model initialized
        before = _np(m.get_params()["inner.fc.W"]).copy()
        m(x, y)
        assert not np.array_equal(_np(m.get_params()["inner.fc.W"]), before)


def test_compile_sequential_is_kept_changes_no_result_and_a_change_recaptures():
    x = np.random.default_rng(11).standard_normal((2, 3)).astype(np.float32)
    outs = []
    for sequential in (False, True):
        m = _Tiny()
        m.compile([_t(x)], is_train=False, use_graph=True, sequential=sequential)
        assert m.sequential is sequential
        m.set_params({"fc.W": np.ones((3, 2)), "fc.b": np.zeros(2)})
        outs.append(_np(m(_t(x))).copy())
        assert m.num_captured_steps == 1
        m.graph(True, sequential=not sequential)
        assert m.num_captured_steps == 0 and m.sequential is (not sequential)
    np.testing.assert_array_equal(outs[0], outs[1])
