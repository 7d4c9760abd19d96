"""Rows for src/ops/non_max_suppression.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_BOXES = [[[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9],
           [0.0, 10.0, 1.0, 11.0], [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]]]
_SCORES = [[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]]
_F = np.float32


def _nms(boxes, scores, max_out=None, iou=None, score=None):
    ins = [V(boxes, _F), V(scores, _F)]
    for v, dt in [(max_out, np.int64), (iou, _F), (score, _F)]:
        ins.append(None if v is None else V(v, dt))
    while ins[-1] is None:
        ins.pop()
    return ins


_rng = np.random.default_rng(5)
_corners = _rng.uniform(0, 10, (2, 20, 2))
_RAND_BOXES = np.concatenate([_corners, _corners + _rng.uniform(0.5, 4, (2, 20, 2))], axis=-1)
_RAND_SCORES = _rng.uniform(0, 1, (2, 3, 20))

CASES += [
    Case("NonMaxSuppression", _nms(_BOXES, _SCORES, [3], [0.5], [0.0]), id="iou"),
    Case("NonMaxSuppression", _nms(_BOXES, _SCORES, [3], [0.5], [0.4]), id="score"),
    Case("NonMaxSuppression", _nms(_BOXES, _SCORES, [2], [0.5]), id="limit"),
    # An absent max_output_boxes_per_class means 0 (no boxes); the oracle
    # cannot run without it, so the row passes an explicit 0.
    Case("NonMaxSuppression", _nms(_BOXES, _SCORES, [0], [0.5]), id="zero-limit"),
    Case("NonMaxSuppression", _nms(_BOXES, [[[0.5] * 6]], [6], [0.5]), id="ties"),
    Case("NonMaxSuppression", _nms([[[0.5, 0.5, 1.0, 1.0], [0.5, 0.6, 1.0, 1.0],
                                     [0.5, 5.0, 1.0, 1.0]]], [[[0.9, 0.8, 0.7]]], [3], [0.5]),
         {"center_point_box": 1}, id="center"),
    Case("NonMaxSuppression", _nms(_RAND_BOXES, _RAND_SCORES, [5], [0.3], [0.2]), id="random"),
    Case("NonMaxSuppression", _nms(_RAND_BOXES, _RAND_SCORES, [20], [0.3]), opset=10,
         id="opset10"),
    Case("NonMaxSuppression", _nms(np.zeros((1, 0, 4)), np.zeros((1, 2, 0)), [3], [0.5]),
         id="empty"),
]

ERROR_CASES += [
    ErrorCase("NonMaxSuppression", [V(np.zeros((1, 3, 5)), _F), V(np.zeros((1, 1, 3)), _F)],
              match="boxes must be"),
    ErrorCase("NonMaxSuppression", _nms(_BOXES, _SCORES, [3]), {"center_point_box": 2},
              match="center_point_box"),
]
