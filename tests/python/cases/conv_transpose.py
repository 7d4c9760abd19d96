"""Rows for src/ops/conv_transpose.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []


def _ct(x, w, b=None, id="", grad=True, **attrs):
    # Values in [-1, 1): sums of a few dozen products stay within the default
    # float32 tolerance whatever the summation order.
    inputs = [T(x, -1, 1), T(w, -1, 1)] + ([T(b, -1, 1)] if b else [])
    return Case("ConvTranspose", inputs, attrs, id=id, grad=grad)


CASES += [
    _ct((1, 2, 3, 3), (2, 3, 3, 3), id="2d"),
    _ct((2, 2, 3, 4), (2, 3, 3, 2), (3,), strides=[2, 3], id="2d_bias_strides"),
    _ct((1, 2, 4, 4), (2, 2, 3, 3), (2,), strides=[2, 2], pads=[1, 0, 1, 2], id="2d_pads"),
    _ct((1, 2, 3, 3), (2, 2, 3, 3), strides=[2, 2], output_padding=[1, 1], id="2d_output_padding"),
    _ct((1, 2, 3, 3), (2, 2, 2, 2), dilations=[2, 2], id="2d_dilations"),
    _ct((1, 1, 3, 3), (1, 2, 3, 3), strides=[3, 2], output_shape=[10, 8], id="2d_output_shape"),
    _ct((1, 1, 3, 3), (1, 2, 3, 3), strides=[2, 2], auto_pad="SAME_UPPER", id="2d_same_upper"),
    _ct((1, 1, 3, 3), (1, 2, 3, 3), strides=[2, 2], auto_pad="SAME_LOWER", id="2d_same_lower"),
    _ct((1, 1, 3, 3), (1, 2, 3, 3), kernel_shape=[3, 3], id="2d_kernel_shape"),
    # The oracle handles groups only with one output channel per group and no bias.
    _ct((1, 2, 3, 3), (2, 1, 3, 3), group=2, id="2d_group"),
    _ct((2, 3, 5), (3, 2, 3), (2,), strides=[2], pads=[1, 0], id="1d"),
    _ct((1, 2, 2, 3, 3), (2, 2, 2, 2, 2), (2,), strides=[2, 1, 2], id="3d"),
    # Kernels that tile the output (strides == kernel): rows of more and fewer
    # columns than a tile's 32, more taps (m, i, j) than a tile's 8, one
    # output channel (a text detector's last layer), 3x1 and 1x3 kernels.
    _ct((2, 5, 3, 37), (5, 3, 2, 2), (3,), strides=[2, 2], id="2d_tiling"),
    _ct((1, 16, 4, 19), (16, 1, 2, 2), (1,), strides=[2, 2], id="2d_tiling_one_channel"),
    _ct((1, 3, 2, 70), (3, 2, 3, 1), strides=[3, 1], id="2d_tiling_3x1"),
    _ct((1, 3, 3, 11), (3, 3, 1, 3), (3,), strides=[1, 3], id="2d_tiling_1x3"),
    Case("ConvTranspose", [T((1, 2, 3, 3), -1, 1), T((2, 3, 3, 3), -1, 1)], opset=1,
         id="opset1"),
]

ERROR_CASES += [
    ErrorCase("ConvTranspose", [T((1, 3, 3, 3)), T((2, 3, 3, 3))], match="X's channels"),
    ErrorCase("ConvTranspose", [T((1, 2, 3, 3)), T((2, 3, 3, 3)), T((2,))],
              match="B must have shape"),
    ErrorCase("ConvTranspose", [T((1, 2, 3, 3)), T((2, 3, 3, 3))], {"strides": [1]},
              match="strides"),
    ErrorCase("ConvTranspose", [T((1, 2, 3, 3)), T((2, 3, 3, 3))], {"pads": [3, 3, 3, 3]},
              match="would be"),
    ErrorCase("ConvTranspose", [T((2, 3)), T((2, 3))], match="spatial dimensions"),
]
