"""Rows for src/ops/scatter_elements.cc (ScatterElements, Scatter)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
NUM = ["float16", "bfloat16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]
UNIQUE = V([[1, 0, 2], [0, 2, 1]])      # distinct per column: the gradient is exact
REPEAT = V([[1, 0, 2], [1, 2, 2]])      # repeated targets
CASES = [
    Case("ScatterElements", [T((3, 3)), UNIQUE, T((2, 3))]),
    Case("ScatterElements", [T((3, 3)), V([[1, -1], [0, 2]]), T((2, 2))], {"axis": 1},
         id="axis1_neg"),
    Case("ScatterElements", [T((2, 3, 4)), V(np.array([[[1, 0, 3, 2]] * 2] * 2), np.int32),
                             T((2, 2, 4))], {"axis": -1}, dtypes=F, id="3d_int32"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], dtypes=F, grad=False,
         id="repeat_last_wins"),
    Case("ScatterElements", [T((4,)), V(np.zeros((0,), np.int64)), T((0,))], dtypes=F,
         id="empty_indices"),
    Case("ScatterElements", [T((0, 3)), V(np.zeros((0, 3), np.int64)), T((0, 3))], dtypes=F,
         id="empty_data"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], {"reduction": "add"}, dtypes=NUM,
         id="add"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], {"reduction": "mul"}, dtypes=NUM,
         grad=False, id="mul"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], {"reduction": "max"}, dtypes=NUM,
         grad=False, id="max"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], {"reduction": "min"}, dtypes=NUM,
         grad=False, id="min"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], {"reduction": "add"}, opset=16,
         dtypes=F, id="add16"),
    Case("ScatterElements", [T((3, 3)), REPEAT, T((2, 3))], {"reduction": "mul"}, opset=16,
         dtypes=F, grad=False, id="mul16"),
    Case("ScatterElements", [T((3, 3)), UNIQUE, T((2, 3))], opset=13, id="opset13"),
    Case("ScatterElements", [T((3, 3)), UNIQUE, T((2, 3))], opset=11, id="opset11"),
    Case("ScatterElements", [T((300, 200)),
                             V(np.argsort(np.random.default_rng(0).random((300, 200)), 0)[:150]),
                             T((150, 200))], dtypes=["float32"], id="large"),
    Case("Scatter", [T((3, 3)), UNIQUE, T((2, 3))], opset=9),
    Case("Scatter", [T((3, 3)), V([[1, -1], [0, 2]]), T((2, 2))], {"axis": 1}, opset=10,
         dtypes=F, id="axis1"),
]
ERROR_CASES = [
    ErrorCase("ScatterElements", [T((3, 3)), V([[3, 0, 1]]), T((1, 3))], match="out of range"),
    ErrorCase("ScatterElements", [T((3, 3)), V([[0, 0, 1]]), T((1, 2))],
              match="updates must have the shape"),
    ErrorCase("ScatterElements", [T((3, 3)), V([[0, 0, 1]]), T((1, 3))], {"reduction": "sub"},
              match="reduction"),
    ErrorCase("ScatterElements", [T((3, 3)), V([[0, 0, 1]]), T((1, 3))], {"reduction": "add"},
              dtype="string", match="needs numbers"),
    ErrorCase("ScatterElements", [T((3, 3)), V([0, 0, 1]), T((3,))], match="rank of data"),
    ErrorCase("ScatterElements", [T((3, 3)), V([[0, 0, 1, 1]]), T((1, 4))], match="exceeds"),
    ErrorCase("ScatterElements", [T((3, 3)), V([[0, 0, 1]]), T((1, 3))], {"axis": -3},
              match="axis"),
]
