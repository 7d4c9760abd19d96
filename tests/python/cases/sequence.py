"""Rows for src/ops/sequence.cc: SequenceEmpty, SequenceConstruct, SequenceAt,
SequenceInsert, SequenceErase and SequenceLength (model rows: sequences in
and out of a one-node model, see op_harness)."""
import numpy as np
from onnx import TensorProto

from op_harness import SEQ_DTYPES, Case, ErrorCase, Seq, T, V

CASES = []
ERROR_CASES = []

# Three elements of different shapes (a sequence's tensors need not agree).
THREE = Seq([T((2, 3)), T((1, 3)), T((4,))])

CASES += [
    Case("SequenceEmpty", [], id="default-float"),
    Case("SequenceEmpty", [], {"dtype": TensorProto.INT64}, id="int64"),
    Case("SequenceEmpty", [], {"dtype": TensorProto.BOOL}, id="bool"),

    Case("SequenceConstruct", [T((2, 3)), T((1, 3)), T(())], dtypes=SEQ_DTYPES),
    Case("SequenceConstruct", [T((0, 3))], dtypes=["float32", "int64"], id="one-empty-tensor"),
]


def _insert(inputs, attrs, scope):
    """The spec's SequenceInsert: position n (the end) appends. onnx's
    reference evaluator inserts at position % n instead (the front for n)."""
    seq, t, pos = inputs
    out = list(seq)
    out.insert(len(seq) if pos is None else int(pos), t)
    return [out]


for pos in (0, 2, -1, -3):
    CASES.append(Case("SequenceAt", [THREE, V(pos)], dtypes=SEQ_DTYPES, id=f"at{pos}"))
CASES += [
    Case("SequenceAt", [THREE, V(-2, np.int32)], dtypes=["float32", "int64", "bool"],
         id="int32-position"),

    Case("SequenceInsert", [THREE, T((2, 2))], dtypes=SEQ_DTYPES, id="append"),
    Case("SequenceInsert", [THREE, T((2, 2)), V(1)], dtypes=SEQ_DTYPES, id="at1"),
    Case("SequenceInsert", [THREE, T((2, 2)), V(-1)], dtypes=["float32", "int64", "bool"],
         id="at-1"),
    Case("SequenceInsert", [THREE, T((2, 2)), V(-3, np.int32)], dtypes=["float32", "int64"],
         id="at-3-int32"),
    Case("SequenceInsert", [THREE, T((2, 2)), V(3)], dtypes=["float32", "int64", "bool"],
         oracle=_insert, id="at-end"),
    Case("SequenceInsert", [Seq([]), T((3,))], dtypes=["float32", "int64", "bool"],
         id="into-empty"),
    Case("SequenceInsert", [Seq([]), T((3,)), V(0)], dtypes=["float32", "int64", "bool"],
         oracle=_insert, id="into-empty-at0"),

    Case("SequenceErase", [THREE], dtypes=SEQ_DTYPES, id="last"),
    Case("SequenceErase", [THREE, V(0)], dtypes=SEQ_DTYPES, id="at0"),
    Case("SequenceErase", [THREE, V(-2)], dtypes=["float32", "int64", "bool"], id="at-2"),
    Case("SequenceErase", [Seq([T((2,))]), V(-1)], dtypes=["float32", "int64", "bool"],
         id="to-empty"),

    Case("SequenceLength", [THREE], dtypes=SEQ_DTYPES),
    Case("SequenceLength", [Seq([])], dtypes=["float32", "int64", "bool"], id="empty"),
]

ERROR_CASES += [
    ErrorCase("SequenceAt", [THREE, V(3)], match=r"position 3 is out of range \[-3, 2\]"),
    ErrorCase("SequenceAt", [THREE, V(-4)], match=r"position -4 is out of range \[-3, 2\]"),
    ErrorCase("SequenceAt", [Seq([]), V(0)], match=r"position 0 is out of range"),
    ErrorCase("SequenceAt", [THREE, V([0, 1])], match="position must be an int32 or int64 scalar"),
    ErrorCase("SequenceInsert", [THREE, T((2,)), V(4)],
              match=r"position 4 is out of range \[-3, 3\]"),
    ErrorCase("SequenceInsert", [THREE, V([1, 2])], match="a float32 sequence cannot hold int64"),
    ErrorCase("SequenceErase", [Seq([])], match="the sequence is empty"),
    ErrorCase("SequenceConstruct", [T((2,)), V([1, 2])],
              match="a float32 sequence cannot hold int64"),
]
