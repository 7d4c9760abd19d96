"""Rows for src/ops/unary_math.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

F8 = ["float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"]
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0, 3.0e38, -1e-40]

# Inputs kept inside each function's domain (the oracle gives NaN outside it too,
# but in-domain values test the arithmetic).
_DOMAIN = {
    "Log": dict(positive=True, low=0.1, high=5.0),
    "Sqrt": dict(positive=True, low=0.0, high=5.0),
    "Reciprocal": dict(nonzero=True),
    "Asin": dict(low=-0.95, high=0.95),
    "Acos": dict(low=-0.95, high=0.95),
    "Atanh": dict(low=-0.95, high=0.95),
    "Acosh": dict(low=1.05, high=5.0),
    "Tan": dict(low=-1.2, high=1.2),
}
_OPS = ("Abs Neg Exp Log Sqrt Reciprocal Sin Cos Tan Asin Acos Atan Sinh Cosh Tanh Asinh "
        "Acosh Atanh Ceil Floor Round Sign Erf").split()
for _op in _OPS:
    kw = _DOMAIN.get(_op, {})
    # onnx's reference Erf evaluates in float32 (np.vectorize(math.erf, otypes="f")),
    # so float64 is compared at float32's precision.
    dts = {"dtypes": ["float16", "bfloat16", "float32"]} if _op == "Erf" else {}
    CASES += [
        Case(_op, [T((2, 3, 4), **kw)], **dts),
        Case(_op, [T((), **kw)], **dts),
        Case(_op, [T((0, 3), **kw)], **dts),
        Case(_op, [T((3, 70000 // 3 + 1), **kw)], id="large", **dts),
    ]
CASES += [
    Case("Erf", [T((2, 3, 4))], dtypes=["float64"], rtol=1e-6, atol=1e-7,
         why="the oracle's Erf rounds to float32"),
    Case("Erf", [T((3, 7), low=-6, high=6)], dtypes=["float64"], rtol=1e-6, atol=1e-7,
         why="the oracle's Erf rounds to float32"),
]

# Versions before the newest: the registrations date from these opsets.
for _op, _opset in [("Abs", 11), ("Exp", 11), ("Sin", 11), ("Sinh", 11), ("Round", 11),
                    ("Sign", 11), ("Erf", 11), ("Tanh", 13)]:
    CASES.append(Case(_op, [T((2, 5), **_DOMAIN.get(_op, {}))], opset=_opset, dtypes=["float32"],
                      id=f"opset{_opset}"))

CASES += [
    # grad=False: rows at jumps, NaN or infinities, where finite differences are meaningless.
    # Round: halves go to the even neighbour.
    Case("Round", [T((10,), values=[0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 2.51, -3.7, 7.0])],
         id="halves", grad=False),
    Case("Ceil", [T((6,), values=[-1.5, -0.5, 0.0, 0.5, 1.0, 2.2])], id="values", grad=False),
    Case("Floor", [T((6,), values=[-1.5, -0.5, 0.0, 0.5, 1.0, 2.2])], id="values", grad=False),
    # Abs, Neg, Sign on integer extremes and unsigned types.
    Case("Abs", [T((4,), values=[-128, 127, 0, -5])], dtypes=["int8"], id="int8_extremes"),
    Case("Neg", [T((4,), values=[-128, 127, 0, -5])], dtypes=["int8"], id="int8_extremes"),
    Case("Sign", [T((4,), values=[0, 200, 1, 255])], dtypes=["uint8"], id="unsigned"),
    Case("Sign", [T((5,), values=[np.nan, -0.0, 0.0, -3, 2])], dtypes=["float32", "float64"],
         id="nan", grad=False),
    Case("Abs", [T((4,), values=[np.nan, -np.inf, -0.0, 2])], dtypes=["float32"], id="special"),
    Case("Exp", [T((4,), values=[-np.inf, np.inf, 100, -100])], dtypes=["float32", "float64"],
         id="overflow", grad=False),

    Case("IsNaN", [T((2, 3, 4))]),
    Case("IsNaN", [T((9,), values=SPECIALS)], dtypes=["float32", "float64", "float16", "bfloat16"],
         id="special"),
    Case("IsNaN", [T((5,), values=[np.nan, 1.0, -2.0, np.nan, 0.0])], dtypes=F8, id="f8"),
    Case("IsNaN", [T(())]),
    Case("IsNaN", [T((0, 2))]),
    Case("IsNaN", [T((2, 3))], opset=9, dtypes=["float32"], id="opset9"),
    Case("IsNaN", [T((2, 3))], opset=13, dtypes=["float32"], id="opset13"),
    Case("IsInf", [T((2, 3, 4))]),
    Case("IsInf", [T((0,))]),
    Case("IsInf", [T(())]),
    Case("IsInf", [T((2, 3))], opset=10, dtypes=["float32"], id="opset10"),
]
for _neg in (0, 1):
    for _pos in (0, 1):
        CASES.append(Case("IsInf", [T((9,), values=SPECIALS)],
                          attrs={"detect_negative": _neg, "detect_positive": _pos},
                          dtypes=["float32", "float64", "float16", "bfloat16"] + F8,
                          id=f"special_neg{_neg}_pos{_pos}"))

ERROR_CASES += [
    ErrorCase("Exp", [T((2,))], match="not supported", dtype="int32"),
    ErrorCase("Neg", [T((2,))], match="not supported", dtype="uint8"),
    ErrorCase("IsNaN", [T((2,))], match="not supported", dtype="int64"),
    ErrorCase("Abs", [T((2,)), T((2,))], match="expects 1 input"),
    ErrorCase("IsInf", [T((2,))], attrs={"detect_negative": "yes"}, match="detect_negative"),
]
