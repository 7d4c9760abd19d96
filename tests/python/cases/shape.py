"""Rows for src/ops/shape.cc."""
from op_harness import Case, T

F32 = ["float32"]
CASES = [
    Case("Shape", [T((2, 3, 4))]),
    Case("Shape", [T(())], dtypes=F32, id="scalar"),
    Case("Shape", [T((2, 0, 4))], dtypes=F32, id="empty"),
    Case("Shape", [T((2, 3, 4))], attrs={"start": 1}, dtypes=F32, id="start"),
    Case("Shape", [T((2, 3, 4))], attrs={"start": -2, "end": -1}, dtypes=F32, id="neg"),
    Case("Shape", [T((2, 3, 4))], attrs={"start": -10, "end": 10}, dtypes=F32, id="clamp"),
    Case("Shape", [T((2, 3, 4))], attrs={"start": 2, "end": 1}, dtypes=F32, id="start_after_end"),
    Case("Shape", [T((2, 3, 4))], opset=13, dtypes=["float32", "string", "bool"], id="opset13"),
]
