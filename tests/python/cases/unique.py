"""Rows for src/ops/unique.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

NUM = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "uint64"]
DUPS = [2, 1, 1, 3, 4, 3, -1, 2, 0, 1]
ROWS = [[1, 0, 0], [1, 0, 0], [2, 3, 4], [0, 5, 1], [2, 3, 4]]
CASES = [
    Case("Unique", [T((3, 4), low=0, high=3)], outputs=4),
    Case("Unique", [T((10,), values=DUPS)], outputs=4, dtypes=NUM, id="dups"),
    Case("Unique", [T((10,), values=DUPS)], {"sorted": 0}, outputs=4, dtypes=NUM,
         id="unsorted"),
    Case("Unique", [T((5, 3), values=ROWS)], {"axis": 0}, outputs=4, dtypes=NUM, id="axis0"),
    Case("Unique", [T((5, 3), values=ROWS)], {"axis": 0, "sorted": 0}, outputs=4, dtypes=NUM,
         id="axis0_unsorted"),
    Case("Unique", [T((3, 5), values=np.array(ROWS).T)], {"axis": -1}, outputs=4, dtypes=NUM,
         id="axis_neg"),
    Case("Unique", [T((2, 5, 3), values=[ROWS, ROWS[::-1]])], {"axis": 1}, outputs=4,
         dtypes=NUM, id="axis1_3d"),
    Case("Unique", [T((10,), values=DUPS)], outputs=1, dtypes=NUM, id="values_only"),
    Case("Unique", [T((1,))], outputs=4, id="length1"),
    Case("Unique", [T((0,))], outputs=4, dtypes=["float32", "int64"], id="empty"),
    Case("Unique", [T((10,), values=DUPS)], outputs=4, opset=28,
         dtypes=["bfloat16", "float32"], id="opset28"),
]
NAN = float("nan")
CASES += [
    Case("Unique", [T((7,), values=[2, NAN, 1, NAN, 2, 0, NAN])], outputs=4,
         dtypes=["float32", "float64"], id="nan"),
]
ERROR_CASES = [
    ErrorCase("Unique", [T((3, 4))], {"axis": 2}, match="out of range"),
    ErrorCase("Unique", [T((3, 4))], {"axis": -3}, match="out of range"),
    ErrorCase("Unique", [T((3, 4))], {"sorted": 1.5}, match="expects int"),
]
