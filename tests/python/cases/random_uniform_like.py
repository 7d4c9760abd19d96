"""Rows for src/ops/random_uniform_like.cc. Only seeded rows: with a seed
singa draws what numpy's RandomState(seed) does, as the oracle."""
from onnx import TensorProto

from op_harness import FLOATS, Case, ErrorCase, T

CASES = [
    Case("RandomUniformLike", [T((3, 4))], {"seed": 3.0}, dtypes=FLOATS),
    Case("RandomUniformLike", [T((2, 5))], {"seed": 0.0, "low": -2.0, "high": 5.0},
         dtypes=FLOATS, id="range"),
    Case("RandomUniformLike", [T((2, 3))], {"seed": 1.0, "dtype": TensorProto.DOUBLE},
         dtypes=["int32", "float32"], id="dtype"),
    Case("RandomUniformLike", [T((0, 3))], {"seed": 1.0}, dtypes=FLOATS, id="empty"),
    Case("RandomUniformLike", [T((3, 4))], {"seed": 3.0}, opset=1, dtypes=["float32"],
         id="opset1"),
]
ERROR_CASES = [
    ErrorCase("RandomUniformLike", [T((2, 3))], dtype="int32", match="float"),
]
