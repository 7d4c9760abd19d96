"""Rows for src/ops/lp_pool.cc."""
from op_harness import Case, ErrorCase, T

CASES = [
    Case("LpPool", [T((1, 2, 5, 5))], {"kernel_shape": [2, 2]}, id="2d"),
    Case("LpPool", [T((1, 2, 5, 5))], {"kernel_shape": [3, 3], "p": 3, "strides": [2, 2]},
         id="2d_p3_strides"),
    Case("LpPool", [T((1, 2, 7))], {"kernel_shape": [3], "p": 1}, id="1d_p1"),
    Case("LpPool", [T((1, 1, 4, 4, 4))], {"kernel_shape": [2, 2, 2]}, id="3d"),
    Case("LpPool", [T((1, 2, 6, 6))], {"kernel_shape": [2, 2], "dilations": [2, 2]},
         id="2d_dilations"),
    Case("LpPool", [T((1, 2, 5, 5))], {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"},
         id="2d_same_upper"),
    Case("LpPool", [T((0, 2, 5, 5))], {"kernel_shape": [2, 2]}, id="empty"),
    Case("LpPool", [T((1, 2, 5, 5))], {"kernel_shape": [2, 2], "p": 2}, opset=2, id="opset2"),
]

ERROR_CASES = [
    ErrorCase("LpPool", [T((1, 2, 5, 5))], match="kernel_shape"),
    ErrorCase("LpPool", [T((5, 5))], {"kernel_shape": [2]}, match="spatial dimensions"),
    ErrorCase("LpPool", [T((1, 2, 5, 5))], {"kernel_shape": [2, 2], "p": 0}, match="positive"),
]
