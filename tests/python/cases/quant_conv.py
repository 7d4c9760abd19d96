"""Rows for src/ops/quant_conv.cc (ConvInteger, QLinearConv)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_W = V((np.arange(2 * 3 * 3 * 3).reshape(2, 3, 3, 3) * 29) % 200 - 100, np.int8)
_W1 = V((np.arange(4 * 1 * 3 * 3).reshape(4, 1, 3, 3) * 29) % 200 - 100, np.int8)

CASES += [
    Case("ConvInteger", [T((1, 3, 5, 5), low=-100, high=200), _W]),
    Case("ConvInteger", [T((1, 3, 5, 5), low=-100, high=200), _W, T((), low=0, high=9),
                         V([3, -4], np.int8)], {"pads": [1, 1, 1, 1]}, id="zp-pads"),
    Case("ConvInteger", [T((2, 3, 7, 6), low=-100, high=200), _W],
         {"strides": [2, 1], "dilations": [1, 2], "auto_pad": "SAME_UPPER"}, id="strided"),
    Case("ConvInteger", [T((1, 4, 5, 5), low=-100, high=200), _W1], {"group": 4}, id="depthwise"),
    Case("ConvInteger", [T((1, 3, 9), low=-100, high=200), V(np.ones((2, 3, 3)), np.uint8)],
         id="1d"),
    Case("ConvInteger", [T((0, 3, 5, 5)), _W], id="empty"),
]

_XS, _WS, _YS = V(0.00369, np.float32), V(0.00172, np.float32), V(0.00162, np.float32)
CASES += [
    Case("QLinearConv", [T((1, 3, 5, 5), low=-128, high=255), _XS, T((), low=0, high=9), _W, _WS,
                         V(0, np.int8), _YS, V(120, np.uint8)]),
    Case("QLinearConv", [T((1, 3, 5, 5), low=-128, high=255), _XS, T((), low=0, high=9), _W,
                         V([0.0017, 0.0023], np.float32), V([2, -3], np.int8), _YS,
                         V(-5, np.int8), V([100, -200], np.int32)], {"pads": [1, 1, 1, 1]},
         id="per-channel-bias"),
    Case("QLinearConv", [T((1, 4, 6, 6), low=-128, high=255), _XS, T((), low=0, high=9), _W1, _WS,
                         V(0, np.int8), _YS, V(120, np.uint8)], {"group": 4, "strides": [2, 2]},
         id="depthwise"),
    Case("QLinearConv", [T((0, 3, 5, 5)), _XS, T(()), _W, _WS, V(0, np.int8), _YS,
                         V(120, np.uint8)], id="empty"),
]

ERROR_CASES += [
    ErrorCase("ConvInteger", [T((1, 3, 5, 5), low=0, high=9), V(np.zeros((2, 2, 3, 3)), np.int8)],
              dtype="uint8", match="group"),
    ErrorCase("QLinearConv", [T((1, 3, 5, 5), low=0, high=9), _XS, V(0, np.uint8), _W,
                              V([0.1, 0.2, 0.3], np.float32), V(0, np.int8), _YS,
                              V(120, np.uint8)], dtype="uint8", match="w_scale"),
]
