"""Rows for src/ops/concat.cc."""
from op_harness import Case, ErrorCase, T

F32 = ["float32"]
CASES = [
    Case("Concat", [T((2, 3)), T((2, 5))], attrs={"axis": 1}),
    Case("Concat", [T((2, 3)), T((4, 3)), T((1, 3))], attrs={"axis": 0}, dtypes=F32, id="three"),
    Case("Concat", [T((2, 3, 4)), T((2, 3, 2))], attrs={"axis": -1}, dtypes=F32, id="neg"),
    Case("Concat", [T((2, 0)), T((2, 3))], attrs={"axis": 1}, dtypes=F32, id="empty_part"),
    Case("Concat", [T((0, 3)), T((0, 3))], attrs={"axis": 1}, dtypes=F32, id="empty"),
    Case("Concat", [T((4,))], attrs={"axis": 0}, dtypes=F32, id="single"),
    Case("Concat", [T((2, 3)), T((2, 3))], attrs={"axis": 0}, opset=11, dtypes=F32, id="opset11"),
    Case("Concat", [T((2, 3, 4)), T((2, 3, 2))], attrs={"axis": -1}, dtypes=["float32", "float64"],
         id="neg_f64"),
]
ERROR_CASES = [
    ErrorCase("Concat", [T((2, 3)), T((3, 3))], attrs={"axis": 1}, match="does not match"),
    ErrorCase("Concat", [T((2, 3)), T((2, 3, 1))], attrs={"axis": 0}, match="does not match"),
    ErrorCase("Concat", [T((2, 3))], attrs={"axis": 2}, match="out of range"),
    ErrorCase("Concat", [T(()), T(())], attrs={"axis": 0}, match="0-d"),
    ErrorCase("Concat", [T((2,))], match="required attribute 'axis'"),
]

# Opset 4 (the opset 11 schema serves it).
CASES += [Case("Concat", [T((2, 3)), T((2, 1))], {"axis": 1}, opset=4, id="opset4")]
