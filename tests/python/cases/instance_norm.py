"""Rows for src/ops/instance_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

CASES += [
    Case("InstanceNormalization", [T((2, 3, 4, 5)), T((3,)), T((3,))]),
    Case("InstanceNormalization", [T((2, 3, 7)), T((3,)), T((3,))], {"epsilon": 0.01},
         id="1d-epsilon"),
    Case("InstanceNormalization", [T((1, 2, 2, 2, 3)), T((2,)), T((2,))], id="3d"),
    Case("InstanceNormalization", [T((0, 3, 4)), T((3,)), T((3,))]),
    Case("InstanceNormalization", [T((2, 3, 4)), T((3,)), T((3,))], opset=6, id="opset6"),
    Case("InstanceNormalization", [T((2, 3, 4)), T((3,)), T((3,))], opset=1, id="opset1"),
]

ERROR_CASES += [
    ErrorCase("InstanceNormalization", [T((2, 3, 4)), T((4,)), T((3,))], match="scale and B"),
    ErrorCase("InstanceNormalization", [T((3,)), T((3,)), T((3,))], match="N, C"),
]
