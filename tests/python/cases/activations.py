"""Rows for src/ops/activations.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_UNARY = ["Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
          "Softplus", "Softsign", "ThresholdedRelu", "Mish", "Gelu", "Shrink"]
# Gelu's oracle is the spec's function body, whose constants (1/sqrt(2),
# sqrt(2/pi)) are float32; ours are exact, so float64 rows are separate.
_GELU_FLOATS = ["float16", "bfloat16", "float32"]
for _op in _UNARY:
    _dt = _GELU_FLOATS if _op == "Gelu" else None
    CASES += [
        Case(_op, [T((2, 3, 4))], dtypes=_dt),
        Case(_op, [T((0, 3))], dtypes=_dt),
        Case(_op, [T((3, 5), low=-6, high=6)], id="wide", dtypes=_dt),
        Case(_op, [T((70000,))], id="large", noncontig=False, dtypes=_dt),
    ]
    # onnx's reference Softsign fails on a 0-d input (tests/cpp covers it).
    if _op != "Softsign":
        CASES.append(Case(_op, [T(())], dtypes=_dt))
for _approx in ["none", "tanh"]:
    CASES.append(Case("Gelu", [T((3, 5), low=-6, high=6)], {"approximate": _approx},
                      dtypes=["float64"], rtol=1e-6, atol=1e-7, id=f"f64-{_approx}",
                      why="the oracle's float32 constants (1/sqrt(2), sqrt(2/pi)) "
                          "differ from the exact ones by ~1e-7 relative "
                          "(~4e-8 absolute where the result is near 0)"))

CASES += [
    Case("LeakyRelu", [T((2, 3))], {"alpha": 0.3}),
    Case("Elu", [T((2, 3))], {"alpha": 0.5}),
    Case("Selu", [T((2, 3))], {"alpha": 1.5, "gamma": 2.0}),
    Case("Celu", [T((2, 3))], {"alpha": 2.0}),
    Case("Celu", [T((2, 3), low=-6, high=6)], {"alpha": 2.0}, opset=28, id="opset28"),
    Case("Celu", [T((0, 3))], opset=28, id="opset28_empty"),
    Case("HardSigmoid", [T((2, 3))], {"alpha": 0.3, "beta": 0.4}),
    Case("ThresholdedRelu", [T((2, 3))], {"alpha": 0.5}),
    Case("Gelu", [T((2, 3, 4))], {"approximate": "tanh"}, dtypes=_GELU_FLOATS),
    Case("Gelu", [T((70000,))], {"approximate": "tanh"}, id="large-tanh", noncontig=False,
         dtypes=_GELU_FLOATS),
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

# Opset 6: a 1-D slope of X's channel count is per channel (dim 1).
CASES += [
    Case("PRelu", [T((2, 3, 4, 5)), T((3,))], opset=6, id="opset6_channels"),
    Case("PRelu", [T((2, 3, 4)), T((1,))], opset=6, id="opset6_shared"),
    Case("PRelu", [T((0, 3, 4)), T((3,))], opset=6, id="opset6_empty"),
]
ERROR_CASES += [
    ErrorCase("PRelu", [T((2, 3, 4)), T((5,))], opset=6, match="cannot broadcast"),
]
