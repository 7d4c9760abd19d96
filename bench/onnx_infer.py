"""ONNX inference against onnxruntime: latency, model load time, peak memory.

The zoo's architectures at full size (examples/onnx/zoo_models.py, random
weights, exported by torch at its newest opset) run through sonnx and
through onnxruntime (CPU, all graph optimizations, intra-op threads = ours,
sequential). Latency and load times alternate ours/onnxruntime in rounds in
one process (bench/run.py's compare_many: the median over rounds of each
round's median); peak memory is measured in a fresh process per framework
and model, so the RSS growth is the model's alone.

    .venv/bin/python bench/run.py --only infer                  # part of make bench
    .venv/bin/python bench/onnx_infer.py --models resnet18 --batches 1 --rounds 1   # smoke
"""
from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "onnx"))
import zoo_models as zm  # noqa: E402

MODELS = ["resnet18", "mobilenetv2", "vgg16", "shufflenetv2", "bert", "gpt2"]
BATCHES = [1, 8]
OPSET = zm.NEWEST_OPSET
LABELS = {"resnet18": "ResNet-18 224x224", "mobilenetv2": "MobileNet-V2 224x224",
          "vgg16": "VGG-16 224x224", "shufflenetv2": "ShuffleNet-V2 224x224",
          "bert": "BERT-base seq 128", "gpt2": "GPT-2 small seq 128"}
# The time one round of a latency comparison aims for, per side.
ROUND_SECONDS = 0.5


def _path(name):
    return zm.export(name, OPSET, "full")


def ort_session(path, threads):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _selection(quick, models=None, batches=None):
    if quick:
        return ["resnet18"], [1]
    return models or MODELS, batches or BATCHES


def _each_model(models, fn, label):
    """fn(name) -> rows for each model; a model that fails (an op singa
    lacks, an export error) gives a row saying so instead of ending the
    section."""
    rows = []
    for name in models:
        try:
            rows += fn(name)
        except Exception as e:  # noqa: BLE001  (reported in the table)
            msg = str(e).strip().splitlines()[-1][:200] if str(e).strip() else ""
            rows.append((f"{LABELS[name]} {label}", math.nan, math.nan,
                         f"failed: {type(e).__name__}: {msg}"))
    return rows


def _inference_mode():
    """Inference, as after sonnx's import: a training benchmark run before in
    the same process (bench/run.py) leaves autograd.training on, under which
    runs record their ops for backward and skip the plan."""
    from singa import autograd
    autograd.training = False


def bench_latency(compare_many, threads, rounds, quick=False, models=None, batches=None):
    _inference_mode()
    models, batches = _selection(quick, models, batches)
    return _each_model(models, lambda name: _latency(compare_many, threads, rounds, name, batches),
                       "inference")


def _latency(compare_many, threads, rounds, name, batches):
    from singa import sonnx, tensor
    rows = []
    path = _path(name)
    rep, sess = sonnx.prepare(path), ort_session(path, threads)
    for batch in batches:
        feeds = zm.sample_feeds(name, batch, "full")
        ours = (lambda: rep.run(feeds))
        peer = (lambda: sess.run(None, feeds))
        got = [tensor.to_numpy(t) for t in ours()]  # also the first run's plan and primitives
        want = peer()
        diff = max(float(np.abs(g - w).max()) for g, w in zip(got, want))
        t0 = time.perf_counter()
        ours()
        one = time.perf_counter() - t0
        calls = max(3, min(50, int(ROUND_SECONDS / max(one, 1e-6))))
        load = os.getloadavg()[0]
        t_ours, t_peer = compare_many([ours, peer], calls, rounds)
        rows.append((f"{LABELS[name]} batch {batch} inference", t_ours, t_peer,
                     f"max |ours - onnxruntime| {diff:.1e}; load {load:.1f}"))
    return rows


