"""singa against onnxruntime on models in real exporters' styles
(bench/real_models.py: Paddle2ONNX mobile nets at opset 9 and 15, a YOLO
detector at opset 11 and 17, a CRNN with a bidirectional LSTM, a DB text
detector, a streaming If+LSTM model, a Gemm stack).

Both runtimes at the same thread count (singa: set_num_threads;
onnxruntime: intra-op threads, inter-op 1, sequential, all graph
optimizations; bench/onnx_infer.py's session). Each figure is singa /
onnxruntime:

- latency: steady state, the two alternating in rounds in one process
  (bench/run.py's compare_many), each output read back as numpy;
- load: prepare against InferenceSession, alternating in one process; and
  load plus the first run, in a fresh process per runtime (children
  alternate), where nothing is cached yet: a process that loaded the model
  before has timed its convolutions' layouts already. Each fresh process
  gets an empty layout cache directory (SINGA_CACHE_DIR), as the first
  process on a machine has; a further row gives fresh processes that read
  the layouts an earlier process timed and kept there;
- peak memory: the peak RSS growth over load plus 3 runs, in those fresh
  processes (VmHWM reset through /proc/self/clear_refs, as in
  bench/onnx_infer.py);
- dynamic-shape streams: the CRNN on 40 widths (1x3x32xW, W = 64..376 step
  8) and the text-direction classifier (batch 6, opset 9) on 20 widths (W =
  96..400 step 16), after a warm-up run at the model's nominal width: the
  total time of the first pass (every width new) and of a second pass over
  the same widths, and the RSS growth, in a fresh process per runtime;
- per-call overhead of the two tiny models: the streaming model fed one
  frame per call with its LSTM state (h, c) carried from call to call, and
  the Gemm stack;
- a busy machine: each runtime's latency while two busy-loop processes per
  core run beside it, over its latency just before (one process; the ratio
  of the two slowdowns, below 1.0: singa slows down less).

With OMP_WAIT_POLICY=passive in the environment, singa's OpenMP threads
sleep as soon as they are idle instead of spinning, and onnxruntime's
sessions here get allow_spinning 0 to match: on a machine whose cores other
processes keep busy, spinning threads wait out the scheduler at every
parallel region's barrier, and this separates that from each runtime's work.

    .venv/bin/python bench/run.py --only real                   # part of make bench
    OMP_WAIT_POLICY=passive .venv/bin/python bench/run.py --only real
    .venv/bin/python bench/real_bench.py --models crnn_op12 --rounds 1    # one model
    .venv/bin/python bench/real_bench.py --profile yolo_op17    # per op type, both runtimes
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_models as rm  # noqa: E402

LATENCY = "Real-model ONNX latency vs onnxruntime (bench/real_models.py)"
LOAD = "Real-model ONNX load time vs onnxruntime"
MEMORY = "Real-model ONNX peak memory vs onnxruntime (fresh process each)"
STREAM = "Real-model dynamic-shape streams vs onnxruntime (fresh process each)"
STREAM_MEMORY = "Real-model dynamic-shape streams: resident memory (fresh process each)"
TINY = "Real-model per-call overhead vs onnxruntime (tiny models)"
BUSY = "Real-model slowdown on a busy machine vs onnxruntime (2 busy-loop processes per core)"
_MS, _MIB = (1e3, "ms"), (1 / 2 ** 20, "MiB")
COLUMNS = {LATENCY: (("singa", "onnxruntime"), _MS), LOAD: (("singa", "onnxruntime"), _MS),
           MEMORY: (("singa", "onnxruntime"), _MIB), STREAM: (("singa", "onnxruntime"), _MS),
           STREAM_MEMORY: (("singa", "onnxruntime"), _MIB), TINY: (("singa", "onnxruntime"), _MS),
           BUSY: (("singa", "onnxruntime"), (1, "x"))}
RUNTIMES = ("singa", "onnxruntime")
# (model, width option, widths, the warm-up width)
STREAMS = [("crnn_op12", list(range(64, 377, 8)), 128),
           ("paddle_textline_op9", list(range(96, 401, 16)), 192)]
TINY_MODELS = ["stream_op13", "gemm_op11"]
BUSY_MODELS = ["paddle_textline_op9", "yolo_op17", "crnn_op12", "stream_op13", "gemm_op11"]
# The time one round of a latency comparison aims for, per side.
ROUND_SECONDS = 0.5
# Calls per timed chunk of the per-call overhead rows.
TINY_CALLS = 200


def ort_session(path, threads):
    """bench/onnx_infer.py's session (CPU, all graph optimizations, intra-op
    threads = singa's, one inter-op thread, sequential), without importing
    that module: its model zoo imports torch, which the fresh processes
    below would then load and count."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if os.environ.get("OMP_WAIT_POLICY", "").lower() == "passive":
        # singa's OpenMP threads then sleep as soon as they are idle: onnxruntime's too.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _singa_fn(rep, feeds):
    """A call of the prepared model that is complete when its outputs are
    numpy arrays, as onnxruntime's are."""
    from singa import tensor
    return lambda: [tensor.to_numpy(t) for t in rep.run(feeds)]


