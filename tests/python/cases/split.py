"""Rows for src/ops/split.cc."""
from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Split", [T((6, 3)), V([2, 4])], outputs=2),
    Case("Split", [T((6, 3))], outputs=3, dtypes=F32, id="equal"),
    Case("Split", [T((2, 6)), V([1, 0, 5])], attrs={"axis": -1}, outputs=3, dtypes=F32,
         id="zero_part"),
    Case("Split", [T((0, 4))], attrs={"axis": 1}, outputs=2, dtypes=F32, id="empty"),
    Case("Split", [T((2, 7))], attrs={"axis": 1, "num_outputs": 3}, outputs=3, id="num_outputs"),
    Case("Split", [T((2, 6))], attrs={"axis": 1, "num_outputs": 2}, outputs=2, dtypes=F32,
         id="num_outputs_even"),
    Case("Split", [T((6, 2)), V([1, 5])], outputs=2, opset=13, dtypes=F32, id="opset13"),
    Case("Split", [T((6, 2))], outputs=2, opset=13, dtypes=F32, id="opset13_equal"),
    Case("Split", [T((2, 5))], attrs={"axis": 1, "split": [2, 3]}, outputs=2, opset=11,
         id="opset11"),
    Case("Split", [T((4, 2))], outputs=4, opset=11, dtypes=F32, id="opset11_equal"),
]
ERROR_CASES = [
    ErrorCase("Split", [T((6, 3)), V([2, 3])], match="sums to 5"),
    ErrorCase("Split", [T((6, 3)), V([2, -1, 5])], match="negative length"),
    ErrorCase("Split", [T((6, 3)), V([3, 3])], match="2 parts but 1 outputs"),
    ErrorCase("Split", [T((6, 3))], attrs={"axis": 2}, match="out of range"),
    ErrorCase("Split", [T((6, 3))], attrs={"num_outputs": 2}, match="num_outputs is 2"),
]

# Opset 2 (the opset 11 schema serves it).
CASES += [
    Case("Split", [T((6, 3))], {"axis": 0, "split": [2, 4]}, opset=2, outputs=2, id="opset2"),
]
