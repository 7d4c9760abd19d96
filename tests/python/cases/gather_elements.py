"""Rows for src/ops/gather_elements.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
CASES = [
    Case("GatherElements", [T((3, 4)), V([[0, 2, 1, -1], [2, 2, 0, 1], [-3, 0, 0, 1]])],
         {"axis": 0}),
    Case("GatherElements", [T((3, 4)), V([[0, 3], [1, 1], [-1, 2]])], {"axis": 1}, id="axis1"),
    Case("GatherElements", [T((2, 3, 4)), V(np.array([[[1, 0, 2, 2]] * 3, [[0, 0, 1, 2]] * 3]),
                                                np.int32)],
         {"axis": -1}, dtypes=F, id="3d_int32"),
    Case("GatherElements", [T((2, 3, 4)), V(np.zeros((2, 5, 4), np.int64) + 2)], {"axis": 1},
         dtypes=F, id="3d_repeat"),
    Case("GatherElements", [T((4,)), V([3, 0, 3])], dtypes=F, id="1d"),
    Case("GatherElements", [T((3, 4)), V(np.zeros((0, 4), np.int64))], dtypes=F, id="empty"),
    # The evaluator's np.choose takes at most 63 choices: axis 0 has 60.
    Case("GatherElements", [T((60, 3000)),
                            V(np.random.default_rng(0).integers(-60, 60, (60, 3000)))],
         dtypes=["float32"], id="large"),
    Case("GatherElements", [T((3, 4)), V([[0, 2, 1, -1], [2, 2, 0, 1]])], opset=11, dtypes=F,
         id="opset11"),
]
ERROR_CASES = [
    ErrorCase("GatherElements", [T((3, 4)), V([[0, 3, 1, 1]])], match="out of range"),
    ErrorCase("GatherElements", [T((3, 4)), V([[0, -4, 1, 1]])], match="out of range"),
    ErrorCase("GatherElements", [T((3, 4)), V([0, 1])], match="rank of data"),
    ErrorCase("GatherElements", [T((3, 4)), V([[0] * 5])], match="exceeds"),
    ErrorCase("GatherElements", [T((3, 4)), V([[0] * 4])], {"axis": 2}, match="axis"),
    ErrorCase("GatherElements", [T(()), V(0)], match="rank >= 1"),
]
