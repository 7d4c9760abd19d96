"""Rows for src/ops/eye_like.cc."""
import numpy as np
from onnx import TensorProto as P

from op_harness import Case, ErrorCase, T, V

CASES = [
    Case("EyeLike", [T((4, 5))]),
    Case("EyeLike", [T((4, 5))], {"k": 2}, dtypes=["float32", "int32"], id="k2"),
    Case("EyeLike", [T((5, 3))], {"k": -1, "dtype": P.DOUBLE}, dtypes=["int64"], id="dtype"),
    Case("EyeLike", [T((3, 3))], {"k": 4}, dtypes=["float32"], id="k_past_end"),
    Case("EyeLike", [T((0, 3))], dtypes=["float32"], id="empty"),
    Case("EyeLike", [T((3, 3))], {"dtype": P.UINT8}, opset=9, dtypes=["float32"], id="opset9"),
]
ERROR_CASES = [
    ErrorCase("EyeLike", [T((3,))], match="2-D"),
    ErrorCase("EyeLike", [T((3, 3))], {"dtype": P.STRING}, match="not supported"),
]
