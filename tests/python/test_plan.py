"""The static inference plan of sonnx (src/onnx/plan.h): folding, fusion,
capture and replay give the numbers of the plain node walk and of
onnxruntime; plans follow parameter changes; dynamic shapes still work."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from singa import autograd, device, opt, sonnx, tensor

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(autouse=True)
def _inference():
    """SINGA's default after import: not training, nothing recorded."""
    autograd.training = False


def _block(opset=17, act="Relu"):
    """x[N,8,6,6] -> Conv-BN-act -> Conv-BN (+x) -> act -> Shape/Gather/Concat/Reshape flatten
    -> Gemm -> y[N,5]: a ResNet basic block with a torch-style flatten."""
    rng = np.random.default_rng(0)
    inits = []

    def init(name, arr):
        inits.append(numpy_helper.from_array(arr.astype(np.float32), name))
        return name

    nodes = []

    def act_node(i, o):
        if act == "Relu":
            return helper.make_node("Relu", [i], [o])
        if act == "LeakyRelu":
            return helper.make_node("LeakyRelu", [i], [o], alpha=0.2)
        return helper.make_node("Clip", [i, "clip_lo", "clip_hi"], [o])

    inits.append(numpy_helper.from_array(np.array(0.0, np.float32), "clip_lo"))
    inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "clip_hi"))
    for k in (1, 2):
        init(f"w{k}", rng.standard_normal((8, 8, 3, 3)) * 0.2)
        init(f"g{k}", rng.uniform(0.5, 1.5, 8))
        init(f"b{k}", rng.standard_normal(8) * 0.1)
        init(f"m{k}", rng.standard_normal(8) * 0.1)
        init(f"v{k}", rng.uniform(0.5, 1.5, 8))
    nodes += [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g1", "b1", "m1", "v1"], ["n1"],
                         epsilon=1e-3),
        act_node("n1", "a1"),
        helper.make_node("Conv", ["a1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "g2", "b2", "m2", "v2"], ["n2"]),
        helper.make_node("Add", ["n2", "x"], ["s"]),
        act_node("s", "a2"),
        helper.make_node("Shape", ["a2"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
        helper.make_node("Concat", ["batch1", "minus1"], ["newshape"], axis=0),
        helper.make_node("Reshape", ["a2", "newshape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    inits += [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes0"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
    ]
    init("fc_w", rng.standard_normal((5, 8 * 6 * 6)) * 0.05)
    init("fc_b", rng.standard_normal(5) * 0.1)
    graph = helper.make_graph(
        nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _x(n, seed=1):
    return np.random.default_rng(seed).standard_normal((n, 8, 6, 6)).astype(np.float32)


def _ort(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def _np(ts):
    return [tensor.to_numpy(t) for t in ts]


@pytest.mark.parametrize("act", ["Relu", "LeakyRelu", "Clip"])
def test_plan_folds_fuses_and_matches_onnxruntime(act):
    model = _block(act=act)
    rep = sonnx.prepare(model, "CPU")
    assert rep.use_plan
    for n in (2, 2, 3, 2):  # build, replay, a new signature, replay the first
        x = _x(n, seed=n)
        y = tensor.to_numpy(rep.run([x])[0])
        np.testing.assert_allclose(y, _ort(model, x), rtol=RTOL, atol=ATOL)
    assert rep.num_plans == 2
    # BatchNormalization, Add and the activations fused into the convs, the
    # shape computation folded: 4 of 13 nodes are left.
    assert rep.planned_op_types == ["FusedConv", "FusedConv", "Reshape", "Gemm"]


def test_the_first_run_is_the_plans_first_replay():
    """A static model's plan is built from inferred shapes, without running
    the original nodes: the first run's results come from the fused plan, bit
    for bit those of the runs after it."""
    model = _block()
    rep = sonnx.prepare(model, "CPU")
    x = _x(2)
    first = tensor.to_numpy(rep.run([x])[0])
    np.testing.assert_array_equal(first, tensor.to_numpy(rep.run([x])[0]))
    np.testing.assert_allclose(first, _ort(model, x), rtol=RTOL, atol=ATOL)
    assert rep.num_plans == 1


@pytest.mark.parametrize("use_plan", [True, False])
def test_a_data_error_names_the_node_and_leaves_the_model_usable(use_plan):
    """An index out of range shows only in the kernel: the first run (the
    plan's build), a replay and the node walk raise it naming the node, and
    good inputs still run."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Gather", ["r", "i"], ["y"], axis=0, name="pick")],
        "pick", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
                 helper.make_tensor_value_info("i", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    rep = sonnx.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                        "CPU")
    rep.use_plan = use_plan
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for bad, good in (([0, 7], [1, 3]), ([-5, 0], [2, -1])):
        with pytest.raises(Exception, match=r"Gather \(node 'pick'\): index -?[57] is out of range"):
            rep.run([x, np.array(bad, np.int64)])
        y = tensor.to_numpy(rep.run([x, np.array(good, np.int64)])[0])
        np.testing.assert_array_equal(y, x[good])
    assert rep.num_plans == (1 if use_plan else 0)


def test_plan_and_node_walk_agree_on_cuts_and_aux_outputs():
    model = _block()
    planned, walked = sonnx.prepare(model, "CPU"), sonnx.prepare(model, "CPU")
    walked.use_plan = False
    x = _x(2)
    for kwargs in ({}, {"last_layers": -2}, {"aux_output": ["n1", "shape"]},
                   {"last_layers": -8, "aux_output": ["c2"]}):
        for _ in range(2):
            got, want = _np(planned.run([x], **kwargs)), _np(walked.run([x], **kwargs))
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
    assert walked.num_plans == 0


def test_results_of_a_run_are_not_overwritten_by_the_next():
    rep = sonnx.prepare(_block(), "CPU")
    rep.run([_x(2, seed=1)])  # builds the plan
    a = rep.run([_x(2, seed=2)])[0]
    a_values = tensor.to_numpy(a).copy()
    rep.run([_x(2, seed=3)])
    np.testing.assert_array_equal(tensor.to_numpy(a), a_values)


def test_a_changed_parameter_rebuilds_the_plan():
    model = _block()
    rep = sonnx.prepare(model, "CPU")
    x = _x(2)
    rep.run([x])
    rep.run([x])
    # A folded BatchNormalization parameter and a conv weight change in place.
    new_scale = np.full(8, 2.0, np.float32)
    rep.params["g1"].copy_from_numpy(new_scale)
    w2 = tensor.to_numpy(rep.params["w2"]) * 0.5
    rep.params["w2"].copy_from_numpy(w2)
    for init in model.graph.initializer:
        if init.name == "g1":
            init.CopyFrom(numpy_helper.from_array(new_scale, "g1"))
        if init.name == "w2":
            init.CopyFrom(numpy_helper.from_array(w2, "w2"))
    y = tensor.to_numpy(rep.run([x])[0])
    np.testing.assert_allclose(y, _ort(model, x), rtol=RTOL, atol=ATOL)


def _gemm_stack(opset):
    """Gemm (transB, bias row) -> Relu -> Gemm (B as is, no C) -> Clip ->
    Gemm (bias broadcast from [1, 3], alpha) -> LeakyRelu."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in [
        ("w1", rng.standard_normal((16, 12)) * 0.3), ("b1", rng.standard_normal(16)),
        ("w2", rng.standard_normal((16, 8)) * 0.3), ("w3", rng.standard_normal((8, 3))),
        ("b3", rng.standard_normal((1, 3))), ("lo", np.array(-0.5)), ("hi", np.array(0.7))]]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["g1"], transB=1),
             helper.make_node("Relu", ["g1"], ["r1"]),
             helper.make_node("Gemm", ["r1", "w2"], ["g2"]),
             helper.make_node("Clip", ["g2", "lo", "hi"], ["c2"]),
             helper.make_node("Gemm", ["c2", "w3", "b3"], ["g3"], alpha=0.5),
             helper.make_node("LeakyRelu", ["g3"], ["y"], alpha=0.2)]
    graph = helper.make_graph(nodes, "gemms",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("opset", [11, 13])
def test_gemms_and_their_activations_fuse_and_see_changed_weights(opset):
    model = _gemm_stack(opset)
    rep = sonnx.prepare(model, "CPU")
    x = np.random.default_rng(1).standard_normal((5, 12)).astype(np.float32)
    for _ in range(2):
        np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]), _ort(model, x),
                                   rtol=RTOL, atol=ATOL)
    assert rep.planned_op_types == ["FusedGemm", "FusedGemm", "FusedGemm"]
    # Weights changed in place: the packed copies are refreshed.
    for name in ("w1", "w2"):
        w = tensor.to_numpy(rep.params[name]) * -0.5
        rep.params[name].copy_from_numpy(w)
        for init in model.graph.initializer:
            if init.name == name:
                init.CopyFrom(numpy_helper.from_array(w, name))
    np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]), _ort(model, x),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("act,alpha,beta", [("Relu", 0.0, 0.0), ("LeakyRelu", 0.1, 0.0),
                                            ("Clip", -0.2, 0.3)])
