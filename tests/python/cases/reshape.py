"""Rows for src/ops/reshape.cc."""
from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Reshape", [T((2, 3, 4)), V([4, 6])]),
    Case("Reshape", [T((2, 3, 4)), V([-1])], dtypes=F32, id="infer"),
    Case("Reshape", [T((2, 3, 4)), V([0, -1])], dtypes=F32, id="copy0"),
    Case("Reshape", [T((2, 3, 4)), V([2, 0, 2, -1])], dtypes=F32, id="copy0_infer"),
    Case("Reshape", [T(()), V([1, 1])], dtypes=F32, id="from0d"),
    Case("Reshape", [T((1, 1)), V([], )], dtypes=F32, id="to0d"),
    Case("Reshape", [T((0, 3)), V([0, 1, 3])], dtypes=F32, id="empty_copy0"),
    Case("Reshape", [T((0, 3)), V([3, 0])], attrs={"allowzero": 1}, dtypes=F32,
         id="empty_allowzero"),
    Case("Reshape", [T((2, 3)), V([3, 2])], attrs={"allowzero": 1}, dtypes=F32, id="allowzero"),
    Case("Reshape", [T((2, 3, 4)), V([0, 12])], opset=5, id="opset5"),
    Case("Reshape", [T((2, 3, 4)), V([6, -1])], opset=13, dtypes=F32, id="opset13"),
]
ERROR_CASES = [
    ErrorCase("Reshape", [T((2, 3)), V([4, 2])], match="cannot reshape"),
    ErrorCase("Reshape", [T((2, 3)), V([-1, -1])], match="more than one -1"),
    ErrorCase("Reshape", [T((2, 3)), V([-2, 3])], match="negative dimension"),
    ErrorCase("Reshape", [T((2, 3)), V([2, 3, 0])], match="copies dimension 2"),
    ErrorCase("Reshape", [T((2, 3)), V([0, -1])], attrs={"allowzero": 1}, match="cannot infer"),
    ErrorCase("Reshape", [T((2, 3)), V([6.0], float)], match="not supported for input 1"),
]
