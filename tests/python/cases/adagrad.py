"""Rows for src/ops/adagrad.cc (domain ai.onnx.preview.training)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

TRAINING = {"opset": 1, "domain": "ai.onnx.preview.training"}
R, STEP = V(0.1, np.float32), V(3, np.int64)
ATTRS = {"decay_factor": 0.1, "epsilon": 1e-5, "norm_coefficient": 0.001}
CASES = [
    Case("Adagrad", [R, STEP, T((3, 4)), T((3, 4)), T((3, 4), positive=True)], ATTRS,
         outputs=2, **TRAINING),
    Case("Adagrad", [V(0.5, np.float64), V(0, np.int64), T((5,)), T((5,)), T((5,), positive=True)],
         outputs=2, **TRAINING, id="defaults-first-step"),
    # Two parameters: X1 X2 G1 G2 H1 H2 -> X1' X2' H1' H2'.
    Case("Adagrad", [R, STEP, T((2, 3)), T((4,)), T((2, 3)), T((4,)), T((2, 3), positive=True),
                     T((4,), positive=True)], ATTRS, outputs=4, **TRAINING, id="multiple"),
    # Only the new X asked for.
    Case("Adagrad", [R, STEP, T((3, 4)), T((3, 4)), T((3, 4), positive=True)], ATTRS,
         outputs=1, **TRAINING, id="x-only"),
    Case("Adagrad", [R, STEP, T((0, 4)), T((0, 4)), T((0, 4))], ATTRS, outputs=2, **TRAINING,
         id="empty"),
    Case("Adagrad", [R, STEP, T((300, 250)), T((300, 250)), T((300, 250), positive=True)],
         ATTRS, outputs=2, **TRAINING, id="large"),
]
ERROR_CASES = [
    ErrorCase("Adagrad", [R, STEP, T((3,)), T((3,))], match="3 tensors per parameter",
              **TRAINING),
    ErrorCase("Adagrad", [R, STEP, T((3,)), T((4,)), T((3,))], match="must have the shape of X1",
              **TRAINING),
    ErrorCase("Adagrad", [V([0.1, 0.2], np.float32), STEP, T((3,)), T((3,)), T((3,))],
              match="R and T must be scalars", **TRAINING),
    ErrorCase("Adagrad", [R, V(1.0, np.float32), T((3,)), T((3,)), T((3,))],
              match="not supported for input 1", **TRAINING),
    ErrorCase("Adagrad", [R, STEP, T((3,)), T((3,)), T((3,))], dtype="float16",
              match="not supported for input 2", **TRAINING),
]
