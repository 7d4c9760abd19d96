"""Rows for src/ops/top_k.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
# Ties: small integer values repeat, so the lower-index-first rule is exercised.
TIES = [[3, 1, 3, 2, 1, 3], [0, 0, 0, 0, 0, 0], [5, -1, 2, 2, 7, 7]]
CASES = [
    Case("TopK", [T((3, 4, 5)), V([2])], outputs=2),
    Case("TopK", [T((3, 4, 5)), V([3])], {"axis": 1, "largest": 0}, outputs=2, dtypes=F,
         id="smallest_axis1"),
    Case("TopK", [T((3, 4, 5)), V([3])], {"axis": -3}, outputs=2, dtypes=F, id="neg_axis_all"),
    # (ties sit on a kink of the gradient: no gradcheck)
    Case("TopK", [T((3, 6), values=TIES), V([4])], outputs=2, grad=False, id="ties"),
    Case("TopK", [T((3, 6), values=TIES), V([4])], {"largest": 0}, outputs=2, grad=False,
         id="ties_smallest"),
    Case("TopK", [T((3, 6)), V([0])], outputs=2, dtypes=F, id="k0"),
    Case("TopK", [T((0, 6)), V([2])], outputs=2, dtypes=F, id="empty"),
    Case("TopK", [T((200, 300)), V([10])], outputs=2, dtypes=["float32"], id="large"),
    Case("TopK", [T((3, 4, 5)), V([2])], {"axis": 1}, outputs=2, opset=10, dtypes=F,
         id="opset10"),
    Case("TopK", [T((3, 4, 5))], {"axis": 2, "k": 3}, outputs=2, opset=1, dtypes=F,
         id="opset1"),
    Case("TopK", [T((3, 6), values=TIES), V([3])], outputs=2, opset=11, grad=False,
         id="opset11"),
]
NAN = float("nan")
CASES += [
    Case("TopK", [T((2, 5), values=[[1, NAN, 3, NAN, -2], [NAN, 0, 0, 5, 1]]), V([3])],
         outputs=2, dtypes=F, grad=False, id="nan_largest"),
    Case("TopK", [T((2, 5), values=[[1, NAN, 3, NAN, -2], [NAN, 0, 0, 5, 1]]), V([4])],
         {"largest": 0}, outputs=2, dtypes=F, grad=False, id="nan_smallest"),
]
ERROR_CASES = [
    ErrorCase("TopK", [T((3, 4)), V([5])], match="out of range"),
    ErrorCase("TopK", [T((3, 4)), V([-1])], match="out of range"),
    ErrorCase("TopK", [T((3, 4)), V([1, 2])], match="one element"),
    ErrorCase("TopK", [T((3, 4)), V([1])], {"axis": 2}, match="out of range"),
    ErrorCase("TopK", [T(()), V([1])], match="rank >= 1"),
    ErrorCase("TopK", [T((3, 4)), V([1], np.int32)], match="not supported"),
    ErrorCase("TopK", [V([True, False], np.bool_), V([1])], match="not supported"),
]