def _each_model(models, fn, what):
    """fn(name) -> rows for each model; a model singa fails on gives a row
    saying so (the error's last line) instead of ending the section."""
    rows = []
    for name in models:
        try:
            rows += fn(name)
        except Exception as e:  # noqa: BLE001  (reported in the table)
            msg = str(e).strip().splitlines()[-1][:200] if str(e).strip() else ""
            rows.append((f"{rm.SPECS[name].label} {what}", math.nan, math.nan,
                         f"failed: {type(e).__name__}: {msg}"))
    return rows


def _inference_mode():
    from singa import autograd
    autograd.training = False


def _max_diff(got, want, spec):
    diff = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
    ok = all(g.shape == w.shape and np.allclose(g, w, rtol=spec.rtol, atol=spec.atol)
             for g, w in zip(got, want))
    return diff, ok


def bench_latency(compare_many, threads, rounds, models=None):
    from singa import sonnx
    _inference_mode()

    def one(name):
        spec = rm.SPECS[name]
        path = rm.write(name)
        feeds = rm.feeds(name)
        rep, sess = sonnx.prepare(path), ort_session(path, threads)
        ours, peer = _singa_fn(rep, feeds), (lambda: sess.run(None, feeds))
        diff, ok = _max_diff(ours(), peer(), spec)  # also the first run's plan
        t0 = time.perf_counter()
        ours()
        calls = max(3, min(50, int(ROUND_SECONDS / max(time.perf_counter() - t0, 1e-6))))
        load = os.getloadavg()[0]
        t_ours, t_peer = compare_many([ours, peer], calls, rounds)
        fused = f"{len(rep.planned_op_types)} planned ops of {rep.num_nodes} nodes"
        return [(spec.label, t_ours, t_peer,
                 f"max |singa - onnxruntime| {diff:.1e}{'' if ok else ' (OVER TOLERANCE)'}; "
                 f"{fused}; load {load:.1f}")]

    return _each_model(models or rm.NAMES, one, "latency")


def _status_kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak():
    """Resets the kernel's peak RSS (VmHWM) to the current RSS; returns a
    function giving the peak since (ru_maxrss where clear_refs is missing)."""
    import resource
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return lambda: _status_kib("VmHWM")
    except OSError:
        return lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _loader(runtime, threads):
    """(load(path) -> model, run(model, feeds) -> numpy outputs) of a runtime,
    its modules imported here, before any measurement."""
    if runtime == "singa":
        from singa import _singa, sonnx, tensor
        _singa.set_num_threads(threads)
        _inference_mode()
        return sonnx.prepare, lambda rep, feeds: [tensor.to_numpy(t) for t in rep.run(feeds)]
    import onnxruntime  # noqa: F401  (its import is not the model's memory)
    return (lambda path: ort_session(path, threads)), (lambda sess, feeds: sess.run(None, feeds))