@pytest.mark.parametrize("trans_b,c_shape", [(1, (6,)), (0, (1, 6)), (1, (4, 6)), (0, None)])
def test_fused_gemm_is_gemm_then_activation(reference, act, alpha, beta, trans_b, c_shape):
    from singa import _singa
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 5)).astype(np.float32)
    b = rng.standard_normal((6, 5) if trans_b else (5, 6)).astype(np.float32)
    ins = [a, b] + ([rng.standard_normal(c_shape).astype(np.float32)] if c_shape else [])
    want = a @ (b.T if trans_b else b) + (ins[2] if c_shape else 0)
    want = {"Relu": np.maximum(want, 0), "LeakyRelu": np.where(want < 0, alpha * want, want),
            "Clip": np.clip(want, alpha, beta)}[act]
    got = _singa.call_op("FusedGemm", [tensor.from_numpy(t).data for t in ins],
                         {"transB": trans_b, "activation": act, "act_alpha": alpha,
                          "act_beta": beta}, reference=reference, domain="ai.singa")[0]
    np.testing.assert_allclose(tensor.to_numpy(got), want, rtol=1e-5, atol=1e-5)


def test_training_steps_between_inference_runs_are_seen():
    model = _block()
    rep = sonnx.prepare(model, "CPU")
    walked = sonnx.prepare(model, "CPU")
    walked.use_plan = False
    x = _x(4)
    rep.run([x])
    rep.run([x])
    sgd = opt.SGD(lr=0.1)
    for r in (rep, walked):
        autograd.training = True
        try:
            out = r.run([tensor.from_numpy(x)])[0]
            loss = autograd.mse_loss(out, tensor.from_numpy(np.zeros((4, 5), np.float32)))
            for p, g in autograd.backward(loss):
                sgd.update(p, g)
        finally:
            autograd.training = False
    np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]),
                               tensor.to_numpy(walked.run([x])[0]), rtol=RTOL, atol=ATOL)


def test_shapes_computed_from_data_use_a_node_walk_plan():
    """NonZero's output shape depends on the input's values: the plan cannot
    be captured and must give the right shape for each input."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("NonZero", ["r"], ["nz"]),
         helper.make_node("Shape", ["nz"], ["s"]),
         helper.make_node("Cast", ["s"], ["y"], to=TensorProto.FLOAT)],
        "nz", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = sonnx.prepare(model, "CPU")
    for x in ([1, -1, 2, -2, 3, -3], [1, 1, 1, 1, -1, 1], [-1] * 6, [2] * 6):
        x = np.array(x, np.float32)
        y = tensor.to_numpy(rep.run([x])[0])
        np.testing.assert_array_equal(y, [1, (x > 0).sum()])


def test_a_walked_plan_keeps_its_constants_across_runs_and_failures():
    """A plan that walks its nodes (a shape read from an input's values)
    keeps the graph's constants between runs: they are there for every run,
    after a run that failed in a node and after a run (by the node walk)
    that gave an initializer's input another value."""
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
         helper.make_node("Add", ["r", "c"], ["a"]),
         helper.make_node("Mul", ["a", "k"], ["y"])],
        "walk", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                 helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.float32(10), "c"), numpy_helper.from_array(np.float32(2), "k")])
    graph.input.append(helper.make_tensor_value_info("k", TensorProto.FLOAT, []))
    rep = sonnx.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                        "CPU")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for shape in ([3, 2], [6, 1], [1, 6]):
        y = tensor.to_numpy(rep.run([x, np.array(shape, np.int64)])[0])
        np.testing.assert_array_equal(y, (x.reshape(shape) + 10) * 2)
        y = tensor.to_numpy(rep.run([x, np.array(shape, np.int64), np.float32(-1)])[0])
        np.testing.assert_array_equal(y, -(x.reshape(shape) + 10))
        with pytest.raises(Exception, match="reshape"):
            rep.run([x, np.array([4, 4], np.int64)])
    assert rep.num_plans == 1


def test_reshape_copying_a_transposed_input_keeps_shapes_static():
    """A channel shuffle as torch exports it: Reshape of a Transpose (a copy,
    the input being non-contiguous) to a shape computed from Shape. The copy
    reads values but decides no shape, so the shape subgraphs after it fold
    too."""
    c = lambda name, v: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=numpy_helper.from_array(np.array(v, np.int64)))
    graph = helper.make_graph(
        [c("g", [2]), c("axes", [0]), c("tail", [3, 2, 2]), c("idx", 0), c("chw", [6, 2, 2]),
         helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "idx"], ["n"], axis=0),
         helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
         helper.make_node("Concat", ["n1", "g", "tail"], ["split"], axis=0),
         helper.make_node("Concat", ["n1", "chw"], ["back"], axis=0),
         helper.make_node("Relu", ["x"], ["r"]),
         helper.make_node("Reshape", ["r", "split"], ["r5"]),
         helper.make_node("Transpose", ["r5"], ["t"], perm=[0, 2, 1, 3, 4]),
         helper.make_node("Reshape", ["t", "back"], ["y0"]),
         helper.make_node("Shape", ["y0"], ["s2"]),
         helper.make_node("Gather", ["s2", "idx"], ["n2"], axis=0),
         helper.make_node("Unsqueeze", ["n2", "axes"], ["n21"]),
         helper.make_node("Concat", ["n21", "chw"], ["back2"], axis=0),
         helper.make_node("Reshape", ["y0", "back2"], ["y1"]),
         helper.make_node("Relu", ["y1"], ["y"])],
        "shuffle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    rep = sonnx.prepare(model, "CPU")
    x = np.random.default_rng(0).standard_normal((3, 6, 2, 2)).astype(np.float32)
    want = np.maximum(x, 0).reshape(3, 2, 3, 2, 2).transpose(0, 2, 1, 3, 4).reshape(3, 6, 2, 2)
    for _ in range(2):
        np.testing.assert_array_equal(tensor.to_numpy(rep.run([x])[0]), want)
    assert "Shape" not in rep.planned_op_types, rep.planned_op_types


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("act,alpha,beta", [("", 0.0, 0.0), ("Relu", 0.0, 0.0),
                                            ("LeakyRelu", 0.1, 0.0), ("Clip", -0.2, 0.3),
                                            ("Swish", 0.0, 0.0), ("HardSwish", 0.0, 0.0)])
