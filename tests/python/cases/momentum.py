"""Rows for src/ops/momentum.cc (domain ai.onnx.preview.training)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

TRAINING = {"opset": 1, "domain": "ai.onnx.preview.training"}
R, STEP = V(0.1, np.float32), V(3, np.int64)
STANDARD = {"alpha": 0.95, "beta": 0.85, "mode": "standard", "norm_coefficient": 0.001}
NESTEROV = {**STANDARD, "mode": "nesterov"}
CASES = [
    Case("Momentum", [R, STEP, T((3, 4)), T((3, 4)), T((3, 4))], STANDARD, outputs=2,
         **TRAINING),
    Case("Momentum", [R, STEP, T((3, 4)), T((3, 4)), T((3, 4))], NESTEROV, outputs=2,
         **TRAINING, id="nesterov"),
    # The first step (T = 0) takes the whole gradient, whatever beta. A float64
    # R: onnx's reference then returns float64 (numpy promotes R * V), so the
    # row sweeps float64 only; we return X's dtype, as the spec says.
    Case("Momentum", [V(0.5, np.float64), V(0, np.int64), T((5,)), T((5,)), T((5,))], STANDARD,
         outputs=2, dtypes=["float64"], **TRAINING, id="first-step"),
    Case("Momentum", [R, V(0, np.int64), T((5,)), T((5,)), T((5,))], NESTEROV, outputs=2,
         **TRAINING, id="nesterov-first-step"),
    Case("Momentum", [R, STEP, T((2, 3)), T((4,)), T((2, 3)), T((4,)), T((2, 3)), T((4,))],
         STANDARD, outputs=4, **TRAINING, id="multiple"),
    Case("Momentum", [R, STEP, T((2, 3)), T((4,)), T((2, 3)), T((4,)), T((2, 3)), T((4,))],
         NESTEROV, outputs=4, **TRAINING, id="nesterov-multiple"),
    Case("Momentum", [R, STEP, T((0, 2)), T((0, 2)), T((0, 2))], STANDARD, outputs=2,
         **TRAINING, id="empty"),
    Case("Momentum", [R, STEP, T((300, 250)), T((300, 250)), T((300, 250))], NESTEROV,
         outputs=2, **TRAINING, id="large"),
]
ERROR_CASES = [
    ErrorCase("Momentum", [R, STEP, T((3,)), T((3,)), T((3,))], {**STANDARD, "mode": "adam"},
              match="mode must be 'standard' or 'nesterov'", **TRAINING),
    ErrorCase("Momentum", [R, STEP, T((3,)), T((3,)), T((3,)), T((3,))], STANDARD,
              match="3 tensors per parameter", **TRAINING),
    ErrorCase("Momentum", [R, STEP, T((3,)), T((3,)), T((3,))], {"alpha": 0.9},
              match="required attribute", **TRAINING),
]
