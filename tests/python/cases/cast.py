"""Rows for src/ops/cast.cc."""
import ml_dtypes
import numpy as np
from onnx import TensorProto as TP

from op_harness import Case, ErrorCase, T, V, np_dtype

CASES = []
ERROR_CASES = []

CODE = {
    "float16": TP.FLOAT16, "bfloat16": TP.BFLOAT16, "float32": TP.FLOAT, "float64": TP.DOUBLE,
    "int8": TP.INT8, "int16": TP.INT16, "int32": TP.INT32, "int64": TP.INT64,
    "uint8": TP.UINT8, "uint16": TP.UINT16, "uint32": TP.UINT32, "uint64": TP.UINT64,
    "bool": TP.BOOL, "string": TP.STRING,
    "float8e4m3fn": TP.FLOAT8E4M3FN, "float8e4m3fnuz": TP.FLOAT8E4M3FNUZ,
    "float8e5m2": TP.FLOAT8E5M2, "float8e5m2fnuz": TP.FLOAT8E5M2FNUZ,
    "uint4": TP.UINT4, "int4": TP.INT4, "float4e2m1": TP.FLOAT4E2M1,
    "float8e8m0": TP.FLOAT8E8M0, "uint2": TP.UINT2, "int2": TP.INT2,
}
F8 = ["float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"]
PACKED = F8 + ["uint4", "int4", "float4e2m1", "float8e8m0", "uint2", "int2"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
NUMERIC = [n for n in CODE if n not in ("string", "bool") and n not in PACKED]
NON_STRING = [n for n in CODE if n != "string"]
# float8e8m0 has no sign: a negative value cast to it is undefined.
UNSIGNED = ["uint8", "uint16", "uint32", "uint64", "uint4", "uint2", "float8e8m0"]
NP_OF = {"float8e4m3fn": ml_dtypes.float8_e4m3fn, "int4": ml_dtypes.int4,
         "float4e2m1": ml_dtypes.float4_e2m1fn, "bfloat16": ml_dtypes.bfloat16,
         "int2": ml_dtypes.int2, "float8e8m0": ml_dtypes.float8_e8m0fnu}


def oracle_casts(src, to):
    """Whether the oracle can cast src to to: it casts to float8e8m0 through
    float32, everything else with ml_dtypes, which has no cast between some
    of the sub-byte types (int4 and uint4, float8e8m0 to the 4- and 2-bit
    types, ...)."""
    if to == "float8e8m0":
        return True
    try:
        np.zeros(1, np_dtype(src)).astype(np_dtype(to))
    except TypeError:
        return False
    return True


# Every (source, target) pair without strings. Float to integer is undefined
# out of range, so unsigned targets see values >= 0.
for _to in NON_STRING:
    _low = 0 if _to in UNSIGNED else -3
    _src = [n for n in NON_STRING if oracle_casts(n, _to)]
    CASES.append(Case("Cast", [T((2, 3, 4), low=_low, high=3)], attrs={"to": CODE[_to]},
                      dtypes=_src, id=f"to_{_to}"))

# Numbers to strings (numpy's text for the value) and back.
CASES += [
    Case("Cast", [T((2, 3), low=-1000, high=1000)], attrs={"to": TP.STRING},
         dtypes=[n for n in NON_STRING if n not in PACKED], id="to_string"),
    Case("Cast", [T((14,), values=[1.0, 0.1, -2.5, 1e-5, 1e-4, 2e-4, 1e5, 1e6, 1.5e7, 0.0, -0.0,
                                   np.nan, np.inf, -np.inf])],
         attrs={"to": TP.STRING}, dtypes=["float32", "float64"], id="to_string_special"),
    Case("Cast", [T((5,), values=[1e15, 1e16, 2**53, 123456789.0, 1 / 3])],
         attrs={"to": TP.STRING}, dtypes=["float64"], id="to_string_float64"),
    Case("Cast", [V([["a", "bc"], ["", "s"]], object)], attrs={"to": TP.STRING},
         id="string_to_string"),
]
_FLOAT_TEXT = ["1.5", "-2.25", "0", "1e-5", "1E8", "100", "INF", "-INF", "NaN", "+INF", "-0.5",
               "inf", "nan"]
# (The oracle cannot parse text into bfloat16 or the packed types.)
for _to in ["float16", "float32", "float64"]:
    CASES.append(Case("Cast", [V(_FLOAT_TEXT, object)], attrs={"to": CODE[_to]},
                      id=f"string_to_{_to}"))
for _to in ["int8", "int16", "int32", "int64"]:
    CASES.append(Case("Cast", [V(["1", "-2", "0", "7", "-100"], object)], attrs={"to": CODE[_to]},
                      id=f"string_to_{_to}"))
for _to in ["uint8", "uint16", "uint32", "uint64"]:
    CASES.append(Case("Cast", [V(["1", "200", "0", "7"], object)], attrs={"to": CODE[_to]},
                      id=f"string_to_{_to}"))

# float8 rounding and saturation: out-of-range values, infinities, NaN, ties.
_F8_VALUES = [500, -1000, 1e5, np.inf, -np.inf, np.nan, 1e-9, -1e-9, -0.0, 0.3, 240, 448, 470,
              57344, 61440, 65000, -3e-3, 0.01171875, 232, 464]
for _to in F8:
    for _sat in (0, 1):
        CASES.append(Case("Cast", [T((len(_F8_VALUES),), values=_F8_VALUES)],
                          attrs={"to": CODE[_to], "saturate": _sat},
                          dtypes=FLOATS + F8 + ["float4e2m1"], id=f"to_{_to}_sat{_sat}"))
        CASES.append(Case("Cast", [T((6,), values=[1000, -1000, 300, 7, 0, -70000])],
                          attrs={"to": CODE[_to], "saturate": _sat},
                          dtypes=["int32", "int64", "int16"], id=f"int_to_{_to}_sat{_sat}"))
# Every code of each small float decodes exactly; values between neighbouring
# codes (ties included) and beyond the range encode as the oracle does.
for _t in F8 + ["float4e2m1"]:
    _np = np.dtype(getattr(ml_dtypes, _t.replace("float8", "float8_").replace(
        "float4e2m1", "float4_e2m1fn")))
    _bits = 8 if _t in F8 else 4
    _codes = np.arange(2**_bits, dtype=np.uint8).view(_np).astype(np.float64)
    CASES.append(Case("Cast", [T((len(_codes),), values=_codes)], attrs={"to": TP.FLOAT},
                      dtypes=[_t], id=f"all_codes_{_t}"))
    _fin = np.unique(_codes[np.isfinite(_codes)])
    _between = np.concatenate([(_fin[:-1] + _fin[1:]) / 2, _fin[:-1] * 0.75 + _fin[1:] * 0.25,
                               _fin * 1.001, _fin[-1:] * [1.02, 1.2, 4]])
    for _sat in (0, 1):
        CASES.append(Case("Cast", [T((len(_between),), values=_between)],
                          attrs={"to": CODE[_t], "saturate": _sat}, dtypes=["float32", "float64"],
                          id=f"between_codes_{_t}_sat{_sat}"))
# float4e2m1: ties to even, saturation, signed zero.
CASES.append(Case("Cast", [T((14,), values=[0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, 100, -100,
                                            np.inf, -np.inf, -0.0, -0.1])],
                  attrs={"to": TP.FLOAT4E2M1}, dtypes=FLOATS, id="to_float4e2m1_special"))
# float8e8m0: each round_mode with and without saturation, on powers of two,
# values between them (ties included), float32 subnormals, the largest
# exponent, infinity and NaN. (Inputs pass through float32, as the spec's
# reference: float64 ties that float32 cannot hold are not sought.)
_E8M0_VALUES = [0.0, 1.0, 0.3, 0.375, 0.75, 1.5, 3.0, 2.0**-126, 2.0**-127, 1.5 * 2.0**-127,
                1e-40, 1.7e38, 3e38, 2.0**127, np.inf, np.nan, 1000.0, 2.0**-20]
for _mode in ("up", "down", "nearest"):
    for _sat in (0, 1):
        CASES.append(Case("Cast", [T((len(_E8M0_VALUES),), values=_E8M0_VALUES)],
                          attrs={"to": TP.FLOAT8E8M0, "round_mode": _mode, "saturate": _sat},
                          dtypes=["float32", "float64"], id=f"to_float8e8m0_{_mode}_sat{_sat}"))
CASES.append(Case("Cast", [T((8,), values=[0.3, 0.75, 1.5, 3.0, 6e4, 2.0**-20, np.inf, 0.0])],
                  attrs={"to": TP.FLOAT8E8M0, "round_mode": "nearest"},
                  dtypes=["float16", "bfloat16", "float8e4m3fn", "float8e5m2"],
                  id="to_float8e8m0_narrow"))
_e8m0_codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float64)
CASES.append(Case("Cast", [T((256,), values=_e8m0_codes)], attrs={"to": TP.FLOAT},
                  dtypes=["float8e8m0"], id="all_codes_float8e8m0"))
