"""Rows for src/ops/quantize_linear.cc."""
import ml_dtypes
import numpy as np
from onnx import TensorProto

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_S = np.float32

# QuantizeLinear: x is swept; scale and zero point are fixed.
CASES += [
    Case("QuantizeLinear", [T((2, 3, 4), low=-50, high=300), V(2.0, _S), V(128, np.uint8)]),
    Case("QuantizeLinear", [T((2, 3, 4), low=-300, high=300), V(3.0, _S), V(-5, np.int8)]),
    Case("QuantizeLinear", [T((2, 3, 4), low=-50, high=300), V(2.0, _S)], id="no-zp"),
    Case("QuantizeLinear", [T((2, 3, 4), low=-60, high=60), V([0.5, 1.0, 2.0], _S),
                            V([0, 10, 20], np.uint8)], id="per-axis"),
    Case("QuantizeLinear", [T((3, 2, 4), low=-60, high=60), V([0.5, 1.0, 2.0], _S),
                            V([0, -10, 20], np.int8)], {"axis": 0}, id="per-axis0"),
    Case("QuantizeLinear", [T((2, 3, 4), low=-60, high=60), V([0.5, 1.5, 2.0, 4.0], _S)],
         {"axis": -1}, id="per-axis-neg"),
    Case("QuantizeLinear", [T((2, 6), low=-60, high=60),
                            V([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]], _S),
                            V([[0, 1, -2], [3, 4, 5]], np.int8)],
         {"axis": 1, "block_size": 2}, id="blocked"),
    Case("QuantizeLinear", [T((2, 5), low=-60, high=60), V([[0.5, 1.0], [3.0, 0.25]], _S)],
         {"axis": 1, "block_size": 3}, id="blocked-remainder"),
    Case("QuantizeLinear", [T((4, 3), low=-60, high=60), V([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]], _S)],
         {"axis": 0, "block_size": 2}, id="blocked-axis0"),
    Case("QuantizeLinear", [T((3, 4), low=-9000, high=9000), V(0.25, _S), V(7, np.int16)],
         id="int16"),
    Case("QuantizeLinear", [T((3, 4), low=-100, high=9000), V(0.5, _S), V(7, np.uint16)],
         id="uint16"),
    Case("QuantizeLinear", [T((3, 4), low=-20, high=20), V(2.0, _S), V(1, ml_dtypes.int4)],
         id="int4"),
    Case("QuantizeLinear", [T((3, 4), low=-5, high=40), V(2.0, _S), V(1, ml_dtypes.uint4)],
         id="uint4"),
    # int2/uint2: most values saturate to [-2, 1] / [0, 3].
    Case("QuantizeLinear", [T((3, 4), low=-8, high=8), V(2.0, _S), V(-1, ml_dtypes.int2)],
         id="int2"),
    Case("QuantizeLinear", [T((3, 4), low=-3, high=10), V(2.0, _S), V(1, ml_dtypes.uint2)],
         id="uint2"),
    Case("QuantizeLinear", [T((2, 3, 4), low=-8, high=8), V([1.0, 2.0, 4.0], _S),
                            V([0, -2, 1], ml_dtypes.int2)], id="per-axis-int2"),
    Case("QuantizeLinear", [T((2, 4), low=-8, high=8), V([[1.0, 2.0], [4.0, 0.5]], _S),
                            V([[0, 1], [2, 3]], ml_dtypes.uint2)], {"axis": 1, "block_size": 2},
         id="blocked-uint2"),
    Case("QuantizeLinear", [T((3, 4), low=-6, high=6), V(1.5, _S)],
         {"output_dtype": TensorProto.INT2}, id="output-dtype-int2"),
    Case("QuantizeLinear", [T((2, 3), low=-6, high=6), V(2.0, _S), V(0, ml_dtypes.int2)],
         opset=25, id="int2-opset25"),
    Case("QuantizeLinear", [T((3, 4), low=-1000, high=1000), V(0.5, _S),
                            V(0, ml_dtypes.float8_e4m3fn)], id="e4m3fn"),
    Case("QuantizeLinear", [T((3, 4), low=-1000, high=1000), V(0.5, _S),
                            V(0, ml_dtypes.float8_e4m3fnuz)], id="e4m3fnuz"),
    Case("QuantizeLinear", [T((3, 4), low=-90000, high=90000), V(0.5, _S),
                            V(0, ml_dtypes.float8_e5m2)], id="e5m2"),
    Case("QuantizeLinear", [T((3, 4), low=-90000, high=90000), V(0.5, _S),
                            V(0, ml_dtypes.float8_e5m2fnuz)], id="e5m2fnuz"),
    Case("QuantizeLinear", [T((3, 4), low=-20, high=20), V(2.0, _S),
                            V(0, ml_dtypes.float4_e2m1fn)], id="float4e2m1"),
    Case("QuantizeLinear", [T((3, 4), low=-1000, high=1000), V(0.5, _S)],
         {"output_dtype": TensorProto.FLOAT8E4M3FN, "saturate": 0}, id="e4m3fn-nosat"),
    Case("QuantizeLinear", [T((3, 4), low=-90000, high=90000), V(0.5, _S)],
         {"output_dtype": TensorProto.FLOAT8E5M2, "saturate": 0}, id="e5m2-nosat"),
    Case("QuantizeLinear", [T((3, 4), low=-300, high=300), V(1.5, _S)],
         {"output_dtype": TensorProto.INT8}, id="output-dtype"),
    Case("QuantizeLinear", [T((3, 4), low=-300, high=300), V(1.5, _S)],
         {"precision": TensorProto.FLOAT16}, id="precision"),
    # Ties round half to even.
    Case("QuantizeLinear", [T((6,), values=[0.5, 1.5, 2.5, -0.5, -1.5, 254.5]), V(1.0, _S)],
         id="ties"),
    Case("QuantizeLinear", [T((0, 3)), V(2.0, _S), V(1, np.uint8)], id="empty"),
    Case("QuantizeLinear", [T((2, 0, 3)), V(np.ones((2, 0, 2)), _S)],
         {"axis": 2, "block_size": 2}, dtypes=["float32"], id="empty-blocked"),
    # Older versions: x and scale one float type (19, 21), float32 only (10, 13).
    # Not bfloat16 here: the oracle divides the upcast values in float32,
    # where singa (like numpy on bfloat16 arrays) rounds the quotient to
    # bfloat16 before rounding to an integer.
    Case("QuantizeLinear", [T((2, 3, 4), low=-50, high=300), T((), low=0.5, high=2.0)],
         opset=21, dtypes=["float32", "float16"], id="scale-swept-21"),
    Case("QuantizeLinear", [T((2, 3, 4), low=-50, high=300), T((), low=0.5, high=2.0),
                            V(3, np.int8)], opset=19, dtypes=["float32", "float16"], id="scale-swept-19"),
    Case("QuantizeLinear", [T((2, 3, 4), low=-60, high=60), V([0.5, 1.0, 2.0], _S),
                            V([0, 10, 20], np.uint8)], opset=13, id="per-axis-13"),
    Case("QuantizeLinear", [T((2, 3), low=-50, high=300), V(2.0, _S), V(128, np.uint8)],
         opset=10, id="v10"),
]

