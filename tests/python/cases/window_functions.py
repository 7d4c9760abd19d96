"""Rows for src/ops/window_functions.cc."""
import numpy as np
from onnx import TensorProto

from op_harness import Case, ErrorCase, V

CASES = []
ERROR_CASES = []

for _op in ["HannWindow", "HammingWindow", "BlackmanWindow"]:
    CASES += [
        Case(_op, [V(10, np.int64)]),
        Case(_op, [V(10, np.int32)], {"periodic": 0}, id="symmetric"),
        Case(_op, [V(7, np.int64)], {"output_datatype": TensorProto.DOUBLE}, id="double"),
        Case(_op, [V(7, np.int64)], {"output_datatype": TensorProto.FLOAT16}, id="half",
             rtol=1e-3, atol=1e-3, why="float16 output of a float32 oracle computation"),
        Case(_op, [V(0, np.int64)], id="empty"),
    ]

CASES += [
    Case("MelWeightMatrix", [V(8, np.int64), V(16, np.int64), V(8192, np.int64),
                             V(0.0, np.float32), V(4096.0, np.float32)]),
    Case("MelWeightMatrix", [V(5, np.int32), V(64, np.int32), V(16000, np.int32),
                             V(100.0, np.float64), V(7000.0, np.float64)],
         {"output_datatype": TensorProto.DOUBLE}, id="double"),
    Case("MelWeightMatrix", [V(0, np.int64), V(16, np.int64), V(8192, np.int64),
                             V(0.0, np.float32), V(4096.0, np.float32)], id="empty"),
]

ERROR_CASES += [
    ErrorCase("HannWindow", [V(-1, np.int64)], match="size"),
    ErrorCase("HammingWindow", [V([2, 3], np.int64)], match="scalar"),
    ErrorCase("MelWeightMatrix", [V(8, np.int64), V(0, np.int64), V(8192, np.int64),
                                  V(0.0, np.float32), V(4096.0, np.float32)],
              match="dft_length"),
]