# int4/uint4/int2/uint2: higher bits are discarded.
CASES += [
    Case("Cast", [T((6,), values=[-9, 8, 20, -8, 7, 15])], attrs={"to": TP.INT4},
         dtypes=["int8", "int32", "int64", "float32"], id="to_int4_wrap"),
    Case("Cast", [T((5,), values=[17, 16, 15, 31, 100])], attrs={"to": TP.UINT4},
         dtypes=["uint8", "int32", "float64"], id="to_uint4_wrap"),
    Case("Cast", [T((7,), values=[-3, 2, 5, -2, 1, -9, 6])], attrs={"to": TP.INT2},
         dtypes=["int8", "int32", "int64", "float32"], id="to_int2_wrap"),
    Case("Cast", [T((5,), values=[4, 5, 3, 7, 100])], attrs={"to": TP.UINT2},
         dtypes=["uint8", "int32", "float64"], id="to_uint2_wrap"),
    Case("Cast", [T((4,), values=[200, -56, 300, -129])], attrs={"to": TP.INT8},
         dtypes=["int16", "int32", "int64"], id="to_int8_wrap"),
]

# Older versions, non-default and newest attributes.
CASES += [
    Case("Cast", [T((2, 3))], attrs={"to": TP.FLOAT16}, opset=11, dtypes=["float32", "int32"],
         id="opset11"),
    Case("Cast", [T((2, 3))], attrs={"to": TP.INT64}, opset=13, dtypes=["float32", "bfloat16"],
         id="opset13"),
    Case("Cast", [T((3,), values=[1000, 1, -1000])], attrs={"to": TP.FLOAT8E4M3FN, "saturate": 0},
         opset=19, dtypes=["float32"], id="opset19"),
    Case("Cast", [T((3,), values=[-3, 1, 5])], attrs={"to": TP.INT4}, opset=21,
         dtypes=["float32"], id="opset21"),
    Case("Cast", [T((3,), values=[-3, 1, 5])], attrs={"to": TP.FLOAT}, opset=23,
         dtypes=["float4e2m1"], id="opset23"),
    Case("Cast", [T((2, 3))], attrs={"to": TP.FLOAT, "round_mode": "down"}, opset=24,
         dtypes=["float16", "float8e5m2"], id="round_mode_down"),
    Case("Cast", [T((3,), values=[0.3, 1, 5])], attrs={"to": TP.FLOAT8E8M0, "round_mode": "down"},
         opset=24, dtypes=["float32"], id="opset24"),
    Case("Cast", [T((3,), values=[-3, 1, 5])], attrs={"to": TP.INT2}, opset=25,
         dtypes=["float32", "int8"], id="opset25"),
    Case("Cast", [T((2, 3))], attrs={"to": TP.INT32, "round_mode": "nearest"},
         dtypes=["float32"], id="round_mode_nearest"),
    Case("Cast", [T(())], attrs={"to": TP.FLOAT8E5M2}, dtypes=["float32", "int64"], id="scalar"),
    Case("Cast", [T((0, 3))], attrs={"to": TP.INT4}, dtypes=["float32", "float8e4m3fn"],
         id="empty"),
    Case("Cast", [T((0, 3))], attrs={"to": TP.FLOAT8E8M0}, dtypes=["float32", "int2"],
         id="empty_to_float8e8m0"),
    Case("Cast", [T((300, 250))], attrs={"to": TP.FLOAT16}, dtypes=["float32", "float64"],
         id="large"),
]

