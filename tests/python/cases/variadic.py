"""Rows for src/ops/variadic.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

for _op in ["Max", "Min", "Mean", "Sum"]:
    CASES += [
        Case(_op, [T((2, 3, 4))]),
        Case(_op, [T((2, 3, 4)), T((2, 3, 4))]),
        Case(_op, [T((2, 3, 4)), T((3, 1)), T((4,))]),
        Case(_op, [T((3, 4)), T((3, 1)), T((1, 4)), T(())]),
        Case(_op, [T(()), T(())]),
        Case(_op, [T((0, 3)), T((3,))]),
        Case(_op, [T((2, 3))], id="single_2d"),
        Case(_op, [T((70000,)), T((70000,)), T((1,))], id="large"),
        Case(_op, [T((2, 3)), T((3,))], opset=11, dtypes=["float32", "float64"], id="opset11"),
        Case(_op, [T((4,), values=[np.nan, 1, 2, np.nan]), T((4,), values=[0, np.nan, 3, np.nan])],
             dtypes=["float32", "float64"], id="nan", grad=False),
    ]
    # (onnx's reference Mean accumulates into its first input: it must have the output shape.)
    if _op != "Mean":
        CASES.append(Case(_op, [T((3, 1)), T((1, 4)), T(()), T((3, 4))]))

ERROR_CASES += [
    ErrorCase("Sum", [T((2,)), T((2,))], match="not supported", dtype="int32"),
    ErrorCase("Max", [T((2,)), T((3,))], match="cannot broadcast"),
    ErrorCase("Mean", [], match="expects 1 or more"),
]

# Opsets 1 and 6: no broadcasting.
CASES += [
    Case(_op, [T((2, 3)), T((2, 3)), T((2, 3))], opset=6, id="opset6") for _op in
    ["Max", "Min", "Mean", "Sum"]
]
ERROR_CASES += [
    ErrorCase("Sum", [T((2, 3)), T((3,))], opset=6, match="one shape"),
]
