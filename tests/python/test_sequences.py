"""Sequences and optionals in imported models: lists and None in and out of
SingaRep.run, the sequence ops against onnxruntime (with the plan's first
and second run), gradients through a sequence against torch, and errors
that name the node and the value. onnx's node suite covers each op's
semantics case by case (tests/conformance)."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from singa import autograd, sonnx, tensor

FLOAT_SEQ = helper.make_tensor_sequence_value_info


@pytest.fixture(autouse=True)
def _inference():
    """SINGA's default after import: not training, nothing recorded."""
    autograd.training = False


def _model(nodes, inputs, outputs, inits=(), opset=18, check=True):
    graph = helper.make_graph(nodes, "seq", inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if check:
        onnx.checker.check_model(model, full_check=True)
    return model


def _split_concat_model():
    """x[3,6] split on axis 1 into [1,2,3], y inserted first, the last
    element taken out, the rest concatenated back: out[3,7], last[3,3],
    n = 4."""
    nodes = [
        helper.make_node("Constant", [], ["sizes"],
                         value=numpy_helper.from_array(np.array([1, 2, 3], np.int64))),
        helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], name="split", axis=1),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.int64(0))),
        helper.make_node("SequenceInsert", ["parts", "y", "zero"], ["with_y"], name="insert"),
        helper.make_node("SequenceLength", ["with_y"], ["n"], name="length"),
        helper.make_node("Constant", [], ["minus1"], value=numpy_helper.from_array(np.int64(-1))),
        helper.make_node("SequenceAt", ["with_y", "minus1"], ["last"], name="at"),
        helper.make_node("ConcatFromSequence", ["with_y"], ["out"], name="concat", axis=1),
        helper.make_node("Relu", ["out"], ["relu"], name="relu"),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 6]),
                          helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 1])],
                  [helper.make_tensor_value_info("relu", TensorProto.FLOAT, [3, 7]),
                   helper.make_tensor_value_info("last", TensorProto.FLOAT, [3, 3]),
                   helper.make_tensor_value_info("n", TensorProto.INT64, [])])


def test_sequence_ops_match_onnxruntime_on_both_runs():
    model = _split_concat_model()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 6)).astype(np.float32)
    y = rng.standard_normal((3, 1)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x, "y": y})
    rep = sonnx.prepare(model)
    for _ in range(2):  # the plan's build run, then its replay
        got = [tensor.to_numpy(t) for t in rep.run([x, y])]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    assert rep.num_plans == 1


