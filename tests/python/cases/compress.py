"""Rows for src/ops/compress.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]


def B(v):
    return V(v, np.bool_)


CASES = [
    Case("Compress", [T((3, 2)), B([0, 1, 1])], {"axis": 0}),
    Case("Compress", [T((3, 2)), B([0, 1])], {"axis": 1}, dtypes=F, id="axis1"),
    Case("Compress", [T((3, 2)), B([0, 1, 0, 0, 1])], dtypes=F, id="flat"),
    Case("Compress", [T((3, 2)), B([0, 1])], {"axis": -1}, dtypes=F, id="neg_axis"),
    Case("Compress", [T((4, 3)), B([1, 0])], {"axis": 0}, dtypes=F, id="short_condition"),
    Case("Compress", [T((3, 2)), B([0, 0, 0])], {"axis": 0}, dtypes=F, id="none_selected"),
    Case("Compress", [T((3, 2)), B([1, 0, 1, 0, 0])], {"axis": 0}, dtypes=F, id="long_condition"),
    Case("Compress", [T((0, 2)), B([1])], {"axis": 1}, dtypes=F, id="empty"),
    Case("Compress", [T((3, 2)), B([0, 1, 1])], {"axis": 0}, opset=9, dtypes=F, id="opset9"),
    Case("Compress", [T((3, 2)), B([1, 0, 1])], {"axis": 0}, opset=28,
         dtypes=["bfloat16", "float32"], id="opset28"),
]
ERROR_CASES = [
    ErrorCase("Compress", [T((3, 2)), B([0, 1, 1])], {"axis": 2}, match="out of range"),
    ErrorCase("Compress", [T((3, 2)), B([0, 1, 1])], {"axis": 1}, match="selects index 2"),
    ErrorCase("Compress", [T((3, 2)), B([[0, 1]])], match="1-D"),
    ErrorCase("Compress", [T((3, 2)), V([0, 1])], match="not supported"),
]
