"""Rows for src/ops/gather.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Gather", [T((300, 200)), V(list(range(-150, 250)))], dtypes=F32, id="large"),
    Case("Gather", [T((5, 3)), V([0, 4, -1, 2])]),
    Case("Gather", [T((2, 5, 3)), V([[0, 1], [-5, 3]])], attrs={"axis": 1}, dtypes=F32,
         id="axis1_2d"),
    Case("Gather", [T((2, 3, 4)), V(2)], attrs={"axis": -1}, dtypes=F32, id="scalar_index"),
    Case("Gather", [T((5,)), V(1, np.int32)], dtypes=F32, id="to0d_int32"),
    Case("Gather", [T((5, 3)), V(np.zeros((0,), np.int64))], dtypes=F32, id="no_indices"),
    Case("Gather", [T((0, 3)), V([0, 1])], attrs={"axis": 1}, dtypes=F32, id="empty_data"),
    Case("Gather", [T((5, 3)), V([1, 2])], opset=11, dtypes=F32, id="opset11"),
    Case("Gather", [T((2, 5, 3)), V([[0, 1], [-5, 0]])], attrs={"axis": 1}, dtypes=["float32", "float64"],
         id="repeated_f64"),
]
ERROR_CASES = [
    ErrorCase("Gather", [T((5, 3)), V([5])], match="out of range"),
    ErrorCase("Gather", [T((5, 3)), V([-6])], match="out of range"),
    ErrorCase("Gather", [T((5, 3)), V([0])], attrs={"axis": 2}, match="out of range"),
    ErrorCase("Gather", [T(()), V([0])], match="rank >= 1"),
    ErrorCase("Gather", [T((5, 3)), V([0.0], float)], match="not supported for input 1"),
]

# Opset 1 (the opset 11 schema serves it).
CASES += [Case("Gather", [T((5, 3)), V([[0, 4], [2, 2]])], {"axis": 0}, opset=1, id="opset1")]
