"""Rows for src/ops/one_hot.cc."""
import ml_dtypes
import numpy as np

from op_harness import Case, ErrorCase, T, V

F32V = V([0.0, 1.0], np.float32)
IDX = [[1, 0, 4], [2, -1, 3]]  # -1: from the end in opset 11
CASES = [
    Case("OneHot", [T((2, 3), values=IDX), V(5), F32V]),
    Case("OneHot", [T((2, 3), values=IDX), V(5), V([-2, 7], np.int32)], {"axis": 0}, id="axis0"),
    Case("OneHot", [T((2, 3), values=IDX), V(4.0, np.float32), V([1.5, -0.5], np.float64)],
         {"axis": 1}, dtypes=["int64", "float32"], id="axis1_float_depth"),
    # (bool values: the evaluator computes on - off, which numpy refuses for bools)
    Case("OneHot", [T((2, 3), values=IDX), V(5), V([-1, 1], np.int8)], {"axis": -2},
         dtypes=["int32"], id="int8_values"),
    Case("OneHot", [T((2, 3), values=[[1, 0, 7], [-9, 2, 3]]), V(4), F32V], dtypes=["int64"],
         id="out_of_range"),
    Case("OneHot", [T((4,), values=[0, 2, 1, 2]), V(3), V([0, 1], np.uint8)], dtypes=["int64"],
         id="uint8_values"),
    Case("OneHot", [T((), values=2), V(3), F32V], dtypes=["int64"], id="scalar"),
    Case("OneHot", [T((0, 3)), V(5), F32V], dtypes=["int64"], id="empty"),
    Case("OneHot", [T((2,), values=[0, 1]), V(0), F32V], dtypes=["int64"], id="depth0"),
    # Opset 9 has no negative indices (the evaluator wraps them anyway), so
    # its rows use non-negative ones.
    Case("OneHot", [T((2, 3), values=[[1, 0, 4], [2, 0, 3]]), V(5), F32V], opset=9,
         dtypes=["int64", "float32"], id="opset9"),
]
CASES += [
    Case("OneHot", [T((2, 3), values=IDX), V(5), V([-2.5, 3.0], ml_dtypes.bfloat16)],
         {"axis": 1}, opset=28, dtypes=["int64"], id="bfloat16_values"),
    Case("OneHot", [T((2, 3), values=IDX), V(5), V([1.0, 2.0], np.float64)], opset=28,
         dtypes=["int32", "float32"], id="opset28"),
]
ERROR_CASES = [
    ErrorCase("OneHot", [V([0, 1]), V([2, 3]), F32V], match="depth must hold one value"),
    ErrorCase("OneHot", [V([0, 1]), V(-1), F32V], match="negative"),
    ErrorCase("OneHot", [V([0, 1]), V(3), V([0.0, 1.0, 2.0], np.float32)], match="values must be"),
    ErrorCase("OneHot", [V([0, 1]), V(3), F32V], {"axis": 2}, match="axis"),
    ErrorCase("OneHot", [V([0, 1]), V(3), F32V], {"axis": -3}, match="axis"),
]
