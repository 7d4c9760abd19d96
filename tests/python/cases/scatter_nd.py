"""Rows for src/ops/scatter_nd.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
CASES = [
    Case("ScatterND", [T((8,)), V([[4], [3], [1], [7]]), T((4,))]),
    Case("ScatterND", [T((4, 4, 4)), V([[0], [2]]), T((2, 4, 4))], dtypes=F, id="slices"),
    Case("ScatterND", [T((3, 4)), V([[0, 1], [2, -1], [1, 0]]), T((3,))], dtypes=F,
         id="elements"),
    Case("ScatterND", [T((2, 3, 4)), V([[[0, 1]], [[1, 2]]]), T((2, 1, 4))], dtypes=F,
         id="nested"),
    Case("ScatterND", [T((3, 4)), V(np.zeros((0, 1), np.int64)), T((0, 4))], dtypes=F,
         id="no_indices"),
    Case("ScatterND", [T((0, 4)), V(np.zeros((0, 1), np.int64)), T((0, 4))], dtypes=F,
         id="empty"),
    Case("ScatterND", [T((8,)), V([[4], [3], [1], [7]]), T((4,))], opset=11, dtypes=F,
         id="opset11"),
    Case("ScatterND", [T((8,)), V([[4], [3], [1], [7]]), T((4,))], opset=13, dtypes=F,
         id="opset13"),
]
for _r in ["add", "mul", "max", "min"]:
    # Repeated tuples combine in order.
    CASES.append(Case("ScatterND", [T((4, 4, 4)), V([[0], [2], [0]]), T((3, 4, 4))],
                      {"reduction": _r}, id=_r,
                      dtypes=["float32", "float64", "int32", "int64", "uint8", "float16"],
                      grad=_r == "add"))
CASES.append(Case("ScatterND", [T((4, 4)), V([[1], [3]]), T((2, 4))], {"reduction": "mul"},
                  opset=16, dtypes=F, grad=False, id="opset16"))
ERROR_CASES = [
    ErrorCase("ScatterND", [T((8,)), V([[8]]), T((1,))], match="out of range"),
    ErrorCase("ScatterND", [T((8,)), V([[1]]), T((2,))], match="updates must have shape"),
    ErrorCase("ScatterND", [T((8,)), V([[1, 2]]), T((1,))], match="last axis of indices"),
    ErrorCase("ScatterND", [T((8,)), V([[1]]), T((1,))], {"reduction": "sub"},
              match="reduction must be"),
    ErrorCase("ScatterND", [T((8,)), V([[1]], np.int32), T((1,))], match="not supported"),
]
