"""Rows for src/ops/causal_conv_with_state.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

CASES += [
    Case("CausalConvWithState", [T((2, 3, 5)), T((3, 1, 4))], opset=27, outputs=2),
    Case("CausalConvWithState", [T((2, 3, 5)), T((3, 1, 4)), T((3,)), T((2, 3, 3))],
         opset=27, outputs=2, id="bias-past"),
    Case("CausalConvWithState", [T((2, 3, 5)), T((3, 1, 3)), None, T((2, 3, 2))],
         {"activation": "silu"}, opset=27, outputs=2, id="silu-past"),
    Case("CausalConvWithState", [T((1, 2, 2)), T((2, 1, 4))], {"activation": "swish"},
         opset=27, outputs=2, id="short-input"),
    Case("CausalConvWithState", [T((2, 3, 5)), T((3, 1, 1))], opset=27, outputs=2,
         id="kernel-one"),
    Case("CausalConvWithState", [T((2, 3, 0)), T((3, 1, 3)), None, T((2, 3, 2))], opset=27,
         outputs=2, id="empty-length"),
]

ERROR_CASES += [
    ErrorCase("CausalConvWithState", [T((2, 3, 5)), T((4, 1, 3))], match="weight", opset=27),
    ErrorCase("CausalConvWithState", [T((2, 3, 5)), T((3, 1, 3)), None, T((2, 3, 3))],
              match="past_state", opset=27),
    ErrorCase("CausalConvWithState", [T((2, 3, 5)), T((3, 1, 3))], {"activation": "relu"},
              match="activation", opset=27),
]
