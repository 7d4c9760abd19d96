"""Benchmarks against the peers, in one process, at the same thread count.

Each figure is our median time / the peer's median time (below 1.0 = we are
faster). Ours and the peer's runs alternate in rounds so that drift of this
shared machine hits both; each round is the median of several calls after a
warm-up. Writes bench/RESULTS.md.

    .venv/bin/python bench/run.py [--threads N] [--quick]
"""
from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit

import numpy as np
import torch

from singa import _singa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_infer  # noqa: E402
import real_bench  # noqa: E402
import records  # noqa: E402


def median_time(fn, calls: int) -> float:
    fn()  # warm-up (primitive creation, caches)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare(ours, peer, calls: int, rounds: int) -> tuple[float, float]:
    """Median over rounds of each side's per-round median, in seconds."""
    a, b = [], []
    for _ in range(rounds):
        a.append(median_time(ours, calls))
        b.append(median_time(peer, calls))
    return statistics.median(a), statistics.median(b)


def ct(a: np.ndarray):
    return _singa.CTensor.from_numpy(np.ascontiguousarray(a))


def bench_matmul(sizes, rounds):
    rows = []
    for n in sizes:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        sa, sb = ct(a), ct(b)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        calls = max(3, int(2e9 / (2 * n ** 3)))
        ours, peer = compare(lambda: _singa.call_op("MatMul", [sa, sb]),
                             lambda: torch.matmul(ta, tb), min(calls, 200), rounds)
        gflops = 2 * n ** 3 / ours / 1e9
        rows.append((f"MatMul {n}x{n}x{n} fp32", ours, peer, f"{gflops:.0f} GFLOP/s ours"))
    return rows


# (in_channels, out_channels, kernel, stride, pad, input size, count in ResNet-18)
RESNET18_CONVS = [
    (3, 64, 7, 2, 3, 224, 1),
    (64, 64, 3, 1, 1, 56, 4),
    (64, 128, 3, 2, 1, 56, 1),
    (128, 128, 3, 1, 1, 28, 3),
    (64, 128, 1, 2, 0, 56, 1),
    (128, 256, 3, 2, 1, 28, 1),
    (256, 256, 3, 1, 1, 14, 3),
    (128, 256, 1, 2, 0, 28, 1),
    (256, 512, 3, 2, 1, 14, 1),
    (512, 512, 3, 1, 1, 7, 3),
    (256, 512, 1, 2, 0, 14, 1),
]


