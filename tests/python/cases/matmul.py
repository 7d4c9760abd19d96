"""Rows for src/ops/matmul.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []


def _m(*shape):
    # Values in [-1, 1) keep float32 cancellation error within the default tolerance.
    return T(shape, low=-1, high=1)


CASES += [
    Case("MatMul", [_m(3, 4), _m(4, 5)]),
    Case("MatMul", [_m(4), _m(4, 5)]),
    Case("MatMul", [_m(3, 4), _m(4)]),
    Case("MatMul", [_m(4), _m(4)]),
    Case("MatMul", [_m(2, 3, 4), _m(4, 5)]),
    Case("MatMul", [_m(3, 4), _m(2, 4, 5)]),
    Case("MatMul", [_m(2, 1, 3, 4), _m(3, 4, 5)]),
    Case("MatMul", [_m(1, 3, 4), _m(2, 4, 5)]),
    Case("MatMul", [_m(2, 3, 4), _m(4)]),
    Case("MatMul", [_m(4), _m(2, 4, 5)]),
    Case("MatMul", [_m(1, 1), _m(1, 1)]),
    Case("MatMul", [_m(0, 4), _m(4, 5)]),
    Case("MatMul", [_m(3, 0), _m(0, 5)]),
    Case("MatMul", [_m(2, 0, 3, 4), _m(4, 5)]),
    Case("MatMul", [_m(33, 70), _m(70, 65)], id="larger"),
    Case("MatMul", [_m(3, 4), _m(4, 5)], opset=9, id="opset9"),
]

ERROR_CASES += [
    ErrorCase("MatMul", [T((3, 4)), T((5, 6))], match="inner dimensions differ"),
    ErrorCase("MatMul", [T(()), T((3,))], match="rank >= 1"),
    ErrorCase("MatMul", [T((2, 3, 4)), T((3, 4, 5))], match="cannot broadcast"),
    ErrorCase("MatMul", [T((3, 4)), T((4, 5))], dtype="int8", match="not supported"),
]

# Opset 1 (the opset 9 schema serves it).
CASES += [Case("MatMul", [T((2, 3, 4)), T((4, 5))], opset=1, id="opset1")]
