"""Rows for src/ops/pad.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
# The oracle pads strings with the integer 0; the spec (and we) use "".
NOT_STRING = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64",
              "uint8", "uint16", "uint32", "uint64", "bool", "float8e4m3fn", "float8e4m3fnuz",
              "float8e5m2", "float8e5m2fnuz", "int4", "uint4", "float4e2m1"]
CASES = [
    Case("Pad", [T((200, 150)), V([3, 40, 5, 60])], attrs={"mode": "reflect"}, dtypes=F32,
         id="large"),
    Case("Pad", [T((2, 3)), V([1, 0, 2, 3])], dtypes=NOT_STRING),
    Case("Pad", [T((2, 3)), V([1, 2, 0, 1]), T((), values=[1.5])],
         dtypes=[d for d in ["float32", "float16", "bfloat16", "float64", "int8", "int32",
                             "int64", "uint8", "uint64", "bool"]], id="value"),
    Case("Pad", [T((2, 3)), V([0, 1, 1, 0]), V(["x"], object)], dtypes=["string"],
         id="string_value"),
    Case("Pad", [T((3, 4)), V([2, 3, 2, 1])], attrs={"mode": "reflect"}, id="reflect"),
    Case("Pad", [T((3, 4)), V([5, 7, 4, 6])], attrs={"mode": "reflect"}, dtypes=F32,
         id="reflect_wide"),
    Case("Pad", [T((3, 4)), V([2, 3, 2, 1])], attrs={"mode": "edge"}, id="edge"),
    Case("Pad", [T((3, 4)), V([2, 5, 4, 1])], attrs={"mode": "wrap"}, id="wrap"),
    Case("Pad", [T((1, 4)), V([2, 1, 1, 0])], attrs={"mode": "reflect"}, dtypes=F32,
         id="reflect_size1"),
    Case("Pad", [T((2, 3, 4)), V([1, 2, 0, 1]), None, V([0, -1])], dtypes=F32, id="axes"),
    Case("Pad", [T((2, 3, 4)), V([1, 2, 1, 3]), None, V([2, 1], np.int32)],
         attrs={"mode": "edge"}, dtypes=F32, id="axes_int32_edge"),
    Case("Pad", [T((0, 3)), V([1, 0, 1, 0])], dtypes=F32, id="empty_in"),
    Case("Pad", [T((0, 3)), V([0, 1, 0, 1])], attrs={"mode": "edge"}, dtypes=F32,
         id="empty_edge"),
    Case("Pad", [T((5,)), V([2, 3])], attrs={"mode": "reflect"}, dtypes=F32, id="1d_reflect"),
    Case("Pad", [T((2, 3)), V([1, 1, 1, 1])], attrs={"mode": "edge"}, opset=11, id="opset11"),
    Case("Pad", [T((2, 3)), V([1, 1, 1, 1]), T((), values=[2])], opset=13, dtypes=F32,
         id="opset13"),
    Case("Pad", [T((2, 3, 4)), V([1, 1]), None, V([1])], attrs={"mode": "reflect"}, opset=18,
         dtypes=F32, id="opset18"),
    Case("Pad", [T((2, 3, 4)), V([1, 2, 1, 3]), None, V([2, 1], np.int32)],
         attrs={"mode": "reflect"}, dtypes=["float32", "float64"], id="axes_reflect_f64"),
]
ERROR_CASES = [
    ErrorCase("Pad", [T((2, 3)), V([1, 1])], match="2 entries per padded axis"),
    ErrorCase("Pad", [T((2, 3)), V([1, 1, 1, 1])], attrs={"mode": "mirror"}, match="mode"),
    ErrorCase("Pad", [T((2, 3)), V([-2, 0, -1, 0])], match="below size 0"),
    ErrorCase("Pad", [T((0, 3)), V([1, 0, 0, 0])], attrs={"mode": "reflect"},
              match="empty axis"),
    ErrorCase("Pad", [T((2, 3)), V([1, 1, 1, 1]), T((2,))], match="one element"),
    ErrorCase("Pad", [T((2, 3)), V([1, 1, 1, 1]), V([1], "int32")], match="same dtype"),
]

# Opset 2: pads and the constant as attributes.
CASES += [
    Case("Pad", [T((2, 3, 4))], {"pads": [0, 1, 2, 0, 2, 1], "value": 1.5}, opset=2,
         id="opset2_constant"),
    Case("Pad", [T((1, 2, 3, 4))], {"pads": [0, 0, 2, 1, 0, 0, 1, 3], "mode": "reflect"},
         opset=2, id="opset2_reflect"),
    Case("Pad", [T((1, 2, 3, 4))], {"pads": [0, 0, 2, 1, 0, 0, 1, 3], "mode": "edge"},
         opset=2, id="opset2_edge"),
    Case("Pad", [T((0, 3))], {"pads": [1, 0, 0, 1]}, opset=2, id="opset2_empty"),
]
ERROR_CASES += [
    ErrorCase("Pad", [T((2, 3))], {"pads": [1, 1]}, opset=2, match="2 entries per padded axis"),
    ErrorCase("Pad", [T((2, 3))], opset=2, match="required attribute 'pads'"),
]
