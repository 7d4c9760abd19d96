"""Rows for src/ops/reverse_sequence.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
CASES = [
    Case("ReverseSequence", [T((4, 4)), V([4, 3, 2, 1])]),
    Case("ReverseSequence", [T((4, 4)), V([1, 2, 3, 4])], {"batch_axis": 0, "time_axis": 1},
         dtypes=F, id="batch0"),
    Case("ReverseSequence", [T((5, 3, 2, 2)), V([0, 5, 2])], dtypes=F, id="4d"),
    Case("ReverseSequence", [T((0, 3)), V([0, 0, 0])], dtypes=F, id="empty"),
    Case("ReverseSequence", [T((4, 3)), V([4, 1, 2])], opset=28,
         dtypes=["bfloat16", "float32"], id="opset28"),
]
ERROR_CASES = [
    ErrorCase("ReverseSequence", [T((4, 3)), V([5, 1, 1])], match="out of range"),
    ErrorCase("ReverseSequence", [T((4, 3)), V([1, 1])], match="one length per batch"),
    ErrorCase("ReverseSequence", [T((4, 3)), V([1, 1, 1])], {"batch_axis": 2},
              match="must be 0 and 1"),
    ErrorCase("ReverseSequence", [T((4,)), V([1])], match="rank >= 2"),
]
