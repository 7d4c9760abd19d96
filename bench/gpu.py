"""GPU benchmarks against torch eager on the same GPU, in one process.

Each figure is singa's median time / torch's median time (below 1.0: singa
is faster), the two alternating in rounds. Run on a GPU machine by
tools/gpu/check.sh; prints a markdown table (and writes it to --out).
The cases:

- MatMul 4096x4096x4096 in float32 and float16;
- Add with broadcasting, Relu and Softmax over 64M float32 elements;
- a training step of an MLP (batch 512, 1024-4096-4096-10, SGD), eager;
- training steps of bench/models.py's ResNet-18 (graph mode and eager) and
  MobileNet-V2 (graph mode), batch 64, 3x224x224, 1000 classes, SGD
  momentum 0.9, cross entropy, both from the same initial weights;
- ResNet-18 inference (eval mode, no gradients), batch 1 and 32, graph mode;
- ONNX inference through sonnx on the GPU (the plan), ResNet-18 and
  BERT-base (seq 128) of examples/onnx/zoo_models.py at batch 1 and 32,
  against the same torch modules, inputs and outputs on the GPU.

Float32 but for the float16 MatMul; torch without TF32 (singa has none),
cudnn.benchmark on.
A case where singa (or torch) raises gets a row with the error, and torch's
time alone where torch ran; cases left when --budget seconds have passed
(or on SIGTERM) get a row saying so, so that the table is always written.
Progress (each case as it starts) goes to stderr.

    python bench/gpu.py [--out bench.md] [--rounds 5] [--cases resnet,mlp] [--budget 240]
                        [--profile]
"""
from __future__ import annotations

import argparse
import gc
import os
import signal
import statistics
import sys
import time

import numpy as np
import torch

from singa import autograd, device, opt, tensor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "examples", "onnx"))
import models  # noqa: E402
import zoo_models as zm  # noqa: E402


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


# ---- bench/models.py's models: a step closure of each framework -------------------
# Sizes and devices are parameters, so that the code paths run on the CPU at
# a small size too.


def singa_train_step(name, x, y, dev, ref, use_graph=True):
    """One singa training step (SGD momentum 0.9, softmax cross entropy) of
    bench/models.py's `name` on dev, from the CPU torch model ref's weights;
    the closure returns (logits, loss)."""
    tx, ty = tensor.from_numpy(x, dev), tensor.from_numpy(y.astype(np.int32), dev)
    m = models.singa_model(name, tx, use_graph=use_graph, ref=ref)
    return lambda: m(tx, ty)


def torch_train_step(ref, x, y, tdev):
    """One torch training step (SGD momentum 0.9, cross entropy) of ref,
    moved to tdev; the closure returns the loss."""
    ref.to(tdev)
    return models.torch_step_fn(ref, torch.from_numpy(x).to(tdev), torch.from_numpy(y).to(tdev))


def singa_inference(name, x, dev, ref, use_graph=True):
    """An eval-mode singa forward of bench/models.py's `name` on dev, from the
    CPU torch model ref's weights; the closure returns the logits."""
    tx = tensor.from_numpy(x, dev)
    m = models.MODELS[name][0]()
    m.compile([tx], is_train=False, use_graph=use_graph)
    models.copy_weights(ref, m)
    return lambda: m(tx)


def torch_inference(ref, x, tdev):
    """An eval-mode torch forward without gradients of ref, moved to tdev."""
    ref.to(tdev).eval()
    tx = torch.from_numpy(x).to(tdev)

    def forward():
        with torch.no_grad():
            return ref(tx)

    return forward


def model_pair(name, batch, hw, dev, tdev, train=True, use_graph=True):
    """(singa closure, torch closure) of a training step (train) or an
    inference forward of `name` at batch x 3 x hw x hw, both from the same
    initial weights. singa's closure has run once (in graph mode the
    capture, so that the warm-up of the timing replays); where singa raises,
    its exception is in place of its closure (torch's is made all the same)."""
    x, y = models.data(name, batch, hw)
    _, ref = models.build(name)  # torch's weights, copied into singa's model
    try:
        ours = (singa_train_step(name, x, y, dev, ref, use_graph) if train else
                singa_inference(name, x, dev, ref, use_graph))
        ours()
    except Exception as e:  # an op the GPU lacks, say: torch is still timed
        e.__traceback__ = None  # holds no frame (and no tensor) alive
        ours = e
    theirs = torch_train_step(ref, x, y, tdev) if train else torch_inference(ref, x, tdev)
    return ours, theirs


