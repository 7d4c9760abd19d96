"""Rows for src/ops/slice.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
BIG = 2**62
CASES = [
    Case("Slice", [T((4, 5, 6)), V([1, 0]), V([3, 4]), V([0, 2]), V([1, 2])]),
    Case("Slice", [T((4, 5)), V([1]), V([-1])], dtypes=F32, id="default_axes"),
    Case("Slice", [T((4, 5)), V([-1]), V([-BIG]), V([1]), V([-1])], dtypes=F32,
         id="reverse_all"),
    Case("Slice", [T((4, 5)), V([3, 4]), V([0, 0]), V([0, 1]), V([-2, -3])], dtypes=F32,
         id="neg_steps"),
    Case("Slice", [T((4, 5)), V([-100, 2]), V([100, BIG]), V([-2, -1])], dtypes=F32,
         id="clamp"),
    Case("Slice", [T((4, 5)), V([3]), V([1]), V([1])], dtypes=F32, id="empty_result"),
    Case("Slice", [T((4, 5)), V([10]), V([-10]), V([0]), V([-1])], dtypes=F32,
         id="neg_step_clamp"),
    Case("Slice", [T((0, 5)), V([0]), V([3]), V([1])], dtypes=F32, id="empty_input"),
    Case("Slice", [T((4, 5)), V([1], np.int32), V([3], np.int32), V([1], np.int32),
                   V([1], np.int32)], dtypes=F32, id="int32"),
    Case("Slice", [T((4, 5)), V([1]), V([3]), None, V([2])], dtypes=F32, id="no_axes_steps"),
    Case("Slice", [T((4, 5)), V([1]), V([3]), V([1])], opset=10, dtypes=F32, id="opset10"),
    Case("Slice", [T((4, 5)), V([-1]), V([0]), V([-1]), V([-1])], opset=11, dtypes=F32,
         id="opset11"),
    Case("Slice", [T((4, 5)), V([3, 4]), V([0, 0]), V([0, 1]), V([-2, -3])], dtypes=["float32", "float64"],
         id="neg_steps_f64"),
]
ERROR_CASES = [
    ErrorCase("Slice", [T((4, 5)), V([1]), V([2]), V([0]), V([0])], match="step is 0"),
    ErrorCase("Slice", [T((4, 5)), V([1, 2]), V([2])], match="differ in length"),
    ErrorCase("Slice", [T((4, 5)), V([1]), V([2]), V([2])], match="out of range"),
    ErrorCase("Slice", [T((4, 5)), V([1, 1]), V([2, 2]), V([0, -2])], match="repeat"),
]

# Opset 1: starts, ends and axes as attributes.
CASES += [
    Case("Slice", [T((4, 5, 6))], {"starts": [1, -4], "ends": [3, 1000], "axes": [0, 2]},
         opset=1, id="opset1_axes"),
    Case("Slice", [T((4, 5))], {"starts": [0, 1], "ends": [2, -1]}, opset=1, id="opset1"),
    Case("Slice", [T((0, 5))], {"starts": [1], "ends": [3], "axes": [1]}, opset=1,
         id="opset1_empty"),
]
ERROR_CASES += [
    ErrorCase("Slice", [T((4, 5))], {"starts": [1]}, opset=1, match="required attribute 'ends'"),
    ErrorCase("Slice", [T((4, 5))], {"starts": [1, 2], "ends": [3]}, opset=1,
              match="differ in length"),
]
