"""Rows for src/ops/concat_from_sequence.cc (model rows: the input is a
sequence)."""
from op_harness import SEQ_DTYPES, Case, ErrorCase, Seq, T

CASES = [
    Case("ConcatFromSequence", [Seq([T((2, 3)), T((1, 3)), T((4, 3))])], {"axis": 0},
         dtypes=SEQ_DTYPES, id="axis0"),
    Case("ConcatFromSequence", [Seq([T((2, 1)), T((2, 3))])], {"axis": -1},
         dtypes=["float32", "int64", "bool"], id="axis-1"),
    Case("ConcatFromSequence", [Seq([T((2, 3))])], {"axis": 1},
         dtypes=["float32", "int64", "bool"], id="one"),
    Case("ConcatFromSequence", [Seq([T((2, 0)), T((2, 3))])], {"axis": 1},
         dtypes=["float32", "int64"], id="empty-element"),
    # new_axis: stacked along a new axis, which may be the last one (rank + 1).
    Case("ConcatFromSequence", [Seq([T((2, 3)), T((2, 3)), T((2, 3))])],
         {"axis": 0, "new_axis": 1}, dtypes=SEQ_DTYPES, id="new-axis0"),
    Case("ConcatFromSequence", [Seq([T((2, 3)), T((2, 3))])], {"axis": 1, "new_axis": 1},
         dtypes=["float32", "int64", "bool"], id="new-axis1"),
    Case("ConcatFromSequence", [Seq([T((2, 3)), T((2, 3))])], {"axis": -1, "new_axis": 1},
         dtypes=["float32", "int64", "bool"], id="new-axis-last"),
    Case("ConcatFromSequence", [Seq([T(()), T(())])], {"axis": 0, "new_axis": 1},
         dtypes=["float32", "int64"], id="new-axis-scalars"),
]

ERROR_CASES = [
    ErrorCase("ConcatFromSequence", [Seq([])], {"axis": 0}, match="the sequence is empty"),
    ErrorCase("ConcatFromSequence", [Seq([T((2, 3))])], {"axis": 2},
              match="axis 2 is out of range for rank 2"),
    ErrorCase("ConcatFromSequence", [Seq([T((2, 3))])], {"axis": 3, "new_axis": 1},
              match="axis 3 is out of range for rank 3"),
]