def onnx_pair(name, batch, dev, tdev):
    """(singa closure, torch closure) of an inference of the zoo's `name`
    (examples/onnx/zoo_models.py, full size, random weights): its ONNX export
    run by sonnx on dev (the plan built by a first run), against the same
    torch module on tdev without gradients; inputs and outputs stay on the
    GPU. singa's is an exception where it raised, as in model_pair."""
    from singa import sonnx
    feeds = zm.sample_feeds(name, batch, "full")
    try:
        rep = sonnx.prepare(zm.export(name, zm.NEWEST_OPSET, "full"), device=dev)
        inputs = [tensor.from_numpy(v, dev) for v in feeds.values()]
        rep.run(inputs)
        ours = lambda: rep.run(inputs)  # noqa: E731
    except Exception as e:
        e.__traceback__ = None
        ours = e
    module = zm.build(name, "full").to(tdev)
    args = [torch.from_numpy(v).to(tdev) for v in feeds.values()]

    def theirs():
        with torch.no_grad():
            return module(*args)

    return ours, theirs


def first_line(e, width=80):
    """The exception's type and first line, at most `width` characters, fit
    for a markdown table cell."""
    text = str(e).strip().splitlines()
    text = f"{type(e).__name__}: {text[0]}" if text else type(e).__name__
    text = text.replace("|", "/")
    return text if len(text) <= width else text[:width - 3] + "..."


