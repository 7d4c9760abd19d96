"""Rows for src/ops/non_zero.cc."""
from op_harness import Case, T

NUMERIC = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64", "bool"]
CASES = [
    Case("NonZero", [T((3, 4), values=[0, 1, -1, 0, 0, 0, 2, 0, 0.5, 0, 0, -3])], dtypes=NUMERIC),
    Case("NonZero", [T((2, 3))], dtypes=["string"], id="strings"),
    Case("NonZero", [T((2, 3, 4), low=-1, high=1)], dtypes=["int32", "bool"], id="3d"),
    Case("NonZero", [T((5,), values=[0, 0, 0, 0, 0])], dtypes=["float32", "int64"], id="none"),
    Case("NonZero", [T((), values=3)], dtypes=["float32"], id="scalar"),
    Case("NonZero", [T((0, 3))], dtypes=["float32"], id="empty"),
    Case("NonZero", [T((200, 300), low=-1, high=1)], dtypes=["int8"], id="large"),
    Case("NonZero", [T((3, 4), values=[0, 1, -1, 0, 0, 0, 2, 0, 0.5, 0, 0, -3])], opset=9,
         dtypes=["float32"], id="opset9"),
]
