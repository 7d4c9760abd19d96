"""Rows for src/ops/transpose.cc."""
from op_harness import Case, ErrorCase, T

F32 = ["float32"]
CASES = [
    Case("Transpose", [T((2, 3, 4))]),
    Case("Transpose", [T((2, 3, 4))], attrs={"perm": [1, 0, 2]}, id="perm102"),
    Case("Transpose", [T((2, 3, 4, 5))], attrs={"perm": [0, 2, 3, 1]}, dtypes=F32, id="nchw_nhwc"),
    Case("Transpose", [T((2, 3, 4))], attrs={"perm": [-1, 0, 1]}, dtypes=F32, id="negperm",
         opset=13),
    Case("Transpose", [T((0, 3))], dtypes=F32, id="empty"),
    Case("Transpose", [T(())], dtypes=F32, id="scalar"),
    Case("Transpose", [T((5,))], dtypes=F32, id="1d"),
    Case("Transpose", [T((2, 3))], opset=11, dtypes=F32, id="opset11"),
]
ERROR_CASES = [
    ErrorCase("Transpose", [T((2, 3))], attrs={"perm": [0]}, match="one entry per axis"),
    ErrorCase("Transpose", [T((2, 3))], attrs={"perm": [0, 0]}, match="repeat"),
    ErrorCase("Transpose", [T((2, 3))], attrs={"perm": [0, 2]}, match="out of range"),
]