@pytest.mark.parametrize("with_z", [False, True])
def test_fused_conv_is_conv_plus_z_then_activation(reference, act, alpha, beta, with_z):
    """The planner's FusedConv (ai.singa), fast (oneDNN post-ops) and
    reference kernels, against Conv, Add and the activation run one by one."""
    from singa import _singa
    rng = np.random.default_rng(0)
    x = tensor.from_numpy(rng.standard_normal((2, 16, 7, 7)).astype(np.float32))
    w = tensor.from_numpy(rng.standard_normal((16, 8, 3, 3)).astype(np.float32) * 0.2)
    b = tensor.from_numpy(rng.standard_normal(16).astype(np.float32))
    z = tensor.from_numpy(rng.standard_normal((2, 16, 4, 4)).astype(np.float32))
    geo = {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": 2}
    y = _singa.call_op("Conv", [x.data, w.data, b.data], geo)[0]
    if with_z:
        y = _singa.call_op("Add", [y, z.data])[0]
    want = tensor.to_numpy(y).copy()
    if act == "Relu":
        want = np.maximum(want, 0)
    elif act == "LeakyRelu":
        want = np.where(want < 0, alpha * want, want)
    elif act == "Clip":
        want = np.clip(want, alpha, beta)
    elif act == "Swish":
        want = want / (1 + np.exp(-want))
    elif act == "HardSwish":
        want = want * np.clip(want / 6 + 0.5, 0, 1)
    inputs = [x.data, w.data, b.data] + ([z.data] if with_z else [])
    got = _singa.call_op("FusedConv", inputs,
                         dict(geo, activation=act, alpha=alpha, beta=beta),
                         reference=reference, domain="ai.singa")[0]
    np.testing.assert_allclose(tensor.to_numpy(got), want, rtol=1e-5, atol=1e-5)


def _held_block(c):
    """FusedConv's block for c channels: oneDNN's (16 with AVX-512, else 8)
    when c is a multiple of it, else c (channels-last)."""
    from singa import _singa
    bk = _singa.channel_block()
    return bk if c % bk == 0 else c


def _to_blocked(a):
    """NCHW -> nChw<B>c (B = _held_block(C)), as a tensor of the NCHW shape
    (FusedConv's `blocked`)."""
    n, c, h, w = a.shape
    bk = _held_block(c)
    return np.ascontiguousarray(a.reshape(n, c // bk, bk, h, w).transpose(0, 1, 3, 4, 2)) \
        .reshape(n, c, h, w)


def _from_blocked(a):
    n, c, h, w = a.shape
    bk = _held_block(c)
    return a.reshape(n, c // bk, h, w, bk).transpose(0, 1, 4, 2, 3).reshape(n, c, h, w)


@pytest.mark.parametrize("reference", [False, True])
@pytest.mark.parametrize("bits", [1, 2, 3, 6, 7])
@pytest.mark.parametrize("c,m", [(32, 16), (10, 6)])
def test_fused_conv_reads_and_writes_blocked_layouts(reference, bits, c, m):
    """FusedConv's `blocked` bits (X 1, Y 2, Z 4): the same numbers as the
    plain convolution, in nChw<B>c where a bit says so (channels-last for
    channel counts that are not a multiple of oneDNN's block), fast and
    reference."""
    from singa import _singa
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, c, 7, 7)).astype(np.float32)
    w = (rng.standard_normal((m, c // 2, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    z = rng.standard_normal((2, m, 7, 7)).astype(np.float32)
    geo = {"pads": [1, 1, 1, 1], "group": 2}
    want = np.clip(tensor.to_numpy(_singa.call_op(
        "Conv", [tensor.from_numpy(a).data for a in (x, w, b)], geo)[0]) + z, 0, 1.5)
    feed = [_to_blocked(x) if bits & 1 else x, w, b, _to_blocked(z) if bits & 4 else z]
    got = _singa.call_op("FusedConv", [tensor.from_numpy(a).data for a in feed],
                         dict(geo, activation="Clip", alpha=0.0, beta=1.5, blocked=bits),
                         reference=reference, domain="ai.singa")[0]
    got = tensor.to_numpy(got)
    np.testing.assert_allclose(_from_blocked(got) if bits & 2 else got, want, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("c,m,hw,k,stride,dilation,pads,group", [
    (3, 32, (9, 30), 3, 1, 1, [1, 1, 1, 1], 1),     # NCHW input (a first layer)
    (32, 64, (5, 17), 3, 1, 1, [1, 1, 1, 1], 1),    # nChw16c in and out
    (16, 32, (11, 13), 3, 2, 1, [0, 1, 2, 1], 1),   # stride 2, unequal pads
    (16, 16, (7, 9), 3, 1, 2, [2, 2, 2, 2], 1),     # dilation
    (10, 32, (6, 40), 1, 1, 1, [0, 0, 0, 0], 1),    # channels-last input, 1x1
    (32, 32, (3, 3), 5, 1, 1, [1, 1, 1, 1], 1),     # every column reads padding
    (16, 32, (4, 2), 3, 1, 1, [1, 3, 1, 3], 1),     # wider padding than input
    (16, 24, (6, 14), 3, 1, 1, [1, 1, 1, 1], 1),    # a last block of 8 channels
    (32, 32, (9, 21), 3, 1, 1, [1, 1, 1, 1], 32),   # depthwise
    (48, 48, (10, 11), 5, 2, 1, [2, 1, 2, 2], 48),  # depthwise, stride 2, unequal pads
])
@pytest.mark.parametrize("y_held", [True, False])
@pytest.mark.parametrize("act,alpha,beta,with_z", [("Relu", 0.0, 0.0, True),
                                                   ("Clip", -0.2, 0.3, False),
                                                   ("Swish", 0.0, 0.0, True)])
def test_held_layout_convolutions_rent_the_direct_kernel_then_buy_onednn(
        monkeypatch, c, m, hw, k, stride, dilation, pads, group, y_held, act, alpha, beta, with_z):
    """A FusedConv of held layouts runs cpu::DirectConv until it has run
    SINGA_CONV_RENT_MS, then a oneDNN primitive: both give Conv's numbers plus
    Z and the activation, whichever of X and Y (and Z, as Y) are held. Batch 1
    rents for good, batch 2 buys at once."""
    from singa import _singa
    rng = np.random.default_rng(7)
    geo = {"pads": pads, "strides": [stride] * 2, "dilations": [dilation] * 2, "group": group}
    w = (rng.standard_normal((m, c // group, k, k)) * 0.2).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    # X held, but the first layer's; Z as Y.
    bits = (0 if c == 3 else 1) | (6 if y_held and with_z else 2 if y_held else 0)
    for n, rent in ((1, "1e9"), (2, "0")):
        monkeypatch.setenv("SINGA_CONV_RENT_MS", rent)
        x = rng.standard_normal((n, c) + hw).astype(np.float32)
        y = _singa.call_op("Conv", [tensor.from_numpy(a).data for a in (x, w, b)], geo)[0]
        want = tensor.to_numpy(y).copy()
        z = rng.standard_normal(want.shape).astype(np.float32)
        want = want + z if with_z else want
        want = {"Relu": lambda v: np.maximum(v, 0), "Clip": lambda v: np.clip(v, alpha, beta),
                "Swish": lambda v: v / (1 + np.exp(-v))}[act](want)
        feed = [_to_blocked(x) if bits & 1 else x, w, b]
        feed += [_to_blocked(z) if bits & 4 else z] if with_z else []
        for _ in range(2):
            got = _singa.call_op("FusedConv", [tensor.from_numpy(a).data for a in feed],
                                 dict(geo, activation=act, alpha=alpha, beta=beta, blocked=bits),
                                 domain="ai.singa")[0]
            got = tensor.to_numpy(got)
            np.testing.assert_allclose(_from_blocked(got) if bits & 2 else got, want, rtol=1e-5,
                                       atol=1e-5)


@pytest.mark.parametrize("rent,hw", [("1e9", 21), ("0", 19)])
def test_a_plan_runs_its_convolutions_in_the_direct_kernel_while_they_rent(monkeypatch, rent, hw):
    """A new shape's convolutions run in singa's direct kernel while they rent
    (SINGA_CONV_RENT_MS), else their layout trial runs oneDNN's candidates
    (and the direct kernel, one of them) from the first call on; all agree
    with onnxruntime."""
    monkeypatch.setenv("SINGA_CONV_RENT_MS", rent)
    model, x = _conv_stack(n_convs=3, c=48, hw=hw)
    rep = sonnx.prepare(model)
    want = _ort(model, x)
    seen = set()
    for _ in range(2):
        p = rep.profile([x])
        np.testing.assert_allclose(_np(p.outputs)[0], want, rtol=RTOL, atol=ATOL)
        kernels = {kn for n in p.nodes if "Conv" in n["op_type"] for kn in n["kernels"]}
        assert rent == "0" or kernels == {"singa:direct_conv"}, kernels
        seen |= kernels
    assert rent != "0" or any(k.startswith("jit") for k in seen), seen


@pytest.fixture
def one_thread():
    """Singa on one thread for a test that counts the calls a convolution's
    layout trial takes to settle. A convolution keeps one entry per thread
    count, and a process that finds the CPU contended midway runs on one
    thread while it stays so (parallel.h, CpuContended): the calls split
    between two entries and neither trial settles. Seen on a 2-core host with a
    compile running beside the tests."""
    threads = device.get_num_threads()
    device.set_num_threads(1)
    yield
    device.set_num_threads(threads)


def test_a_held_convolutions_layout_trial_times_the_direct_kernel_too(monkeypatch, one_thread):
    """A held-layout convolution of a new shape class times singa's direct
    kernel beside oneDNN's candidates, one candidate a call: over the trial
    both kinds run, every call's result agrees with onnxruntime, and after
    it each convolution keeps one kernel."""
    monkeypatch.setenv("SINGA_CONV_RENT_MS", "0")
    # A shape class no other test builds: a class with a pick builds it alone.
    model, x = _conv_stack(n_convs=3, c=80, hw=13)
    rep = sonnx.prepare(model)
    want = _ort(model, x)
    seen, last = set(), None
    for _ in range(16):
        p = rep.profile([x])
        np.testing.assert_allclose(_np(p.outputs)[0], want, rtol=RTOL, atol=ATOL)
        last = [tuple(n["kernels"]) for n in p.nodes if "Conv" in n["op_type"]]
        seen.update(kn for ks in last for kn in ks)
    assert "singa:direct_conv" in seen and any(k.startswith("jit") for k in seen), seen
    assert len(last) == 3 and all(ks for ks in last), last
    for _ in range(3):
        again = [tuple(n["kernels"]) for n in rep.profile([x]).nodes if "Conv" in n["op_type"]]
        assert again == last


def test_direct_convolutions_over_inputs_growing_and_shrinking_agree_with_onnxruntime(
        monkeypatch):
    """DirectConv widens each input into a scratch buffer that its thread
    keeps and grows: over widths that grow and shrink (a text recognizer's
    lines), every call's results are its own input's, with no columns of an
    earlier, wider one."""
    monkeypatch.setenv("SINGA_CONV_RENT_MS", "1e9")
    rng = np.random.default_rng(9)
    inits, nodes, prev, c = [], [], "x", 3
    for i, m in enumerate((16, 32)):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((m, c, 3, 3)) * 0.2).astype(np.float32), f"W{i}"))
        nodes += [helper.make_node("Conv", [prev, f"W{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        prev, c = f"r{i}", m
    graph = helper.make_graph(
        nodes, "convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, "W"])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    rep = sonnx.prepare(model)
    for width in (37, 12, 50, 5, 37, 29):
        x = rng.standard_normal((1, 3, 8, width)).astype(np.float32)
        p = rep.profile([x])
        assert {k for n in p.nodes for k in n["kernels"]} == {"singa:direct_conv"}
        np.testing.assert_allclose(_np(p.outputs)[0], _ort(model, x), rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(_np(rep.run([x]))[0], _ort(model, x), rtol=RTOL, atol=ATOL)


def test_a_sequence_head_runs_no_onednn_kernel_made_per_length():
    """A CRNN's head, x[T, 1, 128] @ W[128, 37] + b -> Softmax, at each new
    sequence length T: the product by the weight (a broadcast batch's rows)
    and the row softmax run singa's loops, which serve every length, not a
    oneDNN primitive generated for each."""
    rng = np.random.default_rng(8)
    inits = [numpy_helper.from_array((rng.standard_normal((128, 37)) * 0.1).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal(37).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "W"], ["m"], name="matmul"),
             helper.make_node("Add", ["m", "b"], ["a"], name="add"),
             helper.make_node("Softmax", ["a"], ["y"], name="softmax", axis=2)]
    graph = helper.make_graph(
        nodes, "head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["T", 1, 128])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rep = sonnx.prepare(model)
    for t in (33, 57, 90):
        x = rng.standard_normal((t, 1, 128)).astype(np.float32)
        p = rep.profile([x])
        np.testing.assert_allclose(_np(p.outputs)[0], _ort(model, x), rtol=RTOL, atol=ATOL)
        kernels = {n["name"]: n["kernels"] for n in p.nodes}
        assert kernels["matmul"] == [] and kernels["softmax"] == [], kernels


def _mobile_block(ci=16, c=32):
    """x[N,ci,8,8] -> Conv ci->c + BN + Clip -> depthwise 3x3 + Clip -> 1x1 c->c (+ the
    first conv's result) -> Relu -> GlobalAveragePool: the activations stay blocked
    between the convolutions (nChw<B>c, or channels-last when c is not a multiple of
    oneDNN's block), the residual as Z."""
    rng = np.random.default_rng(3)
    inits = []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr, np.float32), name))
        return name

    init("w1", rng.standard_normal((c, ci, 1, 1)) * 0.3)
    init("g", rng.uniform(0.5, 1.5, c)), init("bb", rng.standard_normal(c) * 0.1)
    init("m", rng.standard_normal(c) * 0.1), init("v", rng.uniform(0.5, 1.5, c))
    init("wd", rng.standard_normal((c, 1, 3, 3)) * 0.3)
    init("w3", rng.standard_normal((c, c, 1, 1)) * 0.2)
    init("b3", rng.standard_normal(c) * 0.1)
    init("lo", 0.0), init("hi", 6.0)
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"]),
        helper.make_node("BatchNormalization", ["c1", "g", "bb", "m", "v"], ["n1"]),
        helper.make_node("Clip", ["n1", "lo", "hi"], ["a1"]),
        helper.make_node("Conv", ["a1", "wd"], ["c2"], pads=[1, 1, 1, 1], group=c),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["a2"]),
        helper.make_node("Conv", ["a2", "w3", "b3"], ["c3"]),
        helper.make_node("Add", ["c3", "a1"], ["s"]),
        helper.make_node("Relu", ["s"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mobile", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", ci, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("ci,c", [(16, 32), (6, 10)])
def test_activations_stay_blocked_between_convolutions(ci, c):
    model = _mobile_block(ci, c)
    x = np.random.default_rng(4).standard_normal((2, ci, 8, 8)).astype(np.float32)
    rep = sonnx.prepare(model, "CPU")
    walked = sonnx.prepare(model, "CPU")
    walked.use_plan = False
    want = _ort(model, x)
    for _ in range(3):  # the dry run, then the captured plan
        np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]), want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(tensor.to_numpy(walked.run([x])[0]), want, rtol=RTOL, atol=ATOL)
    assert rep.planned_op_types == ["FusedConv"] * 3 + ["GlobalAveragePool"]
    # The intermediate a1 as an extra output stays NCHW (and the rest still matches).
    both = onnx.ModelProto()
    both.CopyFrom(model)
    both.graph.output.append(
        helper.make_tensor_value_info("a1", TensorProto.FLOAT, ["N", c, 8, 8]))
    sess = ort.InferenceSession(both.SerializeToString(), providers=["CPUExecutionProvider"])
    want_y, want_a1 = sess.run(None, {"x": x})
    for _ in range(2):
        y, got_a1 = rep.run([x], aux_output=["a1"])
        np.testing.assert_allclose(tensor.to_numpy(y), want_y, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(tensor.to_numpy(got_a1), want_a1, rtol=RTOL, atol=ATOL)


def _csp_block(pool, c=32):
    """x[N,c,H,W] -> Conv -> a pool -> Conv -> Split(c/2, c/2) -> Conv + the other half
    -> Concat -> Sigmoid -> Conv -> ConvTranspose (2 groups) + BN -> Relu: a detector's CSP block
    and a segmenter's upsampling; the values between the convolutions stay blocked."""
    rng = np.random.default_rng(5)
    h = c // 2
    inits = [numpy_helper.from_array(np.array([h, h], np.int64), "halves")]

    def init(name, shape, scale=0.2):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    for name, shape in (("w1", (c, c, 3, 3)), ("w2", (c, c, 1, 1)), ("w3", (h, h, 3, 3)),
                        ("w4", (c, c, 1, 1)), ("wt", (c, c // 2, 2, 2))):
        init(name, shape)
    init("bt", (c,))
    bn = ["g", "bb", "m", "v"]
    for name in bn:
        inits.append(numpy_helper.from_array(rng.uniform(0.5, 1.5, c).astype(np.float32), name))
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        pool,
        helper.make_node("Conv", ["p", "w2"], ["c2"]),
        helper.make_node("Split", ["c2", "halves"], ["a", "b"], axis=1),
        helper.make_node("Conv", ["a", "w3"], ["c3"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c3", "b"], ["s"]),
        helper.make_node("Concat", ["s", "a"], ["j"], axis=1),
        helper.make_node("Sigmoid", ["j"], ["g_"]),
        helper.make_node("Conv", ["g_", "w4"], ["c4"]),
        helper.make_node("ConvTranspose", ["c4", "wt", "bt"], ["t"], strides=[2, 2], group=2),
        helper.make_node("BatchNormalization", ["t"] + bn, ["n"]),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "csp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", c, 9, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", c, None, None])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("pool,blocked", [
    (helper.make_node("MaxPool", ["c1"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
     "BlockedMaxPool"),
    (helper.make_node("MaxPool", ["c1"], ["p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                      ceil_mode=1, strides=[2, 2], dilations=[1, 1]), "BlockedMaxPool"),
    (helper.make_node("AveragePool", ["c1"], ["p"], kernel_shape=[3, 3], strides=[2, 2],
                      pads=[1, 1, 1, 1], count_include_pad=1), "BlockedAveragePool"),
    (helper.make_node("AveragePool", ["c1"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                      ceil_mode=1), "BlockedAveragePool"),
    (helper.make_node("AveragePool", ["c1"], ["p"], kernel_shape=[3, 3], pads=[1, 0, 2, 1]),
     "BlockedAveragePool"),
    (helper.make_node("MaxPool", ["c1"], ["p"], kernel_shape=[2, 3], pads=[1, 1, 1, 1],
                      dilations=[2, 1]), "BlockedMaxPool"),
])
def test_blocked_values_flow_through_pools_splits_and_concats(pool, blocked):
    model = _csp_block(pool)
    x = np.random.default_rng(6).standard_normal((2, 32, 9, 9)).astype(np.float32)
    rep = sonnx.prepare(model, "CPU")
    walked = sonnx.prepare(model, "CPU")
    walked.use_plan = False
    want = _ort(model, x)
    for _ in range(3):
        np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]), want, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(tensor.to_numpy(walked.run([x])[0]), want, rtol=RTOL, atol=ATOL)
    # The Add is the third convolution's Z; the BN folds into the ConvTranspose's weights.
    assert rep.planned_op_types == ["FusedConv", blocked, "FusedConv", "Split", "FusedConv",
                                    "Concat", "Sigmoid", "FusedConv", "ConvTranspose", "Relu"]
    # A value between them asked for as well comes out in NCHW.
    sess = ort.InferenceSession(_with_output(model, "j").SerializeToString(),
                                providers=["CPUExecutionProvider"])
    want_y, want_j = sess.run(None, {"x": x})
    y, got_j = rep.run([x], aux_output=["j"])
    np.testing.assert_allclose(tensor.to_numpy(y), want_y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(tensor.to_numpy(got_j), want_j, rtol=RTOL, atol=ATOL)


def _with_output(model, name):
    both = onnx.ModelProto()
    both.CopyFrom(model)
    both.graph.output.append(helper.make_empty_tensor_value_info(name))
    return both


def test_the_build_run_leaves_nothing_in_the_pool_cache():
    """A model whose shapes come from data (NonZero here) builds its plan by
    running every node; the temporaries go back to the OS instead of the
    pool's cache, where they would sit beside the replay's arena in size
    classes it never asks for. Each value of the chain has its own size
    class; measured after the first run: 28 blocks of x's size cached when
    the build run caches, 8 when it does not."""
    n = 6
    nodes = [helper.make_node("NonZero", ["x"], ["nz"])]
    nodes += [helper.make_node("Concat", ["x" if i == 0 else f"v{i}", "x"], [f"v{i + 1}"], axis=0)
              for i in range(n)]
    nodes += [helper.make_node("ReduceSum", [f"v{n}"], ["y"], keepdims=0)]
    model = helper.make_model(
        helper.make_graph(nodes, "chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, []),
                           helper.make_tensor_value_info("nz", TensorProto.INT64, [2, None])]),
        opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
    device.empty_cache()
    rep = sonnx.prepare(model)
    y = _np(rep.run([x]))[0]
    np.testing.assert_allclose(y, _ort(model, x), rtol=RTOL, atol=1e-2)
    assert device.memory_stats().cached_bytes <= 12 * x.nbytes, "the build run's values were cached"


def test_a_model_prepared_again_reuses_the_memory_of_the_one_dropped():
    """The plan build returns its own temporaries to the OS, but the packed
    weights and arena of the same model prepared and dropped before stay in
    the pool's cache for it: their pages are already the process's (mapped
    afresh, a DB text detector's first run faulted in 17 MB and took 13 ms
    instead of 8). Measured: 12 blocks from the OS on each later first run
    when the build emptied the cache, 2 when it keeps it."""
    model, x = _conv_stack(c=64, hw=32)

    def first_run_os_allocs():
        rep = sonnx.prepare(model)
        before = device.memory_stats().num_os_allocs
        rep.run([x])
        return device.memory_stats().num_os_allocs - before

    first = first_run_os_allocs()
    again = [first_run_os_allocs() for _ in range(3)]
    assert max(again) <= 4 < first, (first, again)


@pytest.mark.parametrize("op", ["RandomUniformLike", "Bernoulli", "Dropout"])
def test_nondeterministic_ops_on_constants_are_not_folded(op):
    """Ops registered nondeterministic (random ops, Dropout) stay in the plan
    even when their inputs are constants; the random ones draw anew on every
    run."""
    c = helper.make_node("Constant", [], ["c"],
                         value=numpy_helper.from_array(np.full(64, 0.5, np.float32)))
    graph = helper.make_graph(
        [c, helper.make_node(op, ["c"], ["r"]), helper.make_node("Add", ["x", "r"], ["y"])],
        "random", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64])])
    rep = sonnx.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                        "CPU")
    x = np.zeros(64, np.float32)
    runs = [tensor.to_numpy(rep.run([x])[0]).copy() for _ in range(3)]
    assert rep.num_plans == 1
    assert rep.planned_op_types == [op, "Add"]
    if op == "Dropout":
        for y in runs:
            np.testing.assert_array_equal(y, 0.5)
        return
    assert not np.array_equal(runs[1], runs[2])
    for y in runs:
        assert ((y >= 0) & (y < 1) if op == "RandomUniformLike" else (y == 0) | (y == 1)).all()


def test_a_convolution_never_mixes_blocked_and_channels_last():
    """Conv 4->12 -> Conv 12->16 -> Conv 16->16: 12 channels would be held
    channels-last and 16 in nChw<B>c (B = 8 or 16), and a convolution reading
    one and writing the other has only oneDNN's reference implementation
    (MobileNet-V2's 24 -> 144 channels on AVX-512 ran 60x slower than
    onnxruntime). Those values stay NCHW, so no Conv becomes a FusedConv."""
    rng = np.random.default_rng(5)
    inits = [numpy_helper.from_array((rng.standard_normal(s) * 0.3).astype(np.float32), n)
             for n, s in [("w1", (12, 4, 1, 1)), ("w2", (16, 12, 3, 3)), ("w3", (16, 16, 1, 1))]]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"]),
             helper.make_node("Conv", ["a", "w2"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["b", "w3"], ["c"]),
             helper.make_node("GlobalAveragePool", ["c"], ["y"])]
    graph = helper.make_graph(
        nodes, "mixed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(6).standard_normal((2, 4, 8, 8)).astype(np.float32)
    rep = sonnx.prepare(model, "CPU")
    want = _ort(model, x)
    for _ in range(2):
        np.testing.assert_allclose(tensor.to_numpy(rep.run([x])[0]), want, rtol=RTOL, atol=ATOL)
    assert rep.planned_op_types == ["Conv"] * 3 + ["GlobalAveragePool"]


# ---- the profiler --------------------------------------------------------

def _conv_stack(n_convs=6, c=32, hw=48):
    """x[1,c,hw,hw] -> n_convs x (Conv 3x3 -> Relu) -> GlobalAveragePool: enough work per node
    that the nodes' times make up the run's."""
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(n_convs):
        inits.append(numpy_helper.from_array(
            (rng.standard_normal((c, c, 3, 3)) * 0.1).astype(np.float32), f"W{i}"))
        nodes += [helper.make_node("Conv", [prev, f"W{i}"], [f"c{i}"], name=f"conv{i}",
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}")]
        prev = f"r{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["y"], name="pool"))
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])
    graph = helper.make_graph(nodes, "stack", [x_info],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
    return model, x


@pytest.mark.parametrize("use_plan", [True, False])
def test_a_profile_covers_every_node_and_adds_up_to_the_run(monkeypatch, use_plan):
    # The convolutions' primitives from the first run on, and their layout
    # trials over (at most 3 candidates, 4 calls each), so that the
    # profile's results are the run's to the bit.
    monkeypatch.setenv("SINGA_CONV_RENT_MS", "0")
    model, x = _conv_stack()
    rep = sonnx.prepare(model)
    rep._rep.use_plan = use_plan
    for _ in range(12):
        rep.run([x])
    want = _np(rep.run([x]))
    p = rep.profile([x])
    np.testing.assert_array_equal(_np(p.outputs)[0], want[0])
    assert p.planned == use_plan
    assert p.replayed == use_plan
    if use_plan:  # the plan's nodes: each Conv fused with its Relu
        assert [n["op_type"] for n in p.nodes] == rep._rep.planned_op_types
        assert [n["name"] for n in p.nodes] == [f"conv{i}" for i in range(6)] + ["pool"]
    else:
        assert [n["name"] for n in p.nodes] == [n.name for n in model.graph.node]
    assert p.nodes[0]["inputs"][0] == "float32[1,32,48,48]"
    assert all(n["kernels"] for n in p.nodes if "Conv" in n["op_type"]), p.nodes
    starts = [n["start_us"] for n in p.nodes]
    assert starts == sorted(starts)
    node_us = sum(n["duration_us"] for n in p.nodes)
    # Outside the nodes: the inputs copied in, the results copied out.
    assert 0.8 * p.duration_us <= node_us <= p.duration_us, (node_us, p.duration_us)


def test_run_writes_its_profile_as_a_chrome_trace(tmp_path):
    model, x = _conv_stack(n_convs=2)
    rep = sonnx.prepare(model)
    out = rep.run([x], profile=tmp_path / "trace.json")
    np.testing.assert_array_equal(_np(out)[0], _np(rep.run([x]))[0])
    events = json.loads((tmp_path / "trace.json").read_text())
    assert [e["ph"] for e in events] == ["X"] * 4
    run, nodes = events[0], events[1:]
    assert run["cat"] == "Session" and [e["cat"] for e in nodes] == ["Node"] * 3
    assert [e["args"]["op_name"] for e in nodes] == ["FusedConv", "FusedConv",
                                                     "GlobalAveragePool"]
    assert all(run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"] + 1
               for e in nodes)
    with pytest.raises(ValueError, match="all_outputs"):
        rep.run([x], profile=tmp_path / "t.json", all_outputs=True)


def test_the_profile_of_a_control_flow_model_walks_its_nodes():
    """NonZero makes the plan walk its nodes: each is timed all the same."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("NonZero", ["r"], ["nz"], name="nonzero"),
         helper.make_node("Shape", ["nz"], ["y"], name="shape")],
        "nz", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2])])
    rep = sonnx.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = np.array([1, -1, 2, -2, 3, -3], np.float32)
    p = rep.profile([x])
    assert [n["name"] for n in p.nodes] == ["relu", "nonzero", "shape"]
    assert tensor.to_numpy(p.outputs[0]).tolist() == [1, 3]


CONV_SIZES_SCRIPT = """
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from singa import device, sonnx
device.set_num_threads(1)  # as the one_thread fixture says
w = numpy_helper.from_array(np.random.rand(32, 32, 1, 1).astype(np.float32), "W")
g = helper.make_graph([helper.make_node("Conv", ["x", "W"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, "W"])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
rep = sonnx.prepare(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
for width, calls in ((40, 12), (48, 1), (56, 1), (80, 12)):
    print(f"== width {width}", flush=True)
    for _ in range(calls):
        rep.run([np.random.rand(1, 32, 8, width).astype(np.float32)])
"""


def _conv_creates(cache_dir):
    """{width: convolution primitives created} of CONV_SIZES_SCRIPT in a new
    process whose layout picks are kept in `cache_dir` ("": the process only)."""
    p = subprocess.run([sys.executable, "-c", CONV_SIZES_SCRIPT], capture_output=True, text=True,
                       env={**os.environ, "ONEDNN_VERBOSE": "all",
                            "SINGA_CACHE_DIR": str(cache_dir)}, timeout=120)
    assert p.returncode == 0, p.stderr
    creates, width = {}, None
    for line in p.stdout.splitlines():
        if line.startswith("== width"):
            width = int(line.split()[-1])
        elif line.startswith("onednn_verbose,create") and ",convolution," in line:
            creates[width] = creates.get(width, 0) + 1
    return creates


def test_a_new_input_size_of_a_known_shape_class_builds_one_convolution():
    """Convolution layouts are timed once per shape class (batch and spatial
    sizes rounded down to powers of two): widths 40 and 80 time the
    candidates over their calls, widths 48 and 56 build the pick of width
    40's class alone."""
    creates = _conv_creates("")
    assert creates[40] >= 2 and creates[80] >= 2, creates
    assert creates[48] == creates[56] == 1, creates


def test_layout_picks_are_kept_for_the_next_process(tmp_path):
    """The first process times each shape class and writes its picks to
    the cache directory; the next one reads them and times nothing."""
    first = _conv_creates(tmp_path)
    assert first[40] >= 2 and first[80] >= 2, first
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].name.startswith("conv-layouts-"), files
    lines = files[0].read_text().splitlines()
    assert len(lines) == 2 and all(line.startswith("Conv;float32[1,32,8,") for line in lines)
    assert _conv_creates(tmp_path) == {40: 1, 48: 1, 56: 1, 80: 1}
    # A pick that names no candidate is timed again, and the file stays.
    files[0].write_text("".join(line.split("\t")[0] + "\tnot-a-layout\n" for line in lines))
    again = _conv_creates(tmp_path)
    assert again[40] >= 2 and again[80] >= 2, again


HELD_CONV_SCRIPT = """
import sys
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from singa import device, sonnx, tensor
device.set_num_threads(1)  # as the one_thread fixture says
rng = np.random.default_rng(0)
nodes, inits, prev = [], [], "x"
for i in range(3):
    inits.append(numpy_helper.from_array(
        (rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(np.float32), f"W{i}"))
    nodes += [helper.make_node("Conv", [prev, f"W{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
    prev = f"r{i}"
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                [1, 32, 8, 24])],
                      [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
x = rng.standard_normal((1, 32, 8, 24)).astype(np.float32)
want = ort.InferenceSession(model.SerializeToString(),
                            providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
rep = sonnx.prepare(model)
for _ in range(16):
    p = rep.profile([x])
    np.testing.assert_allclose(tensor.to_numpy(p.outputs[0]), want, rtol=1e-4, atol=1e-5)
print("kernels", sorted({k for n in p.nodes if "Conv" in n["op_type"] for k in n["kernels"]}))
"""


def test_a_direct_kernel_pick_is_kept_for_the_next_process(tmp_path):
    """A held-layout convolution whose shape class was picked for singa's
    direct kernel (in the layout cache an earlier process wrote) runs it
    from its first call on: no oneDNN convolution is made."""
    env = {**os.environ, "ONEDNN_VERBOSE": "all", "SINGA_CACHE_DIR": str(tmp_path),
           "SINGA_CONV_RENT_MS": "0"}

    def run():
        p = subprocess.run([sys.executable, "-c", HELD_CONV_SCRIPT], capture_output=True,
                           text=True, env=env, timeout=120)
        assert p.returncode == 0, p.stderr
        creates = sum(line.startswith("onednn_verbose,create") and ",convolution," in line
                      for line in p.stdout.splitlines())
        return creates, p.stdout.splitlines()[-1]

    run()
    [cache] = list(tmp_path.iterdir())
    lines = cache.read_text().splitlines()
    held = [line for line in lines if ";blocked" in line.split("\t")[0]]
    assert held, lines
    cache.write_text("".join(line.split("\t")[0] + "\tdirect\n" for line in held))
    creates, kernels = run()
    assert creates == 0 and kernels == "kernels ['singa:direct_conv']", (creates, kernels)


def test_plans_for_ever_new_shapes_stay_bounded():
    """A model called on inputs of ever new widths keeps at most 64 plans,
    dropping the least recently used; a dropped shape is planned again.
    Widest first: every plan fits the first one's arena, so only the count
    bound drops plans."""
    model, _ = _conv_stack(n_convs=2, c=4, hw=4)
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_param = "W"
    rep = sonnx.prepare(model)
    walk = sonnx.prepare(model)
    walk._rep.use_plan = False
    rng = np.random.default_rng(0)
    for width in list(range(80, 8, -1)) + [80, 9]:
        x = rng.standard_normal((1, 4, 4, width)).astype(np.float32)
        np.testing.assert_allclose(_np(rep.run([x]))[0], _np(walk.run([x]))[0], rtol=RTOL,
                                   atol=ATOL)
        assert rep._rep.num_plans <= 64
    assert rep._rep.num_plans == 64


def test_plans_keep_no_copy_of_their_input_outside_the_shared_arena():
    """A plan's input placeholder lives in the arena the plans share: eight
    plans of narrower inputs after the widest add no input-sized memory."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("ReduceSum", ["r"], ["y"], keepdims=0)]
    graph = helper.make_graph(
        nodes, "reduce", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 64, "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rep = sonnx.prepare(model)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((1, 64, 64, w)).astype(np.float32) for w in range(256, 224, -4)]
    rep.run([xs[0]])
    before = device.memory_stats().current_bytes
    for x in xs[1:]:
        np.testing.assert_allclose(_np(rep.run([x]))[0], x.clip(0).sum(), rtol=1e-4)
    assert rep._rep.num_plans == len(xs)
    grown = device.memory_stats().current_bytes - before
    assert grown < xs[-1].nbytes, grown


def _conv_bn_model():
    """x[1,8,8,W] -> Conv -> BatchNormalization -> Relu -> MaxPool -> Conv: the
    fold, a pooling and blocked layouts in each plan."""
    rng = np.random.default_rng(3)

    def init(name, shape, scale=0.2, offset=0.0):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale + offset).astype(np.float32), name)

    inits = [init("W1", (16, 8, 3, 3)), init("W2", (16, 16, 3, 3)),
             init("s", (16,), 0.1, 1.0), init("b", (16,)), init("m", (16,)),
             init("v", (16,), 0.1, 1.0)]
    inits[-1].CopyFrom(numpy_helper.from_array(np.abs(numpy_helper.to_array(inits[-1])), "v"))
    nodes = [helper.make_node("Conv", ["x", "W1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c1", "s", "b", "m", "v"], ["n1"]),
             helper.make_node("Relu", ["n1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "W2"], ["y"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "convbn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_plans_for_many_shapes_share_one_arena_and_stay_correct():
    """The plans of one model replay one at a time and share one memory
    arena: after the widest input, seven narrower ones add no arena, and
    calls that alternate between plans still give each shape's results."""
    model = _conv_bn_model()
    rep = sonnx.prepare(model, "CPU")
    rng = np.random.default_rng(0)
    xs = {w: rng.standard_normal((1, 8, 8, w)).astype(np.float32) for w in range(64, 32, -4)}
    want = {w: _ort(model, x) for w, x in xs.items()}
    rep.run([xs[64]])
    widest = rep._rep.plan_arena_bytes
    assert widest >= 16 * 8 * 64 * 4  # at least the first Conv's result
    for w, x in xs.items():
        np.testing.assert_allclose(_np(rep.run([x]))[0], want[w], rtol=RTOL, atol=ATOL)
    assert rep._rep.num_plans == 8
    assert rep._rep.plan_arena_bytes == widest
    for w in [64, 36, 60, 40, 64, 36]:
        np.testing.assert_allclose(_np(rep.run([xs[w]]))[0], want[w], rtol=RTOL, atol=ATOL)
        assert rep.profile([xs[w]]).replayed
    # Wider than any before: a larger arena, which the next plans share. The
    # plans placed in the outgrown one move into it, and the old one goes.
    rep.run([rng.standard_normal((1, 8, 8, 128)).astype(np.float32)])
    grown = rep._rep.plan_arena_bytes
    assert grown >= 1.5 * widest
    assert rep._rep.num_plans == 9
    rep.run([rng.standard_normal((1, 8, 8, 100)).astype(np.float32)])
    assert rep._rep.plan_arena_bytes == grown
    assert rep._rep.num_plans == 10
    for w in [64, 36, 60, 40]:
        np.testing.assert_allclose(_np(rep.run([xs[w]]))[0], want[w], rtol=RTOL, atol=ATOL)
        assert rep.profile([xs[w]]).replayed
    assert rep._rep.num_plans == 10


def _view_model():
    """x[N,4] -> Reshape [-1] -> y (on a node walk, a view of x) and Relu -> r."""
    shape = numpy_helper.from_array(np.array([-1], np.int64), "shape")
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["y"]),
             helper.make_node("Relu", ["x"], ["r"])]
    graph = helper.make_graph(
        nodes, "view", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("r", TensorProto.FLOAT, None)], [shape])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("use_plan,training", [(True, False), (False, False), (True, True)])
def test_numpy_inputs_are_read_in_place_and_never_kept(use_plan, training):
    """run() reads a numpy input where it lies: a replayed plan copies it into
    its own memory, and a plan build, a node walk or a training run take a
    copy, so nothing a run returned changes when the array does afterwards."""
    rep = sonnx.prepare(_view_model(), "CPU")
    rep.use_plan = use_plan
    autograd.training = training
    base = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float32)
    for _ in range(3):  # the plan's build, then replays
        x = base.copy()
        y, r = rep.run([x])
        x[...] = 7.0
        np.testing.assert_array_equal(tensor.to_numpy(y), base.ravel())
        np.testing.assert_array_equal(tensor.to_numpy(r), np.maximum(base, 0))


@pytest.mark.parametrize("use_plan", [True, False])
@pytest.mark.parametrize("layout", ["strided", "reversed", "fortran", "unaligned"])
def test_numpy_inputs_of_any_layout_are_read_as_numpy_sees_them(use_plan, layout):
    """An input that is not a C-contiguous, aligned array (a slice with a step,
    negative strides, Fortran order, a view one byte into a buffer) is read
    element by element as numpy indexes it, on the plan's build and its replays."""
    rep = sonnx.prepare(_view_model(), "CPU")
    rep.use_plan = use_plan
    rng = np.random.default_rng(7)
    for _ in range(3):
        base = rng.standard_normal((3, 4)).astype(np.float32)
        if layout == "strided":
            x = np.zeros((6, 8), np.float32)[::2, ::2]
            x[...] = base
        elif layout == "reversed":
            x = base[::-1, ::-1].copy()[::-1, ::-1]
        elif layout == "fortran":
            x = np.asfortranarray(base)
        else:
            x = np.frombuffer(bytearray(base.nbytes + 1), np.uint8)[1:].view(np.float32)
            x = x.reshape(base.shape)
            x[...] = base
        assert not x.flags.c_contiguous or not x.flags.aligned
        y, r = rep.run([x])
        np.testing.assert_array_equal(tensor.to_numpy(y), base.ravel())
        np.testing.assert_array_equal(tensor.to_numpy(r), np.maximum(base, 0))


def test_replay_results_stay_the_callers_and_inputs_are_left_as_they_were():
    """A replay hands its results' memory to the caller and reads its input
    where it lies: each call's results keep their values through later calls
    (the plan computes the next ones in memory of its own), the input arrays
    are never written, and a graph output that is the input itself is a copy."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Mul", ["x", "two"], ["m"]),
             helper.make_node("Transpose", ["m"], ["t"], perm=[1, 0])]
    graph = helper.make_graph(
        nodes, "results", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 48])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("r", "t", "x")],
        [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    rep = sonnx.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
                        "CPU")
    rng = np.random.default_rng(8)
    xs = [rng.standard_normal((64, 48)).astype(np.float32) for _ in range(4)]
    kept = [x.copy() for x in xs]
    got = [rep.run([x]) for x in xs]
    assert rep.profile([xs[0]]).replayed
    for x, k, (r, t, same) in zip(xs, kept, got):
        np.testing.assert_array_equal(x, k)
        np.testing.assert_array_equal(tensor.to_numpy(r), np.maximum(k, 0))
        np.testing.assert_array_equal(tensor.to_numpy(t), (2 * k).T)
        np.testing.assert_array_equal(tensor.to_numpy(same), k)
    x = xs[0]
    same = rep.run([x])[2]
    x[...] = 5.0
    np.testing.assert_array_equal(tensor.to_numpy(same), kept[0])


def _hardswish_convs():
    """x[2,3,48,W] -> Conv 3->16 stride 2 -> HardSwish spelled as Add/Clip/Div/Mul -> Conv
    16->16: the second convolution reorders its input into a blocked layout."""
    rng = np.random.default_rng(0)

    def init(name, arr):
        return numpy_helper.from_array(np.asarray(arr, np.float32), name)

    inits = [init("w1", rng.standard_normal((16, 3, 3, 3)) * 0.3),
             init("w2", rng.standard_normal((16, 16, 3, 3)) * 0.1),
             init("three", 3.0), init("six", 6.0), init("zero", 0.0)]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Add", ["c1", "three"], ["a"]),
             helper.make_node("Clip", ["a", "zero", "six"], ["cl"]),
             helper.make_node("Div", ["cl", "six"], ["d"]),
             helper.make_node("Mul", ["c1", "d"], ["h"]),
             helper.make_node("Conv", ["h", "w2"], ["y"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "hardswish", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 48, "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_a_replay_takes_nothing_from_the_pool_but_its_results(monkeypatch):
    """A replayed plan's values live in its arena, a convolution's reorders in
    per-thread scratch, and its input is read in place: a call on a shape seen
    before allocates its result alone (each new input shape used to leave its
    input's copy and reorder buffers cached in size classes of their own).
    The convolutions make their primitives at once (no rent in DirectConv,
    whose end depends on the machine's speed: a primitive made during the
    counted calls would allocate its packed weights there)."""
    monkeypatch.setenv("SINGA_CONV_RENT_MS", "0")
    model = _hardswish_convs()
    rep = sonnx.prepare(model, "CPU")
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal((2, 3, 48, w)).astype(np.float32) for w in (64, 96, 128)]
    np.testing.assert_allclose(tensor.to_numpy(rep.run([xs[0]])[0]), _ort(model, xs[0]),
                               rtol=RTOL, atol=ATOL)
    for _ in range(20):  # the builds, and the convolutions' layout trials settle
        for x in xs:
            rep.run([x])
    for _ in range(3):
        before = device.memory_stats().num_mallocs
        for x in xs:
            rep.run([x])
        assert device.memory_stats().num_mallocs - before == len(xs)


def _elementwise_model(kind):
    """Elementwise groups as exporters write them, each around other ops:
    "gelu": MatMul -> x * 0.5 * (1 + Erf(x / sqrt 2));
    "se": Conv -> GlobalAveragePool -> 1x1 Conv -> Relu -> 1x1 Conv -> HardSigmoid,
    times the first Conv's result (a scale per channel);
    "shared": (a + b) both a graph output and the operand of Sigmoid * Tanh."""
    rng = np.random.default_rng(8)

    def init(name, arr):
        return numpy_helper.from_array(np.asarray(arr, np.float32), name)

    if kind == "gelu":
        inits = [init("w", rng.standard_normal((16, 24)) * 0.3), init("r2", np.sqrt(2.0)),
                 init("one", 1.0), init("half", 0.5)]
        nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
                 helper.make_node("Div", ["m", "r2"], ["d"]),
                 helper.make_node("Erf", ["d"], ["e"]),
                 helper.make_node("Add", ["e", "one"], ["p"]),
                 helper.make_node("Mul", ["m", "p"], ["q"]),
                 helper.make_node("Mul", ["q", "half"], ["y"])]
        x_shape, outs = [2, 8, 16], ["y"]
    elif kind == "se":
        inits = [init("w", rng.standard_normal((16, 8, 3, 3)) * 0.2),
                 init("w1", rng.standard_normal((4, 16, 1, 1)) * 0.3),
                 init("w2", rng.standard_normal((16, 4, 1, 1)) * 0.3)]
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                 helper.make_node("GlobalAveragePool", ["c"], ["g"]),
                 helper.make_node("Conv", ["g", "w1"], ["g1"]),
                 helper.make_node("Relu", ["g1"], ["r"]),
                 helper.make_node("Conv", ["r", "w2"], ["g2"]),
                 helper.make_node("HardSigmoid", ["g2"], ["s"], alpha=1 / 6, beta=0.5),
                 helper.make_node("Mul", ["c", "s"], ["y"])]
        x_shape, outs = [2, 8, 6, 6], ["y"]
    else:
        inits = [init("b", rng.standard_normal((5,)))]
        nodes = [helper.make_node("Add", ["x", "b"], ["a"]),
                 helper.make_node("Sigmoid", ["a"], ["sg"]),
                 helper.make_node("Tanh", ["a"], ["th"]),
                 helper.make_node("Mul", ["sg", "th"], ["y"])]
        x_shape, outs = [3, 5], ["y", "a"]
    graph = helper.make_graph(
        nodes, kind, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("kind,planned", [
    ("gelu", ["MatMul", "FusedElementwise"]),
    ("se", ["Conv", "GlobalAveragePool", "FusedConv", "Conv", "FusedElementwise"]),
    # a is a graph output: Add stays, the three ops after it fuse
    ("shared", ["Add", "FusedElementwise"])])
def test_elementwise_groups_run_as_one_op_and_match_onnxruntime(kind, planned):
    model = _elementwise_model(kind)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})
    rep = sonnx.prepare(model, "CPU")
    for _ in range(3):  # the build, then replays
        got = _np(rep.run([x]))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
    assert rep.planned_op_types == planned


def _resize_model(opset, scales, constant_node):
    """Relu, then a nearest Resize by float `scales`: an initializer, or a
    Constant node's value."""
    inits, nodes = [], []
    if constant_node:
        nodes.append(helper.make_node("Constant", [], ["scales"],
                                      value=numpy_helper.from_array(scales)))
    else:
        inits.append(numpy_helper.from_array(scales, "scales"))
    roi = ""
    if opset < 13:
        inits.append(numpy_helper.from_array(np.zeros(0, np.float32), "roi"))
        roi = "roi"
    nodes += [helper.make_node("Relu", ["x"], ["r"]),
              helper.make_node("Resize", ["r", roi, "scales"], ["y"], mode="nearest")]
    graph = helper.make_graph(
        nodes, "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("constant_node", [False, True])
def test_a_resize_by_float_scales_is_replayed(opset, constant_node):
    """Shape inference reads the scales during the plan's recording, converted
    to double: the conversion runs then, not recorded for later (which gave
    a result of shape [0,0,0,0])."""
    model = _resize_model(opset, np.array([1, 1, 2, 2], np.float32), constant_node)
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    rep = sonnx.prepare(model, "CPU")
    for _ in range(2):
        np.testing.assert_array_equal(_np(rep.run([x]))[0], _ort(model, x))
    p = rep.profile([x])
    assert p.planned and p.replayed


@pytest.mark.parametrize("opset", [11, 13])
def test_a_plan_whose_shapes_read_a_parameter_is_rebuilt_when_it_changes(opset):
    """Scales stored as a float initializer are a parameter: the plan reads
    them as they are when built, and is rebuilt once they change in place."""
    scales = np.array([1, 1, 2, 2], np.float32)
    model = _resize_model(opset, scales, False)
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4)).astype(np.float32)
    rep = sonnx.prepare(model, "CPU")
    assert _np(rep.run([x]))[0].shape == (1, 2, 6, 8)
    scales[:] = [1, 1, 3, 1]
    rep.params["scales"].copy_from_numpy(scales)
    model.graph.initializer[0].CopyFrom(numpy_helper.from_array(scales, "scales"))
    for _ in range(2):
        got = _np(rep.run([x]))[0]
        assert got.shape == (1, 2, 9, 4)
        np.testing.assert_array_equal(got, _ort(model, x))


def _branches(opset=13):
    """sr == 16000 picks then_branch: Relu(x @ w), w of the outer graph; else
    Sigmoid(x @ v), v the branch's own initializer. The outer graph adds b
    (the If makes the outer graph walk its nodes; each branch has a plan)."""
    rng = np.random.default_rng(1)
    f32 = lambda a, n: numpy_helper.from_array(a.astype(np.float32), n)  # noqa: E731
    out = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4])  # noqa: E731
    then_g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"]),
                                helper.make_node("Relu", ["m"], ["t"])], "then", [], [out("t")])
    else_g = helper.make_graph([helper.make_node("MatMul", ["x", "v"], ["n"]),
                                helper.make_node("Sigmoid", ["n"], ["e"])], "else", [], [out("e")],
                               [f32(rng.standard_normal((8, 4)), "v")])
    graph = helper.make_graph(
        [helper.make_node("Equal", ["sr", "rate"], ["is16k"]),
         helper.make_node("If", ["is16k"], ["f"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Add", ["f", "b"], ["y"])],
        "branches", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8]),
                     helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [out("y")],
        [f32(rng.standard_normal((8, 4)), "w"), f32(rng.standard_normal(4), "b"),
         numpy_helper.from_array(np.array(16000, np.int64), "rate")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_if_branches_run_by_plans_follow_inputs_branches_and_parameters():
    """The If's branches give results of one shape, so the plan replays, the
    If recorded as a switch between the branches' plans. Calls that
    alternate between the branches, each with a new frame, give
    onnxruntime's numbers call after call; a changed weight of the outer
    graph that a branch reads is seen by the branch's plan."""
    model = _branches()
    rep = sonnx.prepare(model, "CPU")
    x0 = np.zeros((1, 8), np.float32)
    assert rep.profile([x0, np.array(8000, np.int64)]).replayed
    rng = np.random.default_rng(2)
    for step in range(8):
        if step == 5:
            w = rng.standard_normal((8, 4)).astype(np.float32)
            rep.params["w"].copy_from_numpy(w)
            for init in model.graph.initializer:
                if init.name == "w":
                    init.CopyFrom(numpy_helper.from_array(w, "w"))
        x = rng.standard_normal((1, 8)).astype(np.float32)
        sr = np.array(16000 if step % 3 else 8000, np.int64)
        got = tensor.to_numpy(rep.run([x, sr])[0])
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x, "sr": sr})[0]
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=f"call {step}")


def test_a_result_of_a_branch_plan_exports():
    """A run that walks the outer graph (here: a value given for an
    initializer that is also an input) but replays the If branch's plan
    still exports, as a run that walked the branch does: the branch taken,
    its planned run expanded into its ops (the condition is not part of the
    recorded history)."""
    model = _branches()
    model.graph.input.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, [4]))
    rep = sonnx.prepare(model, "CPU")
    x = tensor.Tensor(data=np.random.default_rng(3).standard_normal((1, 8)).astype(np.float32),
                      requires_grad=False)
    sr = tensor.Tensor(data=np.array(16000, np.int64), dtype=tensor.int64, requires_grad=False)
    b = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == "b"))
    rep.run([x, sr, b])
    y = rep.run([x, sr, b])[0]
    om = sonnx.to_onnx([x], [y])
    onnx.checker.check_model(om, full_check=True)
    # On another frame: the exported ops, not the run's numbers.
    x2 = np.random.default_rng(4).standard_normal((1, 8)).astype(np.float32)
    got = ort.InferenceSession(om.SerializeToString()).run(None, {om.graph.input[0].name: x2})[0]
    want = ort.InferenceSession(model.SerializeToString()).run(
        None, {"x": x2, "sr": np.array(16000, np.int64)})[0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_if_branches_of_different_shapes_walk_and_stay_correct():
    """Branches whose results differ in shape cannot be one switch in a
    recording: the plan walks, each call still onnxruntime's."""
    model = _branches()
    else_g = next(a.g for a in model.graph.node[1].attribute if a.name == "else_branch")
    else_g.initializer[0].CopyFrom(numpy_helper.from_array(
        np.random.default_rng(5).standard_normal((8, 3)).astype(np.float32), "v"))
    else_g.output[0].CopyFrom(helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 3]))
    model.graph.node[2].CopyFrom(helper.make_node("Identity", ["f"], ["y"]))
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, None))
    rep = sonnx.prepare(model, "CPU")
    rng = np.random.default_rng(6)
    for step in range(4):
        x = rng.standard_normal((1, 8)).astype(np.float32)
        sr = np.array(16000 if step % 2 else 8000, np.int64)
        p = rep.profile([x, sr])
        assert not p.replayed
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x, "sr": sr})[0]
        np.testing.assert_allclose(tensor.to_numpy(p.outputs[0]), want, rtol=RTOL, atol=ATOL)


def test_a_node_named_as_a_switching_if_runs_as_itself():
    """Node names need not be unique in a model singa takes: an Add with its
    If's name is not taken for the If when the plan records the switch."""
    model = _branches()
    model.graph.node[1].name = model.graph.node[2].name = "same"
    reference = _branches()
    rep = sonnx.prepare(model, "CPU")
    rng = np.random.default_rng(7)
    for sr in (16000, 8000, 16000):
        x = rng.standard_normal((1, 8)).astype(np.float32)
        sr = np.array(sr, np.int64)
        p = rep.profile([x, sr])
        assert p.replayed
        want = ort.InferenceSession(reference.SerializeToString()).run(None, {"x": x, "sr": sr})[0]
        np.testing.assert_allclose(tensor.to_numpy(p.outputs[0]), want, rtol=RTOL, atol=ATOL)
