"""Rows for src/ops/det.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
# The oracle (numpy.linalg.det) has no float16/bfloat16: rows run float32/64.
CASES = [
    Case("Det", [T((3, 3))], dtypes=F),
    Case("Det", [T((2, 4, 4))], dtypes=F, id="batch"),
    Case("Det", [T((2, 3, 1, 1))], dtypes=F, id="1x1"),
    Case("Det", [T((2, 2), values=[[1, 2], [2, 4]])], dtypes=F, id="singular"),
    Case("Det", [T((0, 3, 3))], dtypes=F, id="empty"),
    Case("Det", [T((2, 3, 3))], opset=11, dtypes=F, id="opset11"),
]
ERROR_CASES = [
    ErrorCase("Det", [T((3, 4))], match="M, M"),
    ErrorCase("Det", [T((3,))], match="M, M"),
    ErrorCase("Det", [V([[1, 2], [3, 4]])], match="not supported"),
]
