"""Rows for src/ops/flatten.cc."""
from op_harness import Case, ErrorCase, T

F32 = ["float32"]
CASES = [
    Case("Flatten", [T((2, 3, 4))]),
    Case("Flatten", [T((2, 3, 4))], attrs={"axis": 0}, dtypes=F32, id="axis0"),
    Case("Flatten", [T((2, 3, 4))], attrs={"axis": 3}, dtypes=F32, id="axis3"),
    Case("Flatten", [T((2, 3, 4))], attrs={"axis": -1}, dtypes=F32, id="axis-1"),
    Case("Flatten", [T((2, 0, 4))], dtypes=F32, id="empty"),
    Case("Flatten", [T((5,))], dtypes=F32, id="1d"),
    Case("Flatten", [T((2, 3, 4))], attrs={"axis": 2}, opset=11, dtypes=F32, id="opset11"),
]
ERROR_CASES = [
    ErrorCase("Flatten", [T((2, 3))], attrs={"axis": 3}, match="out of range"),
    ErrorCase("Flatten", [T((2, 3))], attrs={"axis": -3}, match="out of range"),
]

# Opset 1 (the opset 11 schema serves it).
CASES += [Case("Flatten", [T((2, 3, 4))], {"axis": 2}, opset=1, id="opset1")]
