"""Rows for src/ops/linear_attention.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

B, L = 2, 3
QKV = [T((B, L, 8)), T((B, L, 8)), T((B, L, 12))]  # 2 heads, d_k 4, d_v 6
HEADS = {"q_num_heads": 2, "kv_num_heads": 2}
# Keys and gates small enough that the recurrent state stays O(1).
KEYS = [T((B, L, 8), low=-0.5, high=0.5), T((B, L, 8), low=-0.5, high=0.5), T((B, L, 12))]
DECAY_KEY = T((B, L, 8), low=-1.0, high=0.0)
DECAY_HEAD = T((B, L, 2), low=-1.0, high=0.0)
BETA = T((B, L, 2), low=0.0, high=1.0)

CASES += [
    Case("LinearAttention", QKV, {**HEADS, "update_rule": "linear"}, opset=27, outputs=2,
         id="linear"),
    Case("LinearAttention", [*QKV, None, DECAY_KEY], {**HEADS, "update_rule": "gated"},
         opset=27, outputs=2, id="gated-per-key"),
    Case("LinearAttention", [*QKV, None, DECAY_HEAD], {**HEADS, "update_rule": "gated"},
         opset=27, outputs=2, id="gated-per-head"),
    Case("LinearAttention", [*KEYS, None, None, BETA], {**HEADS, "update_rule": "delta"},
         opset=27, outputs=2, id="delta"),
    Case("LinearAttention", [*KEYS, T((B, 2, 4, 6)), DECAY_HEAD, BETA], HEADS, opset=27,
         outputs=2, id="gated-delta-past"),
    Case("LinearAttention", [*KEYS, None, DECAY_KEY, T((B, L, 1), low=0.0, high=1.0)],
         {**HEADS, "scale": 0.7}, opset=27, outputs=2, id="beta-scalar-scale"),
    Case("LinearAttention", [T((B, L, 16)), *KEYS[1:], None, DECAY_HEAD, BETA],
         {"q_num_heads": 4, "kv_num_heads": 2}, opset=27, outputs=2, id="gqa"),
    Case("LinearAttention", [T((B, 0, 8)), T((B, 0, 8)), T((B, 0, 12))],
         {**HEADS, "update_rule": "linear"}, opset=27, outputs=2, id="empty-seq"),
]

ERROR_CASES += [
    ErrorCase("LinearAttention", QKV, {**HEADS, "update_rule": "gated"}, match="decay", opset=27),
    ErrorCase("LinearAttention", QKV, {**HEADS, "update_rule": "fast"}, match="update_rule", opset=27),
    ErrorCase("LinearAttention", QKV, {"q_num_heads": 3, "kv_num_heads": 2,
                                       "update_rule": "linear"}, match="multiple", opset=27),
    ErrorCase("LinearAttention", [*QKV, T((B, 2, 4, 5))], {**HEADS, "update_rule": "linear"},
              match="past_state", opset=27),
]
