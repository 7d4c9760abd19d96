"""Rows for src/ops/binarizer.cc (domain ai.onnx.ml)."""
from op_harness import Case, ErrorCase, T

ML = {"opset": 1, "domain": "ai.onnx.ml"}
CASES = [
    Case("Binarizer", [T((3, 4))], **ML),
    Case("Binarizer", [T((3, 4))], {"threshold": 0.5}, **ML, id="threshold"),
    Case("Binarizer", [T((2, 5), values=[-1, 0, 1, 2, 3, 2, 1, 0, -1, -2])], {"threshold": 1.0},
         **ML, id="at-threshold"),
    Case("Binarizer", [T(())], {"threshold": -1.5}, **ML, id="scalar"),
    Case("Binarizer", [T((0, 3))], **ML, id="empty"),
    Case("Binarizer", [T((300, 250))], {"threshold": 0.25}, **ML, id="large"),
]
ERROR_CASES = [
    ErrorCase("Binarizer", [T((3,))], dtype="string", match="not supported", **ML),
    ErrorCase("Binarizer", [T((3,))], dtype="int8", match="not supported", **ML),
]
