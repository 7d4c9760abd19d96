"""Rows for src/ops/bit_cast.cc."""
import numpy as np
from onnx import TensorProto as P

from op_harness import Case, ErrorCase, T, V

CASES = [
    Case("BitCast", [T((3, 4))], {"to": P.INT32}, opset=26, dtypes=["float32", "uint32"]),
    Case("BitCast", [T((3, 4), low=-100, high=100)], {"to": P.FLOAT}, opset=26,
         dtypes=["int32", "uint32"], id="to_float"),
    Case("BitCast", [T((5,))], {"to": P.UINT8}, opset=26, dtypes=["bool", "int8"], id="byte"),
    # (The harness hands the oracle 16-bit float inputs as float32, so those
    # are checked as outputs only.)
    Case("BitCast", [T((2, 3))], {"to": P.INT16}, opset=26, dtypes=["uint16", "int16"],
         id="two_byte"),
    Case("BitCast", [T((2, 3), low=0, high=30000)], {"to": P.FLOAT16}, opset=26,
         dtypes=["uint16"], id="to_float16"),
    Case("BitCast", [T((2, 3), low=0, high=30000)], {"to": P.BFLOAT16}, opset=26,
         dtypes=["uint16"], id="to_bfloat16"),
    Case("BitCast", [T((2, 3))], {"to": P.UINT64}, opset=26, dtypes=["float64", "int64"],
         id="eight_byte"),
    Case("BitCast", [T((4,))], {"to": P.FLOAT8E4M3FN}, opset=26, dtypes=["uint8"], id="float8"),
    Case("BitCast", [T(())], {"to": P.INT32}, opset=26, dtypes=["float32"], id="scalar"),
    Case("BitCast", [T((0, 3))], {"to": P.INT32}, opset=26, dtypes=["float32"], id="empty"),
]
ERROR_CASES = []
