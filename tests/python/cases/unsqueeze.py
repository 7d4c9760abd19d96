"""Rows for src/ops/unsqueeze.cc."""
from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
CASES = [
    Case("Unsqueeze", [T((3, 4)), V([0, 3])]),
    Case("Unsqueeze", [T((3, 4)), V([-1])], dtypes=F32, id="neg"),
    Case("Unsqueeze", [T((3, 4)), V([3, 1])], dtypes=F32, id="unsorted"),
    Case("Unsqueeze", [T(()), V([0])], dtypes=F32, id="from0d"),
    Case("Unsqueeze", [T((0, 2)), V([1])], dtypes=F32, id="empty"),
    Case("Unsqueeze", [T((3, 4))], attrs={"axes": [0, -1]}, opset=11, id="opset11"),
]
ERROR_CASES = [
    ErrorCase("Unsqueeze", [T((2, 3)), V([3])], match="out of range"),
    ErrorCase("Unsqueeze", [T((2, 3)), V([1, 1])], match="repeat"),
]

# Opset 1 (the opset 11 schema serves it).
CASES += [Case("Unsqueeze", [T((2, 3))], {"axes": [0, 3]}, opset=1, id="opset1")]
