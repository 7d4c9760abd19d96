"""What the export's records cost. Every op application records its
structure (op, attributes, links to its inputs' records) so that
sonnx.to_onnx works after any forward, also in inference; an imported
model's planned run records one node for the whole run. Measured in one
process with recording on (the default) against recording off
(set_recording(False), C++'s NoGradGuard), alternating rounds:

- inference latency: ResNet-18 224x224 batch 1 through SingaRep.run (the
  static plan), and an eager inference forward of the digits CNN at batch 64
  (a record per op);
- the memory pool's peak over those runs, and the bytes a kept output holds
  (a record keeps no activation alive);
- what graph mode's copy-out costs: a replayed step returns copies of its
  results (the logits and the loss), so that what a user keeps is not
  overwritten by the next step. The copies alone (cloned through Python,
  so an upper bound) against the whole step, digits CNN batch 64 and
  ResNet-18 batch 16 at 64x64.

    .venv/bin/python bench/run.py --only records
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TIME = "Export records: inference with recording on vs off"
MEMORY = "Export records: pool memory with recording on vs off"
COPY_OUT = "Graph mode: copying a step's results out vs the whole step"
COLUMNS = {TIME: (("on", "off"), (1e3, "ms")), MEMORY: (("on", "off"), (1 / 2 ** 20, "MiB")),
           COPY_OUT: (("copies", "step"), (1e3, "ms"))}


def _recording(on, fn):
    from singa import _singa

    def run():
        prev = _singa.recording_enabled()
        _singa.set_recording(on)
        try:
            return fn()
        finally:
            _singa.set_recording(prev)
    return run


def _cases():
    """(label, fn) pairs, fn giving a singa Tensor: a planned imported run
    and an eager Model forward."""
    sys.path.insert(0, HERE)
    import models
    import onnx_infer
    from singa import autograd, sonnx

    onnx_infer._inference_mode()
    path = onnx_infer._path("resnet18")
    rep = sonnx.prepare(path)
    feeds = onnx_infer.zm.sample_feeds("resnet18", 1, "full")
    x, y = models.data("cnn", 64, None)
    _, ref = models.build("cnn")
    tx, _ = models.singa_inputs(x, y)
    cnn = models.singa_model("cnn", tx, use_graph=False, ref=ref)
    cnn.eval()
    autograd.training = False
    return [("ResNet-18 224x224 batch 1, SingaRep.run (planned)", lambda: rep.run(feeds)[0]),
            ("digits CNN b64 1x8x8, eager Model forward (eval)", lambda: cnn(tx))]


def bench_time(compare_many, rounds):
    rows = []
    from singa import tensor
    for label, out in _cases():
        fn = (lambda out=out: tensor.to_numpy(out()))  # complete when readable
        on, off = _recording(True, fn), _recording(False, fn)
        on(), off()  # plans, primitives
        t_on, t_off = compare_many([on, off], 20, rounds)
        rows.append((label, t_on, t_off, ""))
    return rows


def bench_memory(rounds):
    from singa import device
    rows = []
    for label, fn in _cases():
        peaks, kept = {}, {}
        for on in (True, False):
            run = _recording(on, fn)
            run()
            device.reset_peak_memory()
            before = device.current_memory()
            out = run()
            peaks[on] = device.peak_memory() - before
            kept[on] = device.current_memory() - before
            del out
        rows.append((f"{label}, peak over the run", peaks[True], peaks[False], ""))
        rows.append((f"{label}, held while its output is kept", kept[True], kept[False], ""))
    return rows


def bench_copy_out(compare_many, rounds):
    sys.path.insert(0, HERE)
    import models
    from singa import tensor
    rows = []
    for name, batch, hw, calls in (("cnn", 64, None, 50), ("resnet18", 16, 64, 5)):
        x, y = models.data(name, batch, hw)
        tx, ty = models.singa_inputs(x, y)
        m = models.singa_model(name, tx, use_graph=True)
        out, loss = m(tx, ty)  # the capture

        def step():
            tensor.to_numpy(m(tx, ty)[1])

        def copies():
            out.clone(), tensor.to_numpy(loss.clone())

        t_copy, t_step = compare_many([copies, step], calls, rounds)
        rows.append((f"{name} b{batch}: logits {list(out.shape)} and loss", t_copy, t_step, ""))
    return rows
