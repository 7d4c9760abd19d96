"""Rows for src/ops/center_crop_pad.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
# (The oracle's zeros in a string tensor are the integer 0, ours "": string
# rows only crop.)
NO_STR = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]
CASES = [
    Case("CenterCropPad", [T((10, 7, 3)), V([5, 7, 3])]),
    Case("CenterCropPad", [T((10, 7, 3)), V([20, 10, 3])], dtypes=NO_STR, id="pad"),
    Case("CenterCropPad", [T((10, 9, 3)), V([20, 8, 3])], dtypes=NO_STR, id="crop_and_pad"),
    Case("CenterCropPad", [T((3, 20, 8)), V([10, 9], np.int32)], {"axes": [1, 2]}, dtypes=F,
         id="axes_chw"),
    Case("CenterCropPad", [T((20, 8, 3)), V([10, 9])], {"axes": [0, 1]}, dtypes=F,
         id="axes_hwc"),
    Case("CenterCropPad", [T((20, 8, 3)), V([10, 9])], {"axes": [-3, -2]}, dtypes=F,
         id="negative_axes"),
    Case("CenterCropPad", [T((4, 5)), V([0, 5])], dtypes=F, id="to_empty"),
    Case("CenterCropPad", [T((0, 5)), V([3, 3])], dtypes=F, id="from_empty"),
]
ERROR_CASES = [
    ErrorCase("CenterCropPad", [T((4, 5)), V([3])], match="1 values for 2 axes"),
    ErrorCase("CenterCropPad", [T((4, 5)), V([3])], {"axes": [2]}, match="out of range"),
    ErrorCase("CenterCropPad", [T((4, 5)), V([3, 3])], {"axes": [0, -2]}, match="distinct|repeat"),
    ErrorCase("CenterCropPad", [T((4, 5)), V([-1, 3])], match="negative"),
    ErrorCase("CenterCropPad", [T((4, 5)), V([3.0, 3.0], np.float32)], match="not supported"),
]
