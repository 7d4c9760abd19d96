"""Rows for src/ops/lrn.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

# N == C in every row: the reference evaluator loops over range(N) where it
# means the channels.
CASES += [
    Case("LRN", [T((3, 3, 2, 2))], {"size": 3}),
    Case("LRN", [T((4, 4, 2, 3))], {"size": 2, "alpha": 0.1, "beta": 0.5, "bias": 2.0},
         id="even-size"),
    Case("LRN", [T((5, 5, 3, 3))], {"size": 5, "alpha": 0.2}, id="size5"),
    Case("LRN", [T((3, 3, 2, 2))], {"size": 3}, opset=1, id="opset1"),
]

ERROR_CASES += [
    ErrorCase("LRN", [T((2, 3))], {"size": 0}, match="size"),
    ErrorCase("LRN", [T((3,))], {"size": 3}, match="N, C"),
]
