"""Rows for src/ops/bernoulli.cc. Only seeded rows: with a seed singa draws
what numpy's RandomState(seed).binomial(1, p) does, as the oracle."""
from onnx import TensorProto

from op_harness import Case, ErrorCase, T

CASES = [
    Case("Bernoulli", [T((4, 5), low=0, high=1)], {"seed": 2.0}),
    Case("Bernoulli", [T((10,), values=[0, 1, 0.5, 0.25, 0.75, 0, 1, 0.9, 0.1, 0.5])],
         {"seed": 0.0}, id="edges"),
    Case("Bernoulli", [T((3, 4), low=0, high=1)], {"seed": 5.0, "dtype": TensorProto.INT32},
         id="int-out"),
    Case("Bernoulli", [T((3, 4), low=0, high=1)], {"seed": 5.0, "dtype": TensorProto.BOOL},
         id="bool-out"),
    Case("Bernoulli", [T((0, 4))], {"seed": 1.0}, id="empty"),
    Case("Bernoulli", [T((3, 4), low=0, high=1)], {"seed": 7.0}, opset=15,
         dtypes=["float32", "float64"], id="opset15"),
]
ERROR_CASES = [
    ErrorCase("Bernoulli", [T((2, 3))], dtype="int32", match="not supported"),
]