def profile(name, fn, sync, calls):
    """The CUDA kernels and host calls of `calls` runs of fn, by GPU time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile
    sync()
    with torch_profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        wall = (time.perf_counter() - t0) / calls
    events = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
    busy = sum(e.self_device_time_total for e in events) / calls / 1e3
    print(f"profile of singa's side of {name}: {wall * 1e3:.3f} ms a call, GPU busy "
          f"{busy:.3f} ms", file=sys.stderr)
    for e in sorted(events, key=lambda e: -e.self_device_time_total)[:12]:
        print(f"  {e.self_device_time_total / calls / 1e3:8.3f} ms {e.count // calls:4d}x "
              f"{e.key[:100]}", file=sys.stderr)
    sys.stderr.flush()


class Stopped(Exception):
    """SIGTERM (tools/gpu/check.sh's timeout): the cases left are skipped."""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cases", help="comma-separated substrings of the case names to run "
                   "(case-insensitive; default: all)")
    p.add_argument("--budget", type=float, default=240,
                   help="seconds after which the cases left are skipped")
    p.add_argument("--profile", action="store_true",
                   help="after each case, print the CUDA kernels of singa's side by time "
                        "(torch's profiler sees every kernel of the process) to stderr")
    args = p.parse_args()
    torch.backends.cudnn.allow_tf32 = False  # singa computes float32 without TF32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    start = time.perf_counter()
    stopped = []

    def stop(signum, frame):
        stopped.append(signum)
        raise Stopped(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    wanted = [w.strip().lower() for w in (args.cases or "").split(",") if w.strip()]
    dev = device.create_cuda_gpu()
    sync = dev.Sync
    rows = []

    def matmul(dt):
        a = np.random.default_rng(0).standard_normal((4096, 4096)).astype(dt)
        sa, sb = tensor.from_numpy(a, dev), tensor.from_numpy(a, dev)
        ta = torch.from_numpy(a).cuda()
        return (lambda: autograd.matmul(sa, sb)), (lambda: ta @ ta)

    def elementwise(op):
        rng = np.random.default_rng(0)
        x = rng.standard_normal((64, 1024, 1024)).astype(np.float32)
        if op == "add":
            b = rng.standard_normal((1024,)).astype(np.float32)
            sx, sbias = tensor.from_numpy(x, dev), tensor.from_numpy(b, dev)
            tx, tbias = torch.from_numpy(x).cuda(), torch.from_numpy(b).cuda()
            return (lambda: autograd.add(sx, sbias)), (lambda: tx + tbias)
        if op == "relu":
            sx, tx = tensor.from_numpy(x, dev), torch.from_numpy(x).cuda()
            return (lambda: autograd.relu(sx)), (lambda: torch.relu(tx))
        x = x.reshape(-1, 1024)
        s2, t2 = tensor.from_numpy(x, dev), torch.from_numpy(x).cuda()
        return (lambda: autograd.softmax(s2, -1)), (lambda: torch.softmax(t2, -1))

    # One training step of an MLP (batch 512, 1024-4096-4096-10), SGD.
    def mlp():
        rng = np.random.default_rng(0)
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

        return singa_step, torch_step

    # (name, a function making the (singa, torch) closures, timed calls a round);
    # bench/models.py's models get few calls: a step takes tens of ms.
    train = "training step (batch 64, 3x224x224, SGD momentum 0.9)"
    cases = [(f"MatMul 4096x4096x4096 {np.dtype(dt).name}", lambda dt=dt: matmul(dt), 20)
             for dt in (np.float32, np.float16)]
    cases += [("Add [64,1024,1024] + [1024]", lambda: elementwise("add"), 20),
              ("Relu [64,1024,1024]", lambda: elementwise("relu"), 20),
              ("Softmax [65536,1024] axis -1", lambda: elementwise("softmax"), 20),
              ("MLP training step (batch 512, 1024-4096-4096-10, SGD)", mlp, 5),
              (f"ResNet-18 {train}, graph mode",
               lambda: model_pair("resnet18", 64, 224, dev, "cuda"), 3),
              (f"ResNet-18 {train}, eager",
               lambda: model_pair("resnet18", 64, 224, dev, "cuda", use_graph=False), 3)]
    if "mobilenetv2" in models.MODELS:
        cases.append((f"MobileNet-V2 {train}, graph mode",
                      lambda: model_pair("mobilenetv2", 64, 224, dev, "cuda"), 3))
    cases += [(f"ResNet-18 inference (batch {b}, 3x224x224, eval, no grad), graph mode",
               lambda b=b: model_pair("resnet18", b, 224, dev, "cuda", train=False), calls)
              for b, calls in ((1, 20), (32, 5))]
    cases += [(f"{label} ONNX inference (batch {b}), sonnx on the GPU",
               lambda n=n, b=b: onnx_pair(n, b, dev, "cuda"), calls)
              for n, label in (("resnet18", "ResNet-18 224x224"), ("bert", "BERT-base seq 128"))
              for b, calls in ((1, 20), (32, 5))]

    def case(name, make, calls):
        """Times the singa closure make() returns against the torch one (where
        singa's is an exception, model_pair's way of saying it raised, torch's
        alone): a row of the figures, or of the error and torch's time."""
        elapsed = time.perf_counter() - start
        if stopped or elapsed > args.budget:
            why = "stopped by SIGTERM" if stopped else f"past the budget of {args.budget:.0f} s"
            rows.append((name, None, None, f"skipped: {why}"))
            return
        print(f"[{elapsed:6.1f} s] {name}", file=sys.stderr, flush=True)
        ours = theirs = None
        try:
            ours, theirs = make()
            if isinstance(ours, Exception):
                raise ours
            s, t = compare(ours, theirs, sync, args.rounds, calls)
            rows.append((name, s, t, None))
            if args.profile:
                try:
                    profile(name, ours, sync, calls)
                except Exception as e:  # a diagnostic: the figures stand
                    print(f"profile of {name} failed: {first_line(e)}", file=sys.stderr)
        except Exception as e:
            t = None
            if theirs is not None and not stopped:
                try:
                    t = statistics.median(timed(theirs, torch.cuda.synchronize, calls)
                                          for _ in range(args.rounds))
                except Exception:
                    pass
            rows.append((name, None, t, first_line(e)))
        finally:
            ours = theirs = None
            autograd.training = False
            gc.collect()  # the case's models and tensors, before the next case's
            torch.cuda.empty_cache()
            device.empty_cache(dev)

    for name, make, calls in cases:
        if wanted and not any(w in name.lower() for w in wanted):
            continue
        try:
            case(name, make, calls)
        except Stopped:  # outside the timing (the cleanup, say): the next cases are skipped
            if not rows or rows[-1][0] != name:
                rows.append((name, None, None, "stopped by SIGTERM"))

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        name = torch.cuda.get_device_name()
    except Exception as e:
        name = first_line(e)
    lines = [f"GPU: {name}; torch {torch.__version__}; median of {args.rounds} rounds", "",
             "| case | singa ms | torch ms | singa / torch |", "| --- | ---: | ---: | ---: |"]
    for n, s, t, err in rows:
        torch_ms = "" if t is None else f"{t * 1e3:.3f}"
        lines.append(f"| {n} | {err} | {torch_ms} | |" if err else
                     f"| {n} | {s * 1e3:.3f} | {torch_ms} | {s / t:.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
