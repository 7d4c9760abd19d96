"""Rows for src/ops/logical.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

for _op in ["And", "Or", "Xor"]:
    CASES += [
        Case(_op, [T((2, 3, 4)), T((2, 3, 4))]),
        Case(_op, [T((2, 1, 4)), T((3, 1))]),
        Case(_op, [T(()), T((2, 3))]),
        Case(_op, [T((0, 3)), T((3,))]),
        Case(_op, [T((70000,)), T((70000,))], id="large"),
        Case(_op, [T((2, 3)), T((3,))], opset=11, id="opset11"),
    ]
CASES += [
    Case("Not", [T((2, 3, 4))]),
    Case("Not", [T(())]),
    Case("Not", [T((0, 2))]),
    Case("Not", [T((3, 5))], opset=11, id="opset11"),
]

ERROR_CASES += [
    ErrorCase("And", [T((2,)), T((2,))], match="not supported", dtype="int32"),
    ErrorCase("Not", [T((2,))], match="not supported", dtype="float32"),
    ErrorCase("Xor", [T((2, 3)), T((2,))], match="cannot broadcast", dtype="bool"),
]