# DequantizeLinear: x is swept over the quantized types.
_INTS = ["int8", "uint8", "int16", "uint16", "int32", "int4", "uint4", "int2", "uint2"]
CASES += [
    Case("DequantizeLinear", [T((2, 3, 4), low=-100, high=100), V(0.5, _S)]),
    Case("DequantizeLinear", [T((2, 3, 4), low=-100, high=100), V(0.5, np.float16)],
         id="f16-scale"),
    Case("DequantizeLinear", [T((2, 3, 4), low=-100, high=100), V(0.5, _S), T((), low=-5, high=5)],
         dtypes=_INTS, id="zp"),
    Case("DequantizeLinear", [T((2, 3, 4), low=-100, high=100), V([0.5, 1.0, 2.0], _S),
                              T((3,), low=-5, high=5)], dtypes=_INTS, id="per-axis"),
    Case("DequantizeLinear", [T((2, 6), low=-100, high=100),
                              V([[0.5, 1.0, 2.0], [3.0, 0.25, 1.5]], _S), T((2, 3), low=0, high=5)],
         {"axis": 1, "block_size": 2}, dtypes=_INTS, id="blocked"),
    Case("DequantizeLinear", [T((2, 5), low=-100, high=100), V([[0.5, 1.0], [3.0, 0.25]], _S)],
         {"axis": -1, "block_size": 3}, id="blocked-remainder"),
    Case("DequantizeLinear", [T((3, 4), low=-100, high=100), V(0.5, _S)],
         {"output_dtype": TensorProto.BFLOAT16}, id="output-dtype"),
    Case("DequantizeLinear", [T((3, 4), low=-100, high=100), V(0.5, _S),
                              V(0, ml_dtypes.float8_e4m3fn)], dtypes=["float8e4m3fn"],
         id="f8-zp"),
    Case("DequantizeLinear", [T((0, 4)), V(0.5, _S)], id="empty"),
    Case("DequantizeLinear", [T((2, 3)), V(0.5, _S), V(1, ml_dtypes.uint2)], opset=25,
         dtypes=["uint2"], id="uint2-opset25"),
]

CASES += [
    Case("DynamicQuantizeLinear", [T((3, 4))], outputs=3),
    Case("DynamicQuantizeLinear", [T((3, 4), low=0.5, high=9)], outputs=3, id="positive"),
    Case("DynamicQuantizeLinear", [T((3, 4), low=-9, high=-0.5)], outputs=3, id="negative"),
    Case("DynamicQuantizeLinear", [T((2, 2), values=[0, 0, 0, 0])], outputs=3, id="zeros"),
]

ERROR_CASES += [
    ErrorCase("QuantizeLinear", [T((2, 3, 4)), V([1.0, 2.0], _S)], match="per-axis"),
    ErrorCase("QuantizeLinear", [T((2, 6)), V([[1.0, 2.0]], _S)], {"block_size": 2},
              match="blocked"),
    ErrorCase("QuantizeLinear", [T((2, 3)), V(1.0, _S), V(1, np.uint8)],
              {"output_dtype": TensorProto.INT8}, match="output_dtype"),
    ErrorCase("QuantizeLinear", [T((2, 3)), V([1.0, 2.0, 3.0], _S), V([1, 2], np.uint8)],
              match="zero point"),
    ErrorCase("DequantizeLinear", [T((2, 3)), V(1.0, _S)], match="not supported"),
    # int2 arrived in opset 25.
    ErrorCase("QuantizeLinear", [T((2, 3)), V(1.0, _S), V(0, ml_dtypes.int2)], opset=23,
              match="not supported"),
    ErrorCase("DequantizeLinear", [T((2, 3), low=0, high=5), V(1.0, _S), V(1, np.uint8)],
              dtype="int8", match="zero point"),
    ErrorCase("DynamicQuantizeLinear", [T((2, 3))], dtype="float16",
              match="not supported"),
]
