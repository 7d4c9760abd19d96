"""Rows for src/ops/tile.cc."""
from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Tile", [T((100, 50)), V([3, 7])], dtypes=F32, id="large"),
    Case("Tile", [T((2, 3)), V([2, 3])]),
    Case("Tile", [T((2, 1, 3)), V([1, 4, 1])], dtypes=F32, id="middle"),
    Case("Tile", [T((2, 3)), V([0, 2])], dtypes=F32, id="zero_repeat"),
    Case("Tile", [T((0, 3)), V([2, 2])], dtypes=F32, id="empty"),
    Case("Tile", [T(()), V([])], dtypes=F32, id="scalar"),
    Case("Tile", [T((3,)), V([3])], opset=6, dtypes=F32, id="opset6"),
    Case("Tile", [T((2, 1, 3)), V([2, 4, 1])], dtypes=["float32", "float64"], id="middle_f64"),
]
ERROR_CASES = [
    ErrorCase("Tile", [T((2, 3)), V([2])], match="one entry per axis"),
    ErrorCase("Tile", [T((2, 3)), V([2, -1])], match="negative"),
]
