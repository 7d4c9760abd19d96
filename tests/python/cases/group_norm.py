"""Rows for src/ops/group_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

# Opset 21 rows run float64 with stash_type 11 (double statistics): with the
# default stash_type 1 the oracle computes them in float32.
CASES += [
    Case("GroupNormalization", [T((2, 4, 3, 3)), T((4,)), T((4,))], {"num_groups": 2},
         dtypes=["float32", "float16", "bfloat16"]),
    Case("GroupNormalization", [T((2, 4, 3, 3)), T((4,)), T((4,))],
         {"num_groups": 2, "stash_type": 11}, dtypes=["float64"], id="stash-double"),
    Case("GroupNormalization", [T((2, 4, 3, 3)), T((4,)), T((4,))], {"num_groups": 2},
         dtypes=["float64"], rtol=1e-6, atol=1e-6, grad=False, id="stash-float-double-x",
         why="stash_type 1 computes the statistics of a float64 X in float32: the "
             "float32 rounding (~1e-7 relative) of two different summation orders"),
    Case("GroupNormalization", [T((2, 6, 5)), T((6,)), T((6,))],
         {"num_groups": 3, "epsilon": 0.1, "stash_type": 11}, id="1d-epsilon"),
    Case("GroupNormalization", [T((2, 4, 3)), T((4,)), T((4,))], {"num_groups": 1, "stash_type": 11},
         id="one-group"),
    Case("GroupNormalization", [T((2, 4, 3)), T((4,)), T((4,))], {"num_groups": 4, "stash_type": 11},
         id="instance"),
    Case("GroupNormalization", [T((2, 4)), T((4,)), T((4,))], {"num_groups": 2, "stash_type": 11},
         id="no-spatial"),
    Case("GroupNormalization", [T((2, 4, 3, 3)), T((2,)), T((2,))], {"num_groups": 2},
         opset=18, id="opset18-per-group"),
]

ERROR_CASES += [
    ErrorCase("GroupNormalization", [T((2, 4, 3)), T((4,)), T((4,))], {"num_groups": 3},
              match="num_groups"),
    ErrorCase("GroupNormalization", [T((2, 4, 3)), T((2,)), T((2,))], {"num_groups": 2},
              match="scale and bias"),
    ErrorCase("GroupNormalization", [T((2, 4, 3)), T((4,)), T((4,))],
              {"num_groups": 2, "stash_type": 7}, match="stash_type"),
]
