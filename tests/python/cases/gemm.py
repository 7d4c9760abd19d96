"""Rows for src/ops/gemm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []


def _m(*shape):
    # Values in [-1, 1) keep float32 cancellation error within the default tolerance.
    return T(shape, low=-1, high=1)


for _opset in (11, 13):
    CASES += [
        Case("Gemm", [_m(3, 4), _m(4, 5), _m(5)], opset=_opset),
        Case("Gemm", [_m(3, 4), _m(4, 5)], opset=_opset, id="no_c"),
        Case("Gemm", [_m(4, 3), _m(4, 5), _m(3, 5)], attrs={"transA": 1}, opset=_opset,
             id="transA"),
    ]
CASES += [
    Case("Gemm", [_m(3, 4), _m(5, 4), _m(3, 1)], attrs={"transB": 1}, id="transB"),
    Case("Gemm", [_m(4, 3), _m(5, 4), _m(1, 5)], attrs={"transA": 1, "transB": 1},
         id="transAB"),
    Case("Gemm", [_m(3, 4), _m(4, 5), _m()], attrs={"alpha": 0.5, "beta": 2.0}, id="alpha_beta"),
    Case("Gemm", [_m(3, 4), _m(4, 5), _m(1)], attrs={"alpha": 2.0}, id="alpha"),
    Case("Gemm", [_m(3, 4), _m(4, 5), _m(3, 5)], attrs={"beta": 0.0}, id="beta0"),
    Case("Gemm", [_m(3, 4), _m(4, 5)], attrs={"alpha": 1.5}, id="alpha_no_c"),
    Case("Gemm", [_m(3, 0), _m(0, 5), _m(5)], attrs={"beta": 0.5}, id="k0"),
    Case("Gemm", [_m(0, 4), _m(4, 5), _m(5)], id="m0"),
    Case("Gemm", [_m(33, 70), _m(65, 70), _m(65)], attrs={"transB": 1}, id="larger"),
]

ERROR_CASES += [
    ErrorCase("Gemm", [T((3, 4)), T((5, 6))], match="inner dimensions differ"),
    ErrorCase("Gemm", [T((2, 3, 4)), T((4, 5))], match="must be 2-D"),
    ErrorCase("Gemm", [T((3, 4)), T((4, 5)), T((2, 5))], match="does not broadcast"),
    ErrorCase("Gemm", [T((3, 4)), T((4, 5)), T((3, 5, 1))], match="does not broadcast"),
]

# Opsets 1 and 6: C broadcasts only with broadcast=1.
CASES += [
    Case("Gemm", [T((3, 4)), T((5, 4)), T((5,))], {"broadcast": 1, "transB": 1}, opset=6,
         id="opset6_broadcast"),
    # beta stays 1: the oracle's opset 6 ignores it without broadcast; float
    # dtypes: with alpha 0.5 the oracle's integer results are floats.
    Case("Gemm", [T((3, 4)), T((4, 5)), T((3, 5))], {"alpha": 0.5}, opset=6,
         dtypes=["float32", "float64"], id="opset6"),
]
ERROR_CASES += [
    ErrorCase("Gemm", [T((3, 4)), T((4, 5)), T((5,))], opset=6, match="without broadcast=1"),
]
