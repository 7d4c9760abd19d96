"""Rows for src/ops/reduce.cc."""
import numpy as np

from op_harness import FLOATS, Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
        "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
# The opset that moved axes from an attribute to an input.
_INPUT_AXES = {op: 18 for op in _OPS}
_INPUT_AXES["ReduceSum"] = 13
# Ops whose empty reduction has no integer value (Mean's 0/0 is NaN).
_NO_EMPTY_INTS = {"ReduceMean"}
_ARITH = ["bfloat16", "float64", "float32", "float16", "int32", "int64", "uint32", "uint64"]
# NOTE: onnx's reference ReduceSumSquare returns int64 for int32/uint32 input
# (np.sum widens them) where the spec says T, so its rows leave those two out;
# they share the kernel template with int64/uint64, which are checked.
_SUMSQUARE = [d for d in _ARITH if d not in ("int32", "uint32")]
_MAXMIN_NO_BOOL = ["bfloat16", "float64", "float32", "float16", "int32", "int64", "int8",
                   "uint32", "uint64", "uint8"]


def _x(op, shape):
    # Prod stays in range of float16 / small ints; LogSum needs a positive sum.
    if op == "ReduceProd":
        return T(shape, low=-1.5, high=1.5)
    if op == "ReduceLogSum":
        return T(shape, positive=True)
    return T(shape)


def _axes(values):
    return V(values, np.int64)


for _op in _OPS:
    _empty_dtypes = FLOATS if _op in _NO_EMPTY_INTS else (
        _MAXMIN_NO_BOOL if _op in ("ReduceMax", "ReduceMin") else None)
    _rows = [
        Case(_op, [_x(_op, (2, 3, 4)), _axes([1])]),
        Case(_op, [_x(_op, (2, 3, 4)), _axes([0, 2])], id="axes02"),
        Case(_op, [_x(_op, (2, 3, 4)), _axes([-1])], attrs={"keepdims": 0}, id="last_nokeep"),
        Case(_op, [_x(_op, (2, 3, 4)), _axes([0, 1])], attrs={"keepdims": 0}, id="lead_nokeep"),
        Case(_op, [_x(_op, (2, 3, 4))], id="all"),
        Case(_op, [_x(_op, (2, 3, 4))], attrs={"keepdims": 0}, id="all_nokeep"),
        Case(_op, [_x(_op, (2, 3, 4)), _axes([])], id="empty_axes"),
        Case(_op, [_x(_op, (2, 3, 4))], attrs={"noop_with_empty_axes": 1}, id="noop"),
        Case(_op, [_x(_op, (2, 1, 3, 1)), _axes([1, 3])], id="unit_axes"),
        Case(_op, [_x(_op, ())], id="scalar"),
        Case(_op, [_x(_op, (4, 5, 300)), _axes([1])], id="inner_blocks"),
        Case(_op, [_x(_op, (2, 3)), _axes([0])], dtypes=["float32"], id="tiny"),
        Case(_op, [_x(_op, (0, 3)), _axes([1])], id="empty_kept"),
        Case(_op, [_x(_op, (0, 3)), _axes([0])], dtypes=_empty_dtypes, id="empty_reduced"),
        Case(_op, [_x(_op, (2, 0, 3)), _axes([1])], attrs={"keepdims": 0},
             dtypes=_empty_dtypes, id="empty_reduced_mid"),
        Case(_op, [_x(_op, (0,))], dtypes=_empty_dtypes, id="empty_all"),
        # Attribute axes, before the move to an input.
        Case(_op, [_x(_op, (2, 3, 4))], attrs={"axes": [1]}, opset=11, id="attr"),
        Case(_op, [_x(_op, (2, 3, 4))], attrs={"axes": [0, -1], "keepdims": 0}, opset=11,
             id="attr_nokeep"),
        Case(_op, [_x(_op, (2, 3, 4))], opset=11, id="attr_all"),
        Case(_op, [_x(_op, (2, 3, 4)), _axes([2])], opset=_INPUT_AXES[_op], id="first_input"),
    ]
    if _op == "ReduceSumSquare":
        for _c in _rows:
            _c.dtypes = _SUMSQUARE if _c.dtypes is None else _c.dtypes
    if _op == "ReduceLogSumExp":
        # onnx's reference fails on 0-d input (it returns a numpy scalar).
        _rows = [_c for _c in _rows if _c.id != "scalar"]
    CASES += _rows
    if _op != "ReduceProd":
        # Long rows split across threads; a large reduced middle axis.
        _tol = {} if _op in ("ReduceMax", "ReduceMin") else dict(
            rtol=1e-4, why="float32 sum of 70000 values in another order than numpy's pairwise sum")
        CASES += [
            Case(_op, [_x(_op, (70000,))], dtypes=["float32", "float64"], id="long", **_tol),
            Case(_op, [_x(_op, (3, 300, 5)), _axes([1])], id="mid",
                 dtypes=["float32"] + ([] if _op in ("ReduceLogSum", "ReduceLogSumExp",
                                                     "ReduceSumSquare") else ["int32"])),
        ]

CASES += [
    Case("ReduceMax", [T((2, 3, 4)), V([1], np.int64)], dtypes=["bool"], id="bool"),
    Case("ReduceMin", [T((2, 3, 4))], dtypes=["bool"], id="bool_all"),
    Case("ReduceLogSumExp", [T((2, 3), values=[1000, 1001, 999, -5, -6, -7]), V([1], np.int64)],
         dtypes=["float32", "float64"], id="large_values"),
    # The gradient's special cases: Prod over one zero and over two; Max/Min
    # over two tied extremes (the gradient splits evenly, which is what central
    # differences measure for a pair).
    Case("ReduceProd", [T((2, 3), values=[0, 2, 3, 0, 0, 5]), V([1], np.int64)],
         dtypes=["float32", "float64"], id="zeros"),
    Case("ReduceMax", [T((2, 3), values=[1, 3, 3, 2, 2, 0]), V([1], np.int64)],
         dtypes=["float32", "float64"], id="ties"),
    Case("ReduceMin", [T((2, 3), values=[1, 1, 3, 2, 0, 0]), V([1], np.int64)],
         dtypes=["float32", "float64"], id="ties"),
]

ERROR_CASES += [
    ErrorCase("ReduceSum", [T((2, 3)), V([2], np.int64)], match="out of range"),
    ErrorCase("ReduceMax", [T((2, 3)), V([1, -1], np.int64)], match="appears twice"),
    ErrorCase("ReduceMean", [T((2, 3)), V([[0]], np.int64)], match="must be 1-D"),
    ErrorCase("ReduceLogSum", [T((2, 3))], dtype="int32", match="not supported"),
    ErrorCase("ReduceProd", [T((2, 3))], dtype="int8", match="not supported"),
]

# Opset 1 (the opset 11 schema serves it).
CASES += [
    Case("ReduceSum", [T((2, 3, 4))], {"axes": [2], "keepdims": 0}, opset=1, id="opset1"),
    Case("ReduceMean", [T((2, 3, 4))], {"axes": [1]}, opset=1, id="opset1"),
]
