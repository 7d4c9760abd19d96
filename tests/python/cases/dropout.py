"""Rows for src/ops/dropout.cc. The evaluator can only check the
deterministic paths (inference, or training with ratio 0); the random
training path is checked by tests/python/test_dropout.py."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F32 = ["float32"]
TRAIN = V(True, np.bool_)
INFER = V(False, np.bool_)
CASES = [
    Case("Dropout", [T((3, 4))]),
    Case("Dropout", [T((3, 4))], outputs=2, id="mask"),
    Case("Dropout", [T((2, 3, 4)), V(0.3, np.float32)], outputs=2, id="ratio"),
    Case("Dropout", [T((2, 3, 4)), V(0.3, np.float32), INFER], outputs=2, id="inference"),
    Case("Dropout", [T((2, 3, 4)), V(0.0, np.float32), TRAIN], outputs=2, id="train_ratio0"),
    Case("Dropout", [T((2, 3)), None, INFER], attrs={"seed": 3}, id="seed_inference"),
    # The evaluator's training path promotes float8 to float32: floats only.
    Case("Dropout", [T((0, 3)), V(0.5, np.float32), TRAIN], outputs=2,
         dtypes=["float16", "bfloat16", "float32", "float64"], id="empty_train"),
    Case("Dropout", [T((0, 3))], outputs=2, id="empty"),
    Case("Dropout", [T(())], outputs=2, id="scalar"),
    Case("Dropout", [T((4, 5)), V(0.2, np.float64)], dtypes=["float16", "float64"],
         id="f64_ratio"),
    Case("Dropout", [T((3, 4)), V(0.2, np.float16), INFER], opset=13, id="opset13"),
    Case("Dropout", [T((3, 4)), V(0.2, np.float32), INFER], opset=12, outputs=2, id="opset12"),
    Case("Dropout", [T((3, 4))], attrs={"ratio": 0.2}, opset=10, outputs=2, id="opset10"),
    # Opset 7's mask has the data's type; the evaluator gives bool, so only
    # the output is compared here (test_dropout.py checks the mask).
    Case("Dropout", [T((3, 4))], attrs={"ratio": 0.2}, opset=7, id="opset7"),
]
ERROR_CASES = [
    ErrorCase("Dropout", [T((3, 4)), V(1.0, np.float32)], match="outside"),
    ErrorCase("Dropout", [T((3, 4)), V(-0.1, np.float32)], match="outside"),
    ErrorCase("Dropout", [T((3, 4)), V([0.1, 0.2], np.float32)], match="scalar"),
    ErrorCase("Dropout", [T((3, 4)), V(0.1, np.float32), V([True, False], np.bool_)],
              match="scalar"),
    ErrorCase("Dropout", [T((3, 4)), V(0.1, np.float32), V(1, np.int64)],
              match="not supported for input 2"),
    ErrorCase("Dropout", [T((3, 4))], dtype="int32", match="not supported for input 0"),
]