# CastLike: the target dtype comes from the second input.
for _to in ["float16", "bfloat16", "float64", "int8", "uint64", "bool", "float8e4m3fn", "int4",
            "float4e2m1", "int2", "float8e8m0"]:
    _low = 0 if _to in UNSIGNED else -3
    CASES.append(Case("CastLike", [T((2, 3, 4), low=_low, high=3),
                                   V(np.zeros((1,), NP_OF.get(_to, _to)), NP_OF.get(_to, _to))],
                      dtypes=[n for n in NON_STRING if oracle_casts(n, _to)],
                      id=f"like_{_to}"))
CASES += [
    Case("CastLike", [T((2, 3), low=-50, high=50), V(["x"], object)],
         dtypes=["float32", "int64", "bool"], id="like_string"),
    Case("CastLike", [V(_FLOAT_TEXT, object), V([0.0], np.float32)], id="like_from_string"),
    Case("CastLike", [T((4,), values=[1000, -1000, 1, np.inf]),
                      V(np.zeros((1,), ml_dtypes.float8_e4m3fn), ml_dtypes.float8_e4m3fn)],
         attrs={"saturate": 0}, dtypes=["float32"], id="like_sat0"),
    Case("CastLike", [T((2, 3)), V([0], np.int32)], opset=15, dtypes=["float32"], id="opset15"),
    # (onnx's reference CastLike does not take round_mode.)
    Case("CastLike", [T((2, 3)), V([0], np.int32)], opset=24, dtypes=["float32"], id="opset24"),
    Case("CastLike", [T(()), V([0], np.int32)], dtypes=["float64"], id="scalar"),
]

# Gradient check only float64 -> float64: a cast to anything narrower rounds
# away the finite-difference step, and other targets have no gradient.
for _case in CASES:
    _case.grad = _case.id in ("to_float64", "like_float64")

ERROR_CASES += [
    ErrorCase("Cast", [T((2,))], attrs={"to": TP.COMPLEX64}, match="cannot cast to complex64"),
    ErrorCase("Cast", [T((2,))], attrs={"to": 99}, match="not a dtype code"),
    ErrorCase("Cast", [T((2,))], match="required attribute 'to'"),
    ErrorCase("Cast", [T((2,))], attrs={"to": TP.FLOAT, "round_mode": "sideways"},
              match="round_mode"),
    ErrorCase("CastLike", [T((2,))], match="expects 2 inputs"),
]
