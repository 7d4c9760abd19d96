"""Rows for src/ops/quant_matmul.cc (MatMulInteger, QLinearMatMul)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

# Per-row zero points and scales of a are not rows here: the oracle broadcasts
# a 1-D a_zero_point along the last axis (numpy), not along rows (the spec).
CASES = []
ERROR_CASES = []

_I8 = ["int8", "uint8"]

# MatMulInteger: A swept over int8/uint8 (with its zero point), B fixed.
CASES += [
    Case("MatMulInteger", [T((3, 4), low=-100, high=200), V(np.arange(20).reshape(4, 5) * 7 % 256,
                                                              np.uint8)]),
    Case("MatMulInteger", [T((3, 4), low=-100, high=200), V(np.arange(20).reshape(4, 5) * 7 % 256,
                                                              np.uint8), T((), low=0, high=9),
                           V(12, np.uint8)], id="zero-points"),
    Case("MatMulInteger", [T((3, 4), low=-100, high=200),
                           V(np.arange(20).reshape(4, 5) % 100 - 50, np.int8), T((), low=0, high=9),
                           V([1, -2, 3, -4, 5], np.int8)], id="per-column"),
    Case("MatMulInteger", [T((2, 3, 4), low=-100, high=200),
                           V(np.arange(20).reshape(4, 5) % 100 - 50, np.int8)], id="batched"),
    Case("MatMulInteger", [T((4,), low=-100, high=200),
                           V(np.arange(20).reshape(4, 5) % 100 - 50, np.int8)], id="vector"),
    Case("MatMulInteger", [T((0, 4)), V(np.zeros((4, 5)), np.int8)], id="empty"),
]

_A_S, _B_S, _Y_S = V(0.0235, np.float32), V(0.0197, np.float32), V(0.0627, np.float32)
_B = V(np.arange(20).reshape(4, 5) * 37 % 256, np.uint8)
CASES += [
    Case("QLinearMatMul", [T((3, 4), low=-128, high=255), _A_S, T((), low=0, high=20), _B, _B_S,
                           V(110, np.uint8), _Y_S, V(120, np.uint8)]),
    Case("QLinearMatMul", [T((2, 3, 4), low=-128, high=255), _A_S, T((), low=0, high=20), _B,
                           _B_S, V(110, np.uint8), _Y_S, V(-3, np.int8)], id="batched-int8-out"),
    Case("QLinearMatMul", [T((3, 4), low=-128, high=255), _A_S, T((), low=0, high=20), _B,
                           V([0.01, 0.02, 0.03, 0.04, 0.05], np.float32),
                           V([1, 2, 3, 4, 5], np.uint8), _Y_S, V(120, np.uint8)],
         id="per-column"),
    Case("QLinearMatMul", [T((3, 4), low=-128, high=255), V(0.0235, np.float16),
                           T((), low=0, high=20), _B, V(0.0197, np.float16), V(110, np.uint8),
                           V(0.0627, np.float16), V(120, np.uint8)], id="float16-scales"),
    Case("QLinearMatMul", [T((3, 4), low=-128, high=255), _A_S, T((), low=0, high=20), _B, _B_S,
                           V(110, np.uint8), _Y_S, V(120, np.uint8)], opset=10, id="opset10"),
    Case("QLinearMatMul", [T((0, 4)), _A_S, T(()), _B, _B_S, V(110, np.uint8), _Y_S,
                           V(120, np.uint8)], id="empty"),
]

ERROR_CASES += [
    ErrorCase("MatMulInteger", [T((3, 4), low=0, high=9), V(np.zeros((5, 2)), np.int8)],
              dtype="int8", match="inner dimensions"),
    ErrorCase("MatMulInteger", [T((3, 4), low=0, high=9), V(np.zeros((4, 2)), np.int8),
                                V([1, 2], np.int8)], dtype="int8", match="a_zero_point"),
    ErrorCase("QLinearMatMul", [T((3, 4), low=0, high=9), _A_S, V(0, np.int8), _B, _B_S,
                                V(110, np.uint8), V([0.1, 0.2], np.float32), V(120, np.uint8)],
              dtype="int8", match="y_scale"),
    ErrorCase("MatMulInteger", [T((3, 4)), V(np.zeros((4, 2)), np.int8)], match="not supported"),
]
