"""Rows for src/ops/bit_shift.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
for _d in ["LEFT", "RIGHT"]:
    CASES += [
        Case("BitShift", [T((3, 4), low=0, high=200), T((3, 4), low=0, high=7)],
             {"direction": _d}, id=f"{_d}"),
        Case("BitShift", [T((2, 3), low=0, high=60000), T((3,), low=0, high=3)],
             {"direction": _d}, id=f"{_d}_bcast"),
        Case("BitShift", [T((0, 3)), T((3,), low=0, high=3)], {"direction": _d},
             id=f"{_d}_empty"),
        # Signed values, shifts past the width and negative shifts (opset 28).
        Case("BitShift", [T((4, 5), low=-100, high=100), T((4, 5), low=-3, high=70)],
             {"direction": _d}, opset=28, id=f"{_d}_28"),
        Case("BitShift", [T((6,), values=[1, -1, 127, -128, 64, 3]),
                          T((6,), values=[1, 7, 8, 100, -1, 0])],
             {"direction": _d}, opset=28, dtypes=["int8", "int64"], id=f"{_d}_edges"),
    ]
ERROR_CASES = [
    ErrorCase("BitShift", [V([1], np.uint8), V([1], np.uint8)], {"direction": "UP"},
              match="direction"),
    ErrorCase("BitShift", [V([1], np.uint8), V([1], np.uint8)], match="direction"),
    ErrorCase("BitShift", [V([1], np.int32), V([1], np.int32)], {"direction": "LEFT"},
              match="not supported"),
    ErrorCase("BitShift", [V([1], np.uint8), V([1], np.uint16)], {"direction": "LEFT"},
              match="uint"),
]
