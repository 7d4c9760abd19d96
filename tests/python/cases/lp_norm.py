"""Rows for src/ops/lp_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

# p = 1 rows use positive inputs: the reference evaluator sums x (not |x|).
CASES += [
    Case("LpNormalization", [T((3, 4))]),
    Case("LpNormalization", [T((2, 3, 4))], {"axis": 1}, id="axis1"),
    Case("LpNormalization", [T((2, 3, 4))], {"axis": 0, "p": 2}, id="axis0"),
    Case("LpNormalization", [T((2, 3, 4), positive=True)], {"p": 1}, id="l1"),
    Case("LpNormalization", [T((2, 3, 4), positive=True)], {"axis": 1, "p": 1}, id="l1-axis1"),
    Case("LpNormalization", [T((2, 3), values=[[0, 0, 0], [1, 2, 2]])], grad=False,
         id="zero-norm"),
    Case("LpNormalization", [T((0, 4))]),
    Case("LpNormalization", [T((3, 4))], opset=1, id="opset1"),
]

ERROR_CASES += [
    ErrorCase("LpNormalization", [T((2, 3))], {"p": 3}, match="p must be"),
    ErrorCase("LpNormalization", [T((2, 3))], {"axis": 2}, match="axis"),
]