def bench_load(compare_many, threads, rounds, quick=False, models=None):
    """prepare vs InferenceSession (the file is in the page cache for both),
    and the time to the first result at batch 1 (load plus a first run,
    where lazy work like plans and primitive creation shows)."""
    from singa import sonnx
    _inference_mode()

    def one(name):
        path = _path(name)
        feeds = zm.sample_feeds(name, 1, "full")
        ours_load = (lambda: sonnx.prepare(path))
        peer_load = (lambda: ort_session(path, threads))
        ours_first = (lambda: sonnx.prepare(path).run(feeds))
        peer_first = (lambda: ort_session(path, threads).run(None, feeds))
        t = compare_many([ours_load, peer_load, ours_first, peer_first], 1, rounds)
        return [(f"{LABELS[name]} load (prepare / InferenceSession)", t[0], t[1], ""),
                (f"{LABELS[name]} load + first run, batch 1", t[2], t[3], "")]

    return _each_model(_selection(quick, models)[0], one, "load")


def _status_kib(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def memory_child(framework, name, batch, threads):
    """In a fresh process: loads the model, runs it 3 times; prints the peak
    RSS growth (KiB) over the RSS before loading (see bench/run.py's
    memory_child for the clear_refs reset of the peak)."""
    import resource
    from singa import _singa, sonnx
    _singa.set_num_threads(threads)
    path = _path(name)
    feeds = zm.sample_feeds(name, batch, "full")
    if framework == "onnxruntime":
        import onnxruntime  # noqa: F401  (its import is not the model's memory)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        peak_of = (lambda: _status_kib("VmHWM"))
    except OSError:
        peak_of = (lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    before = _status_kib("VmRSS")
    if framework == "onnxruntime":
        sess = ort_session(path, threads)
        run = (lambda: sess.run(None, feeds))
    else:
        rep = sonnx.prepare(path)
        run = (lambda: rep.run(feeds))
    for _ in range(3):
        out = run()
        del out
    print(peak_of() - before)


def bench_memory(threads, quick=False, models=None, batches=None):
    models, batches = _selection(quick, models, batches)

    def one(name):
        _path(name)  # export once, here, not in the children
        rows = []
        for batch in batches:
            got = {}
            for fw in ("singa", "onnxruntime"):
                child = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child",
                                        fw, name, str(batch), str(threads)],
                                       capture_output=True, text=True)
                if child.returncode != 0:
                    raise RuntimeError(f"{fw} batch {batch}: {child.stderr.strip()}")
                got[fw] = int(child.stdout.split()[-1]) * 1024
            rows.append((f"{LABELS[name]} batch {batch} peak RSS growth (load + 3 runs)",
                         got["singa"], got["onnxruntime"], ""))
        return rows

    return _each_model(models, one, "peak memory")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--models", nargs="+", choices=MODELS)
    ap.add_argument("--batches", nargs="+", type=int)
    ap.add_argument("--skip", nargs="*", default=[], choices=["latency", "load", "memory"])
    ap.add_argument("--memory-child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        fw, name, batch, threads = args.memory_child
        return memory_child(fw, name, int(batch), int(threads))
    sys.path.insert(0, HERE)
    import run
    from singa import _singa
    _singa.set_num_threads(args.threads)
    sections = {
        "latency": lambda: bench_latency(run.compare_many, args.threads, args.rounds,
                                         models=args.models, batches=args.batches),
        "load": lambda: bench_load(run.compare_many, args.threads, args.rounds, models=args.models),
        "memory": lambda: bench_memory(args.threads, models=args.models, batches=args.batches),
    }
    for title, fn in sections.items():
        if title in args.skip:
            continue
        print(f"== {title} (threads {args.threads}, rounds {args.rounds})", flush=True)
        scale, unit = (1 / 2 ** 20, "MiB") if title == "memory" else (1e3, "ms")
        for label, ours, peer, note in fn():
            print(f"   {label:58s} ours {ours * scale:9.3f} {unit}  onnxruntime {peer * scale:9.3f} "
                  f"{unit}  ours/onnxruntime {ours / peer:5.2f}  {note}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
