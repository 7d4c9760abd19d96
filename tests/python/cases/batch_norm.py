"""Rows for src/ops/batch_norm.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []


def _bn(x, c, var_low=0.1):
    return [T(x), T((c,)), T((c,)), T((c,)), T((c,), low=var_low, high=2.0)]


CASES += [
    Case("BatchNormalization", _bn((2, 3, 4, 5), 3)),
    Case("BatchNormalization", _bn((2, 3), 3), id="2d"),
    Case("BatchNormalization", _bn((2, 3, 4), 3), id="3d"),
    Case("BatchNormalization", _bn((1, 2, 2, 2, 2), 2), id="5d"),
    Case("BatchNormalization", _bn((4,), 1), id="1d"),
    Case("BatchNormalization", _bn((0, 3, 2, 2), 3), id="empty"),
    Case("BatchNormalization", _bn((2, 3, 4, 5), 3), {"epsilon": 0.5}, id="epsilon"),
    Case("BatchNormalization", _bn((8, 16, 7, 7), 16), id="conv-like"),
    # Training: batch statistics and updated running statistics.
    Case("BatchNormalization", _bn((2, 3, 4, 5), 3), {"training_mode": 1}, outputs=3, id="train"),
    Case("BatchNormalization", _bn((4, 3), 3), {"training_mode": 1, "momentum": 0.5}, outputs=3,
         id="train-2d"),
    Case("BatchNormalization", _bn((2, 3, 4, 5), 3), {"training_mode": 1}, id="train-y-only"),
    Case("BatchNormalization", _bn((2, 3, 4, 5), 3), opset=14, id="opset14"),
    Case("BatchNormalization", _bn((2, 3, 4, 5), 3), {"training_mode": 1}, outputs=3, opset=14,
         id="opset14-train"),
]

# Opset 9..13 (inference with one output). onnx's reference evaluator for
# this version normalizes with momentum-blended statistics, so these rows
# use input statistics equal to X's batch statistics: both readings agree.
_X = [1, 3, 0, -2, 1, 3, 2, 0]  # (2, 2, 2): channel 0 mean 2 var 1; channel 1 mean 0 var 2
CASES += [
    Case("BatchNormalization", [T((2, 2, 2), values=_X), T((2,), values=[1.5, -0.5]),
                                T((2,), values=[0.25, 1]), T((2,), values=[2, 0]),
                                T((2,), values=[1, 2])], opset=_op, id=f"opset{_op}")
    for _op in (9, 11, 13)
]

# Gradient-check sizes (the rows above with at most 300 elements are checked
# too): channels of a conv net, training and inference.
CASES += [
    Case("BatchNormalization", _bn((3, 4, 3, 3), 4), {"training_mode": 1}, id="grad-train"),
    Case("BatchNormalization", _bn((3, 4, 3, 3), 4), {"epsilon": 1e-3}, id="grad-infer"),
    Case("BatchNormalization", _bn((5, 2, 7), 2), {"training_mode": 1, "epsilon": 0.1},
         outputs=3, id="grad-train-1d"),
]

ERROR_CASES += [
    ErrorCase("BatchNormalization", [T((2, 3, 4)), T((4,)), T((3,)), T((3,)), T((3,))],
              match="shape"),
    ErrorCase("BatchNormalization", [T(()), T((1,)), T((1,)), T((1,)), T((1,))], match="rank"),
    ErrorCase("BatchNormalization", [T((2, 3)), T((3,)), T((3,)), T((3,))], match="inputs"),
]

# Opset 6 (`spatial`, `is_test`), inference. (The oracle's opsets 7 and 8
# return a nested tuple without is_test, so opset 7 has no row.)
CASES += [
    Case("BatchNormalization",
         [T((2, 3, 4, 5)), T((3,)), T((3,)), T((3,)), T((3,), positive=True)],
         {"is_test": 1, "epsilon": 1e-3, "spatial": 1}, opset=6, id="opset6_is_test"),
]
ERROR_CASES += [
    ErrorCase("BatchNormalization", [T((2, 3, 4)), T((3,)), T((3,)), T((3,)), T((3,))],
              {"spatial": 0}, opset=7, match="spatial=0"),
]
