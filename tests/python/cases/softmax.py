"""Rows for src/ops/softmax.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

for _op in ["Softmax", "LogSoftmax", "Hardmax"]:
    CASES += [
        Case(_op, [T((2, 3, 4))]),
        Case(_op, [T((2, 3, 4))], {"axis": 1}),
        Case(_op, [T((2, 3, 4))], {"axis": 0}),
        Case(_op, [T((2, 3, 4))], {"axis": -2}),
        Case(_op, [T((5,))]),
        Case(_op, [T((0, 3))]),
        Case(_op, [T((3, 0))]),
        Case(_op, [T((2, 0, 4))], {"axis": 1}),
        Case(_op, [T((64, 1000), low=-20, high=20)], id="wide"),
        # Read non-contiguous (transposed), the rows' axis is strided and the
        # one before it contiguous: blocks of 16 rows and a last of 5.
        Case(_op, [T((37, 16), low=-10, high=10)], id="columns"),
        Case(_op, [T((21, 65))], id="columns-long"),
        # Opset 1/11 coerce to 2-D at axis; onnx's reference evaluator treats
        # `axis` as a single axis there, so rows keep the two readings equal
        # (axis on the last dim). tests/cpp/softmax_test.cc covers coercion.
        Case(_op, [T((3, 4))], opset=11),
        Case(_op, [T((3, 4))], {"axis": -1}, opset=11, id="neg-axis"),
        Case(_op, [T((2, 3, 4))], {"axis": 2}, opset=11, id="rank3-last"),
        Case(_op, [T((37, 16), low=-10, high=10)], opset=11, id="columns-11"),
        Case(_op, [T((3, 4))], opset=1, dtypes=["float32"]),
    ]

# Ties: Hardmax marks the first maximum.
CASES += [
    Case("Hardmax", [T((2, 4), values=[1, 3, 3, 0, 2, 2, 2, 2])]),
    Case("Hardmax", [T((2, 4), values=[1, 3, 3, 0, 2, 2, 2, 2])], opset=11, id="ties-11"),
]

ERROR_CASES += [
    ErrorCase("Softmax", [T((2, 3))], {"axis": 2}, match="axis"),
    ErrorCase("LogSoftmax", [T(())], match="axis"),
    ErrorCase("Hardmax", [T((2, 3))], {"axis": -3}, match="axis"),
    ErrorCase("Softmax", [T((2, 3))], dtype="int32", match="not supported"),
]
