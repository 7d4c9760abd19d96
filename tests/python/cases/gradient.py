"""Rows for src/ops/gradient.cc (domain ai.onnx.preview.training): model rows
whose `nodes` compute y from the node's inputs in0, in1 (the importer cuts
them out as the op's graph). onnx's reference evaluator has no Gradient:
each row's oracle is its derivative written in numpy."""
import numpy as np

from op_harness import Case, ErrorCase, N, T

TRAINING = {"opset": 1, "domain": "ai.onnx.preview.training"}


def _sum(x):
    return N("ReduceSum", x, "y", keepdims=0)


def _tanh_times(inputs, attrs, scope):
    x, z = inputs  # y = sum(tanh(x) * z)
    return [((1 - np.tanh(x.astype(np.float64)) ** 2) * z).astype(x.dtype)]


def _product(inputs, attrs, scope):
    a, b = inputs  # y = sum(a * b), b broadcast over a's leading axes
    return [np.broadcast_to(b, a.shape).copy(), a.reshape(-1, *b.shape).sum(0)]


def _exp_only(inputs, attrs, scope):
    x, z = inputs  # y = sum(exp(x)): z gets zeros
    return [np.exp(x), np.zeros_like(z)]


def _square(inputs, attrs, scope):
    x, = inputs  # y = sum(x * x): both uses of x add up
    return [2 * x]


def _matmul(inputs, attrs, scope):
    a, b = inputs  # y = sum(a @ b)
    ones = np.ones((a.shape[0], b.shape[1]), a.dtype)
    return [ones @ b.T, a.T @ ones]


CASES = [
    Case("Gradient", [T((2, 3)), T((2, 3))], {"xs": ["in0"], "zs": ["in1"], "y": "y"},
         nodes=[N("Tanh", "in0", "t"), N("Mul", "t in1", "tz"), _sum("tz")],
         dtypes=["float32", "float64"], oracle=_tanh_times, **TRAINING, id="xs-zs"),
    Case("Gradient", [T((2, 3)), T((2, 3))], {"xs": ["in0", "in1"], "y": "y"},
         nodes=[N("Mul", "in0 in1", "p"), _sum("p")], dtypes=["float32", "float64", "float16"],
         oracle=_product, **TRAINING, id="two-xs"),
    Case("Gradient", [T((2, 3)), T((3,))], {"xs": ["in0", "in1"], "y": "y"},
         nodes=[N("Mul", "in0 in1", "p"), _sum("p")], dtypes=["float32", "float64"],
         oracle=_product, **TRAINING, id="broadcast"),
    Case("Gradient", [T((2, 3)), T((3, 4))], {"xs": ["in0", "in1"], "y": "y"},
         nodes=[N("MatMul", "in0 in1", "p"), _sum("p")], dtypes=["float32", "float64"],
         oracle=_matmul, **TRAINING, id="matmul"),
    Case("Gradient", [T((2, 3))], {"xs": ["in0"], "y": "y"},
         nodes=[N("Mul", "in0 in0", "p"), _sum("p")], dtypes=["float32", "float64"],
         oracle=_square, **TRAINING, id="x-twice"),
    # y does not read in1: its gradient is zeros.
    Case("Gradient", [T((2, 3)), T((2, 3))], {"xs": ["in0", "in1"], "y": "y"},
         nodes=[N("Exp", "in0", "e"), _sum("e")], dtypes=["float32", "float64"],
         oracle=_exp_only, **TRAINING, id="unread-x"),
]

ERROR_CASES = [
    ErrorCase("Gradient", [T((2, 3))], {"xs": ["in0"], "y": "y"}, nodes=[_sum("in0")],
              dtype="int64", match="x 'in0' must be a float tensor to differentiate",
              **TRAINING),
    ErrorCase("Gradient", [T((2, 3))], {"xs": ["in0"], "zs": ["outer0"], "y": "y"},
              outer=[T((2, 3))], nodes=[N("Mul", "in0 outer0", "p"), _sum("p")],
              match=r"takes one input per name of xs and zs \(2\), the node has 1", **TRAINING),
]
