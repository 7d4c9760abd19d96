"""Rows for src/ops/pool.cc.

The oracle (onnx.reference) takes two routes for MaxPool: with all strides
and dilations 1 it pads with NaN (which integer dtypes cannot hold), returns
no Indices and fails on 1-D input, so integer rows with padding and Indices rows use
strides or dilations != 1. Its ceil_mode padding is right only when the
partial last window overhangs by at most one position: ceil_mode rows keep
to that."""
from op_harness import Case, ErrorCase, T

FLOATS = ["float16", "bfloat16", "float32", "float64"]

CASES = []
ERROR_CASES = []

CASES += [
    Case("MaxPool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2], "strides": [2, 2]}, id="2d"),
    Case("MaxPool", [T((2, 3, 5, 5))], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
         dtypes=FLOATS, id="2d_pads"),
    Case("MaxPool", [T((1, 2, 7, 6))], {"kernel_shape": [3, 2], "strides": [2, 1],
                                        "pads": [1, 0, 0, 1]}, id="2d_asym_pads_strides"),
    Case("MaxPool", [T((1, 2, 5, 5))], {"kernel_shape": [2, 2], "strides": [2, 2],
                                        "ceil_mode": 1}, id="2d_ceil"),
    Case("MaxPool", [T((1, 2, 7, 7))], {"kernel_shape": [2, 2], "dilations": [2, 2]},
         id="2d_dilations"),
    Case("MaxPool", [T((1, 2, 8, 7))], {"kernel_shape": [2, 3], "dilations": [2, 1],
                                        "strides": [2, 2], "pads": [1, 1, 1, 1]},
         id="2d_dilations_strides_pads"),
    Case("MaxPool", [T((1, 2, 6, 7))], {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"},
         dtypes=FLOATS, id="2d_same_upper"),
    Case("MaxPool", [T((1, 2, 6, 7))], {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"},
         dtypes=FLOATS, id="2d_same_lower"),
    Case("MaxPool", [T((1, 2, 6, 7))], {"kernel_shape": [3, 3], "auto_pad": "VALID",
                                        "strides": [2, 2]}, id="2d_valid"),
    Case("MaxPool", [T((2, 3, 6, 5))], {"kernel_shape": [2, 2], "strides": [2, 2],
                                        "pads": [1, 0, 0, 1]}, outputs=2, id="2d_indices"),
    Case("MaxPool", [T((1, 3, 6, 5))], {"kernel_shape": [3, 2], "strides": [2, 1],
                                        "storage_order": 1}, outputs=2,
         id="2d_indices_column_major"),
    Case("MaxPool", [T((2, 2, 9))], {"kernel_shape": [3], "strides": [2], "pads": [1, 1]},
         outputs=2, id="1d_indices"),
    Case("MaxPool", [T((2, 2, 9))], {"kernel_shape": [3], "strides": [2], "pads": [1, 0]},
         id="1d"),
    Case("MaxPool", [T((1, 2, 4, 5, 6))], {"kernel_shape": [2, 2, 3], "strides": [2, 2, 2],
                                           "pads": [0, 1, 1, 1, 0, 1]}, outputs=2,
         id="3d_indices"),
    Case("MaxPool", [T((1, 2, 4, 5, 6))], {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2]},
         id="3d"),
    Case("MaxPool", [T((0, 2, 4, 4))], {"kernel_shape": [2, 2], "strides": [2, 2]}, id="empty"),
    Case("MaxPool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11,
         dtypes=FLOATS, id="opset11"),
]

for _cip in [0, 1]:
    _a = {"count_include_pad": _cip}
    CASES += [
        Case("AveragePool", [T((1, 2, 5, 5))], {**_a, "kernel_shape": [3, 3],
                                                "pads": [1, 1, 1, 1]}, id=f"2d_pads_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 7, 6))], {**_a, "kernel_shape": [3, 2], "strides": [2, 1],
                                                "pads": [1, 0, 0, 1]},
             id=f"2d_asym_pads_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 6, 6))], {**_a, "kernel_shape": [3, 3], "strides": [2, 2],
                                                "pads": [1, 1, 1, 1], "ceil_mode": 1},
             id=f"2d_ceil_pads_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 5, 5))], {**_a, "kernel_shape": [2, 2], "strides": [2, 2],
                                                "ceil_mode": 1}, id=f"2d_ceil_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 6, 7))], {**_a, "kernel_shape": [3, 3],
                                                "auto_pad": "SAME_UPPER", "strides": [2, 2]},
             id=f"2d_same_upper_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 6, 7))], {**_a, "kernel_shape": [2, 2],
                                                "auto_pad": "SAME_LOWER"},
             id=f"2d_same_lower_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 8, 8))], {**_a, "kernel_shape": [2, 2],
                                                "dilations": [2, 2], "pads": [1, 1, 1, 1]},
             id=f"2d_dilations_cip{_cip}"),
        Case("AveragePool", [T((2, 2, 9))], {**_a, "kernel_shape": [3], "strides": [2],
                                             "pads": [1, 2]}, id=f"1d_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 4, 5, 6))], {**_a, "kernel_shape": [2, 3, 2],
                                                   "strides": [2, 1, 2],
                                                   "pads": [1, 0, 1, 0, 1, 1]},
             id=f"3d_cip{_cip}"),
        Case("AveragePool", [T((1, 2, 5, 5))], {**_a, "kernel_shape": [3, 3],
                                                "pads": [1, 1, 1, 1]}, opset=11,
             id=f"opset11_cip{_cip}"),
    ]