def fresh_child(runtime, name, threads):
    """In a fresh process: load, a first run, two more; prints the load
    time, the time to the first result and the peak RSS growth (bytes)."""
    load, run = _loader(runtime, threads)
    path = rm.write(name)
    feeds = rm.feeds(name)
    peak_of = _reset_peak()
    before = _status_kib("VmRSS")
    t0 = time.perf_counter()
    model = load(path)
    t1 = time.perf_counter()
    run(model, feeds)
    t2 = time.perf_counter()
    for _ in range(2):
        run(model, feeds)
    print(json.dumps({"load": t1 - t0, "first": t2 - t0, "peak": (peak_of() - before) * 1024}))


def stream_child(runtime, name, threads):
    """In a fresh process: the model on each width of its stream twice
    (first pass: every width new), after a warm-up at its nominal width;
    prints each pass's time and the RSS at each stage (bytes)."""
    load, run = _loader(runtime, threads)
    widths, warm = next((w, n) for m, w, n in STREAMS if m == name)
    path = rm.write(name)
    feeds = [rm.feeds(name, width=w) for w in widths]
    before = _status_kib("VmRSS")
    model = load(path)
    run(model, rm.feeds(name, width=warm))
    warmed = _status_kib("VmRSS")
    out = {"widths": len(widths)}
    for p in ("first", "second"):
        t0 = time.perf_counter()
        for f in feeds:
            run(model, f)
        out[p] = time.perf_counter() - t0
        out[f"rss_{p}"] = (_status_kib("VmRSS") - warmed) * 1024
    out["rss_total"] = (_status_kib("VmRSS") - before) * 1024
    if runtime == "singa":
        out["plans"] = model.num_plans
    print(json.dumps(out))


_CHILD_RESULTS = {}


