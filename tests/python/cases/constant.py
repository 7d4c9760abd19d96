"""Rows for src/ops/constant.cc."""
import ml_dtypes
import numpy as np

from op_harness import Case, ErrorCase

VALUES = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array(-3, np.int64),
          np.array([[True, False]]), np.array([1.5, -2], np.float16),
          np.array([1, 255], np.uint8), np.array([2.5], ml_dtypes.bfloat16),
          np.zeros((0, 4), np.float64), np.array(["a", "bc"], dtype=object)]

CASES = [Case("Constant", [], {"value": v}, id=f"value_{v.dtype}_{'x'.join(map(str, v.shape))}")
         for v in VALUES]
CASES += [
    Case("Constant", [], {"value": VALUES[0]}, opset=1, id="opset1"),
    Case("Constant", [], {"value_float": 2.5}, id="value_float"),
    Case("Constant", [], {"value_floats": [1.0, -2.0, 3.5]}, id="value_floats"),
    Case("Constant", [], {"value_int": -7}, id="value_int"),
    Case("Constant", [], {"value_ints": [4, 0, -1]}, id="value_ints"),
    Case("Constant", [], {"value_string": "text"}, id="value_string"),
    Case("Constant", [], {"value_strings": ["x", "", "yz"]}, id="value_strings"),
]

ERROR_CASES = [
    ErrorCase("Constant", [], {}, match="exactly one value attribute is required, 0 given"),
    ErrorCase("Constant", [], {"value_int": 1, "value_float": 2.0},
              match="exactly one value attribute is required, 2 given"),
    ErrorCase("Constant", [], {"value_int": 1}, opset=11, match="value_int"),
]
