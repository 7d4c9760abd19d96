"""The Gradient op (ai.onnx.preview.training): dy/dx for the xs of the
node at its inputs, against torch, with zs, an intermediate value as an x
(evaluated at a value the node is given), an initializer as an x, an x y
does not depend on, and errors naming the node."""
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from singa import autograd, sonnx, tensor

F = TensorProto.FLOAT


@pytest.fixture(autouse=True)
def _inference():
    autograd.training = False


def _vi(name, shape):
    return helper.make_tensor_value_info(name, F, list(shape))


def _model(grad_nodes, outputs, check=True):
    """loss = ReduceSum(Tanh(X @ W + b) * L): X and L are inputs, W and b
    initializers."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["X", "W"], ["XW"], name="matmul"),
             helper.make_node("Add", ["XW", "b"], ["H"], name="add"),
             helper.make_node("Tanh", ["H"], ["T"], name="tanh"),
             helper.make_node("Mul", ["T", "L"], ["TL"], name="mul"),
             helper.make_node("ReduceSum", ["TL"], ["loss"], name="sum", keepdims=0)]
    nodes += grad_nodes if isinstance(grad_nodes, list) else [grad_nodes]
    graph = helper.make_graph(nodes, "g", [_vi("X", (2, 3)), _vi("L", (2, 4))],
                              [_vi("loss", ())] + outputs,
                              [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid("ai.onnx.preview.training", 1)])
    if check:
        onnx.checker.check_model(model)
    return model, w, b


def _gradient(inputs, outputs, xs, zs=(), y="loss", name="grad"):
    return helper.make_node("Gradient", inputs, outputs, name=name,
                            domain="ai.onnx.preview.training", xs=list(xs), zs=list(zs), y=y)


def _torch_loss(x, l, w, b):
    return (torch.tanh(x @ w + b) * l).sum()


def test_gradients_of_inputs_and_initializers_match_torch():
    node = _gradient(["X", "W", "L"], ["dX", "dW"], xs=["X", "W"], zs=["L"])
    model, w, b = _model(node, [_vi("dX", (2, 3)), _vi("dW", (3, 4))])
    rng = np.random.default_rng(1)
    x, l = rng.standard_normal((2, 3)).astype(np.float32), rng.random((2, 4)).astype(np.float32)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    want = _torch_loss(tx, torch.tensor(l), tw, torch.tensor(b))
    want.backward()
    rep = sonnx.prepare(model)
    for _ in range(2):  # the plan's build run, then its run
        loss, dx, dw = (tensor.to_numpy(t) for t in rep.run([x, l]))
        np.testing.assert_allclose(loss, want.item(), rtol=1e-5)
        np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(dw, tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_an_intermediate_x_is_evaluated_at_the_value_given():
    """Gradient(xs=[H, L], zs=[X], y=loss) at H = H2 = 2 * H_model: the
    graph from H on is differentiated there, dloss/dH = (1 - tanh(H2)^2) L
    and dloss/dL = tanh(H2)."""
    nodes = [helper.make_node("Add", ["H", "H"], ["H2"], name="double"),
             _gradient(["H2", "L", "X"], ["dH", "dL"], xs=["H", "L"], zs=["X"])]
    model, w, b = _model(nodes, [_vi("dH", (2, 4)), _vi("dL", (2, 4))])
    rng = np.random.default_rng(2)
    x, l = rng.standard_normal((2, 3)).astype(np.float32), rng.random((2, 4)).astype(np.float32)
    h2 = 2 * (x @ w + b)
    dh, dl = (tensor.to_numpy(t) for t in sonnx.prepare(model).run([x, l])[1:])
    np.testing.assert_allclose(dh, (1 - np.tanh(h2) ** 2) * l, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dl, np.tanh(h2), rtol=1e-5, atol=1e-6)


def test_an_x_y_does_not_read_gets_zeros():
    node = _gradient(["X", "b", "L"], ["dX", "db"], xs=["X", "b"], zs=["L"], y="XW")
    model, w, b = _model(node, [_vi("dX", (2, 3)), _vi("db", (4,))])
    x, l = np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)
    dx, db = (tensor.to_numpy(t) for t in sonnx.prepare(model).run([x, l])[1:])
    np.testing.assert_allclose(dx, np.tile(w.sum(1), (2, 1)), rtol=1e-6)
    np.testing.assert_array_equal(db, np.zeros(4, np.float32))


def test_bad_gradient_nodes_name_the_node():
    node = _gradient(["X", "L"], ["dX"], xs=["X"], zs=["L"], y="nowhere")
    with pytest.raises(ValueError, match="'grad'.*reads 'nowhere', which is neither"):
        sonnx.prepare(_model(node, [_vi("dX", (2, 3))], check=False)[0])
    node = _gradient(["X", "L"], ["dX"], xs=["X"], zs=["L"], y="W")
    with pytest.raises(ValueError, match="'grad'.*y 'W' is not computed from xs and zs"):
        sonnx.prepare(_model(node, [_vi("dX", (2, 3))], check=False)[0])
    node = _gradient(["X"], ["dX"], xs=["X"], zs=["L"])
    with pytest.raises(ValueError, match="'grad'.*one input per name of xs and zs \\(2\\)"):
        sonnx.prepare(_model(node, [_vi("dX", (2, 3))], check=False)[0])
