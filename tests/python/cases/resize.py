"""Rows for src/ops/resize.cc (Resize, Upsample). Every row names its
dtypes: the evaluator computes in float64 and cannot take strings or bools."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

NUM = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8"]
F = ["float32", "float64"]
F32 = ["float32"]
# NOTE: the evaluator computes cubic coefficients in float32 (cubic_coeff_a
# reaches it as numpy.float32, which wins numpy's promotion against Python
# floats), and tf_crop_and_resize's roi_end - roi_start in float32 (roi is
# float32): float64 rows of those agree to float32 round-off only.
LOOSE = dict(rtol=2e-5, atol=1e-6, why="the evaluator rounds cubic coefficients / roi "
             "differences to float32")
X4 = T((1, 2, 4, 5))


def S(*v):
    return V(list(v), np.float32)


def Z(*v):
    return V(list(v), np.int64)


CASES = [
    Case("Resize", [T((1, 1, 2, 3)), None, S(1, 1, 2, 2)], dtypes=NUM, id="nearest_up2"),
    Case("Resize", [T((2, 3)), None, S(1.5, 2.5)], dtypes=NUM, id="nearest_frac"),
    Case("Resize", [T((1, 1, 2, 2)), None, None, Z(1, 1, 0, 3)], dtypes=F, id="sizes_to_zero"),
    Case("Resize", [T((0, 1, 2, 2)), None, S(1, 1, 2, 2)], {"mode": "linear"}, dtypes=F,
         id="empty"),
    Case("Resize", [T((64, 3, 32, 32)), None, S(1, 1, 2, 2)], {"mode": "linear"}, dtypes=F32,
         id="large_linear"),
    Case("Resize", [T((64, 3, 32, 32)), None, S(1, 1, 2, 2)], dtypes=F32, id="large_nearest"),
]
for _nm in ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]:
    for _ctm in ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]:
        CASES.append(Case("Resize", [X4, None, S(1, 1, 0.6, 1.7)],
                          {"nearest_mode": _nm, "coordinate_transformation_mode": _ctm},
                          dtypes=F, id=f"nearest_{_nm}_{_ctm}"))
for _mode in ["linear", "cubic"]:
    _tol = LOOSE if _mode == "cubic" else {}
    for _ctm in ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                 "half_pixel_symmetric"]:
        CASES += [
            Case("Resize", [X4, None, S(1, 1, 1.6, 0.7)],
                 {"mode": _mode, "coordinate_transformation_mode": _ctm}, dtypes=F, **_tol,
                 id=f"{_mode}_{_ctm}"),
            Case("Resize", [X4, None, None, Z(1, 2, 7, 3)],
                 {"mode": _mode, "coordinate_transformation_mode": _ctm}, dtypes=F, **_tol,
                 id=f"{_mode}_{_ctm}_sizes"),
        ]
    CASES += [
        Case("Resize", [X4, S(0, 0, 0.2, 0.1, 1, 1, 0.9, 1.2), None, Z(1, 2, 5, 4)],
             {"mode": _mode, "coordinate_transformation_mode": "tf_crop_and_resize",
              "extrapolation_value": 7.5}, dtypes=F, **LOOSE, id=f"{_mode}_tf_crop"),
        Case("Resize", [X4, None, S(1, 1, 0.5, 0.6)], {"mode": _mode, "antialias": 1},
             dtypes=F, **_tol, id=f"{_mode}_antialias"),
        Case("Resize", [X4, None, S(1, 1, 2.5, 1.5)], {"mode": _mode, "antialias": 1},
             dtypes=F, **_tol, id=f"{_mode}_antialias_up"),
        Case("Resize", [X4, None, S(2, 0.5)], {"mode": _mode, "axes": [3, 2]}, dtypes=F, **_tol,
             id=f"{_mode}_axes"),
        Case("Resize", [X4, None, S(1, 1, 1.6, 0.7)], {"mode": _mode},
             dtypes=[d for d in NUM if d != "float64"],
             id=f"{_mode}_dtypes"),
        Case("Resize", [X4, None, S(1, 1, 1.6, 0.7)], {"mode": _mode}, opset=13, dtypes=F, **_tol,
             id=f"{_mode}_opset13"),
        Case("Resize", [X4, V(np.zeros(0), np.float32), S(1, 1, 1.6, 0.7)], {"mode": _mode},
             opset=11, dtypes=F, **_tol, id=f"{_mode}_opset11"),
        Case("Resize", [X4, V(np.zeros(0), np.float32), V(np.zeros(0), np.float32),
                        Z(1, 2, 3, 8)], {"mode": _mode}, opset=11, dtypes=F, **_tol,
             id=f"{_mode}_opset11_sizes"),
    ]
CASES += [
    Case("Resize", [X4, None, S(1, 1, 1.6, 0.7)], {"mode": "cubic", "cubic_coeff_a": -0.5,
                                                   "exclude_outside": 1}, dtypes=F, **LOOSE,
         id="cubic_exclude_outside"),
    Case("Resize", [X4, None, None, Z(3, 7)], {"mode": "linear", "axes": [3, 2],
                                               "keep_aspect_ratio_policy": "not_larger"},
         dtypes=F, id="not_larger"),
    Case("Resize", [X4, None, None, Z(3, 7)], {"mode": "linear", "axes": [2, 3],
                                               "keep_aspect_ratio_policy": "not_smaller"},
         dtypes=F, id="not_smaller"),
    Case("Resize", [X4, None, S(1, 1, 1.6, 0.7)], {"mode": "linear"}, opset=18, dtypes=F,
         id="opset18"),
    Case("Upsample", [T((1, 2, 2, 3)), S(1, 1, 2, 3)], opset=9,
         dtypes=[d for d in NUM if d != "bfloat16"], id="opset9"),
]
ERROR_CASES = [
    ErrorCase("Resize", [T((2, 3)), None, S(2)], match="scales has 1 values"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2), Z(4, 6)], match="exactly one"),
    ErrorCase("Resize", [T((2, 3)), None, None, None], match="exactly one"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 0)], match="not positive"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2)], {"mode": "area"}, match="mode"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2)], {"coordinate_transformation_mode": "x"},
              match="coordinate_transformation_mode"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2)], {"nearest_mode": "x"}, match="nearest_mode"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2)], {"antialias": 1}, match="antialias"),
    ErrorCase("Resize", [T((2, 3)), None, S(2)], {"axes": [1, -1]}, match="repeat"),
    ErrorCase("Resize", [T((2, 3)), None, S(2)], {"axes": [2]}, match="out of range"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2)],
              {"coordinate_transformation_mode": "tf_crop_and_resize"}, match="needs roi"),
    ErrorCase("Resize", [T((2, 3)), None, S(2, 2)], {"mode": "linear"}, dtype="string",
              match="needs a numeric input"),
    ErrorCase("Resize", [T((0, 3)), None, None, Z(2, 3)], match="empty axis"),
    ErrorCase("Resize", [T((2, 3)), None, None, Z(2, 3)], {"keep_aspect_ratio_policy": "x"},
              match="keep_aspect_ratio_policy"),
]
