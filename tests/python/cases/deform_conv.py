"""Rows for src/ops/deform_conv.cc (small: the oracle loops in Python)."""
from op_harness import Case, ErrorCase, T

# The oracle interpolates in float32, whatever the input dtype.
_DT = ["float16", "bfloat16", "float32"]
CASES = [
    Case("DeformConv", [T((1, 1, 3, 3)), T((1, 1, 2, 2)), T((1, 8, 2, 2), -1.5, 1.5)],
         dtypes=_DT, grad=False, id="basic"),
    Case("DeformConv", [T((1, 2, 4, 4)), T((2, 1, 2, 2)), T((1, 16, 4, 4), -1, 1), T((2,)),
                        T((1, 8, 4, 4), 0, 1)],
         {"group": 2, "offset_group": 2, "pads": [1, 1, 0, 0]}, dtypes=_DT, grad=False,
         id="groups_mask_bias"),
    Case("DeformConv", [T((1, 1, 5, 5)), T((2, 1, 2, 2)), T((1, 8, 2, 2), -1, 1)],
         {"strides": [2, 2], "dilations": [2, 2]}, dtypes=_DT, grad=False, id="strides_dilations"),
]

ERROR_CASES = [
    ErrorCase("DeformConv", [T((1, 1, 3, 3)), T((1, 1, 2, 2)), T((1, 6, 2, 2))],
              match="offset must be"),
    ErrorCase("DeformConv", [T((1, 1, 3, 3)), T((1, 1, 2, 2)), T((1, 8, 3, 3))],
              match="spatial dims"),
]

# Small float64 rows for the gradient check (test_grads.py); the oracle's
# float32 interpolation bounds the agreement with it to float32's precision.
CASES += [
    Case("DeformConv", [T((1, 2, 3, 3)), T((2, 1, 2, 2)), T((1, 16, 3, 3), -1, 1), T((2,)),
                        T((1, 8, 3, 3), 0, 1)],
         {"group": 2, "offset_group": 2, "pads": [1, 1, 0, 0]}, dtypes=["float64"],
         rtol=1e-5, atol=1e-5, why="float32 oracle", id="grad_groups_mask_bias"),
    Case("DeformConv", [T((1, 1, 4, 4)), T((2, 1, 2, 2)), T((1, 8, 2, 2), -1, 1)],
         {"strides": [2, 2]}, dtypes=["float64"], rtol=1e-5, atol=1e-5, why="float32 oracle",
         id="grad_strides"),
]
