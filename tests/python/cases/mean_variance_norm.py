"""Rows for src/ops/mean_variance_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

# No float64 rows: the spec's function body (the oracle) adds a float32
# epsilon constant to a float64 tensor, which the evaluator rejects.
F = ["float32", "float16", "bfloat16"]
CASES += [
    Case("MeanVarianceNormalization", [T((2, 3, 4, 5))], dtypes=F),
    Case("MeanVarianceNormalization", [T((2, 3, 4))], {"axes": [1]}, dtypes=F, id="axis1"),
    Case("MeanVarianceNormalization", [T((2, 3, 4))], {"axes": [0, -1]}, dtypes=F,
         id="axes-neg"),
    Case("MeanVarianceNormalization", [T((2, 3, 4, 5))], opset=9, dtypes=["float32", "float16"],
         id="opset9"),
]

ERROR_CASES += [
    ErrorCase("MeanVarianceNormalization", [T((2, 3))], match="axis"),
]
