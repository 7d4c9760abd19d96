"""GPU benchmarks against torch eager on the same GPU, in one process.

Each figure is singa's median time / torch's median time (below 1.0: singa
is faster), the two alternating in rounds. Run on a GPU machine by
tools/gpu/check.sh; prints a markdown table (and writes it to --out).

    python bench/gpu.py [--out bench.md] [--rounds 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from singa import autograd, device, opt, tensor


def timed(fn, sync, calls):
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    sync()
    return (time.perf_counter() - t0) / calls


def compare(ours, theirs, sync_ours, rounds, calls):
    a, b = [], []
    for _ in range(rounds):
        a.append(timed(ours, sync_ours, calls))
        b.append(timed(theirs, torch.cuda.synchronize, calls))
    return statistics.median(a), statistics.median(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    dev = device.create_cuda_gpu()
    sync = dev.Sync
    rng = np.random.default_rng(0)
    rows = []

    def case(name, ours, theirs, calls=20):
        s, t = compare(ours, theirs, sync, args.rounds, calls)
        rows.append((name, s * 1e3, t * 1e3, s / t))

    for dt, tdt in ((np.float32, torch.float32), (np.float16, torch.float16)):
        a = rng.standard_normal((4096, 4096)).astype(dt)
        sa, sb = tensor.from_numpy(a, dev), tensor.from_numpy(a, dev)
        ta = torch.from_numpy(a).cuda()
        case(f"MatMul 4096x4096x4096 {np.dtype(dt).name}", lambda: autograd.matmul(sa, sb),
             lambda: ta @ ta)
    x = rng.standard_normal((64, 1024, 1024)).astype(np.float32)
    b = rng.standard_normal((1024,)).astype(np.float32)
    sx, sbias = tensor.from_numpy(x, dev), tensor.from_numpy(b, dev)
    tx, tbias = torch.from_numpy(x).cuda(), torch.from_numpy(b).cuda()
    case("Add [64,1024,1024] + [1024]", lambda: autograd.add(sx, sbias), lambda: tx + tbias)
    case("Relu [64,1024,1024]", lambda: autograd.relu(sx), lambda: torch.relu(tx))
    s2 = tensor.from_numpy(x.reshape(-1, 1024), dev)
    t2 = tx.reshape(-1, 1024)
    case("Softmax [65536,1024] axis -1", lambda: autograd.softmax(s2, -1),
         lambda: torch.softmax(t2, -1))

    # One training step of an MLP (batch 512, 1024-4096-4096-10), SGD.
    xb = rng.standard_normal((512, 1024)).astype(np.float32)
    yb = rng.integers(0, 10, 512).astype(np.int32)
    shapes = [(1024, 4096), (4096,), (4096, 4096), (4096,), (4096, 10), (10,)]
    init = [rng.standard_normal(s).astype(np.float32) * 0.01 for s in shapes]
    sp = [tensor.from_numpy(w, dev) for w in init]
    for t in sp:
        t.requires_grad = t.stores_grad = True
    sgd = opt.SGD(lr=0.01)
    sxb, syb = tensor.from_numpy(xb, dev), tensor.from_numpy(yb, dev)

    def singa_step():
        autograd.training = True
        h = autograd.relu(autograd.add_bias(autograd.matmul(sxb, sp[0]), sp[1]))
        h = autograd.relu(autograd.add_bias(autograd.matmul(h, sp[2]), sp[3]))
        out = autograd.add_bias(autograd.matmul(h, sp[4]), sp[5])
        sgd.backward_and_update(autograd.softmax_cross_entropy(out, syb))

    tp = [torch.from_numpy(w).cuda().requires_grad_() for w in init]
    tsgd = torch.optim.SGD(tp, lr=0.01)
    txb, tyb = torch.from_numpy(xb).cuda(), torch.from_numpy(yb.astype(np.int64)).cuda()

    def torch_step():
        h = torch.relu(txb @ tp[0] + tp[1])
        h = torch.relu(h @ tp[2] + tp[3])
        loss = torch.nn.functional.cross_entropy(h @ tp[4] + tp[5], tyb)
        tsgd.zero_grad()
        loss.backward()
        tsgd.step()

    case("MLP training step (batch 512, 1024-4096-4096-10, SGD)", singa_step, torch_step, calls=5)
    autograd.training = False

    name = torch.cuda.get_device_name()
    lines = [f"GPU: {name}; torch {torch.__version__}; median of {args.rounds} rounds", "",
             "| case | singa ms | torch ms | singa / torch |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {n} | {s:.3f} | {t:.3f} | {r:.2f} |" for n, s, t, r in rows]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
