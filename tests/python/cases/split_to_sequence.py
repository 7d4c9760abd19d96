"""Rows for src/ops/split_to_sequence.cc (model rows: the result is a
sequence)."""
import numpy as np

from op_harness import SEQ_DTYPES, Case, ErrorCase, T, V

CASES = [
    # No split: chunks of 1, kept (keepdims=1) or squeezed (keepdims=0).
    Case("SplitToSequence", [T((3, 4))], {"axis": 1}, dtypes=SEQ_DTYPES, id="ones"),
    Case("SplitToSequence", [T((3, 4))], {"axis": 0, "keepdims": 0}, dtypes=SEQ_DTYPES,
         id="ones-keepdims0"),
    Case("SplitToSequence", [T((2, 3, 2))], {"axis": -1, "keepdims": 0},
         dtypes=["float32", "int64", "bool"], id="ones-neg-axis-keepdims0"),
    # A scalar split: chunks of that size, the last one shorter.
    Case("SplitToSequence", [T((3, 5)), V(2)], {"axis": 1}, dtypes=SEQ_DTYPES, id="scalar"),
    Case("SplitToSequence", [T((4, 2)), V(2, np.int32)], dtypes=["float32", "int64", "bool"],
         id="scalar-even-int32"),
    Case("SplitToSequence", [T((3, 5)), V(7)], {"axis": 1}, dtypes=["float32", "int64"],
         id="scalar-past-end"),
    # A list split: those sizes (keepdims does not apply).
    Case("SplitToSequence", [T((3, 5)), V([1, 3, 1])], {"axis": -1}, dtypes=SEQ_DTYPES,
         id="list"),
    Case("SplitToSequence", [T((6, 2)), V([2, 0, 4], np.int32)], {"keepdims": 0},
         dtypes=["float32", "int64", "bool"], id="list-with-zero-int32"),
    Case("SplitToSequence", [T((0, 3))], dtypes=["float32", "int64"], id="empty-axis"),
]

ERROR_CASES = [
    ErrorCase("SplitToSequence", [T((3, 5)), V([1, 3])], {"axis": 1},
              match="split sums to 4, but dim 1"),
    ErrorCase("SplitToSequence", [T((3, 5)), V(0)], match="split 0 must be positive"),
    ErrorCase("SplitToSequence", [T((3, 5))], {"axis": 2}, match="axis 2 is out of range"),
    ErrorCase("SplitToSequence", [T((3, 5)), V([[1, 2]])], {"axis": 1},
              match="split must be a scalar or 1-D"),
]
