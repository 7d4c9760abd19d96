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
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    _singa.set_num_threads(args.threads)
    rounds = 2 if args.quick else args.rounds

    rows = []
    sections = [
        ("MatMul", lambda: bench_matmul([256] if args.quick else [256, 1024, 2048], rounds)),
        ("ResNet-18 convolutions, batch 1", lambda: bench_convs(1, rounds)),
        ("ResNet-18 convolutions, batch 16", lambda: bench_convs(16, rounds)),
        ("Per-op overhead", lambda: bench_overhead(rounds)),
    ]
    if args.quick:
        sections = [sections[0], sections[3]]
    out = []
    for title, fn in sections:
        print(f"== {title}", flush=True)
        try:
            section = fn()
        except Exception as e:  # an op not available yet is reported, not fatal
            print(f"   skipped: {type(e).__name__}: {e}")
            out.append((title, None, str(e)))
            continue
        for name, ours, peer, note in section:
            print(f"   {name:58s} ours {ours * 1e3:9.3f} ms  torch {peer * 1e3:9.3f} ms  "
                  f"ratio {ours / peer:5.2f}  {note}", flush=True)
        out.append((title, section, None))

    if not args.quick:
        write_results(out, args)


def write_results(out, args):
    lines = [
        "# Benchmark results",
        "",
        f"Produced by `make bench` (`.venv/bin/python bench/run.py`) on {datetime.date.today()}.",
        f"Machine: {machine()}.",
        f"Threads: {args.threads} for both singa and torch, in one process. Each time is the median over "
        f"{args.rounds} alternating rounds of the per-round median; ratio = singa / torch (below 1.0: singa is faster).",
        "",
        "| benchmark | singa (ms) | torch (ms) | ratio | note |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for title, section, err in out:
        if section is None:
            lines.append(f"| {title} | | | | not run: {err} |")
            continue
        for name, ours, peer, note in section:
            lines.append(f"| {name} | {ours * 1e3:.4f} | {peer * 1e3:.4f} | {ours / peer:.2f} | {note} |")
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
