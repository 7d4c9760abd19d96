"""Rows for src/ops/max_unpool.cc."""
from op_harness import Case, ErrorCase, T, V

# Indices as MaxPool gives them: flat positions in the unpooled [1, 2, 4, 4].
_IDX = [[[[5, 7], [13, 15]], [[16, 19], [26, 31]]]]
CASES = [
    Case("MaxUnpool", [T((1, 2, 2, 2)), V(_IDX)], {"kernel_shape": [2, 2], "strides": [2, 2]},
         id="2d"),
    Case("MaxUnpool", [T((1, 2, 2, 2)), V(_IDX), V([1, 2, 5, 5])],
         {"kernel_shape": [2, 2], "strides": [2, 2]}, id="2d_output_shape"),
    Case("MaxUnpool", [T((1, 1, 3)), V([[[0, 3, 5]]])], {"kernel_shape": [2], "strides": [2]},
         id="1d"),
]

ERROR_CASES = [
    ErrorCase("MaxUnpool", [T((1, 2, 2, 2)), V(_IDX)], {"kernel_shape": [2]},
              match="kernel_shape"),
    ErrorCase("MaxUnpool", [T((1, 2, 2, 2)), V([[[[99, 0], [1, 2]], [[3, 4], [5, 6]]]])],
              {"kernel_shape": [2, 2], "strides": [2, 2]}, match="outside"),
]
