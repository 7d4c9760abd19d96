"""Rows for src/ops/activations.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_UNARY = ["Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
          "Softplus", "Softsign", "ThresholdedRelu", "Mish", "Gelu", "Shrink"]
for _op in _UNARY:
    CASES += [
        Case(_op, [T((2, 3, 4))]),
        Case(_op, [T(())]),
        Case(_op, [T((0, 3))]),
        Case(_op, [T((3, 5), low=-6, high=6)], id="wide"),
        Case(_op, [T((70000,))], id="large", noncontig=False),
    ]

CASES += [
    Case("LeakyRelu", [T((2, 3))], {"alpha": 0.3}),
    Case("Elu", [T((2, 3))], {"alpha": 0.5}),
    Case("Selu", [T((2, 3))], {"alpha": 1.5, "gamma": 2.0}),
    Case("Celu", [T((2, 3))], {"alpha": 2.0}),
    Case("HardSigmoid", [T((2, 3))], {"alpha": 0.3, "beta": 0.4}),
    Case("ThresholdedRelu", [T((2, 3))], {"alpha": 0.5}),
    Case("Gelu", [T((2, 3, 4))], {"approximate": "tanh"}),
    Case("Gelu", [T((70000,))], {"approximate": "tanh"}, id="large-tanh", noncontig=False),
    Case("Shrink", [T((2, 3))], {"lambd": 1.0, "bias": 0.5}, dtypes=["float16", "float32", "float64"]),
    Case("Shrink", [T((2, 3), low=-10, high=10)], {"lambd": 1.5, "bias": 1.0},
         dtypes=["int8", "int16", "int32", "int64"]),
    Case("Shrink", [T((2, 3), low=0, high=10)], {"lambd": 1.5, "bias": 1.0},
         dtypes=["uint8", "uint16", "uint32", "uint64"]),
    # Older opsets with the same semantics.
    Case("Relu", [T((2, 3))], opset=11, dtypes=["float32"]),
    Case("LeakyRelu", [T((2, 3))], opset=11, dtypes=["float32"]),
    Case("Sigmoid", [T((2, 3))], opset=11, dtypes=["float32"]),
    Case("Elu", [T((2, 3))], opset=11, dtypes=["float32"]),
]

# PRelu: slope broadcasts to X (unidirectional).
CASES += [
    Case("PRelu", [T((2, 3, 4)), T((2, 3, 4))]),
    Case("PRelu", [T((2, 3, 4)), T((3, 1))]),
    Case("PRelu", [T((2, 3, 4)), T((4,))]),
    Case("PRelu", [T((2, 3, 4)), T(())]),
    Case("PRelu", [T(()), T(())]),
    Case("PRelu", [T((0, 3)), T((3,))]),
    Case("PRelu", [T((2, 3)), T((3,))], opset=11, dtypes=["float32"]),
]

# Clip: opset 11+ with optional min/max inputs; opset 6 with attributes.
CASES += [
    Case("Clip", [T((2, 3, 4)), T((), values=-1), T((), values=1.5)]),
    Case("Clip", [T((2, 3, 4)), T((), values=-1)], id="min-only"),
    Case("Clip", [T((2, 3, 4)), None, T((), values=1)], id="max-only"),
    Case("Clip", [T((2, 3, 4))], id="no-bounds"),
    Case("Clip", [T((3, 4)), T((), values=2), T((), values=1)], id="min-above-max"),
    Case("Clip", [T(()), T((), values=0), T((), values=1)]),
    Case("Clip", [T((0, 4)), T((), values=0), T((), values=1)]),
    Case("Clip", [T((70000,)), T((), values=-1), T((), values=1)], id="large", noncontig=False),
    Case("Clip", [T((2, 3)), T((1,), values=[-1]), T((1,), values=[1])], id="1-element-bounds",
         dtypes=["float32", "int32"]),
    Case("Clip", [T((2, 3)), T((), values=-1), T((), values=1)], opset=11, dtypes=["float32"]),
    Case("Clip", [T((2, 3)), T((), values=-1), T((), values=1)], opset=12,
         dtypes=["float32", "int64", "uint8"]),
    Case("Clip", [T((2, 3, 4))], {"min": -0.5, "max": 0.7}, opset=6),
    Case("Clip", [T((2, 3, 4))], {"max": 0.7}, opset=6, id="attr-max-only"),
    Case("Clip", [T((2, 3, 4))], opset=6, id="attr-defaults"),
]

ERROR_CASES += [
    ErrorCase("Relu", [T((2, 3))], dtype="uint8", match="not supported"),
    ErrorCase("LeakyRelu", [T((2, 3))], dtype="int32", match="not supported"),
    ErrorCase("PRelu", [T((2, 3)), T((4,))], match="broadcast"),
    ErrorCase("PRelu", [T((3,)), T((2, 3))], match="slope must broadcast"),
    ErrorCase("Clip", [T((2, 3)), T((2,)), None], match="scalars"),
    ErrorCase("Gelu", [T((2, 3))], {"approximate": "fast"}, match="approximate"),
    ErrorCase("Elu", [T((2, 3)), T((2, 3))], match="expects 1 input"),
]
