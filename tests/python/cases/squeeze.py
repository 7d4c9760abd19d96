"""Rows for src/ops/squeeze.cc."""
from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Squeeze", [T((1, 3, 1, 4)), V([0, 2])]),
    Case("Squeeze", [T((1, 3, 1, 4))], dtypes=F32, id="all"),
    Case("Squeeze", [T((1, 3, 1, 4)), V([-2])], dtypes=F32, id="neg"),
    Case("Squeeze", [T((1, 1))], dtypes=F32, id="to0d"),
    Case("Squeeze", [T((1, 0, 1)), V([2])], dtypes=F32, id="empty"),
    Case("Squeeze", [T((3,)), V([], )], dtypes=F32, id="noaxes"),
    Case("Squeeze", [T((1, 3, 1, 4))], attrs={"axes": [0, -2]}, opset=11, id="opset11"),
    Case("Squeeze", [T((1, 3, 1))], opset=11, dtypes=F32, id="opset11_all"),
]
ERROR_CASES = [
    ErrorCase("Squeeze", [T((2, 3)), V([0])], match="not 1"),
    ErrorCase("Squeeze", [T((1, 3)), V([2])], match="out of range"),
    ErrorCase("Squeeze", [T((1, 1)), V([0, -2])], match="repeat"),
]

# Opset 1 (the opset 11 schema serves it).
CASES += [Case("Squeeze", [T((2, 1, 3, 1))], {"axes": [1]}, opset=1, id="opset1")]
