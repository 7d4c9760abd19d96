"""Rows for src/ops/trilu.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F = ["float32", "float64"]
# The oracle (numpy's triu/tril) puts the integer 0 into string tensors; our
# string zero is "", so string rows are checked on their own below.
ALL = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
       "uint16", "uint32", "uint64", "bool"]
CASES = [
    Case("Trilu", [T((4, 5))], dtypes=ALL),
    Case("Trilu", [T((4, 5))], {"upper": 0}, dtypes=ALL, id="lower"),
    Case("Trilu", [T((2, 3, 4, 5)), V(2)], dtypes=F, id="k2"),
    Case("Trilu", [T((3, 4, 5)), V(-1)], {"upper": 0}, dtypes=F, id="lower_kneg"),
    Case("Trilu", [T((3, 5)), V(7)], dtypes=F, id="k_past_end"),
    Case("Trilu", [T((3, 5)), V(-7)], {"upper": 0}, dtypes=F, id="lower_k_before_start"),
    Case("Trilu", [T((5, 5)), V(0)], {"upper": 0}, dtypes=F, id="square"),
    Case("Trilu", [T((1, 5)), V(-1)], {"upper": 1}, dtypes=F, id="one_row"),
    Case("Trilu", [T((0, 5))], dtypes=F, id="empty"),
    Case("Trilu", [T((3, 0, 5))], {"upper": 0}, dtypes=F, id="empty_batch"),
    Case("Trilu", [T((64, 300, 200))], dtypes=["float32"], id="large", noncontig=False),
]
ERROR_CASES = [
    ErrorCase("Trilu", [T((5,))], match="rank >= 2"),
    ErrorCase("Trilu", [T((3, 5)), V([1, 2])], match="k must be a scalar"),
    ErrorCase("Trilu", [T((3, 5)), V(1, np.int32)], match="not supported"),
]
