"""Rows for src/ops/recurrent.cc (RNN, GRU, LSTM).

onnx's reference evaluator ignores sequence_lens, clip and most activations
(and cannot run an empty sequence); test_recurrent.py checks those against
onnxruntime."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_SEQ, _BATCH, _IN, _H = 4, 3, 3, 3


def _inputs(gates, dirs=1, bias=True, state=False, cell=False, peep=False, layout=0,
            seq=_SEQ, batch=_BATCH):
    x = (seq, batch, _IN) if layout == 0 else (batch, seq, _IN)
    st = (dirs, batch, _H) if layout == 0 else (batch, dirs, _H)
    ins = [T(x, low=-1, high=1), T((dirs, gates * _H, _IN), low=-0.5, high=0.5),
           T((dirs, gates * _H, _H), low=-0.5, high=0.5)]
    ins.append(T((dirs, 2 * gates * _H), low=-0.5, high=0.5) if bias else None)
    ins.append(None)  # sequence_lens: see test_recurrent.py
    ins.append(T(st, low=-1, high=1) if state or cell or peep else None)
    if gates == 4:
        ins.append(T(st, low=-1, high=1) if cell or peep else None)
        ins.append(T((dirs, 3 * _H), low=-0.5, high=0.5) if peep else None)
    while ins[-1] is None:
        ins.pop()
    return ins


for _op, _g, _n in [("RNN", 1, 2), ("GRU", 3, 2), ("LSTM", 4, 3)]:
    CASES += [
        Case(_op, _inputs(_g, bias=False), {"hidden_size": _H}, outputs=_n, id="defaults"),
        Case(_op, _inputs(_g), {"hidden_size": _H}, outputs=_n, id="bias"),
        Case(_op, _inputs(_g, state=True), {"direction": "reverse"}, outputs=_n, id="reverse"),
        Case(_op, _inputs(_g, dirs=2, state=True), {"direction": "bidirectional"}, outputs=_n,
             id="bidirectional"),
        Case(_op, _inputs(_g, dirs=2, state=True, layout=1),
             {"direction": "bidirectional", "layout": 1}, outputs=_n, id="layout1"),
        Case(_op, _inputs(_g), outputs=1, id="y-only"),
        Case(_op, _inputs(_g, batch=0), outputs=_n, id="empty-batch"),
        Case(_op, _inputs(_g, state=True), outputs=_n, opset=7, id="opset7"),
        Case(_op, _inputs(_g, state=True), outputs=_n, opset=14, id="opset14"),
    ]

CASES += [
    Case("LSTM", _inputs(4, peep=True), outputs=3, id="peepholes"),
    Case("LSTM", _inputs(4, dirs=2, peep=True), {"direction": "bidirectional"}, outputs=3,
         id="peepholes-bidirectional"),
    Case("GRU", _inputs(3, state=True), {"linear_before_reset": 1}, outputs=2,
         id="linear-before-reset"),
    Case("GRU", _inputs(3, dirs=2, state=True),
         {"linear_before_reset": 1, "direction": "bidirectional"}, outputs=2,
         id="linear-before-reset-bidirectional"),
    Case("GRU", _inputs(3, state=True), {"linear_before_reset": 1}, outputs=2, opset=3,
         dtypes=["float32"], id="opset3"),
    Case("RNN", _inputs(1), {"activations": ["Affine"], "activation_alpha": [0.5],
                             "activation_beta": [0.25]}, outputs=2, id="affine"),
]

ERROR_CASES += [
    ErrorCase("RNN", [T((4, 3, 5)), T((1, 6, 5)), T((1, 6, 7))], match="R"),
    ErrorCase("LSTM", [T((4, 3, 5)), T((1, 24, 5)), T((1, 24, 6))], {"direction": "sideways"},
              match="direction"),
    ErrorCase("GRU", [T((4, 3, 5)), T((1, 18, 5)), T((1, 18, 6))], {"activations": ["Foo", "Bar"]},
              match="activation"),
    ErrorCase("GRU", [T((4, 3, 5)), T((2, 18, 5)), T((2, 18, 6))], match="W must be"),
    ErrorCase("RNN", [T((4, 3, 5)), T((1, 6, 5)), T((1, 6, 6)), None, V([1, 2], np.int32)],
              match="sequence_lens"),
]

# Small rows for the gradient check (test_grads.py skips rows of more than
# 300 input elements): every option of each cell, through output Y.
_SMALL = dict(seq=3, batch=2)
for _op, _g in [("RNN", 1), ("GRU", 3), ("LSTM", 4)]:
    _n = 3 if _op == "LSTM" else 2
    _gin = dict(_SMALL)
    CASES += [
        Case(_op, _inputs(_g, **_gin), {"hidden_size": _H}, outputs=_n, id="grad-bias",
             dtypes=["float64"]),
        Case(_op, _inputs(_g, dirs=2, state=True, layout=1, **_gin),
             {"direction": "bidirectional", "layout": 1}, outputs=_n, id="grad-bidirectional",
             dtypes=["float64"]),
        Case(_op, _inputs(_g, state=True, **_gin), {"direction": "reverse"}, outputs=_n,
             id="grad-reverse", dtypes=["float64"]),
    ]
CASES += [
    Case("LSTM", _inputs(4, peep=True, **_SMALL), outputs=3, id="grad-peepholes",
         dtypes=["float64"]),
    Case("GRU", _inputs(3, state=True, **_SMALL), {"linear_before_reset": 1}, outputs=2,
         id="grad-linear-before-reset", dtypes=["float64"]),
]
