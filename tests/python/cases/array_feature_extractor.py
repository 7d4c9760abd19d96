"""Rows for src/ops/array_feature_extractor.cc (domain ai.onnx.ml)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

ML = {"opset": 1, "domain": "ai.onnx.ml"}
CASES = [
    Case("ArrayFeatureExtractor", [T((3, 4)), V([0, 2])], **ML),
    Case("ArrayFeatureExtractor", [T((3, 4)), V([3, 3, 1])], **ML, id="repeated"),
    # A 1-D X gives one row; indices of any shape are read flat.
    Case("ArrayFeatureExtractor", [T((5,)), V([[1, 4]])], **ML, id="vector"),
    Case("ArrayFeatureExtractor", [T((2, 3, 4)), V([[0, 1], [3, 2]])], **ML, id="3d"),
    Case("ArrayFeatureExtractor", [T((0, 4)), V([1])], **ML, id="empty"),
    Case("ArrayFeatureExtractor", [T((300, 250)), V(np.arange(0, 250, 3))], **ML, id="large"),
]
ERROR_CASES = [
    ErrorCase("ArrayFeatureExtractor", [T((3, 4)), V([0, 4])], match="out of range", **ML),
    ErrorCase("ArrayFeatureExtractor", [T((3, 4)), V([-1])], match="out of range", **ML),
    ErrorCase("ArrayFeatureExtractor", [T((3, 4)), V([0], np.int32)], match="not supported",
              **ML),
    ErrorCase("ArrayFeatureExtractor", [T(()), V([0])], match="at least one axis", **ML),
    ErrorCase("ArrayFeatureExtractor", [T((3, 4)), V([0])], dtype="bool", match="not supported",
              **ML),
]
