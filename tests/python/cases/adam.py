"""Rows for src/ops/adam.cc (domain ai.onnx.preview.training).

onnx's reference evaluator returns float64 from one-parameter Adam with
T > 0 whatever the inputs (numpy promotes through the bias correction) and
float32 from multi-parameter Adam whatever the inputs (it casts): the rows
sweep the dtype the reference keeps. We return X's dtype, as the spec's type
constraint says."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

TRAINING = {"opset": 1, "domain": "ai.onnx.preview.training"}
R, STEP = V(0.1, np.float32), V(3, np.int64)
ATTRS = {"alpha": 0.95, "beta": 0.85, "epsilon": 1e-2, "norm_coefficient": 0.001}


def adam(shapes):
    """X1..Xn, G1..Gn, V1..Vn, H1..Hn (H non-negative) for parameters of these shapes."""
    return ([T(s) for s in shapes] * 3) + [T(s, positive=True) for s in shapes]


CASES = [
    Case("Adam", [R, STEP, *adam([(3, 4)])], ATTRS, outputs=3, dtypes=["float64"], **TRAINING),
    Case("Adam", [R, V(0, np.int64), *adam([(3, 4)])], ATTRS, outputs=3,
         dtypes=["float32", "float64"], **TRAINING, id="first-step"),
    Case("Adam", [V(0.01, np.float64), STEP, *adam([(5,)])],
         {**ATTRS, "norm_coefficient_post": 0.1}, outputs=3, dtypes=["float64"], **TRAINING,
         id="post"),
    Case("Adam", [R, STEP, *adam([(5,)])], outputs=3, dtypes=["float64"], **TRAINING,
         id="defaults"),
    Case("Adam", [R, STEP, *adam([(2, 3), (4,)])], ATTRS, outputs=6, dtypes=["float32"],
         **TRAINING, id="multiple"),
    Case("Adam", [R, STEP, *adam([(3, 4)])], ATTRS, outputs=2, dtypes=["float64"], **TRAINING,
         id="x-v-only"),
    Case("Adam", [R, STEP, *adam([(0, 3)])], ATTRS, outputs=3, dtypes=["float64"], **TRAINING,
         id="empty"),
    Case("Adam", [R, STEP, *adam([(300, 250)])], ATTRS, outputs=3, dtypes=["float64"],
         **TRAINING, id="large"),
]
ERROR_CASES = [
    ErrorCase("Adam", [R, STEP, T((3,)), T((3,)), T((3,))], match="4 tensors per parameter",
              **TRAINING),
    ErrorCase("Adam", [R, STEP, T((3,)), T((3,)), T((3,)), T((2,))],
              match="must have the shape of X1", **TRAINING),
    ErrorCase("Adam", [R, STEP, T((3,)), T((3,)), T((3,)), T((3,))], dtype="int64",
              match="not supported for input 2", **TRAINING),
]
