"""Rows for src/ops/layer_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

CASES += [
    Case("LayerNormalization", [T((2, 3, 4)), T((4,)), T((4,))]),
    Case("LayerNormalization", [T((2, 3, 4)), T((4,))], id="no-bias"),
    Case("LayerNormalization", [T((2, 3, 4)), T((3, 4)), T((3, 4))], {"axis": 1}),
    Case("LayerNormalization", [T((2, 3, 4)), T((2, 3, 4)), T((2, 3, 4))], {"axis": 0}),
    Case("LayerNormalization", [T((2, 3, 4)), T((3, 1)), T((4,))], {"axis": -2}, id="bcast-params"),
    Case("LayerNormalization", [T((2, 3, 4)), T(()), T(())], id="scalar-params"),
    Case("LayerNormalization", [T((2, 3, 4)), T((4,)), T((4,))], {"epsilon": 0.1}),
    Case("LayerNormalization", [T((5,)), T((5,)), T((5,))]),
    Case("LayerNormalization", [T((0, 4)), T((4,)), T((4,))]),
    Case("LayerNormalization", [T((16, 768)), T((768,)), T((768,))], id="bert-row",
         dtypes=["float16", "bfloat16", "float64"]),
    Case("LayerNormalization", [T((16, 768)), T((768,)), T((768,))], id="bert-row",
         dtypes=["float32"], atol=1e-5, rtol=1e-5,
         why="normalized*Scale (|.| up to ~10, ulp ~1e-6) + B can cancel to near 0, "
             "so oneDNN's and the loop's rounding differ by ~1e-6 absolute"),
    # Mean and InvStdDev are stash_type (float32); the reference evaluator
    # returns them in X's dtype, so these rows run float32 only.
    Case("LayerNormalization", [T((2, 3, 4)), T((4,)), T((4,))], outputs=3, dtypes=["float32"]),
    Case("LayerNormalization", [T((2, 3, 4)), T((3, 4)), T((3, 4))], {"axis": -2}, outputs=3,
         dtypes=["float32"], id="stats-axis"),
    Case("LayerNormalization", [T((2, 3, 4)), T((2, 3, 4))], {"axis": 0}, outputs=2,
         dtypes=["float32"], id="mean-only"),
    Case("LayerNormalization", [T((2, 0)), T((0,)), T((0,))], outputs=3, dtypes=["float32"],
         id="empty-rows"),
]

ERROR_CASES += [
    ErrorCase("LayerNormalization", [T((2, 3)), T((4,))], match="broadcast"),
    ErrorCase("LayerNormalization", [T((2, 3)), T((3,))], {"axis": 2}, match="axis"),
    ErrorCase("LayerNormalization", [T((2, 3)), T((3,))], {"stash_type": 11}, match="stash_type"),
    ErrorCase("LayerNormalization", [T((2, 3))], match="input"),
]

# Gradient-check rows (the rows above with float64 and at most 300 elements
# are checked too).
CASES += [
    Case("LayerNormalization", [T((3, 2, 5)), T((2, 5)), T((5,))], {"axis": 1},
         id="grad-axis1"),
    Case("LayerNormalization", [T((4, 6)), T((6,)), T((1,))], {"epsilon": 0.01},
         id="grad-bcast-bias"),
    Case("LayerNormalization", [T((2, 3, 4)), T((3, 1))], {"axis": 1}, id="grad-bcast-scale"),
]