def _child(kind, runtime, name, threads, cache_dir):
    """One child process's result; singa keeps its convolution layout picks
    in `cache_dir`."""
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", kind, runtime,
                            name, str(threads)], capture_output=True, text=True,
                           env={**os.environ, "SINGA_CACHE_DIR": cache_dir})
    if child.returncode != 0:
        err = child.stderr.strip().splitlines() or [f"exit {child.returncode}"]
        raise RuntimeError(f"{runtime} child: {err[-1]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def _children(kind, name, threads, rounds):
    """Runs `rounds` pairs of child processes (singa, onnxruntime, alternating)
    of `kind` on model `name`; {runtime: [results]}, computed once per
    arguments (the load, memory and stream sections share them). Each child
    starts with an empty layout cache (it makes its convolutions' candidate
    layouts itself as a first process on a machine does), except for kind "cached": "fresh"
    children sharing a cache that one unmeasured child filled first."""
    key = (kind, name, threads, rounds)
    if key not in _CHILD_RESULTS:
        got = {r: [] for r in RUNTIMES}
        with tempfile.TemporaryDirectory(prefix="singa-bench-cache-") as tmp:
            if kind == "cached":
                _child("fresh", "singa", name, threads, tmp)
            for i in range(rounds):
                for runtime in RUNTIMES:
                    cache = tmp if kind == "cached" else os.path.join(tmp, f"{runtime}{i}")
                    got[runtime].append(_child("fresh" if kind == "cached" else kind, runtime,
                                               name, threads, cache))
        _CHILD_RESULTS[key] = got
    return _CHILD_RESULTS[key]


def _median(results, field):
    return statistics.median(r[field] for r in results)


def _child_rounds(rounds):
    """Fresh processes per runtime and model: about half the rounds, at least one."""
    return max(1, (rounds + 1) // 2)


def bench_load(compare_many, threads, rounds, models=None):
    from singa import sonnx
    _inference_mode()

    def one(name):
        label = rm.SPECS[name].label
        path = rm.write(name)
        feeds = rm.feeds(name)
        t = compare_many([lambda: sonnx.prepare(path), lambda: ort_session(path, threads),
                          lambda: _singa_fn(sonnx.prepare(path), feeds)(),
                          lambda: ort_session(path, threads).run(None, feeds)], 1, rounds)
        n = _child_rounds(rounds)
        first = [_median(_children("fresh", name, threads, n)[r], "first") for r in RUNTIMES]
        cached = [_median(_children("cached", name, threads, n)[r], "first") for r in RUNTIMES]
        return [(f"{label}: load (prepare / InferenceSession)", t[0], t[1], ""),
                (f"{label}: load + first run, in a process that ran it before", t[2], t[3], ""),
                (f"{label}: load + first run, fresh process", first[0], first[1],
                 f"median of {n} processes each; singa makes its convolutions' layout "
                 f"candidates (timed on later calls)"),
                (f"{label}: load + first run, fresh process after another", cached[0], cached[1],
                 f"median of {n} processes each; singa reads the layouts an earlier "
                 f"process settled (three runs settle none)")]

    return _each_model(models or rm.NAMES, one, "load")


def bench_memory(compare_many, threads, rounds, models=None):
    def one(name):
        got = _children("fresh", name, threads, _child_rounds(rounds))
        peak = [_median(got[r], "peak") for r in RUNTIMES]
        return [(f"{rm.SPECS[name].label}: peak RSS growth (load + 3 runs)", peak[0], peak[1],
                 f"median of {_child_rounds(rounds)} processes each")]

    return _each_model(models or rm.NAMES, one, "peak memory")


def _stream_label(name, widths):
    return f"{rm.SPECS[name].label.split(',')[0]}, {len(widths)} widths {widths[0]}..{widths[-1]}"


def bench_stream(compare_many, threads, rounds, models=None):
    def one(name):
        widths = next(w for m, w, _ in STREAMS if m == name)
        got = _children("stream", name, threads, _child_rounds(rounds))
        first = [_median(got[r], "first") for r in RUNTIMES]
        second = [_median(got[r], "second") for r in RUNTIMES]
        label = _stream_label(name, widths)
        plans = _median(got["singa"], "plans")
        n = len(widths)
        return [(f"{label}: first pass (each width new)", first[0], first[1],
                 f"per width {first[0] / n * 1e3:.1f} vs {first[1] / n * 1e3:.1f} ms; "
                 f"singa holds {plans:.0f} plans after"),
                (f"{label}: second pass (widths seen)", second[0], second[1],
                 f"per width {second[0] / n * 1e3:.1f} vs {second[1] / n * 1e3:.1f} ms")]

    return _each_model(models or [m for m, _, _ in STREAMS], one, "stream")


def bench_stream_memory(compare_many, threads, rounds, models=None):
    def one(name):
        widths = next(w for m, w, _ in STREAMS if m == name)
        got = _children("stream", name, threads, _child_rounds(rounds))
        total = [_median(got[r], "rss_total") for r in RUNTIMES]
        grow = [[_median(got[r], f"rss_{p}") / 2 ** 20 for r in RUNTIMES]
                for p in ("first", "second")]
        return [(f"{_stream_label(name, widths)}: RSS after both passes minus before loading",
                 total[0], total[1],
                 f"growth over the stream (RSS minus RSS after the warm-up): after the first "
                 f"pass singa {grow[0][0]:+.1f}, onnxruntime {grow[0][1]:+.1f} MiB; after the "
                 f"second singa {grow[1][0]:+.1f}, onnxruntime {grow[1][1]:+.1f} MiB")]

    return _each_model(models or [m for m, _, _ in STREAMS], one, "stream memory")


def _calls(name, threads):
    """(singa call, onnxruntime call) of a model, each complete when its
    outputs are numpy arrays; the streaming model carries its LSTM state
    from each call to the next, reading the probability back every call."""
    from singa import sonnx, tensor
    path = rm.write(name)
    feeds = rm.feeds(name)
    rep, sess = sonnx.prepare(path), ort_session(path, threads)
    if name != "stream_op13":
        return _singa_fn(rep, feeds), (lambda: sess.run(None, feeds))
    ours_state, peer_state = dict(feeds), dict(feeds)

    def ours():
        prob, ours_state["h"], ours_state["c"] = rep.run(ours_state)
        return tensor.to_numpy(prob)

    def peer():
        prob, peer_state["h"], peer_state["c"] = sess.run(None, peer_state)
        return prob

    return ours, peer


def bench_tiny(compare_many, threads, rounds, models=None):
    _inference_mode()

    def one(name):
        ours, peer = _calls(name, threads)
        ours(), peer()  # the plan
        ours_t, peer_t = [], []
        for _ in range(rounds * 3):  # interleaved, as bench/run.py's per-op overhead
            ours_t.append(timeit.timeit(ours, number=TINY_CALLS) / TINY_CALLS)
            peer_t.append(timeit.timeit(peer, number=TINY_CALLS) / TINY_CALLS)
        note = ("state (h, c) fed back each call, probability read back" if name == "stream_op13"
                else "outputs read back as numpy")
        return [(f"{rm.SPECS[name].label}: one call", statistics.median(ours_t),
                 statistics.median(peer_t), note)]

    return _each_model(models or TINY_MODELS, one, "per call")


class _BusyLoops:
    """Two processes per core that spin in a loop, for the with block."""

    def __enter__(self):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                      for _ in range(2 * (os.cpu_count() or 1))]
        time.sleep(0.5)  # let the scheduler see them
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()


def _per_call(fns, rounds, seconds=ROUND_SECONDS):
    """Each fn's median over rounds (fns interleaved) of its mean call time,
    each round calling it for about `seconds` (at least 3 calls)."""
    per = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            n, t0 = 0, time.perf_counter()
            while n < 3 or time.perf_counter() - t0 < seconds:
                fn()
                n += 1
            per[i].append((time.perf_counter() - t0) / n)
    return [statistics.median(t) for t in per]


def bench_busy(compare_many, threads, rounds, models=None):
    """Each runtime's latency with other processes keeping every core busy,
    over its latency before they started (same process, same calls)."""
    _inference_mode()

    def one(name):
        ours, peer = _calls(name, threads)
        ours(), peer()  # the plan
        quiet = _per_call([ours, peer], rounds)
        with _BusyLoops():
            busy = _per_call([ours, peer], rounds)
        return [(f"{rm.SPECS[name].label}: latency busy / quiet", busy[0] / quiet[0],
                 busy[1] / quiet[1], f"singa {quiet[0] * 1e3:.3f} -> {busy[0] * 1e3:.3f} ms, "
                 f"onnxruntime {quiet[1] * 1e3:.3f} -> {busy[1] * 1e3:.3f} ms")]

    return _each_model(models or BUSY_MODELS, one, "busy")


# (title, fn(compare_many, threads, rounds), the part's name for --skip); bench/run.py
# runs them all.
SECTIONS = [(LATENCY, bench_latency, "latency"), (LOAD, bench_load, "load"),
            (MEMORY, bench_memory, "memory"), (STREAM, bench_stream, "stream"),
            (STREAM_MEMORY, bench_stream_memory, "stream"), (TINY, bench_tiny, "tiny"),
            (BUSY, bench_busy, "busy")]


# ---- per-op-type profile ------------------------------------------------------------


def _attrs(node):
    import onnx
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [s.decode() for s in v]
        out[a.name] = v
    return out


def profile(name, threads, calls=20):
    """Per op type: onnxruntime's profiler (its optimized graph's kernels,
    ms per run, with the profiler's own cost) and each of singa's ops run
    alone on the node's real inputs through _singa.call_op (ms per run,
    summed over the nodes of a type: without the plan's fusion and layouts);
    then both runtimes' whole runs without profiling."""
    import onnx
    from singa import _singa, sonnx
    _singa.set_num_threads(threads)
    _inference_mode()
    path = rm.write(name)
    feeds = rm.feeds(name)
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    for _ in range(calls + 1):
        sess.run(None, feeds)
    trace = json.load(open(sess.end_profiling()))
    ort_ms = collections.Counter()
    for ev in trace:
        if ev.get("cat") == "Node" and ev["name"].endswith("_kernel_time"):
            ort_ms[ev["args"]["op_name"]] += ev["dur"] / 1e3 / (calls + 1)
    for f in glob.glob(so.profile_file_prefix + "*"):
        os.remove(f)
    # Every value of the graph, from onnxruntime without its optimizations, as singa's inputs.
    names = [o for n in model.graph.node for o in n.output if o]
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    del probe.graph.output[:]
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(v) for v in names)
    so2 = ort.SessionOptions()
    so2.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    values = dict(feeds)
    values.update(zip(names, ort.InferenceSession(probe.SerializeToString(), so2).run(
        None, feeds)))
    values.update({i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer})
    opset = model.opset_import[0].version
    singa_ms, skipped = collections.Counter(), collections.Counter()
    for node in model.graph.node:
        if node.op_type in ("Constant", "If", "Loop", "Scan"):
            skipped[node.op_type] += 1
            continue
        ins = [_singa.CTensor.from_numpy(np.ascontiguousarray(values[i])) if i else None
               for i in node.input]
        attrs = _attrs(node)

        def op():
            return _singa.call_op(node.op_type, ins, attrs, opset=opset,
                                  num_outputs=len(node.output))
        op()
        t0 = time.perf_counter()
        for _ in range(calls):
            op()
        singa_ms[node.op_type] += (time.perf_counter() - t0) / calls * 1e3
    # The whole runs, without the profiler.
    rep, plain = sonnx.prepare(path), ort_session(path, threads)
    totals = []
    for run in (_singa_fn(rep, feeds), lambda: plain.run(None, feeds)):
        run()
        t0 = time.perf_counter()
        for _ in range(calls):
            run()
        totals.append((time.perf_counter() - t0) / calls)
    return (ort_ms, singa_ms, skipped, totals[1], totals[0],
            collections.Counter(rep.planned_op_types))


