"""Rows for src/ops/expand.cc."""
from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Expand", [T((3, 1)), V([2, 3, 4])]),
    Case("Expand", [T((3, 4)), V([1, 1])], dtypes=F32, id="shape_smaller"),
    Case("Expand", [T(()), V([2, 3])], dtypes=F32, id="from0d"),
    Case("Expand", [T((2, 3)), V([])], dtypes=F32, id="empty_shape"),
    Case("Expand", [T((1, 3)), V([0, 3])], dtypes=F32, id="to_empty"),
    Case("Expand", [T((0, 1)), V([0, 4])], dtypes=F32, id="empty"),
    Case("Expand", [T((2, 1)), V([2, 5])], opset=8, dtypes=F32, id="opset8"),
    Case("Expand", [T((3, 1)), V([2, 1, 4])], dtypes=["float32", "float64"], id="lead_f64"),
]
ERROR_CASES = [
    ErrorCase("Expand", [T((3, 2)), V([3, 4])], match="cannot broadcast"),
    ErrorCase("Expand", [T((3, 1)), V([-1, 2])], match="negative dimension"),
]
