"""Rows for src/ops/swish.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

CASES += [
    Case("Swish", [T((3, 4))]),
    Case("Swish", [T((2, 3, 4))], {"alpha": 1.702}, id="alpha"),
    Case("Swish", [T((0, 4))]),
    Case("SwiGLU", [T((3, 4)), T((3, 4))], opset=28),
    Case("SwiGLU", [T((2, 3, 4)), T((2, 3, 4))], {"alpha": 0.5}, opset=28, id="alpha"),
    Case("SwiGLU", [T((0, 4)), T((0, 4))], opset=28),
]

ERROR_CASES += [
    ErrorCase("SwiGLU", [T((3, 4)), T((1, 4))], match="same shape", opset=28),
]
