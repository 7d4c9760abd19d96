"""Rows for src/ops/pow.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

# Bases > 0 so that float exponents stay real; integer exponents >= 0 (numpy,
# the oracle, rejects negative integer powers of integers).
CASES += [
    Case("Pow", [T((2, 3, 4), low=0.1, high=3), T((2, 3, 4), low=0, high=3)]),
    Case("Pow", [T((2, 3, 4), low=0.1, high=3), T((4,), low=0, high=3)]),
    Case("Pow", [T((3, 1), low=0.1, high=3), T((1, 4), low=0, high=3)]),
    Case("Pow", [T(()), T((), low=0, high=3)]),
    Case("Pow", [T((0, 3)), T((3,), low=0, high=2)]),
    Case("Pow", [T((70000,), low=0.1, high=2), T((1,), low=2, high=2)], id="large"),
    Case("Pow", [T((2, 3), low=0.1, high=3), T((3,), low=0, high=3)], opset=11,
         dtypes=["float32", "float64"], id="opset11"),
    Case("Pow", [T((2, 3), low=0.1, high=3), T((3,), low=0, high=3)], opset=12,
         dtypes=["float32", "int64"], id="opset12"),
    # Negative bases with integral exponents; the sign alternates.
    Case("Pow", [T((6,), values=[-2, -3, -1.5, 2, 0, -1]), V([3, 2, 2, 5, 0, 7], np.int64)],
         dtypes=["float32", "float64", "int32", "int64"], id="neg_base"),
    # Integer results that need exactness (float64 would round 3**39).
    Case("Pow", [T((3,), values=[3, 7, -5]), V([39, 22, 27], np.int64)], dtypes=["int64"],
         id="exact_int64"),
    Case("Pow", [T((3,), values=[3, 2, -5]), V([25, 31, 13], np.int32)], dtypes=["int32"],
         id="exact_int32"),
]
# Exponent dtypes other than the base's (T1 differs from T).
for _edt in [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]:
    CASES.append(Case("Pow", [T((2, 3), low=0.5, high=3), V([[0, 1, 2], [3, 1, 2]], _edt)],
                      id=f"exp_{np.dtype(_edt).name}"))
for _edt in [np.float16, np.float32, np.float64]:
    CASES.append(Case("Pow", [T((2, 3), low=1, high=4), V([[0.5, 1, 2], [1.5, 0, 2.5]], _edt)],
                      id=f"exp_{np.dtype(_edt).name}"))

ERROR_CASES += [
    ErrorCase("Pow", [T((2,)), T((2,))], match="not supported", dtype="int8"),
    ErrorCase("Pow", [T((2,)), V([True, False], bool)], match="not supported"),
    ErrorCase("Pow", [T((2, 3)), T((2,))], match="cannot broadcast"),
]

# Opset 1 (the oracle rejects the `broadcast` attribute: the conformance
# case test_operator_pow and the arithmetic rows cover it).
CASES += [
    Case("Pow", [T((2, 3), positive=True), T((2, 3), -2, 2)], opset=1, id="opset1"),
]