def print_profile(name, threads):
    ort_ms, singa_ms, skipped, ort_total, singa_total, planned = profile(name, threads)
    print(f"== {rm.SPECS[name].label}: whole run singa {singa_total * 1e3:.2f} ms, onnxruntime "
          f"{ort_total * 1e3:.2f} ms")
    print(f"   singa's plan: {dict(planned.most_common())}")
    print(f"   {'singa op (each node alone)':30s} {'ms':>8s}    {'onnxruntime kernel':30s} "
          f"{'ms':>8s}")
    left, right = singa_ms.most_common(), ort_ms.most_common()
    for i in range(max(len(left), len(right))):
        a = f"{left[i][0]:30s} {left[i][1]:8.3f}" if i < len(left) else " " * 39
        b = f"{right[i][0]:30s} {right[i][1]:8.3f}" if i < len(right) else ""
        print(f"   {a}    {b}")
    print(f"   sums: singa {sum(singa_ms.values()):.2f} ms, onnxruntime {sum(ort_ms.values()):.2f}"
          f" ms" + (f"; not timed alone: {dict(skipped)}" if skipped else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", nargs="+", choices=rm.NAMES)
    ap.add_argument("--skip", nargs="*", default=[], choices=["latency", "load", "memory",
                                                              "stream", "tiny", "busy"])
    ap.add_argument("--profile", nargs="+", choices=rm.NAMES, metavar="MODEL",
                    help="per op type time of each runtime on these models")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, runtime, name, threads = args.child
        return (fresh_child if kind == "fresh" else stream_child)(runtime, name, int(threads))
    from singa import _singa
    _singa.set_num_threads(args.threads)
    if args.profile:
        for name in args.profile:
            print_profile(name, args.threads)
        return 0
    import run
    streams = [m for m, _, _ in STREAMS]
    for title, fn, part in SECTIONS:
        if part in args.skip:
            continue
        models = args.models
        if models and title in (STREAM, STREAM_MEMORY):
            models = [m for m in models if m in streams]
        elif models and title in (TINY, BUSY):
            models = [m for m in models if m in (TINY_MODELS if title == TINY else BUSY_MODELS)]
        if models == []:
            continue
        (a, b), (scale, unit) = COLUMNS[title]
        print(f"== {title} (threads {args.threads}, rounds {args.rounds})", flush=True)
        for label, ours, peer, note in fn(run.compare_many, args.threads, args.rounds, models):
            print(f"   {label:70s} {a} {ours * scale:9.3f} {unit}  {b} {peer * scale:9.3f} {unit}"
                  f"  ratio {ours / peer:5.2f}  {note}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
