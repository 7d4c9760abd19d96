"""Rows for src/ops/tensor_scatter.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
CASES = [
    Case("TensorScatter", [T((2, 2, 4, 3)), T((2, 2, 1, 3)), V([1, 2])]),
    Case("TensorScatter", [T((2, 5, 3)), T((2, 2, 3)), V([0, 3])], dtypes=F, id="3d"),
    Case("TensorScatter", [T((2, 2, 4, 3)), T((2, 2, 2, 3))], dtypes=F, id="no_indices"),
    Case("TensorScatter", [T((2, 4, 3)), T((2, 3, 3)), V([2, 3])], {"mode": "circular"},
         dtypes=F, id="circular"),
    Case("TensorScatter", [T((2, 4, 3)), T((2, 4, 2)), V([1, 0])], {"axis": 2}, dtypes=F,
         id="axis2"),
    Case("TensorScatter", [T((2, 4, 3)), T((2, 0, 3)), V([1, 4])], dtypes=F, id="empty_update"),
]
ERROR_CASES = [
    ErrorCase("TensorScatter", [T((2, 4, 3)), T((2, 2, 3)), V([3, 0])], match="overruns"),
    ErrorCase("TensorScatter", [T((2, 4, 3)), T((2, 5, 3)), V([0, 0])], match="shorter axis"),
    ErrorCase("TensorScatter", [T((2, 4, 3)), T((2, 2, 3)), V([0])], match="one index per"),
    ErrorCase("TensorScatter", [T((2, 4, 3)), T((2, 2, 3))], {"axis": 0}, match="non-batch"),
    ErrorCase("TensorScatter", [T((2, 4, 3)), T((2, 2, 3))], {"mode": "ring"}, match="mode"),
]