def bench_convs(batch, rounds):
    rows = []
    tot_ours = tot_peer = 0.0
    for cin, cout, k, s, p, hw, count in RESNET18_CONVS:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((batch, cin, hw, hw), dtype=np.float32)
        w = rng.standard_normal((cout, cin, k, k), dtype=np.float32) * 0.05
        sx, sw = ct(x), ct(w)
        tx, tw = torch.from_numpy(x), torch.from_numpy(w)
        attrs = {"kernel_shape": [k, k], "strides": [s, s], "pads": [p, p, p, p]}
        flops = 2 * batch * cout * cin * k * k * ((hw + 2 * p - k) // s + 1) ** 2
        calls = max(3, min(50, int(3e9 / flops)))
        with torch.no_grad():
            ours, peer = compare(lambda: _singa.call_op("Conv", [sx, sw], attrs),
                                 lambda: torch.nn.functional.conv2d(tx, tw, stride=s, padding=p),
                                 calls, rounds)
        tot_ours += ours * count
        tot_peer += peer * count
        rows.append((f"Conv b{batch} {cin}->{cout} k{k} s{s} {hw}x{hw}", ours, peer,
                     f"{flops / ours / 1e9:.0f} GFLOP/s ours"))
    rows.append((f"ResNet-18 convolutions, batch {batch} (sum of 20 layers)", tot_ours, tot_peer, ""))
    return rows


def bench_overhead(rounds):
    a = _singa.CTensor.from_numpy(np.ones((2, 3), np.float32))
    b = _singa.CTensor.from_numpy(np.ones((2, 3), np.float32))
    ta, tb = torch.ones(2, 3), torch.ones(2, 3)
    try:
        from singa import tensor
        x, y = tensor.from_numpy(np.ones((2, 3), np.float32)), tensor.from_numpy(np.ones((2, 3), np.float32))
        ours_fn, label = (lambda: x + y), "Add 2x3 from Python (singa.tensor.Tensor + Tensor)"
    except (ImportError, AttributeError):
        ours_fn, label = (lambda: _singa.add(a, b)), "Add 2x3 from Python (_singa.add)"
    n = 20000
    ours_t, peer_t = [], []
    for _ in range(rounds * 3):  # interleaved, so load drift hits both
        ours_t.append(timeit.timeit(ours_fn, number=n) / n)
        peer_t.append(timeit.timeit(lambda: ta + tb, number=n) / n)
    ours, peer = statistics.median(ours_t), statistics.median(peer_t)
    return [(label + " per-op overhead", ours, peer, "")]


# ---- training steps ------------------------------------------------------------
# (model, batch, input side or None for the model's own, timed steps per round)
TRAIN_CASES = [("cnn", 64, None, 50), ("resnet18", 16, 224, 2), ("mobilenetv2", 16, 224, 2)]
TRAIN_LABELS = {"cnn": "digits CNN b64 1x8x8", "resnet18": "ResNet-18 b16 224x224",
                "mobilenetv2": "MobileNet-V2 b16 224x224"}


def _train_fns(name, batch, hw):
    """Step closures for singa eager, singa graph and torch eager, all from
    the same initial weights (bench/models.py)."""
    sys.path.insert(0, HERE)
    import models
    from singa import tensor

    x, y = models.data(name, batch, hw)
    _, ref = models.build(name)
    tx, ty = models.singa_inputs(x, y)
    eager = models.singa_model(name, tx, use_graph=False, ref=ref)
    graph = models.singa_model(name, tx, use_graph=True, ref=ref)
    torch_step = models.torch_step_fn(ref, torch.from_numpy(x), torch.from_numpy(y))

    def singa_step(m):
        def step():
            _, loss = m(tx, ty)
            tensor.to_numpy(loss)  # the step is complete when its loss is readable
        return step

    return singa_step(eager), singa_step(graph), torch_step


def compare_many(fns, calls: int, rounds: int) -> list[float]:
    """Like compare, for any number of alternatives interleaved in rounds."""
    per = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            per[i].append(median_time(fn, calls))
    return [statistics.median(t) for t in per]


def bench_training(rounds, quick=False):
    rows = []
    for name, batch, hw, calls in TRAIN_CASES[:1] if quick else TRAIN_CASES:
        eager, graph, peer = _train_fns(name, batch, hw)
        graph()  # the capture (and the memory plan) happen on the first call
        load = os.getloadavg()[0]
        t_eager, t_graph, t_peer = compare_many([eager, graph, peer], calls, rounds)
        label = TRAIN_LABELS[name]
        note = f"load {load:.1f}"
        rows.append((f"{label} training step, graph mode", t_graph, t_peer, note))
        rows.append((f"{label} training step, eager", t_eager, t_peer,
                     f"graph/eager {t_graph / t_eager:.2f}; {note}"))
    return rows


def _status_kib(field) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def memory_child(framework, name, batch, hw, steps):
    """Runs in a fresh process: `steps` training steps; prints peak RSS
    growth (KiB) over the RSS before the model was built, and singa's pool
    peak (bytes)."""
    import resource
    sys.path.insert(0, HERE)
    import models
    from singa import device, tensor

    x, y = models.data(name, batch, hw)
    # ru_maxrss is the whole process's peak, which the imports may have set
    # and which cannot be reset; writing 5 to clear_refs resets the kernel's
    # peak RSS (VmHWM) to the current RSS, so VmHWM below is the training
    # loop's own peak (ru_maxrss is the fallback where clear_refs is missing).
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        peak_of = (lambda: _status_kib("VmHWM"))
    except OSError:
        peak_of = (lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    before = _status_kib("VmRSS")
    device.reset_peak_memory()
    if framework == "torch":
        _, ref = models.build(name)
        step = models.torch_step_fn(ref, torch.from_numpy(x), torch.from_numpy(y))
    else:
        ours, _ = models.build(name)
        tx, ty = models.singa_inputs(x, y)
        from singa import opt
        ours.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
        ours.compile([tx], is_train=True, use_graph=framework == "singa-graph")
        step = (lambda: tensor.to_numpy(ours(tx, ty)[1]))
    for _ in range(steps):
        step()
    peak = peak_of()
    print(f"{peak - before} {device.peak_memory()}")


def bench_memory(threads, quick=False):
    """Peak memory of each framework's training loop, each in its own process."""
    rows = []
    for name, batch, hw, _ in TRAIN_CASES[:1] if quick else TRAIN_CASES:
        got = {}
        for fw in ("singa-graph", "singa-eager", "torch"):
            out = subprocess.run([sys.executable, __file__, "--threads", str(threads),
                                  "--memory-child", fw, name, str(batch), str(hw or 0)],
                                 capture_output=True, text=True, check=True).stdout.split()
            got[fw] = (int(out[-2]) * 1024, int(out[-1]))
        peer = got["torch"][0]
        for fw in ("singa-graph", "singa-eager"):
            rss, pool = got[fw]
            rows.append((f"{TRAIN_LABELS[name]} peak RSS growth, {fw.split('-')[1]} mode", rss,
                         peer, f"singa pool peak {pool / 2 ** 20:.0f} MiB"))
    return rows


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        flags = open("/proc/cpuinfo").read()
        isa = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile") if f" {f}" in flags]
    except OSError:
        isa = []
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    return (f"{model}, {os.cpu_count()} cores ({', '.join(isa)}), {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}, "
            f"torch {torch.__version__}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="fewer sizes and rounds (smoke run)")
    ap.add_argument("--only", help="run only the sections whose title contains this")
    ap.add_argument("--memory-child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    _singa.set_num_threads(args.threads)
    if args.memory_child:
        fw, name, batch, hw = args.memory_child
        return memory_child(fw, name, int(batch), int(hw) or None, 3)
    rounds = 2 if args.quick else args.rounds

    rows = []
    sections = [
        ("MatMul", lambda: bench_matmul([256] if args.quick else [256, 1024, 2048], rounds)),
        ("ResNet-18 convolutions, batch 1", lambda: bench_convs(1, rounds)),
        ("ResNet-18 convolutions, batch 16", lambda: bench_convs(16, rounds)),
        ("Per-op overhead", lambda: bench_overhead(rounds)),
        ("Training steps (forward, backward, SGD momentum 0.9)",
         lambda: bench_training(rounds, args.quick)),
        ("Training peak memory (fresh process each, 3 steps)",
         lambda: bench_memory(args.threads, args.quick)),
        # peer: onnxruntime (bench/onnx_infer.py); --quick: ResNet-18 at batch 1 only
        ("ONNX inference latency vs onnxruntime",
         lambda: onnx_infer.bench_latency(compare_many, args.threads, rounds, args.quick)),
        ("ONNX inference model load time vs onnxruntime",
         lambda: onnx_infer.bench_load(compare_many, args.threads, rounds, args.quick)),
        ("ONNX inference peak memory vs onnxruntime (fresh process each)",
         lambda: onnx_infer.bench_memory(args.threads, args.quick)),
        (records.TIME, lambda: records.bench_time(compare_many, rounds)),
        (records.MEMORY, lambda: records.bench_memory(rounds)),
        (records.COPY_OUT, lambda: records.bench_copy_out(compare_many, rounds)),
        (CONFORMANCE, bench_conformance),
        # peer: onnxruntime, on models in real exporters' styles (bench/real_bench.py)
        *[(title, functools.partial(fn, compare_many, args.threads, rounds))
          for title, fn, _ in real_bench.SECTIONS],
    ]
    if args.quick:
        sections = [sections[i] for i in (0, 3, 4, 5, 6, 7, 8)]
    else:
        sys.path.insert(0, HERE)
        import dist
        sections += [(title, functools.partial(fn, rounds=max(1, rounds // 2)))
                     for title, fn, cols, unit in dist.SECTIONS]
        COLUMNS.update({title: (cols, unit) for title, fn, cols, unit in dist.SECTIONS})
    if args.only:
        sections = [s for s in sections if args.only.lower() in s[0].lower()]
    out = []
    for title, fn in sections:
        print(f"== {title}", flush=True)
        try:
            section = fn()
        except Exception as e:  # an op not available yet is reported, not fatal
            print(f"   skipped: {type(e).__name__}: {e}")
            out.append((title, None, str(e)))
            continue
        scale, unit = _unit(title)
        a, b = _columns(title)
        for name, ours, peer, note in section:
            print(f"   {name:58s} {a} {ours * scale:9.3f} {unit}  {b} {peer * scale:9.3f} {unit}  "
                  f"ratio {ours / peer:5.2f}  {note}", flush=True)
        out.append((title, section, None))

    if not args.quick and not args.only:  # a partial run leaves RESULTS.md as it is
        write_results(out, args)


# Sections whose two columns are not singa and its peer's times (bench/dist.py's,
# the conformance counts), or that get their own table (bench/records.py's,
# bench/real_bench.py's): title -> ((first column, second column), (scale, unit)).
CONFORMANCE = "ONNX backend test cases passed (node, simple, pytorch suites)"
COLUMNS = {CONFORMANCE: (("singa", "onnxruntime"), (1, "cases")), **records.COLUMNS,
           **real_bench.COLUMNS}


def bench_conformance():
    """Cases of onnx's backend suites each runtime passes (bench/conformance_counts.py)."""
    import conformance_counts
    return [(suite, ours, peer, f"of {total}")
            for suite, total, ours, peer in conformance_counts.count()]


def _peer(title):
    return "onnxruntime" if "onnx" in title.lower() else "torch"


def _columns(title):
    return COLUMNS[title][0] if title in COLUMNS else ("ours", _peer(title))


def _unit(title):
    """(scale, unit) of a section's figures: seconds shown in ms, bytes in MiB."""
    if title in COLUMNS:
        return COLUMNS[title][1]
    return (1 / 2 ** 20, "MiB") if "memory" in title else (1e3, "ms")


def write_results(out, args):
    lines = [
        "# Benchmark results",
        "",
        f"Produced by `make bench` (`.venv/bin/python bench/run.py`) on {datetime.date.today()}.",
        f"Machine: {machine()}.",
        f"Threads: {args.threads} for singa and its peer, in one process. Each time is the median over "
        f"{args.rounds} alternating rounds of the per-round median; ratio = singa / peer (below 1.0: singa is faster).",
        "The peer is torch, except in the ONNX sections: onnxruntime (CPU provider, all graph optimizations, "
        "intra-op threads = singa's; bench/onnx_infer.py).",
        "",
        "| benchmark | singa (ms) | peer (ms) | ratio | note |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for title, section, err in out:
        if title in COLUMNS:
            continue  # their own tables, below
        if section is None:
            lines.append(f"| {title} | | | | not run: {err} |")
            continue
        scale, unit = _unit(title)
        for name, ours, peer, note in section:
            if unit != "ms":
                note = f"{unit}; {note}"
            lines.append(f"| {name} | {ours * scale:.4f} | {peer * scale:.4f} | {ours / peer:.2f} | {note} |")
    for title, section, err in out:
        if title not in COLUMNS:
            continue
        (a, b), (scale, unit) = COLUMNS[title]
        lines += ["", f"### {title}", "", f"| benchmark | {a} ({unit}) | {b} ({unit}) | ratio | note |",
                  "| --- | ---: | ---: | ---: | --- |"]
        if section is None:
            lines.append(f"| {title} | | | | not run: {err} |")
            continue
        digits = 0 if unit == "cases" else 4
        for name, x, y, note in section:
            lines.append(f"| {name} | {x * scale:.{digits}f} | {y * scale:.{digits}f} | "
                         f"{x / y:.2f} | {note} |")
    path = os.path.join(HERE, "RESULTS.md")
    notes = ""  # hand-written analysis below "## Notes" survives a re-run
    if os.path.exists(path):
        old = open(path).read()
        if "\n## Notes" in old:
            notes = old[old.index("\n## Notes"):]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n" + notes)
    os.replace(tmp, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
