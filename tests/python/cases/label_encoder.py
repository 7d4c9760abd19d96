"""Rows for src/ops/label_encoder.cc (domain ai.onnx.ml, opsets 2 and 4).

onnx's reference evaluator maps no NaN (its dict lookup compares NaNs by
identity), so the NaN-key rule of the spec has no oracle row here."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

ML2 = {"opset": 2, "domain": "ai.onnx.ml"}
ML4 = {"opset": 4, "domain": "ai.onnx.ml"}
_NAMES = V(["Dori", "Amy", "Amy", "Sally", "Sally", "Bob"], object)
CASES = [
    Case("LabelEncoder", [_NAMES], {"keys_strings": ["Amy", "Sally"], "values_int64s": [5, 6],
                                    "default_int64": -1}, **ML2, id="str-int"),
    Case("LabelEncoder", [_NAMES], {"keys_strings": ["Amy", "Sally"], "values_floats": [0.5, 6]},
         **ML2, id="str-float-default"),
    Case("LabelEncoder", [T((3, 4), low=0, high=5)],
         {"keys_int64s": [1, 2, 3], "values_strings": ["one", "two", "three"]},
         dtypes=["int64"], **ML2, id="int-str-default"),
    Case("LabelEncoder", [T((3, 4), low=0, high=5)],
         {"keys_int64s": [1, 2, 3], "values_strings": ["one", "two", "three"],
          "default_string": "none"}, dtypes=["int64"], **ML2, id="int-str"),
    Case("LabelEncoder", [V([[0.5, 1.5], [2.5, -1.0]], np.float32)],
         {"keys_floats": [0.5, 2.5, -1.0], "values_floats": [10.0, 20.0, 30.0],
          "default_float": 7.0}, **ML2, id="float-float"),
    Case("LabelEncoder", [V(np.zeros((0, 3)), np.int64)],
         {"keys_int64s": [0], "values_int64s": [1]}, **ML2, id="empty"),
    # Opset 4: tensor attributes and the int16/int32/double types.
    Case("LabelEncoder", [_NAMES], {"keys_strings": ["Amy", "Sally"],
                                    "values_tensor": np.array([3, 4], np.int16),
                                    "default_tensor": np.array([42], np.int16)},
         **ML4, id="str-tensor-int16"),
    Case("LabelEncoder", [T((4, 5), low=0, high=4)],
         {"keys_tensor": np.array([0, 1, 2], np.int32),
          "values_tensor": np.array([0.25, -1.5, 8.0], np.float64),
          "default_tensor": np.array([-3.0], np.float64)},
         dtypes=["int32"], **ML4, id="int32-double"),
    Case("LabelEncoder", [T((4, 5), low=0, high=4)],
         {"keys_tensor": np.array([3, 1], np.int16),
          "values_tensor": np.array(["three", "one"], dtype=object),
          "default_tensor": np.array(["?"], dtype=object)},
         dtypes=["int16"], **ML4, id="int16-str"),
    Case("LabelEncoder", [V([0.5, 1.0, 2.0], np.float64)],
         {"keys_tensor": np.array([1.0, 2.0], np.float64), "values_int64s": [10, 20]},
         **ML4, id="double-int-default"),
    # A repeated key maps to its last value.
    Case("LabelEncoder", [T((2, 6), low=0, high=3)],
         {"keys_int64s": [1, 2, 1], "values_int64s": [10, 20, 30]}, dtypes=["int64"], **ML4,
         id="repeated-key"),
    Case("LabelEncoder", [T((300, 250), low=0, high=20)],
         {"keys_int64s": list(range(0, 20, 2)), "values_strings": [f"v{i}" for i in range(10)]},
         dtypes=["int64"], **ML4, id="large"),
]
ERROR_CASES = [
    ErrorCase("LabelEncoder", [V(["a"], object)],
              {"keys_strings": ["a"], "keys_int64s": [1], "values_int64s": [1]},
              match="exactly one of keys", **ML4),
    ErrorCase("LabelEncoder", [V(["a"], object)], {"keys_strings": ["a"]},
              match="exactly one of values", **ML4),
    ErrorCase("LabelEncoder", [V(["a"], object)],
              {"keys_strings": ["a", "b"], "values_int64s": [1]}, match="2 keys but 1 values",
              **ML4),
    ErrorCase("LabelEncoder", [V([1, 2], np.int64)],
              {"keys_strings": ["a"], "values_int64s": [1]}, match="keys are string", **ML4),
    ErrorCase("LabelEncoder", [V([1, 2], np.int64)],
              {"keys_int64s": [1], "values_int64s": [1],
               "default_tensor": np.array([1.0], np.float32)},
              match="default_tensor must hold one int64", **ML4),
    ErrorCase("LabelEncoder", [V([1, 2], np.int32)],
              {"keys_int64s": [1], "values_int64s": [1]}, match="not supported", **ML2),
    ErrorCase("LabelEncoder", [V([1, 2], np.int64)],
              {"keys_tensor": np.array([1], np.int64), "values_int64s": [1]},
              match="unknown attribute", **ML2),
]
