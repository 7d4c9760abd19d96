"""Rows for src/ops/range.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V


def _s(v):
    return T((), values=v)


INTS = ["int16", "int32", "int64"]
CASES = [
    Case("Range", [_s(1), _s(10), _s(3)]),
    Case("Range", [_s(10), _s(-4), _s(-2)], id="negative_delta"),
    Case("Range", [_s(5), _s(5), _s(1)], id="empty"),
    Case("Range", [_s(5), _s(1), _s(1)], id="empty_wrong_way"),
    Case("Range", [_s(-7), _s(8), _s(4)], dtypes=INTS, id="int_ceil"),
    Case("Range", [_s(0.5), _s(3.25), _s(0.3)], dtypes=["float32", "float64"], id="fraction"),
    Case("Range", [_s(0), _s(1000), _s(1)], dtypes=["float32", "int32"], id="long"),
    Case("Range", [_s(1), _s(10), _s(3)], opset=11, id="opset11"),
    Case("Range", [_s(1.5), _s(40), _s(2.5)], opset=27, id="opset27"),
    Case("Range", [_s(1.5), _s(40), _s(2.5)], {"stash_type": 11}, opset=27,
         dtypes=["float16", "bfloat16"], id="stash_double"),
]
ERROR_CASES = [
    ErrorCase("Range", [V(1), V(5), V(0)], match="delta must not be 0"),
    ErrorCase("Range", [V(1.0, np.float32), V(5.0, np.float32), V(0.0, np.float32)],
              match="delta must not be 0"),
    ErrorCase("Range", [V([1, 2]), V(5), V(1)], match="start must be a scalar"),
    ErrorCase("Range", [V(1), V(5, np.int32), V(1)], match="same dtype"),
    ErrorCase("Range", [V(1, np.uint8), V(5, np.uint8), V(1, np.uint8)], match="not supported"),
]
