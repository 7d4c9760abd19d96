"""Rows for src/ops/flex_attention.cc (domain ai.onnx.preview)."""
import numpy as np
from onnx import numpy_helper

from op_harness import Case, ErrorCase, G, N, T

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

# score_mod / prob_mod graph attributes: model rows (the op runs as registered
# ops around the graphs), against onnx's reference evaluator, which runs the
# graphs too. The graphs are untyped ("?"): they see the scores and
# probabilities in the softmax precision (float32 for float16 inputs).
_FIVE = N("Constant", "", "five", value=numpy_helper.from_array(np.float32(5)))
# A soft cap: 5 tanh(s / 5).
SOFTCAP = G([_FIVE, N("CastLike", "five s", "c"), N("Div", "s c", "d"), N("Tanh", "d", "t"),
             N("Mul", "t c", "y")], ["s:?"], ["y:?"], name="score_mod")
# Sharpened probabilities (no longer summing to 1).
SQUARE = G([N("Mul", "p p", "y")], ["p:?"], ["y:?"], name="prob_mod")


def mod_rows(*args, **kw):
    why = ("the 16-bit dtype's scaled Q and K and scores are rounded as the spec's reference "
           "does, but its matmul accumulates in another order")
    return [Case(*args, dtypes=["float32", "float64"], **kw),
            Case(*args, dtypes=["float16"], rtol=1e-2, atol=2e-2, why=why, **kw)]


CASES += [
    *mod_rows("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))],
              {"score_mod": SOFTCAP}, **PREVIEW, id="score-mod"),
    *mod_rows("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 6))],
              {"prob_mod": SQUARE}, **PREVIEW, id="prob-mod"),
    *mod_rows("FlexAttention", [T((1, 4, 3, 8)), T((1, 2, 5, 8)), T((1, 2, 5, 8))],
              {"score_mod": SOFTCAP, "prob_mod": SQUARE, "scale": 0.3}, **PREVIEW,
              id="both-mods-gqa-scale"),
    Case("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))],
         {"score_mod": SOFTCAP, "softmax_precision": 11}, dtypes=["float32"], **PREVIEW,
         id="score-mod-double-softmax"),
]

ERROR_CASES += [
    ErrorCase("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))],
              {"score_mod": G([N("ReduceSum", "s", "y")], ["s:?"], ["y:?"])},
              match="score_mod must keep the shape", **PREVIEW),
    ErrorCase("FlexAttention", [T((2, 2, 4, 8)), T((2, 2, 5, 8)), T((2, 2, 5, 8))],
              {"prob_mod": G([N("Identity", "p", "y"), N("Identity", "p", "z")], ["p:?"],
                             ["y:?", "z:?"])},
              match="prob_mod must take one input and give one output", **PREVIEW),
]
