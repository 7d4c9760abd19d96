"""Rows for src/ops/rms_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

CASES += [
    Case("RMSNormalization", [T((2, 3, 4)), T((4,))]),
    Case("RMSNormalization", [T((2, 3, 4)), T((3, 4))], {"axis": 1}),
    Case("RMSNormalization", [T((2, 3, 4)), T((2, 3, 4))], {"axis": 0}),
    Case("RMSNormalization", [T((2, 3, 4)), T((3, 1))], {"axis": -2}, id="bcast-scale"),
    Case("RMSNormalization", [T((2, 3, 4)), T(())], id="scalar-scale"),
    Case("RMSNormalization", [T((2, 3, 4)), T((4,))], {"epsilon": 0.5}),
    Case("RMSNormalization", [T((0, 4)), T((4,))]),
    Case("RMSNormalization", [T((16, 100)), T((100,))], id="long-row"),
]

ERROR_CASES += [
    ErrorCase("RMSNormalization", [T((2, 3)), T((4,))], match="broadcast"),
    ErrorCase("RMSNormalization", [T((2, 3)), T((3,))], {"axis": 2}, match="axis"),
    ErrorCase("RMSNormalization", [T((2, 3)), T((3,))], {"stash_type": 11},
              match="stash_type"),
]
