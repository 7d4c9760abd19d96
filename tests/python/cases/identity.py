"""Rows for src/ops/identity.cc."""
from op_harness import Case, T

CASES = [
    Case("Identity", [T((2, 3, 4))]),
    Case("Identity", [T(())], dtypes=["float32", "string", "bool"]),
    Case("Identity", [T((0, 3))], dtypes=["float32"]),
    Case("Identity", [T((2, 3))], opset=11, dtypes=["float32"], id="opset11"),
]
