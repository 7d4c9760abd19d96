"""Rows for src/ops/cumulative.cc (CumSum, CumProd)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
CASES = []
for _op, _opset in [("CumSum", None), ("CumProd", 26)]:
    # CumProd's gradient divides by x: its rows keep x away from 0.
    _x = dict(low=0.5, high=1.5) if _op == "CumProd" else {}
    CASES += [
        Case(_op, [T((5,), low=1, high=4), V(0)], opset=_opset),
        Case(_op, [T((3, 4), **_x), V(1)], opset=_opset, dtypes=F, id="axis1"),
        Case(_op, [T((3, 4), **_x), V(0, np.int32)], opset=_opset, dtypes=F, id="axis0_int32"),
        Case(_op, [T((2, 3, 4), **_x), V(-2)], {"exclusive": 1}, opset=_opset, dtypes=F,
             id="exclusive"),
        Case(_op, [T((2, 3, 4), **_x), V(2)], {"reverse": 1}, opset=_opset, dtypes=F,
             id="reverse"),
        Case(_op, [T((2, 3, 4), **_x), V(1)], {"reverse": 1, "exclusive": 1}, opset=_opset,
             dtypes=F, id="reverse_exclusive"),
        Case(_op, [T((6,), low=1, high=3), V(0)], {"exclusive": 1}, opset=_opset,
             dtypes=["int32", "int64", "uint64"], id="int_exclusive"),
        Case(_op, [T((0, 4)), V(1)], opset=_opset, dtypes=F, id="empty"),
        Case(_op, [T((3, 0)), V(1)], opset=_opset, dtypes=F, id="empty_axis"),
    ]
CASES += [
    Case("CumSum", [T((300, 200)), V(0)], dtypes=["float32"], id="large"),
    Case("CumSum", [T((3, 4)), V(1)], opset=11, dtypes=F, id="opset11"),
]
ERROR_CASES = [
    ErrorCase("CumSum", [T((3, 4)), V(2)], match="out of range"),
    ErrorCase("CumSum", [T((3, 4)), V(-3)], match="out of range"),
    ErrorCase("CumSum", [T((3, 4)), V([0, 1])], match="axis must be a scalar"),
    ErrorCase("CumSum", [T((3, 4)), V(0.0, np.float32)], match="not supported"),
    ErrorCase("CumSum", [V([True, False], np.bool_), V(0)], match="not supported"),
]
