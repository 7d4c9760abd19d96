"""Distributed training benchmark (`bench/run.py --only dist`, and part of
`make bench`): singa.opt.DistOpt over MPI on this machine's loopback.

- Step time of 2 ranks x 1 thread (batch 16 per rank, mpirun -np 2) against
  1 rank x 2 threads (batch 32, plain SGD, no DistOpt): both process the same
  32 samples per step, so the comparison is data parallelism against thread
  parallelism for the same work. Graph mode, SGD momentum 0.9, on the digits
  CNN and ResNet-18 (bench/models.py), random inputs.
- Bytes each rank hands to MPI per step (Communicator.bytes_sent) for fp32,
  fp16, partialUpdate, sparseTopK (spars 0.05) and sparseThreshold.
- Overlap of the all-reduce with backward: the time from the last gradient
  to the averaged gradients (Communicator.wait_seconds per step) when the
  gradients go in buckets started during backward, against one message sent
  after backward.

Each configuration runs in fresh processes; rank r writes its own JSON file
(mpirun interleaves the ranks' stdout). A smoke run:

    .venv/bin/python bench/dist.py --smoke
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (model, input side or None, timed steps per launch, bucket for the overlap run)
CASES = [("cnn", None, 30, 2048), ("resnet18", 224, 3, 1 << 20)]
LABELS = {"cnn": "digits CNN 1x8x8", "resnet18": "ResNet-18 224x224"}
PER_RANK_BATCH = 16
# (name, dist option, spars, buffSize or None for the default)
OPTIONS = [("fp32", "fp32", None, None), ("fp16", "fp16", None, None),
           ("partialUpdate", "partialUpdate", None, None),
           ("sparseTopK 0.05", "sparseTopK", 0.05, None),
           ("sparseThreshold 0.01", "sparseThreshold", 0.01, None)]
ONE_MESSAGE = 1 << 30  # a buffSize above any model's size: every gradient in one message


# ---- worker (one process per rank) ---------------------------------------------


def _model_class(base, option, spars):
    def train_one_batch(self, x, y):
        from singa import autograd
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        o = self.optimizer
        if option == "fp32":
            o.backward_and_update(loss)
        elif option == "fp16":
            o.backward_and_update_half(loss)
        elif option == "partialUpdate":
            o.backward_and_partial_update(loss)
        else:
            o.backward_and_sparse_update(loss, spars=spars, topK=option == "sparseTopK")
        return out, loss

    return type("Dist" + base.__name__, (base,), {"train_one_batch": train_one_batch})


def worker(args):
    """Times `steps` graph-mode training steps per configuration; writes
    {config: {step, bytes, wait}} to OUT/rank<r>.json."""
    sys.path.insert(0, HERE)
    import models
    import numpy as np
    from singa import _singa, device, opt, tensor

    _singa.set_num_threads(args.threads)
    results = {}
    rank = 0
    for cfg in args.configs:
        name, option, spars, buff = cfg.split(":")
        spars = float(spars) if spars else None
        device.get_default_device().SetRandSeed(0)
        sgd = opt.SGD(lr=0.05, momentum=0.9)
        if option != "single":
            sgd = opt.DistOpt(sgd, buffSize=int(buff))
            rank = sgd.global_rank
        x, y = models.data(args.model, args.batch, args.hw or None, seed=rank)
        tx, ty = models.singa_inputs(x, y)
        base = models.MODELS[args.model][0]
        m = (base if option == "single" else _model_class(base, option, spars))()
        m.set_optimizer(sgd)
        m.compile([tx], is_train=True, use_graph=True)
        for _ in range(2):  # the capture, then one replay
            tensor.to_numpy(m(tx, ty)[1])
        comm = getattr(sgd, "communicator", None)
        if comm is not None:
            comm.reset_stats()
        times, waits = [], []
        for _ in range(args.steps):
            w0 = comm.wait_seconds if comm is not None else 0
            t0 = time.perf_counter()
            tensor.to_numpy(m(tx, ty)[1])  # the step is complete when its loss is readable
            times.append(time.perf_counter() - t0)
            waits.append((comm.wait_seconds if comm is not None else 0) - w0)
        results[name] = {
            "step": statistics.median(times),
            "bytes": comm.bytes_sent / args.steps if comm is not None else 0,
            "wait": statistics.median(waits),
            "world": 1 if comm is None else sgd.world_size,
            "params": int(sum(np.prod(p.shape) for p in m.get_params().values())),
        }
    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
        json.dump(results, f)


# ---- launcher --------------------------------------------------------------------


def _mpirun(n):
    cmd = [shutil.which("mpirun") or "mpirun", "-np", str(n), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def _launch(model, hw, batch, threads, steps, configs, ranks):
    """Runs the worker (under mpirun when ranks > 1); rank 0's results."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--model", model,
               "--hw", str(hw or 0), "--batch", str(batch), "--threads", str(threads),
               "--steps", str(steps), "--out", out, "--configs", *configs]
        if ranks > 1:
            cmd = _mpirun(ranks) + cmd
        env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                   OMPI_MCA_btl_vader_single_copy_mechanism="none")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd[:6])} ... failed:\n{p.stdout}\n{p.stderr}")
        files = sorted(os.listdir(out))
        if files != [f"rank{r}.json" for r in range(ranks)]:
            raise RuntimeError(f"expected one result file per rank, got {files}")
        with open(os.path.join(out, "rank0.json")) as f:
            return json.load(f)


