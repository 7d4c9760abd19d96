"""Rows for src/ops/attention.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

Q4, K4, V4 = T((2, 3, 4, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8))
BOOL_MASK = V(np.random.default_rng(7).random((4, 6)) < 0.7, np.bool_)



def rows(*args, **kw):
    """A row for float32/float64 at the default tolerance and one for the
    16-bit floats at a wider one."""
    why = ("the kernel rounds scaled Q and K, the logits and the probabilities to the "
           "16-bit dtype as the spec's function body does; the oracle here computes in "
           "float32 from the rounded inputs, and logits up to ~10 carry an error of "
           "up to an ulp (0.06 in bfloat16) into exp")
    return [Case(*args, dtypes=["float32", "float64"], **kw),
            Case(*args, dtypes=["float16"], rtol=1e-2, atol=2e-2, why=why, **kw),
            Case(*args, dtypes=["bfloat16"], rtol=2e-2, atol=1e-1, why=why, **kw)]


CASES += [
    *rows("Attention", [Q4, K4, V4], opset=23, id="4d"),
    *rows("Attention", [Q4, K4, T((2, 3, 6, 5))], opset=23, id="4d-v-head-size"),
    *rows("Attention", [Q4, K4, V4], {"is_causal": 1}, opset=23, id="causal"),
    *rows("Attention", [Q4, K4, V4], {"scale": 0.3}, opset=23, id="scale"),
    *rows("Attention", [Q4, K4, V4], {"softcap": 2.0}, opset=23, id="softcap"),
    *rows("Attention", [Q4, K4, V4, T((4, 6))], opset=23, id="float-mask"),
    *rows("Attention", [Q4, K4, V4, T((2, 1, 4, 6))], {"is_causal": 1}, opset=23,
         id="mask-4d-causal"),
    *rows("Attention", [Q4, K4, V4, T((3, 4, 4))], opset=23, id="short-mask-padded"),
    *rows("Attention", [Q4, K4, V4, BOOL_MASK], opset=23, id="bool-mask"),
    *rows("Attention", [Q4, K4, V4, BOOL_MASK], {"is_causal": 1}, opset=23,
         id="bool-mask-causal"),
    *rows("Attention", [T((2, 6, 4, 8)), K4, V4], opset=23, id="gqa"),
    *rows("Attention", [T((2, 4, 24)), T((2, 6, 24)), T((2, 6, 18))],
         {"q_num_heads": 3, "kv_num_heads": 3}, opset=23, id="3d"),
    *rows("Attention", [T((2, 4, 48)), T((2, 6, 16)), T((2, 6, 16))],
         {"q_num_heads": 6, "kv_num_heads": 2, "is_causal": 1}, opset=23, id="3d-gqa-causal"),
    *rows("Attention", [Q4, K4, V4, T((4, 9)), T((2, 3, 3, 8)), T((2, 3, 3, 8))], opset=23,
         outputs=4, id="past-present-qk"),
    *rows("Attention", [Q4, K4, V4, T((4, 9)), T((2, 3, 3, 8)), T((2, 3, 3, 8))],
         {"qk_matmul_output_mode": 2, "is_causal": 1}, opset=23, outputs=4, id="qk-bias-causal"),
    *rows("Attention", [Q4, K4, V4, T((4, 6))], {"qk_matmul_output_mode": 1, "softcap": 1.5},
         opset=23, outputs=4, id="qk-softcap"),
    *rows("Attention", [Q4, K4, V4, BOOL_MASK], {"qk_matmul_output_mode": 3}, opset=23,
         outputs=4, id="qk-softmax"),
    *rows("Attention", [Q4, K4, V4, BOOL_MASK],
         {"qk_matmul_output_mode": 3, "softmax_precision": 11}, opset=23, outputs=4,
         id="softmax-precision"),
    # A fully masked row gives zeros (not NaN).
    *rows("Attention", [T((1, 2, 2, 4)), T((1, 2, 2, 4)), T((1, 2, 2, 4)),
                       V([[False, False], [True, False]], np.bool_)], opset=23, outputs=4,
         attrs={"qk_matmul_output_mode": 3}, id="fully-masked-row"),
    *rows("Attention", [Q4, K4, V4, None, None, None, V([6, 3])], {"is_causal": 1}, opset=24,
         id="nonpad-causal"),
    *rows("Attention", [Q4, K4, V4, None, None, None, V([5, 2])], opset=24, id="nonpad"),
    *rows("Attention", [Q4, K4, V4], {"is_causal": 1, "left_window_size": 2}, opset=25,
         id="local-window"),
    *rows("Attention", [Q4, K4, V4], {"left_window_size": 1, "right_window_size": 2},
         opset=25, id="bidirectional-window"),
    *rows("Attention", [Q4, K4, V4, None, None, None, V([6, 4])],
         {"is_causal": 1, "left_window_size": 1}, opset=25, id="window-nonpad"),
    *rows("Attention", [T((0, 3, 4, 8)), T((0, 3, 6, 8)), T((0, 3, 6, 8))], opset=23,
         id="empty-batch"),
]

# Gradient-check rows (small: finite differences per element).
q, kk, vv = T((1, 2, 2, 3)), T((1, 2, 3, 3)), T((1, 2, 3, 2))
G = {"dtypes": ["float64"], "opset": 23}
CASES += [
    Case("Attention", [q, kk, vv], id="grad-4d", **G),
    Case("Attention", [q, kk, vv], {"is_causal": 1, "scale": 0.7}, id="grad-causal-scale", **G),
    Case("Attention", [q, kk, vv], {"softcap": 1.5}, id="grad-softcap", **G),
    Case("Attention", [q, kk, vv, T((2, 3))], id="grad-float-mask", **G),
    Case("Attention", [q, kk, vv, V([[True, False, True], [True, True, False]], np.bool_)],
         id="grad-bool-mask", **G),
    Case("Attention", [T((1, 4, 2, 3)), kk, vv], id="grad-gqa", **G),
    Case("Attention", [T((1, 2, 6)), T((1, 3, 3)), T((1, 3, 4))],
         {"q_num_heads": 2, "kv_num_heads": 1, "is_causal": 1}, id="grad-3d-gqa", **G),
    Case("Attention", [q, T((1, 2, 1, 3)), T((1, 2, 1, 2)), T((2, 3)), T((1, 2, 2, 3)),
                       T((1, 2, 2, 2))], outputs=3, id="grad-past", **G),
]

ERROR_CASES += [
    ErrorCase("Attention", [T((2, 4, 24)), T((2, 6, 24)), T((2, 6, 24))], match="q_num_heads"),
    ErrorCase("Attention", [T((2, 3, 4, 8)), T((2, 2, 6, 8)), T((2, 2, 6, 8))],
              match="multiple of kv heads"),
    ErrorCase("Attention", [T((2, 3, 4, 8)), T((2, 3, 6, 7)), T((2, 3, 6, 8))],
              match="head_size"),
    ErrorCase("Attention", [T((2, 3, 4, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8)), T((5, 6))],
              match="attn_mask"),
    ErrorCase("Attention", [T((2, 3, 4, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8))],
              {"q_num_heads": 3, "kv_num_heads": 3}, match="4-D"),
    ErrorCase("Attention", [T((2, 3, 4, 8)), T((2, 3, 6, 8)), T((2, 3, 6, 8)), None,
                            T((2, 3, 1, 8))], match="together"),
]
