"""The op table: one row per case; test_ops.py runs each against onnx's
reference evaluator for every dtype the op claims (see op_harness.py).
Rows live in cases/<op file>.py, one module per file in src/ops; this module
gathers them: CASES are the rows called as tensor functions (test_ops.py,
test_grads.py and test_export.py drive them), MODEL_CASES the rows that run
as a one-node model (sequences, optionals, graph attributes, ops without a
tensor kernel: op_harness.is_model_row), which only test_ops.py drives."""
import importlib
import pkgutil

import cases
from op_harness import is_model_row

REQUIRED_OPS = """
Add Sub Mul Div Pow Mod Abs Neg Exp Log Sqrt Reciprocal Sin Cos Tan Asin Acos Atan Sinh Cosh
Tanh Asinh Acosh Atanh Ceil Floor Round Sign Erf IsNaN IsInf Equal Less Greater LessOrEqual
GreaterOrEqual And Or Xor Not Where Max Min Mean Sum Cast CastLike ReduceSum ReduceMean ReduceMax
ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare ArgMax ArgMin
MatMul Gemm Conv MaxPool AveragePool GlobalAveragePool GlobalMaxPool BatchNormalization Softmax
LogSoftmax Hardmax LayerNormalization Relu LeakyRelu PRelu Elu Selu Celu Sigmoid HardSigmoid
HardSwish Softplus Softsign ThresholdedRelu Clip Reshape Flatten Transpose Squeeze Unsqueeze Concat
Split Slice Gather Expand Tile Pad Shape Size ConstantOfShape Identity
Dropout SoftmaxCrossEntropyLoss NegativeLogLikelihoodLoss OneHot DepthToSpace SpaceToDepth
ScatterElements Scatter GatherElements NonZero Upsample Resize
""".split()

CASES = []
MODEL_CASES = []
ERROR_CASES = []
for _mod in pkgutil.iter_modules(cases.__path__):
    _m = importlib.import_module(f"cases.{_mod.name}")
    for _case in getattr(_m, "CASES", []):
        (MODEL_CASES if is_model_row(_case) else CASES).append(_case)
    ERROR_CASES += getattr(_m, "ERROR_CASES", [])
