"""Rows for src/ops/where.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_C = [True, False, False, True, True, False]
CASES += [
    Case("Where", [V(np.resize(_C, (2, 3, 4)), bool), T((2, 3, 4)), T((2, 3, 4))]),
    # 3-way broadcasting: each input contributes a different axis.
    Case("Where", [V(np.resize(_C, (3, 1, 1)), bool), T((1, 4, 1)), T((5,))]),
    Case("Where", [V(np.resize(_C, (4,)), bool), T((3, 1)), T(())]),
    Case("Where", [V(True, bool), T(()), T(())]),
    Case("Where", [V(np.zeros((0, 3), bool), bool), T((3,)), T((1,))]),
    Case("Where", [V(np.resize(_C, (3, 4)), bool), T((3, 4)), T((4,))], opset=11,
         dtypes=["float32", "string"], id="opset11"),
    Case("Where", [V(np.resize(_C, (300, 250)), bool), T((300, 250)), T((250,))], id="large"),
]

ERROR_CASES += [
    ErrorCase("Where", [V([True], bool), T((2,)), V([1, 2], np.int64)], match="same dtype"),
    ErrorCase("Where", [V([1], np.int64), T((2,)), T((2,))], match="not supported"),
    ErrorCase("Where", [V([True, False, True], bool), T((2,)), T((2,))], match="cannot broadcast"),
]
