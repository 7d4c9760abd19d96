"""Rows for src/ops/gather_nd.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
CASES = [
    Case("GatherND", [T((2, 2)), V([[0, 0], [1, 1]])]),
    Case("GatherND", [T((2, 2)), V([[1], [0]])], dtypes=F, id="slices"),
    Case("GatherND", [T((2, 2, 2)), V([[[0, 1]], [[1, 0]]])], dtypes=F, id="nested"),
    Case("GatherND", [T((2, 2, 2)), V([[1], [0]])], {"batch_dims": 1}, dtypes=F, id="batch1"),
    Case("GatherND", [T((2, 3, 4, 5)), V([[[2, -1], [0, 0]], [[1, 3], [-3, 2]]])],
         {"batch_dims": 1}, dtypes=F, id="batch1_neg"),
    Case("GatherND", [T((2, 3, 4)), V(np.array([[0, 1], [1, 2]]).reshape(2, 1, 2))],
         {"batch_dims": 0}, dtypes=F, id="3d"),
    Case("GatherND", [T((3, 4)), V([[0, 1], [0, 1], [2, 3]])], dtypes=F, id="repeated"),
    Case("GatherND", [T((3, 4)), V(np.zeros((0, 2), np.int64))], dtypes=F, id="no_indices"),
    Case("GatherND", [T((0, 4)), V(np.zeros((0, 1), np.int64))], dtypes=F, id="empty"),
    Case("GatherND", [T((2, 2)), V([[0, 0], [1, 1]])], opset=11, dtypes=F, id="opset11"),
    Case("GatherND", [T((2, 2, 2)), V([[1], [0]])], {"batch_dims": 1}, opset=12, dtypes=F,
         id="opset12"),
]
ERROR_CASES = [
    ErrorCase("GatherND", [T((2, 2)), V([[0, 2]])], match="out of range"),
    ErrorCase("GatherND", [T((2, 2)), V([[0, 0, 0]])], match="last axis of indices"),
    ErrorCase("GatherND", [T((2, 2)), V([[0]])], {"batch_dims": 2}, match="batch_dims"),
    ErrorCase("GatherND", [T((2, 2)), V([[0], [1], [0]])], {"batch_dims": 1},
              match="batch axes"),
    ErrorCase("GatherND", [T((2, 2)), V([[0, 0]], np.int32)], match="not supported"),
]