def _cfg(name, option, spars, buff):
    return f"{name}:{option}:{'' if spars is None else spars}:{buff or 4194304}"


@functools.lru_cache(maxsize=None)
def measure(rounds, quick):
    """{case: {"single": ..., "dist": {config: ...}}}, each figure the median
    over `rounds` alternating launches."""
    if shutil.which("mpirun") is None:
        raise RuntimeError("mpirun is not installed")
    out = {}
    for model, hw, steps, bucket in CASES[:1] if quick else CASES:
        if quick:
            steps = 3
        dist_cfgs = [_cfg(*o) for o in OPTIONS]
        dist_cfgs += [_cfg("fp32 buckets", "fp32", None, bucket),
                      _cfg("fp32 one message", "fp32", None, ONE_MESSAGE)]
        singles, dists = [], []
        for _ in range(rounds):
            singles.append(_launch(model, hw, 2 * PER_RANK_BATCH, 2, steps,
                                   [_cfg("single", "single", None, None)], 1)["single"])
            dists.append(_launch(model, hw, PER_RANK_BATCH, 1, steps, dist_cfgs, 2))
        med = lambda rs, key: statistics.median(r[key] for r in rs)  # noqa: E731
        out[model] = {
            "single": {k: med(singles, k) for k in ("step", "params")},
            "dist": {c.split(":")[0]: {k: med([d[c.split(":")[0]] for d in dists], k)
                                       for k in ("step", "bytes", "wait", "world", "params")}
                     for c in dist_cfgs},
            "bucket": bucket,
        }
    return out


def step_rows(rounds, quick=False):
    rows = []
    for model, r in measure(rounds, quick).items():
        t1 = r["single"]["step"]
        for name, *_ in OPTIONS:
            d = r["dist"][name]
            rows.append((f"{LABELS[model]} step, 2 ranks {name}", d["step"], t1,
                         f"32 samples per step either way; all-reduce wait {d['wait'] * 1e3:.2f} "
                         f"ms/step"))
    return rows


def bytes_rows(rounds, quick=False):
    rows = []
    for model, r in measure(rounds, quick).items():
        fp32 = r["dist"]["fp32"]["bytes"]
        for name, *_ in OPTIONS:
            b = r["dist"][name]["bytes"]
            rows.append((f"{LABELS[model]} bytes sent per step per rank, {name}", b, fp32,
                         f"{b / fp32:.3f} of fp32; {r['dist'][name]['params']} parameters"))
    return rows


def overlap_rows(rounds, quick=False):
    rows = []
    for model, r in measure(rounds, quick).items():
        a, b = r["dist"]["fp32 buckets"], r["dist"]["fp32 one message"]
        rows.append((f"{LABELS[model]} last gradient -> averaged gradients, buckets of "
                     f"{r['bucket']} elements vs one message", a["wait"], b["wait"],
                     f"step {a['step'] * 1e3:.1f} vs {b['step'] * 1e3:.1f} ms"))
    return rows


# (title, fn(rounds, quick), column names, (scale, unit)) for bench/run.py
SECTIONS = [
    ("Distributed training steps (2 ranks x 1 thread, batch 16 each, vs 1 rank x 2 threads, "
     "batch 32)", step_rows, ("2 ranks", "1 rank"), (1e3, "ms")),
    ("Distributed bytes sent per step (each rank's payload to MPI)", bytes_rows,
     ("option", "fp32"), (1 / 2 ** 10, "KiB")),
    ("Distributed all-reduce overlap with backward (Wait time per step)", overlap_rows,
     ("buckets", "one message"), (1e3, "ms")),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--hw", type=int, default=0)
    ap.add_argument("--batch", type=int, default=PER_RANK_BATCH)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--out")
    ap.add_argument("--configs", nargs="+")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--smoke", action="store_true", help="the CNN only, 3 steps, one round")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    rounds = 1 if args.smoke else args.rounds
    for title, fn, (a, b), (scale, unit) in SECTIONS:
        print(f"== {title}")
        for name, x, y, note in fn(rounds, args.smoke):
            print(f"   {name:70s} {a} {x * scale:10.3f} {unit}  {b} {y * scale:10.3f} {unit}  "
                  f"{note}")


if __name__ == "__main__":
    sys.exit(main())
