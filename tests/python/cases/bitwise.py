"""Rows for src/ops/bitwise.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
for _op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    CASES += [
        Case(_op, [T((3, 4), low=-100, high=100), T((3, 4), low=-100, high=100)]),
        Case(_op, [T((2, 3, 4), low=0, high=255), T((4,), low=0, high=255)], id="bcast"),
        Case(_op, [T((0, 4)), T((1, 4))], id="empty"),
        Case(_op, [T(()), T((2,))], id="scalar"),
    ]
CASES += [
    Case("BitwiseNot", [T((3, 4), low=-100, high=100)]),
    Case("BitwiseNot", [T((2, 0))], id="empty"),
    Case("BitwiseNot", [T(())], id="scalar"),
]
ERROR_CASES = [
    ErrorCase("BitwiseAnd", [T((3,)), T((3,))], match="not supported"),
    ErrorCase("BitwiseOr", [V([1, 2]), V([1, 2], np.int32)], match="int"),
    ErrorCase("BitwiseXor", [V([1, 2]), V([1, 2, 3])], match="broadcast"),
    ErrorCase("BitwiseNot", [V([True], np.bool_)], match="not supported"),
]
