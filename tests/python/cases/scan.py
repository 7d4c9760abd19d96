"""Rows for src/ops/scan.cc: Scan-9 (scan axes and directions) and Scan-8
(a batch axis and sequence_lens). Model rows: the body is a graph attribute
body(states..., slices...) -> (states..., scan output slices...).

onnx's reference Scan knows only axis 0 and the forward direction, and
not Scan-8; the other rows compare with the spec written out here (_scan9,
_scan8), which runs the body through onnx's reference evaluator."""
import numpy as np

from op_harness import SEQ_DTYPES, Case, ErrorCase, G, N, T, V, run_graph

NUMERIC = ["float32", "float64", "float16", "int32", "int64", "int8"]

# A running sum: the state adds each slice; the scan output is the new state.
CUMSUM = G([N("Add", "s x", "s_next"), N("Identity", "s_next", "y")], ["s", "x"],
           ["s_next", "y"])
# Two scan inputs: the state adds x; the scan output is the state times y.
SUM_TIMES = G([N("Add", "s x", "s_next"), N("Mul", "s_next y", "out")], ["s", "x", "y"],
              ["s_next", "out"])
# Any dtype: the state kept, each slice emitted.
KEEP = G([N("Identity", "s", "s_next"), N("Identity", "x", "y")], ["s", "x"], ["s_next", "y"])
# No state: each slice negated, and its shape.
NEG = G([N("Neg", "x", "y"), N("Shape", "x", "shape")], ["x"], ["y", "shape:int64"])


def _axis(a, rank):
    return a + rank if a < 0 else a


def _scan9(inputs, attrs, scope):
    """The spec's Scan-9."""
    body, m = attrs["body"], attrs["num_scan_inputs"]
    n_state = len(inputs) - m
    states, xs = list(inputs[:n_state]), inputs[n_state:]
    in_axes = [_axis(a, x.ndim) for a, x in zip(attrs.get("scan_input_axes", [0] * m), xs)]
    in_dirs = attrs.get("scan_input_directions", [0] * m)
    n_scan = len(body.output) - n_state
    out_axes = attrs.get("scan_output_axes", [0] * n_scan)
    out_dirs = attrs.get("scan_output_directions", [0] * n_scan)
    steps = xs[0].shape[in_axes[0]]
    scans = [[] for _ in range(n_scan)]
    for t in range(steps):
        slices = [np.take(x, steps - 1 - t if d else t, axis=a)
                  for x, a, d in zip(xs, in_axes, in_dirs)]
        out = run_graph(body, states + slices, scope)
        states = out[:n_state]
        for k in range(n_scan):
            scans[k].append(out[n_state + k])
    outs = []
    for k, s in enumerate(scans):
        s = s[::-1] if out_dirs[k] else s
        outs.append(np.stack(s, axis=_axis(out_axes[k], s[0].ndim + 1)))
    return states + outs


def _scan8(inputs, attrs, scope):
    """The spec's Scan-8: batch row b scans its first sequence_lens[b] steps
    (backwards where `directions` says); its scan outputs, in the order the
    steps ran, are zero past them."""
    body, m = attrs["body"], attrs["num_scan_inputs"]
    lens, *rest = inputs
    n_state = len(rest) - m
    batch, steps = rest[0].shape[0], rest[n_state].shape[1]
    dirs = attrs.get("directions", [0] * m)
    lens = [steps] * batch if lens is None else [int(n) for n in lens]
    n_scan = len(body.output) - n_state
    finals, rows = [[] for _ in range(n_state)], [[] for _ in range(n_scan)]
    for b in range(batch):
        states = [x[b] for x in rest[:n_state]]
        seqs = [x[b] for x in rest[n_state:]]
        for k in range(n_scan):
            rows[k].append([])
        for t in range(lens[b]):
            slices = [seq[lens[b] - 1 - t if d else t] for seq, d in zip(seqs, dirs)]
            out = run_graph(body, states + slices, scope, opset=8)
            states = out[:n_state]
            for k in range(n_scan):
                rows[k][b].append(out[n_state + k])
        for j in range(n_state):
            finals[j].append(states[j])
    outs = []
    for k in range(n_scan):
        like = next(step for row in rows[k] for step in row)
        outs.append(np.stack([np.stack(row + [np.zeros_like(like)] * (steps - len(row)))
                              for row in rows[k]]))
    return [np.stack(f) for f in finals] + outs


