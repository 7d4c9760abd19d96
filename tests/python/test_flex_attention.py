"""FlexAttention (ai.onnx.preview) with its score_mod and prob_mod graph
attributes: against onnx's reference evaluator (onnxruntime has no preview
ops), grouped-query heads, a modifier reading a value of the enclosing
graph, gradients through the modifiers against torch, and errors naming the
node. onnx's node suite covers the single cases (tests/conformance)."""
import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from singa import autograd, sonnx, tensor

F = TensorProto.FLOAT


@pytest.fixture(autouse=True)
def _inference():
    autograd.training = False


def _mod(name, nodes, inits=(), dtype=F):
    """A modifier graph: x -> ... -> y, both [B, H, L, S]."""
    dims = ["B", "H", "L", "S"]
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", dtype, dims)],
                             [helper.make_tensor_value_info("y", dtype, dims)], list(inits))


SOFT_CAP = _mod("soft_cap", [helper.make_node("Div", ["x", "cap"], ["d"]),
                             helper.make_node("Tanh", ["d"], ["t"]),
                             helper.make_node("Mul", ["t", "cap"], ["y"])],
                [numpy_helper.from_array(np.array(2.0, np.float32), "cap")])
HALVE = _mod("halve", [helper.make_node("Mul", ["x", "half"], ["y"])],
             [numpy_helper.from_array(np.array(0.5, np.float32), "half")])


def _model(q, k, v, dtype=F, inits=(), check=True, **attrs):
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview",
                            name="flex", **attrs)
    shapes = {"Q": q, "K": k, "V": v}
    inputs = [helper.make_tensor_value_info(n, dtype, s) for n, s in shapes.items()
              if n not in {i.name for i in inits}]
    graph = helper.make_graph([node], "g", inputs,
                              [helper.make_tensor_value_info("Y", dtype, [*q[:3], v[3]])], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                    helper.make_opsetid("ai.onnx.preview", 1)])
    if check:
        onnx.checker.check_model(model)
    return model


def _feeds(q, k, v, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in (q, k, v)]


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16])
def test_modifiers_match_the_reference_with_grouped_heads(dtype):
    q, k, v = (2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 6)
    # The modifiers take float32 for every input dtype: the scores and
    # probabilities are in the softmax precision, float32 by default.
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _model(q, k, v, elem, score_mod=SOFT_CAP, prob_mod=HALVE, scale=0.3)
    feeds = _feeds(q, k, v, dtype)
    want = ReferenceEvaluator(model).run(None, dict(zip("QKV", feeds)))[0]
    rep = sonnx.prepare(model)
    for _ in range(2):  # the plan's build run, then its replay
        (got,) = rep.run(feeds)
        assert tensor.to_numpy(got).dtype == np.dtype(dtype)
        # Same op order as the reference; what differs is the summation
        # order of the matmuls (a float32 ulp, or one of the 16-bit dtype).
        tol = {np.float32: 1e-6}.get(dtype, 1e-2)
        np.testing.assert_allclose(tensor.to_numpy(got).astype(np.float32),
                                   want.astype(np.float32), rtol=tol, atol=tol)


def test_a_modifier_reads_the_enclosing_graph():
    """score_mod adds a bias initializer of the main graph (a relative
    position bias), as a subgraph may read its enclosing scope."""
    q, k, v = (1, 2, 4, 4), (1, 2, 4, 4), (1, 2, 4, 4)
    bias = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
    score_mod = _mod("bias", [helper.make_node("Add", ["x", "bias"], ["y"])])
    model = _model(q, k, v, inits=[numpy_helper.from_array(bias, "bias")], check=False,
                   score_mod=score_mod)
    x = _feeds(q, k, v)
    s = x[0] @ x[1].transpose(0, 1, 3, 2) / 2 + bias
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ x[2]
    (got,) = sonnx.prepare(model).run(x)
    np.testing.assert_allclose(tensor.to_numpy(got), want, rtol=1e-5, atol=1e-6)


def test_gradients_flow_through_the_modifiers():
    """loss = sum(Y^2) with K and V trainable, soft-capped scores and halved
    probabilities, against torch."""
    q, k, v = (1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 6)
    xq, xk, xv = _feeds(q, k, v, seed=3)
    model = _model(q, k, v, inits=[numpy_helper.from_array(xk, "K"),
                                   numpy_helper.from_array(xv, "V")],
                   score_mod=SOFT_CAP, prob_mod=HALVE)
    rep = sonnx.prepare(model)
    autograd.training = True
    try:
        (y,) = rep.run([xq])
        loss = autograd.reduce_sum(autograd.mul(y, y), keepdims=0)
        grads = dict((p.name, tensor.to_numpy(g)) for p, g in autograd.backward(loss))
    finally:
        autograd.training = False

    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (xq, xk, xv))
    s = torch.tensor(np.sqrt(np.float32(1 / np.sqrt(8))))
    scores = (tq * s) @ (tk.repeat_interleave(2, 1) * s).transpose(-1, -2)
    scores = torch.tanh(scores / 2) * 2
    ty = (torch.softmax(scores, -1) * 0.5) @ tv.repeat_interleave(2, 1)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(tensor.to_numpy(y), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads["K"], tk.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(grads["V"], tv.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_bad_modifiers_name_the_node():
    q = (1, 1, 2, 4)
    reduce = _mod("reduce", [helper.make_node("ReduceSum", ["x"], ["y"], keepdims=1)])
    with pytest.raises(ValueError, match="'flex'.*score_mod must keep the shape"):
        sonnx.prepare(_model(q, q, q, score_mod=reduce)).run(_feeds(q, q, q))
    with pytest.raises(ValueError, match="'flex'.*unknown graph attribute 'mask_mod'"):
        sonnx.prepare(_model(q, q, q, check=False, mask_mod=HALVE))
    two = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "two",
                            [helper.make_tensor_value_info("x", F, None)],
                            [helper.make_tensor_value_info("y", F, None),
                             helper.make_tensor_value_info("x", F, None)])
    with pytest.raises(ValueError, match="'flex'.*prob_mod must take one input and give one"):
        sonnx.prepare(_model(q, q, q, check=False, prob_mod=two))
    with pytest.raises(ValueError, match="'flex'.*K \\(B, Hkv, S, E\\)"):
        sonnx.prepare(_model(q, (1, 1, 2, 3), q, check=False,
                             score_mod=SOFT_CAP)).run(_feeds(q, (1, 1, 2, 3), q))
