"""Rows for src/ops/nll_loss.cc (NegativeLogLikelihoodLoss,
SoftmaxCrossEntropyLoss)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

F64 = ["float64"]
W3 = V([0.5, 2.0, 1.5], np.float64)
W4 = V([0.2, 1.0, 3.0, 0.7], np.float64)
CASES = []
for _op in ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]:
    # SoftmaxCrossEntropyLoss's scores may be any value; NLL inputs are
    # log-probabilities in practice (negative), any value works.
    CASES += [
        Case(_op, [T((4, 3)), V([0, 2, 1, 2])]),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2])], {"reduction": "sum"}, id="sum"),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2])], {"reduction": "none"}, id="none"),
        Case(_op, [T((2, 4, 3, 2)), V([[[0, 3], [1, 2], [3, 3]], [[2, 2], [0, 1], [1, 0]]])],
             id="nd"),
        Case(_op, [T((2, 4, 3)), V([[0, 3, 1], [2, 2, 0]], np.int32)], {"reduction": "none"},
             id="nd_int32_none"),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2]), W3], dtypes=F64, id="weight_mean"),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2]), W3], {"reduction": "sum"}, dtypes=F64,
             id="weight_sum"),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2]), W3], {"reduction": "none"}, dtypes=F64,
             id="weight_none"),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2]), V([0.5, 2.0, 1.5], np.float32)], dtypes=["float32"],
             id="weight_f32"),
        Case(_op, [T((4, 3)), V([0, -100, 1, 2])], {"ignore_index": -100}, id="ignore_mean"),
        Case(_op, [T((4, 3)), V([0, 1, 1, 2])], {"ignore_index": 1, "reduction": "sum"},
             id="ignore_sum"),
        Case(_op, [T((4, 3)), V([0, 1, 1, 2])], {"ignore_index": 1, "reduction": "none"},
             id="ignore_none"),
        Case(_op, [T((2, 4, 3)), V([[0, 3, 1], [2, -1, 0]]), W4], {"ignore_index": -1},
             dtypes=F64, id="ignore_weight_nd"),
        # The evaluator reshapes to [N, C, -1] unless the rank is 3, which
        # numpy cannot do for an empty array: empty rows are 3-D.
        Case(_op, [T((0, 3, 2)), V(np.zeros((0, 2), np.int64))], {"reduction": "sum"},
             id="empty_sum"),
        Case(_op, [T((0, 3, 2)), V(np.zeros((0, 2), np.int64))], {"reduction": "none"},
             id="empty_none"),
        Case(_op, [T((2, 3, 0)), V(np.zeros((2, 0), np.int64))], id="empty_mean"),
        Case(_op, [T((4, 3)), V([0, 2, 1, 2])], opset=12, dtypes=["float32", "float64"],
             id="opset12"),
    ]
CASES += [
    Case("SoftmaxCrossEntropyLoss", [T((4, 3)), V([0, 2, 1, 2])], outputs=2, id="log_prob"),
    Case("SoftmaxCrossEntropyLoss", [T((2, 4, 3)), V([[0, 3, 1], [2, 1, 0]]), W4],
         {"reduction": "none"}, outputs=2, dtypes=F64, id="log_prob_weight"),
    Case("SoftmaxCrossEntropyLoss", [T((8, 50), low=-20, high=20), V(list(range(0, 50, 7)))],
         dtypes=["float32", "float64"], id="wide"),
    Case("NegativeLogLikelihoodLoss", [T((4, 3)), V([0, 2, 1, 2])], opset=13,
         dtypes=["float32", "float64"], id="opset13"),
]
ERROR_CASES = []
for _op in ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]:
    ERROR_CASES += [
        ErrorCase(_op, [T((4,)), V([0, 1, 1, 2])], match="rank >= 2"),
        ErrorCase(_op, [T((4, 3)), V([0, 1, 1])], match="target must have shape"),
        ErrorCase(_op, [T((4, 3)), V([0, 1, 1, 2]), T((4,))], match="weight must have shape"),
        ErrorCase(_op, [T((4, 3)), V([0, 1, 3, 2])], match="out of range"),
        ErrorCase(_op, [T((4, 3)), V([0, 1, -1, 2])], match="out of range"),
        ErrorCase(_op, [T((4, 3)), V([0, 1, 1, 2])], {"reduction": "avg"}, match="reduction"),
        ErrorCase(_op, [T((4, 3)), V([0.0, 1.0, 1.0, 2.0], np.float32)],
                  match="not supported for input 1"),
        ErrorCase(_op, [T((4, 3)), V([0, 1, 1, 2])], dtype="int32", match="not supported"),
    ]