def test_sequences_and_optionals_cross_run_as_lists_and_none():
    nodes = [
        helper.make_node("SequenceErase", ["seq", "pos"], ["rest"], name="erase"),
        helper.make_node("OptionalHasElement", ["maybe"], ["has"], name="has"),
    ]
    opt_type = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    model = _model(nodes, [FLOAT_SEQ("seq", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("pos", TensorProto.INT64, []),
                           helper.make_value_info("maybe", opt_type)],
                   [FLOAT_SEQ("rest", TensorProto.FLOAT, None),
                    helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    rep = sonnx.prepare(model)
    assert rep.inputs[0].sequence and not rep.inputs[0].optional
    assert rep.inputs[2].optional and not rep.inputs[2].sequence
    a, b, c = (np.full((2,), v, np.float32) for v in (1, 2, 3))
    for maybe, has in ((None, False), (a, True)):
        rest, got_has = rep.run([[a, b, c], np.array(1, np.int64), maybe])
        assert [tensor.to_numpy(t).tolist() for t in rest] == [[1, 1], [3, 3]]
        assert bool(tensor.to_numpy(got_has)) is has
    assert sonnx.SingaBackend.run_model(model, [[a], np.array(-1, np.int64), None])[0] == []


def test_an_optional_sequence_flows_through_if_and_loop():
    """The body of a Loop keeps an optional sequence, empty at first: each
    iteration appends a slice (onnx's test_loop16_seq_none, with a trip
    count of 3 and then 0)."""
    then_body = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.float32(0))),
         helper.make_node("Unsqueeze", ["c", "ax"], ["c1"]),
         helper.make_node("SequenceConstruct", ["c1"], ["init"])], "then", [],
        [FLOAT_SEQ("init", TensorProto.FLOAT, None)])
    else_body = helper.make_graph([helper.make_node("OptionalGetElement", ["opt_in"], ["got"])],
                                  "else", [], [FLOAT_SEQ("got", TensorProto.FLOAT, None)])
    opt_seq = helper.make_optional_type_proto(helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, None)))
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("OptionalHasElement", ["opt_in"], ["has"]),
         helper.make_node("Not", ["has"], ["empty"]),
         helper.make_node("Constant", [], ["ax"], value=numpy_helper.from_array(
             np.array([0], np.int64))),
         helper.make_node("If", ["empty"], ["seq"], then_branch=then_body, else_branch=else_body),
         helper.make_node("Cast", ["i"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["f", "ax"], ["f1"]),
         helper.make_node("SequenceInsert", ["seq", "f1"], ["seq_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_value_info("opt_in", opt_seq)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         FLOAT_SEQ("seq_out", TensorProto.FLOAT, None)])
    model = _model([helper.make_node("Loop", ["trips", "", "opt"], ["out"], body=body)],
                   [helper.make_tensor_value_info("trips", TensorProto.INT64, []),
                    helper.make_value_info("opt", opt_seq)],
                   [FLOAT_SEQ("out", TensorProto.FLOAT, None)])
    rep = sonnx.prepare(model)
    out = rep.run([np.array(3, np.int64), None])[0]
    assert [tensor.to_numpy(t).tolist() for t in out] == [[0.0], [0.0], [1.0], [2.0]]
    start = [np.array([7], np.float32)]
    out = rep.run([np.array(0, np.int64), start])[0]
    assert [tensor.to_numpy(t).tolist() for t in out] == [[7.0]]


def test_gradients_flow_through_a_sequence():
    """loss = sum(a * b) where [a, b] = SplitToSequence(x @ W), against torch."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"]),
        helper.make_node("SplitToSequence", ["h", "two"], ["halves"], axis=1),
        helper.make_node("SequenceAt", ["halves", "zero"], ["a"]),
        helper.make_node("SequenceAt", ["halves", "one"], ["b"]),
        helper.make_node("Mul", ["a", "b"], ["ab"]),
        helper.make_node("ReduceSum", ["ab"], ["loss"], keepdims=0),
    ]
    inits = [numpy_helper.from_array(w, "W"),
             numpy_helper.from_array(np.int64(2), "two"),
             numpy_helper.from_array(np.int64(0), "zero"),
             numpy_helper.from_array(np.int64(1), "one")]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3])],
                   [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    rep = sonnx.prepare(model)
    autograd.training = True
    try:
        loss = rep.run([x])[0]
        grads = list(autograd.backward(loss))
    finally:
        autograd.training = False
    assert len(grads) == 1  # W: the int64 initializers are not parameters
    got = tensor.to_numpy(grads[0][1])

    tw = torch.tensor(w, requires_grad=True)
    h = torch.tensor(x) @ tw
    (h[:, :2] * h[:, 2:]).sum().backward()
    np.testing.assert_allclose(tensor.to_numpy(loss), (h[:, :2] * h[:, 2:]).sum().item(),
                               rtol=1e-5)
    np.testing.assert_allclose(got, tw.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_bad_sequence_values_name_the_node_or_input():
    model = _split_concat_model()
    rep = sonnx.prepare(model)
    x = np.zeros((3, 6), np.float32)
    with pytest.raises(ValueError, match="input 'x' must be x: float32\\[3,6\\], got seq"):
        rep.run([[x], np.zeros((3, 1), np.float32)])

    at = _model([helper.make_node("SequenceAt", ["seq", "pos"], ["t"], name="at")],
                [FLOAT_SEQ("seq", TensorProto.FLOAT, None),
                 helper.make_tensor_value_info("pos", TensorProto.INT64, [])],
                [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3, 6])])
    rep = sonnx.prepare(at)
    with pytest.raises(ValueError, match="node 'at' \\(SequenceAt\\): position 2 is out of range"
                                         " \\[-2, 1\\] for a sequence of 2"):
        rep.run([[x, x], np.array(2, np.int64)])
    with pytest.raises(ValueError, match="input 'seq' must be seq: seq\\(float32\\), got float32"):
        rep.run([x, np.array(0, np.int64)])

    # The checker refuses this model; the importer reports it at run time.
    relu = _model([helper.make_node("SequenceConstruct", ["x"], ["s"]),
                   helper.make_node("Relu", ["s"], ["y"], name="relu")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], check=False)
    with pytest.raises(ValueError, match="node 'relu' \\(Relu\\): input 0 must be a tensor, "
                                         "got seq\\(float32\\[2\\]\\)"):
        sonnx.prepare(relu).run([np.ones(2, np.float32)])

    get = _model([helper.make_node("OptionalGetElement", ["o"], ["t"], name="get")],
                 [helper.make_value_info("o", helper.make_optional_type_proto(
                     helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))],
                 [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    with pytest.raises(ValueError, match="node 'get' \\(OptionalGetElement\\): the optional "
                                         "input is empty"):
        sonnx.prepare(get).run([None])

    seq_out = _model([helper.make_node("SequenceConstruct", ["x"], ["s"])],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                     [FLOAT_SEQ("s", TensorProto.FLOAT, None)], opset=11)
    assert len(sonnx.prepare(seq_out).run([np.ones(2, np.float32)])[0]) == 1
    old = onnx.ModelProto()
    old.CopyFrom(seq_out)
    old.opset_import[0].version = 10
    with pytest.raises(NotImplementedError, match="SequenceConstruct exists from opset 11"):
        sonnx.prepare(old)
