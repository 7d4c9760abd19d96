"""Rows for src/ops/size.cc."""
from op_harness import Case, T

CASES = [
    Case("Size", [T((2, 3, 4))]),
    Case("Size", [T(())], dtypes=["float32"], id="scalar"),
    Case("Size", [T((2, 0))], dtypes=["float32"], id="empty"),
    Case("Size", [T((2, 3))], opset=13, dtypes=["float32"], id="opset13"),
]