CASES = [
    # Scan-9, through onnx's reference evaluator: axis 0, forward.
    Case("Scan", [T((2,)), T((4, 2))], {"body": CUMSUM, "num_scan_inputs": 1}, dtypes=NUMERIC,
         id="forward"),
    Case("Scan", [T((3, 2))], {"body": NEG, "num_scan_inputs": 1},
         dtypes=["float32", "int64", "int8"], id="no-state"),
    # Scan-9 with axes and directions: the spec (_scan9).
    Case("Scan", [T((2,)), T((2, 4))],
         {"body": CUMSUM, "num_scan_inputs": 1, "scan_input_axes": [1],
          "scan_input_directions": [1]}, dtypes=NUMERIC, oracle=_scan9, id="in-axis1-reverse"),
    Case("Scan", [T((2,)), T((4, 2)), T((2, 4))],
         {"body": SUM_TIMES, "num_scan_inputs": 2, "scan_input_axes": [0, -1],
          "scan_input_directions": [0, 1], "scan_output_axes": [1],
          "scan_output_directions": [1]},
         dtypes=["float32", "float64", "int64"], oracle=_scan9, id="two-inputs-axes-directions"),
    Case("Scan", [T((3, 2))],
         {"body": NEG, "num_scan_inputs": 1, "scan_input_axes": [-1],
          "scan_output_axes": [-1, 0], "scan_output_directions": [0, 1]},
         dtypes=["float32", "int32"], oracle=_scan9, id="neg-axes"),
    Case("Scan", [T((2,)), T((2, 3, 2))],
         {"body": KEEP, "num_scan_inputs": 1, "scan_input_axes": [1],
          "scan_input_directions": [1], "scan_output_axes": [2]},
         dtypes=SEQ_DTYPES, oracle=_scan9, id="keep-any-dtype"),
    # Scan-8: a batch of 3 rows of 4 steps, each row its own length (one none).
    Case("Scan", [V([4, 2, 0]), T((3, 2)), T((3, 4, 2))],
         {"body": CUMSUM, "num_scan_inputs": 1}, opset=8,
         dtypes=["float32", "float64", "int32", "int64"], oracle=_scan8, id="v8-lens"),
    Case("Scan", [V([1, 3]), T((2, 2)), T((2, 3, 2)), T((2, 3, 2))],
         {"body": SUM_TIMES, "num_scan_inputs": 2, "directions": [0, 1]}, opset=8,
         dtypes=["float32", "int64"], oracle=_scan8, id="v8-lens-directions"),
    Case("Scan", [None, T((2, 2)), T((2, 3, 2))],
         {"body": CUMSUM, "num_scan_inputs": 1, "directions": [1]}, opset=8,
         dtypes=["float32", "int64"], oracle=_scan8, id="v8-no-lens-reverse"),
    Case("Scan", [V([2, 3]), T((2, 2)), T((2, 3, 2))], {"body": KEEP, "num_scan_inputs": 1},
         opset=8, dtypes=["float32", "float64", "float16", "int8", "int32", "int64", "uint8",
                          "bool"], oracle=_scan8, id="v8-keep-dtypes"),
]

ERROR_CASES = [
    ErrorCase("Scan", [T((2,)), T((4, 2)), T((3, 2))],
              {"body": SUM_TIMES, "num_scan_inputs": 2},
              match=r"scan inputs have different lengths \(4 and 3\)"),
    ErrorCase("Scan", [T((2,)), T((4, 2))], {"body": SUM_TIMES, "num_scan_inputs": 1},
              match="the body takes 3 inputs, the node gives 2"),
    ErrorCase("Scan", [V([4, 5]), T((2, 2)), T((2, 4, 2))],
              {"body": CUMSUM, "num_scan_inputs": 1}, opset=8,
              match=r"sequence_lens\[1\] = 5 is outside \[0, 4\]"),
]
