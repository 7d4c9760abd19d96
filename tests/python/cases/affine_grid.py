"""Rows for src/ops/affine_grid.cc."""
from op_harness import Case, ErrorCase, T, V

# The oracle always returns float32 grids.
CASES = [
    Case("AffineGrid", [T((2, 2, 3)), V([2, 3, 4, 5])], dtypes=["float32"], id="2d"),
    Case("AffineGrid", [T((2, 2, 3)), V([2, 3, 4, 5])], {"align_corners": 1},
         dtypes=["float32"], id="2d_align"),
    Case("AffineGrid", [T((1, 3, 4)), V([1, 2, 3, 4, 2])], dtypes=["float32"], id="3d"),
    Case("AffineGrid", [T((1, 3, 4)), V([1, 2, 3, 4, 2])], {"align_corners": 1},
         dtypes=["float32"], id="3d_align"),
]

ERROR_CASES = [
    ErrorCase("AffineGrid", [T((2, 2, 3)), V([2, 3, 4])], match="size must have"),
    ErrorCase("AffineGrid", [T((2, 3, 4)), V([2, 3, 4, 5])], match="theta must be"),
]
