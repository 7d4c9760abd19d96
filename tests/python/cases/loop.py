"""Rows for src/ops/loop.cc (model rows: the body is a graph attribute
body(i, cond, v...) -> (cond, v..., scan outputs...))."""
import numpy as np
from onnx import numpy_helper

from op_harness import SEQ_DTYPES, Case, ErrorCase, G, N, Seq, T, V, run_graph

NUMERIC = ["float32", "float64", "float16", "int32", "int64", "int8"]
TWO = N("Constant", "", "two", value=numpy_helper.from_array(np.int64(2)))
LOOP_IN = ["i:int64", "cond:bool", "v"]
KEEP = N("Identity", "cond", "cond_out")
UNTIL_2 = [TWO, N("Less", "i two", "cond_out")]  # stops after the iteration with i = 2
ADD = N("Add", "v v", "v_out")
EMIT = N("Identity", "v", "scan")  # v before the update (1-D: see _loop)
# v doubles each iteration; with a scan output.
DOUBLE = G([KEEP, ADD], LOOP_IN, ["cond_out:bool", "v_out"])
DOUBLE_SCAN = G([KEEP, ADD, EMIT], LOOP_IN, ["cond_out:bool", "v_out", "scan"])
DOUBLE_SCAN_UNTIL_2 = G([*UNTIL_2, ADD, EMIT], LOOP_IN, ["cond_out:bool", "v_out", "scan"])
# The body's cond output is v: not one element.
BAD_COND = G([N("Identity", "v", "cond_out"), ADD], LOOP_IN, ["cond_out:bool", "v_out"])


def _loop(inputs, attrs, scope):
    """The spec's Loop, running the body through onnx's reference evaluator.
    For rows without cond, or whose scan outputs are not 1-D: onnx's
    reference Loop runs no iteration when cond is absent (the spec: as if
    true), and stacks scan outputs with np.vstack (a scalar per iteration
    gives [n, 1], a [2, 3] one [2n, 3]) where the spec stacks along a new
    first axis."""
    body = attrs["body"]
    m, cond, *carried = inputs
    n_scan = len(body.output) - 1 - len(carried)
    scans = [[] for _ in range(n_scan)]
    go = True if cond is None else bool(cond)
    i = 0
    while go and (m is None or i < int(m)):
        out = run_graph(body, [np.array(i, np.int64), np.array(go), *carried], scope)
        go = bool(out[0])
        carried = out[1:1 + len(carried)]
        for k in range(n_scan):
            scans[k].append(out[1 + len(carried) + k])
        i += 1
    return list(carried) + [np.stack(s) for s in scans]


# Two carried values (one reads outer0), and scan outputs of rank 0 and 2.
TWO_CARRIED = G(
    [N("Add", "a outer0", "a_out"), N("Mul", "b b", "b_out"), N("Identity", "cond", "cond_out"),
     N("Identity", "a", "a_scan"), N("Identity", "i", "i_scan")],
    ["i:int64", "cond:bool", "a", "b"],
    ["cond_out:bool", "a_out", "b_out", "a_scan", "i_scan:int64"])
# Any dtype: v carried as it is, and emitted each iteration.
KEEP_EMIT = G([KEEP, N("Identity", "v", "v_out"), EMIT], LOOP_IN,
              ["cond_out:bool", "v_out", "scan"])
# A carried value that grows each iteration (outer0 appended on axis 0).
GROW = G([KEEP, N("Concat", "v outer0", "v_out", axis=0)], LOOP_IN, ["cond_out:bool", "v_out"])
# A carried sequence: each iteration appends outer0.
APPEND = G([N("Identity", "cond", "cond_out"), N("SequenceInsert", "s outer0", "s_out")],
           ["i:int64", "cond:bool", "s:seq"], ["cond_out:bool", "s_out:seq"])

CASES = [
    # M only (cond absent), a loop-carried value and a scan output.
    Case("Loop", [V(3), None, T((3,))], {"body": DOUBLE_SCAN}, dtypes=NUMERIC, oracle=_loop,
         id="M"),
    # cond only (M absent): the body's cond ends it.
    Case("Loop", [None, V(True, np.bool_), T((3,))], {"body": DOUBLE_SCAN_UNTIL_2},
         dtypes=NUMERIC, id="cond"),
    # Both: the body's cond ends it before M, or M before the cond.
    Case("Loop", [V(5), V(True, np.bool_), T((3,))], {"body": DOUBLE_SCAN_UNTIL_2},
         dtypes=["float32", "int64"], id="M-cond-stops"),
    Case("Loop", [V(2), V(True, np.bool_), T((3,))], {"body": DOUBLE_SCAN},
         dtypes=["float32", "int64"], id="M-stops"),
    # No iteration: the carried values come back as they were.
    Case("Loop", [V(0), None, T((2, 3))], {"body": DOUBLE}, dtypes=["float32", "int64"],
         oracle=_loop, id="zero-trips"),
    Case("Loop", [None, V(False, np.bool_), T((2, 3))], {"body": DOUBLE},
         dtypes=["float32", "int64"], id="cond-false"),
    Case("Loop", [V(4), None, T((2, 3))], {"body": DOUBLE}, dtypes=["float32", "int32"],
         oracle=_loop, id="carried-only"),
    Case("Loop", [V(3), None, T((2, 3)), T((3,), low=-1, high=1)], {"body": TWO_CARRIED},
         outer=[T((2, 3))], dtypes=["float32", "float64", "int64"], oracle=_loop,
         id="two-carried-scans"),
    Case("Loop", [V(3), V(True, np.bool_), T((2, 3))], {"body": KEEP_EMIT}, dtypes=SEQ_DTYPES,
         oracle=_loop, id="emit-any-dtype"),
    Case("Loop", [V(3), V(True, np.bool_), T((1, 2))], {"body": GROW}, outer=[T((2, 2))],
         dtypes=["float32", "int64", "bool"], id="growing"),
    Case("Loop", [V(3), None, Seq([T((2,))])], {"body": APPEND}, outer=[T((2,))],
         dtypes=["float32", "int64", "bool"], oracle=_loop, id="carried-seq"),
    Case("Loop", [V(3), V(True, np.bool_), Seq([T((2,))])], {"body": APPEND}, outer=[T((2,))],
         dtypes=["float32", "int64", "bool"], id="carried-seq-cond"),
]

ERROR_CASES = [
    ErrorCase("Loop", [V(3), None, T((3,)), T((3,))], {"body": DOUBLE_SCAN},
              match="the body takes 3 inputs and gives 3 outputs; with 2 loop-carried values "
                    "it must take 4"),
    ErrorCase("Loop", [V(3), None, T((3,))], {"body": BAD_COND},
              match="the body's cond output must have one element"),
]