CASES += [
    Case("AveragePool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2], "strides": [2, 2]}, id="2d"),
    Case("AveragePool", [T((1, 2, 6, 7))], {"kernel_shape": [3, 3], "auto_pad": "VALID"},
         id="2d_valid"),
    Case("AveragePool", [T((0, 2, 4, 4))], {"kernel_shape": [2, 2]}, id="empty"),
]

# The oracle's GlobalMaxPool reduces the wrong axes unless there are exactly
# two spatial ones, and its GlobalAveragePool divides by zero on an empty
# batch: those rows are in tests/cpp/pool_test.cc.
for _op in ["GlobalAveragePool", "GlobalMaxPool"]:
    CASES += [
        Case(_op, [T((2, 3, 4, 5))]),
        Case(_op, [T((2, 3, 1, 1))]),
    ]
CASES += [
    Case("GlobalAveragePool", [T((2, 3, 7))]),
    Case("GlobalAveragePool", [T((1, 2, 3, 4, 5))]),
    Case("GlobalMaxPool", [T((0, 3, 4, 4))]),
]

# Rows for the gradient check: windows overlap, so an input can be the max
# of several windows (random values have no ties).
CASES += [
    Case("MaxPool", [T((2, 2, 5, 6))], {"kernel_shape": [3, 3], "strides": [2, 2],
                                        "pads": [1, 1, 1, 1], "ceil_mode": 1},
         id="grad_2d_overlap_ceil"),
    Case("MaxPool", [T((1, 2, 3, 4, 5))], {"kernel_shape": [2, 2, 2], "strides": [1, 2, 2],
                                           "dilations": [2, 1, 1], "pads": [1, 0, 1, 1, 1, 0]},
         id="grad_3d_dilations"),
    Case("AveragePool", [T((1, 2, 7, 7))], {"kernel_shape": [3, 2], "strides": [2, 2],
                                            "dilations": [2, 2], "pads": [1, 0, 1, 1],
                                            "count_include_pad": 1}, id="grad_2d_dilations_cip1"),
    # Ties: the gradient goes to one of the tied maxima, which finite
    # differences cannot see, so this row checks values only.
    Case("MaxPool", [T((1, 1, 4, 4), values=[1, 1, 2, 2] * 4)],
         {"kernel_shape": [2, 2], "strides": [2, 2]}, grad=False, id="ties"),
]

ERROR_CASES += [
    ErrorCase("MaxPool", [T((1, 2, 4, 4))], {}, match="kernel_shape"),
    ErrorCase("MaxPool", [T((1, 2, 4, 4))], {"kernel_shape": [2]}, match="kernel_shape"),
    ErrorCase("MaxPool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2], "storage_order": 2},
              match="storage_order"),
    ErrorCase("MaxPool", [T((1, 2, 4, 4))], {"kernel_shape": [5, 5]}, match="larger than"),
    ErrorCase("AveragePool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2], "strides": [1, 1, 1]},
              match="strides"),
    ErrorCase("AveragePool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2], "strides": [0, 1]},
              match="positive"),
    ErrorCase("AveragePool", [T((4, 4))], {"kernel_shape": [2, 2]}, match="spatial dimensions"),
    ErrorCase("AveragePool", [T((1, 2, 4, 4))], {"kernel_shape": [2, 2]}, dtype="int8",
              match="not supported"),
    ErrorCase("GlobalMaxPool", [T((4,))], match="N, C"),
]

# Older versions (fewer attributes).
CASES += [
    Case("MaxPool", [T((1, 2, 5, 5))], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                         "strides": [2, 2]}, opset=1, id="opset1"),
    Case("MaxPool", [T((1, 2, 6))], {"kernel_shape": [2], "strides": [2]}, opset=8, id="opset8"),
    Case("MaxPool", [T((1, 2, 5, 5))], {"kernel_shape": [2, 2], "ceil_mode": 1,
                                         "strides": [2, 2]}, opset=10, id="opset10_ceil"),
    Case("AveragePool", [T((1, 2, 4, 4, 4))], {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]},
         opset=1, id="opset1_3d"),
    Case("AveragePool", [T((1, 2, 5, 5))], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                             "count_include_pad": 1}, opset=7, id="opset7_pad"),
    Case("AveragePool", [T((0, 2, 5, 5))], {"kernel_shape": [3, 3]}, opset=7, id="opset7_empty"),
]
ERROR_CASES += [
    ErrorCase("MaxPool", [T((1, 2, 5, 5))], {"kernel_shape": [2, 2], "ceil_mode": 1}, opset=8,
              match="unknown attribute 'ceil_mode'"),
]
