"""Rows for src/ops/compare.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

for _op in ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"]:
    CASES += [
        # Small integer ranges so that equal pairs occur for every dtype.
        Case(_op, [T((2, 3, 4), low=-2, high=2), T((2, 3, 4), low=-2, high=2)]),
        Case(_op, [T((2, 1, 4), low=-2, high=2), T((3, 1), low=-2, high=2)]),
        Case(_op, [T((3, 4), low=-2, high=2), T((), low=-2, high=2)]),
        Case(_op, [T((), low=-2, high=2), T((), low=-2, high=2)]),
        Case(_op, [T((0, 3)), T((3,))]),
        Case(_op, [T((70000,), low=-1, high=1), T((70000,), low=-1, high=1)], id="large"),
        Case(_op, [T((4,), values=[np.nan, 1, np.nan, 2]), T((4,), values=[np.nan, np.nan, 1, 2])],
             dtypes=["float32", "float64", "float16"], id="nan"),
    ]
    _since = 12 if _op.endswith("OrEqual") else 7
    CASES.append(Case(_op, [T((2, 3), low=-2, high=2), T((3,), low=-2, high=2)], opset=11
                      if _since < 11 else _since, dtypes=["float32", "int32"], id="old_opset"))

CASES += [
    Case("Equal", [V([["a", "bc"], ["", "a"]], object), V(["a", ""], object)], id="strings"),
    Case("Equal", [V([True, False, True], bool), V([True], bool)], id="bools"),
]

ERROR_CASES += [
    ErrorCase("Less", [T((2,)), T((2,))], match="not supported", dtype="bool"),
    ErrorCase("Greater", [T((2, 3)), T((4,))], match="cannot broadcast"),
    ErrorCase("Equal", [T((2,)), V([1, 2], np.int64)], match="same dtype"),
]
