"""Rows for src/ops/constant_of_shape.cc."""
import ml_dtypes
import numpy as np

from op_harness import Case, ErrorCase, V

VALUE_DTYPES = [np.float32, np.float16, np.float64, np.int8, np.int16, np.int32, np.int64,
                np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, ml_dtypes.bfloat16,
                ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.int4, ml_dtypes.uint4]

CASES = [
    Case("ConstantOfShape", [V([2, 3])]),
    Case("ConstantOfShape", [V([])], id="scalar"),
    Case("ConstantOfShape", [V([2, 0])], id="empty"),
    Case("ConstantOfShape", [V([2, 3])], opset=9, id="opset9"),
]
for _dt in VALUE_DTYPES:
    CASES.append(Case("ConstantOfShape", [V([3, 2])], attrs={"value": np.array([1], _dt)},
                      id=f"value_{np.dtype(_dt).name}"))
CASES.append(Case("ConstantOfShape", [V([4])], attrs={"value": np.array([-2.5], np.float32)},
                  id="value_neg"))

ERROR_CASES = [
    ErrorCase("ConstantOfShape", [V([2, -1])], match="negative dimension"),
    ErrorCase("ConstantOfShape", [V([2])], attrs={"value": np.array([1, 2], np.float32)},
              match="one element"),
    ErrorCase("ConstantOfShape", [V([[2]])], match="1-D"),
]
