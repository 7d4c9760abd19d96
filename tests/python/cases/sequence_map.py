"""Rows for src/ops/sequence_map.cc (opset 17; model rows: the body is a
graph attribute run once per element)."""
from op_harness import Case, ErrorCase, G, N, Seq, T, run_graph

NUMERIC = ["float32", "float64", "float16", "int32", "int64", "int8"]

# Each element plus the extra tensor, and each element's shape.
ADD_EXTRA = G([N("Add", "x e", "y"), N("Shape", "x", "s")], ["x", "e"], ["y", "s:int64"])
# Elementwise product of two sequences' elements.
MUL = G([N("Mul", "a b", "y")], ["a", "b"], ["y"])
# An element, a tensor and an element of a second sequence.
ADD3 = G([N("Add", "a e", "ae"), N("Sub", "ae b", "y")], ["a", "e", "b"], ["y"])
# Each element's transpose (any dtype).
TRANSPOSE = G([N("Transpose", "x", "y")], ["x"], ["y"])


def _sequence_map(inputs, attrs, scope):
    """The spec's SequenceMap. onnx's reference evaluator fails on an empty
    input_sequence and hands a sequence that is not the only additional
    input to the body whole, not element by element."""
    body = attrs["body"]
    seq, extra = inputs[0], inputs[1:]
    outs = [[] for _ in body.output]
    for i, x in enumerate(seq):
        args = [x] + [e[i] if isinstance(e, list) else e for e in extra]
        for k, y in enumerate(run_graph(body, args, scope)):
            outs[k].append(y)
    return outs


CASES = [
    Case("SequenceMap", [Seq([T((2, 3)), T((1, 3)), T((4, 3))]), T((3,))], {"body": ADD_EXTRA},
         dtypes=NUMERIC, id="extra-tensor"),
    Case("SequenceMap", [Seq([T((2, 3)), T((3,))]), Seq([T((2, 3)), T((3,))])], {"body": MUL},
         dtypes=NUMERIC, id="two-seqs"),
    Case("SequenceMap", [Seq([T((2, 3)), T((3, 1)), T(())])], {"body": TRANSPOSE},
         dtypes=["float32", "int64", "bool", "string"], id="one-input"),
    Case("SequenceMap", [Seq([T((2, 3)), T((1, 3))]), T((3,)), Seq([T((3,)), T((2, 3))])],
         {"body": ADD3}, dtypes=["float32", "int64"], oracle=_sequence_map,
         id="seq-tensor-seq"),
    Case("SequenceMap", [Seq([]), T((3,))], {"body": ADD_EXTRA},
         dtypes=["float32", "int64"], oracle=_sequence_map, id="empty"),
]

ERROR_CASES = [
    ErrorCase("SequenceMap", [Seq([T((3,)), T((3,))]), Seq([T((3,))])], {"body": MUL},
              match="input 1 has 1 elements, input_sequence 2"),
    ErrorCase("SequenceMap", [Seq([T((3,))])], {"body": MUL},
              match="the body takes 2 inputs and gives 1 outputs; the node has 1 inputs"),
]
