"""Rows for src/ops/flex_attention.cc (domain ai.onnx.preview)."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

PREVIEW = {"opset": 1, "domain": "ai.onnx.preview"}


def rows(*args, **kw):
    """float32/float64 at the default tolerance, the 16-bit floats at a wider one."""
    why = ("scaled Q and K and the scores are rounded to the 16-bit dtype as the spec's "
           "reference does; the oracle here computes in float32 from the rounded inputs, "
           "and scores up to ~10 carry up to half an ulp (0.03 in bfloat16) into exp")
    return [Case(*args, dtypes=["float32", "float64"], **kw),
            Case(*args, dtypes=["float16"], rtol=1e-2, atol=2e-2, why=why, **kw),
            Case(*args, dtypes=["bfloat16"], rtol=2e-2, atol=1e-1, why=why, **kw)]


CASES += [
    *rows("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))], **PREVIEW),
    *rows("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 6))], **PREVIEW,
         id="v-head-size"),
    *rows("FlexAttention", [T((1, 4, 3, 8)), T((1, 2, 5, 8)), T((1, 2, 5, 8))], **PREVIEW,
         id="gqa"),
    *rows("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))], {"scale": 0.3},
         **PREVIEW, id="scale"),
    Case("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))],
         {"softmax_precision": 11}, dtypes=["float32"], **PREVIEW, id="double-softmax"),
    *rows("FlexAttention", [T((0, 2, 4, 8)), T((0, 2, 5, 8)), T((0, 2, 5, 8))], **PREVIEW,
         id="empty"),
]

# Gradient-check rows (small: finite differences per element).
CASES += [
    Case("FlexAttention", [T((1, 2, 2, 3)), T((1, 2, 3, 3)), T((1, 2, 3, 2))],
         dtypes=["float64"], **PREVIEW, id="grad"),
    Case("FlexAttention", [T((1, 4, 2, 3)), T((1, 2, 3, 3)), T((1, 2, 3, 2))], {"scale": 0.6},
         dtypes=["float64"], **PREVIEW, id="grad-gqa-scale"),
]

ERROR_CASES += [
    ErrorCase("FlexAttention", [T((2, 3, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))],
              match="multiple of kv heads", **PREVIEW),
    ErrorCase("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 7)), T((2, 2, 5, 8))],
              match="K must be", **PREVIEW),
]
