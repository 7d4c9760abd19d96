"""Rows for src/ops/arithmetic.cc."""
from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

for _op in ["Add", "Sub", "Mul"]:
    CASES += [
        Case(_op, [T((2, 3, 4)), T((2, 3, 4))]),
        Case(_op, [T((2, 3, 4)), T((3, 4))]),
        Case(_op, [T((2, 1, 4)), T((3, 1))]),
        Case(_op, [T(()), T((2, 3))]),
        Case(_op, [T((0, 3)), T((3,))]),
        Case(_op, [T((70000,)), T((70000,))], id="large"),
    ]
CASES += [
    Case("Div", [T((2, 3, 4)), T((2, 3, 4), nonzero=True)]),
    Case("Div", [T((2, 3, 4)), T((4,), nonzero=True)]),
    Case("Div", [T((0, 2)), T((1,), nonzero=True)]),
]
ERROR_CASES += [
    ErrorCase("Add", [T((2, 3)), T((4,))], match="cannot broadcast"),
    ErrorCase("Add", [T((2, 3))], match="expects 2 inputs"),
    ErrorCase("Div", [T((2,)), T((2,), values=[0, 1])], match="division by zero", dtype="int32"),
]
