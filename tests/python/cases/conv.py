"""Rows for src/ops/conv.cc."""
from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []


def _conv(x, w, b=None, id="", **attrs):
    # Values in [-1, 1): sums of up to ~100 products stay within the default
    # float32 tolerance whatever the summation order.
    inputs = [T(x, -1, 1), T(w, -1, 1)] + ([T(b, -1, 1)] if b else [])
    return Case("Conv", inputs, attrs, id=id)


CASES += [
    _conv((1, 3, 5, 5), (4, 3, 3, 3), id="2d"),
    _conv((2, 3, 5, 5), (4, 3, 3, 3), (4,), pads=[1, 1, 1, 1], id="2d_bias_pads"),
    _conv((1, 3, 7, 6), (2, 3, 3, 2), strides=[2, 1], pads=[0, 1, 2, 0], id="2d_strides_asym_pads"),
    _conv((1, 2, 8, 8), (3, 2, 3, 3), (3,), dilations=[2, 2], pads=[2, 1, 2, 1], id="2d_dilations"),
    _conv((1, 2, 9, 9), (3, 2, 3, 3), dilations=[2, 1], strides=[2, 3], id="2d_dilation_stride_mix"),
    _conv((1, 4, 5, 5), (6, 2, 3, 3), (6,), group=2, pads=[1, 1, 1, 1], id="2d_group2"),
    _conv((2, 3, 6, 6), (3, 1, 3, 3), (3,), group=3, pads=[1, 1, 1, 1], strides=[2, 2],
          id="2d_depthwise"),
    _conv((1, 3, 6, 6), (6, 1, 3, 3), group=3, id="2d_depthwise_multiplier"),
    _conv((1, 3, 5, 5), (4, 3, 1, 1), (4,), id="2d_1x1"),
    _conv((1, 3, 5, 5), (4, 3, 3, 3), kernel_shape=[3, 3], id="2d_kernel_shape"),
    _conv((1, 2, 6, 7), (3, 2, 3, 3), auto_pad="SAME_UPPER", strides=[2, 2], id="2d_same_upper"),
    _conv((1, 2, 6, 7), (3, 2, 3, 3), auto_pad="SAME_LOWER", strides=[2, 2], id="2d_same_lower"),
    _conv((1, 2, 6, 7), (3, 2, 2, 2), auto_pad="SAME_UPPER", dilations=[2, 2],
          id="2d_same_upper_dilated"),
    _conv((1, 2, 6, 7), (3, 2, 3, 3), auto_pad="VALID", strides=[2, 2], id="2d_valid"),
    _conv((2, 3, 7), (4, 3, 3), (4,), strides=[2], pads=[1, 0], id="1d"),
    _conv((1, 4, 9), (4, 1, 3), group=4, dilations=[3], pads=[2, 2], id="1d_depthwise_dilated"),
    _conv((1, 2, 4, 5, 5), (3, 2, 2, 3, 3), (3,), pads=[0, 1, 1, 1, 0, 1], id="3d"),
    _conv((1, 4, 5, 5, 6), (4, 2, 3, 3, 3), group=2, strides=[2, 2, 1], dilations=[1, 1, 2],
          id="3d_group_strides"),
    _conv((0, 3, 5, 5), (4, 3, 3, 3), (4,), id="empty_batch"),
    _conv((1, 3, 5, 5), (0, 3, 3, 3), id="empty_out_channels"),
    Case("Conv", [T((1, 3, 5, 5), -1, 1), T((4, 3, 3, 3), -1, 1)], {"pads": [1, 1, 1, 1]},
         opset=11, id="opset11"),
]

# Small rows for the gradient check (test_grads.py: float64, at most 300
# elements over all inputs); the rows above that fit are checked too.
CASES += [
    _conv((2, 2, 5, 5), (3, 2, 3, 3), (3,), strides=[2, 2], pads=[1, 0, 1, 1],
          id="grad_2d_stride_pads"),
    _conv((1, 2, 7, 7), (2, 2, 2, 3), (2,), strides=[2, 3], dilations=[2, 1], pads=[1, 1, 0, 2],
          id="grad_2d_stride_dilation"),
    _conv((2, 4, 6, 6), (4, 1, 3, 3), (4,), group=4, strides=[2, 2], pads=[1, 1, 1, 1],
          id="grad_depthwise_stride2"),
    _conv((1, 4, 6, 6), (4, 2, 3, 3), group=2, auto_pad="SAME_LOWER", strides=[2, 1],
          id="grad_group_same_lower"),
    _conv((1, 2, 3, 4, 4), (2, 2, 2, 2, 2), (2,), strides=[1, 2, 1], pads=[1, 0, 1, 0, 1, 1],
          id="grad_3d"),
    _conv((1, 2, 3, 4, 4), (4, 1, 2, 3, 2), group=2, dilations=[1, 1, 2], id="grad_3d_group"),
    _conv((2, 3, 8), (2, 3, 3), (2,), strides=[3], dilations=[2], pads=[2, 1], id="grad_1d"),
]

ERROR_CASES += [
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 2, 3, 3))], match="group"),
    ErrorCase("Conv", [T((1, 4, 5, 5)), T((3, 2, 3, 3))], {"group": 2}, match="multiple of group"),
    ErrorCase("Conv", [T((1, 1, 2, 2)), T((1, 1, 3, 3))], match="larger than the padded input"),
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 3, 3, 3))], {"auto_pad": "SAME"}, match="auto_pad"),
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 3, 3, 3)), T((3,))], match="B must have shape"),
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 3, 3, 3))], {"strides": [1]}, match="strides"),
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 3, 3, 3))], {"kernel_shape": [2, 2]},
              match="kernel_shape"),
    ErrorCase("Conv", [T((3, 5)), T((4, 3))], match="spatial dimensions"),
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 3, 3, 3))], {"pads": [1, 1, -1, 1]},
              match="negative"),
    ErrorCase("Conv", [T((1, 3, 5, 5)), T((4, 3, 3, 3), values=None)], dtype="int32",
              match="not supported"),
]

# Opset 1 (the opset 11 schema serves it).
CASES += [
    Case("Conv", [T((1, 2, 5, 5), -1, 1), T((3, 2, 3, 3), -1, 1), T((3,), -1, 1)],
         {"pads": [1, 1, 1, 1], "strides": [2, 2]}, opset=1, id="opset1"),
]
