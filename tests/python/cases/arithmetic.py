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

# Opsets 1 and 6: `broadcast`/`axis` (the oracle broadcasts numpy's way, which
# agrees where B lines up with A's trailing dims).
for _op in ["Add", "Sub", "Mul"]:
    CASES += [
        Case(_op, [T((2, 3, 4)), T((2, 3, 4))], opset=6, id="opset6"),
        Case(_op, [T((2, 3, 4)), T((3, 4))], {"broadcast": 1}, opset=6, id="opset6_broadcast"),
        Case(_op, [T((2, 3, 4)), T((4,))], {"broadcast": 1, "axis": 2}, opset=6,
             id="opset6_axis"),
        Case(_op, [T((2, 3)), T((1,))], {"broadcast": 1}, opset=1, id="opset1_scalar"),
        Case(_op, [T((0, 3)), T((3,))], {"broadcast": 1}, opset=6, id="opset6_empty"),
    ]
CASES += [
    Case("Div", [T((2, 3, 4)), T((3, 1), nonzero=True)], {"broadcast": 1}, opset=6,
         id="opset6_broadcast"),
]
ERROR_CASES += [
    ErrorCase("Add", [T((2, 3)), T((3,))], opset=6, match="without broadcast=1"),
    ErrorCase("Mul", [T((2, 3)), T((2,))], {"broadcast": 1}, opset=6, match="does not broadcast"),
    ErrorCase("Sub", [T((2, 3)), T((2,))], {"broadcast": 1, "axis": 2}, opset=1,
              match="does not fit"),
    ErrorCase("Add", [T((2, 3)), T((3, 3))], {"broadcast": 1}, opset=6,
              match="does not broadcast"),
]
