"""singa.opt.DistOpt under mpirun: 2 ranks on batches of B match 1 process on
the 2B batch; the compressed variants train the digits CNN nearly as well as
fp32; the byte counter matches what each option sends; the ONNX re-training
example runs with and without mpirun; a rank that leaves makes the other fail
in bounded time.

Every multi-process case is an `mpirun -np 2` subprocess with a timeout.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import singa
from singa import _singa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The subprocesses import the singa this process imported (the source tree's
# package, or an installed wheel's).
SINGA_PATH = os.path.dirname(os.path.dirname(os.path.abspath(singa.__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "python")
ONNX_TRAIN = os.path.join(ROOT, "examples", "onnx", "training", "train.py")
PYTHON = sys.executable


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SINGA_PATH, EXAMPLES] +
                                        [p for p in [env.get("PYTHONPATH")] if p])
    # Containers often forbid the cross-process memory attach (CMA) Open MPI's
    # shared-memory transport would use for large messages.
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    env.update(extra)
    return env


def _mpirun(np_=2):
    cmd = ["mpirun", "-np", str(np_), "--oversubscribe"]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def _run(args, timeout, **env):
    start = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=_env(**env),
                       cwd=ROOT)
    return p, time.monotonic() - start


@pytest.fixture(scope="module")
def mpirun(tmp_path_factory):
    if not _singa.build_info()["mpi"]:
        pytest.skip("singa was built without MPI (SINGA_MPI=OFF)")
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not installed")
    # Each rank writes its own file: mpirun interleaves the ranks' stdout.
    out = tmp_path_factory.mktemp("probe")
    probe = ("import sys; from singa import opt; d = opt.DistOpt(opt.SGD()); "
             "open(f'{sys.argv[1]}/{d.global_rank}', 'w').write(str(d.world_size))")
    p, _ = _run(_mpirun() + [PYTHON, "-c", probe, str(out)], timeout=60)
    if p.returncode != 0:
        pytest.skip(f"mpirun -np 2 cannot start singa processes here:\n{p.stdout}\n{p.stderr}")
    assert {f.name: f.read_text() for f in out.iterdir()} == {"0": "2", "1": "2"}, p.stdout


EQUIVALENCE_WORKER = textwrap.dedent("""
    import sys
    import numpy as np
    from singa import device, opt, tensor
    from train_digits import CNN, load_data

    mode, out, batch, steps, buff, graph = sys.argv[1:7]
    batch, steps, buff, graph = int(batch), int(steps), int(buff), graph == "graph"
    x_train, _, y_train, _ = load_data(0)
    dev = device.get_default_device()
    dev.SetRandSeed(0)
    sgd = opt.SGD(lr=0.05, momentum=0.9, weight_decay=1e-5)
    rank, n = 0, 2 * batch
    if mode == "dist":
        sgd = opt.DistOpt(sgd, buffSize=buff)
        assert sgd.world_size == 2
        rank, n = sgd.global_rank, batch
    m = CNN()
    m.set_optimizer(sgd)
    tx = tensor.Tensor((n, 1, 8, 8), dev, requires_grad=False)
    ty = tensor.Tensor((n,), dev, tensor.int32, requires_grad=False)
    m.compile([tx], is_train=True, use_graph=graph)
    for s in range(steps):
        lo = s * 2 * batch + rank * n   # rank r holds rows [lo, lo + B) of the 2B batch
        tx.copy_from_numpy(x_train[lo:lo + n])
        ty.copy_from_numpy(y_train[lo:lo + n])
        m(tx, ty)
    if rank == 0:
        np.savez(out, **{k: tensor.to_numpy(v) for k, v in m.get_params().items()})
""")


@pytest.mark.parametrize("graph", ["eager", "graph"])
def test_two_ranks_match_one_process_on_the_combined_batch(mpirun, tmp_path, graph):
    worker = tmp_path / "worker.py"
    worker.write_text(EQUIVALENCE_WORKER)
    batch, steps = 16, 5
    # buffSize 1000 splits the CNN's gradients into several fused buckets and
    # sends fc1's 8192-element weight gradient on its own.
    p, _ = _run(_mpirun() + [PYTHON, str(worker), "dist", str(tmp_path / "dist.npz"), str(batch),
                             str(steps), "1000", graph], timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    p, _ = _run([PYTHON, str(worker), "single", str(tmp_path / "single.npz"), str(batch),
                 str(steps), "0", graph], timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    dist, single = np.load(tmp_path / "dist.npz"), np.load(tmp_path / "single.npz")
    assert sorted(dist.files) == sorted(single.files) and len(dist.files) == 8
    for k in single.files:
        # atol: entries that end near zero have no meaningful relative error;
        # 1e-7 covers float32 rounding of the summation-order difference
        # there (seen: at most 3e-8 absolute).
        np.testing.assert_allclose(dist[k], single[k], rtol=1e-5, atol=1e-7, err_msg=k)


EPOCHS = 8


@pytest.fixture(scope="module")
def digits_results(mpirun, tmp_path_factory):
    out = tmp_path_factory.mktemp("digits") / "results.json"
    options = ["fp32", "fp16", "partialUpdate", "sparseTopK", "sparseThreshold"]
    # buffSize 2000 (of the CNN's 13.7k parameters) makes several fused
    # buckets, and makes partialUpdate average a different subset each step
    # (with every parameter in one subset it equals fp32 for SGD).
    p, _ = _run(_mpirun() + [PYTHON, os.path.join(EXAMPLES, "train_digits_dist.py"), "--epochs",
                             str(EPOCHS), "--buff-size", "2000", "--json", str(out), "--option"] +
                options, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fp32: 2 rank(s)" in p.stdout, p.stdout
    with open(out) as f:
        return json.load(f)


def test_fp32_trains_the_digits_cnn(digits_results):
    fp32 = digits_results["fp32"]
    assert len(fp32) == EPOCHS
    assert fp32[-1]["loss"] < fp32[0]["loss"]
    assert fp32[-1]["test_acc"] >= 0.9, fp32
    # partialUpdate really averaged subsets: its run differs from fp32's.
    assert digits_results["partialUpdate"][-1]["loss"] != fp32[-1]["loss"]


@pytest.mark.parametrize("option", ["fp16", "partialUpdate", "sparseTopK", "sparseThreshold"])
def test_compressed_options_reach_95_percent_of_fp32(digits_results, option):
    fp32 = digits_results["fp32"][-1]["test_acc"]
    acc = digits_results[option][-1]["test_acc"]
    assert acc >= 0.95 * fp32, (option, acc, fp32, digits_results[option])


def test_single_process_without_mpirun_has_world_size_one():
    p, _ = _run([PYTHON, os.path.join(EXAMPLES, "train_digits_dist.py"), "--epochs", "1",
                 "--option", "fp32", "sparseTopK"], timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fp32: 1 rank(s)" in p.stdout and "sparseTopK: 1 rank(s)" in p.stdout, p.stdout


@pytest.mark.skipif(_singa.build_info()["mpi"], reason="singa was built with MPI")
def test_a_build_without_mpi_refuses_a_process_an_mpi_launcher_started():
    # Open MPI's launcher sets OMPI_COMM_WORLD_SIZE in every rank.
    p, _ = _run([PYTHON, "-c", "from singa import opt; opt.DistOpt(opt.SGD())"], timeout=60,
                OMPI_COMM_WORLD_SIZE="2", OMPI_COMM_WORLD_RANK="0")
    assert p.returncode != 0, p.stdout
    assert "singa was built without MPI (SINGA_MPI=OFF)" in p.stderr, p.stderr


LEAVER = textwrap.dedent("""
    import os, sys
    import numpy as np
    from singa import opt, tensor

    how = sys.argv[1]
    d = opt.DistOpt(opt.SGD())
    t = tensor.Tensor(data=np.ones(1000, np.float32), requires_grad=False)
    for step in range(100000):
        if d.global_rank == 1 and step == 3:
            if how == "exit":
                sys.exit(0)      # a clean exit: MPI_Finalize, then gone
            os._exit(7)          # a crash: no MPI_Finalize
        d.all_reduce(t)
        d.wait()
    print("rank", d.global_rank, "was never stopped")
""")


@pytest.mark.parametrize("how", ["exit", "crash"])
def test_a_rank_that_leaves_makes_the_other_fail(mpirun, tmp_path, how):
    worker = tmp_path / "leaver.py"
    worker.write_text(LEAVER)
    p, elapsed = _run(_mpirun() + [PYTHON, str(worker), how], timeout=60, SINGA_DIST_TIMEOUT="5")
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "was never stopped" not in out
    assert elapsed < 60
    if how == "exit":
        # Rank 0's own timeout, not mpirun, ends this one.
        assert "did not complete within 5" in out, out


BYTES_WORKER = textwrap.dedent("""
    import json, math, sys
    import numpy as np
    from singa import autograd, device, opt, tensor
    from train_digits import CNN

    out = sys.argv[1]
    d = opt.DistOpt(opt.SGD(lr=0.05))
    comm, rank = d.communicator, d.global_rank
    got = {}

    def counted(name, fn):
        comm.reset_stats()
        fn()
        d.wait()
        got[name] = comm.bytes_sent

    rng = np.random.default_rng(rank)
    def t(n):
        return tensor.Tensor(data=rng.standard_normal(n).astype(np.float32), requires_grad=False)

    counted("all_reduce", lambda: d.all_reduce(t(1000)))
    counted("fused", lambda: d.fused_all_reduce([t(600), t(400)]))
    counted("half", lambda: d.all_reduce_half(t(1000)))
    counted("fused_half", lambda: d.fused_all_reduce_half([t(600), t(400)]))
    counted("broadcast", lambda: d.broadcast_params([t(250)]))
    counted("topk", lambda: d.sparsification([t(600), t(400)], [t(600), t(400)], 0.05, True))
    g, r = t(1000), tensor.Tensor(data=np.zeros(1000, np.float32), requires_grad=False)
    kept = int((np.abs(tensor.to_numpy(g)) >= 1.5).sum())
    counted("threshold", lambda: d.sparsification(g, r, 1.5, False))
    got["threshold_kept"] = kept

    # DistOpt's steps on the digits CNN: every gradient element once per step.
    m = CNN()
    m.set_optimizer(d)
    x = tensor.Tensor(data=rng.random((8, 1, 8, 8), dtype=np.float32), requires_grad=False)
    y = tensor.Tensor(data=np.arange(8, dtype=np.int32), dtype=tensor.int32, requires_grad=False)
    m.compile([x], is_train=True, use_graph=False)
    got["params"] = int(sum(np.prod(p.shape) for p in m.get_params().values()))
    def step(update):
        loss = autograd.softmax_cross_entropy(m.forward(x), y)
        update(loss)
    step(d.backward_and_update)  # the first step also broadcasts the parameters
    counted("step_fp32", lambda: step(d.backward_and_update))
    counted("step_fp16", lambda: step(d.backward_and_update_half))
    counted("step_topk", lambda: step(lambda l: d.backward_and_sparse_update(l, 0.05, True)))
    got["wait_seconds"] = comm.wait_seconds
    comm.reset_stats()
    got["after_reset"] = [comm.bytes_sent, comm.wait_seconds]
    with open(f"{out}/{rank}.json", "w") as f:
        json.dump(got, f)
""")


def test_bytes_sent_counts_each_options_payload(mpirun, tmp_path):
    worker = tmp_path / "bytes.py"
    worker.write_text(BYTES_WORKER)
    p, _ = _run(_mpirun() + [PYTHON, str(worker), str(tmp_path)], timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    ranks = [json.loads((tmp_path / f"{r}.json").read_text()) for r in (0, 1)]
    for rank, got in enumerate(ranks):
        n = got["params"]
        assert got["all_reduce"] == got["fused"] == 4000, got
        # float16 on the wire: half of float32.
        assert got["half"] == got["fused_half"] == 2000, got
        # Only the root sends a broadcast's data.
        assert got["broadcast"] == (1000 if rank == 0 else 0), got
        # Top-K over the fused 1000 entries keeps ceil(0.05 * 1000) = 50
        # (index, value) pairs of 8 bytes, after a 4-byte count.
        assert got["topk"] == 4 + 8 * 50, got
        assert got["threshold"] == 4 + 8 * got["threshold_kept"], got
        assert got["step_fp32"] == 4 * n and got["step_fp16"] == 2 * n, (n, got)
        # One fused bucket (the CNN is below buffSize).
        assert got["step_topk"] == 4 + 8 * math.ceil(0.05 * n), (n, got)
        assert got["wait_seconds"] > 0 and got["after_reset"] == [0, 0], got


def test_onnx_training_example_under_mpirun(mpirun, tmp_path):
    out = tmp_path / "result.json"
    p, _ = _run(_mpirun() + [PYTHON, ONNX_TRAIN, "--epoch", "3", "--dist-option", "fp16",
                             "--quiet", "--out", str(tmp_path), "--json", str(out)], timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(out.read_text())
    assert r["world_size"] == 2 and r["dist_option"] == "fp16" and len(r["history"]) == 3, r
    h = r["history"]
    assert h[-1]["loss"] < h[0]["loss"] and h[-1]["test_acc"] >= 0.8, h
    assert (tmp_path / "onnx_training_fp16.png").stat().st_size > 0
    assert (tmp_path / "digits_cnn.onnx").stat().st_size > 0


def test_onnx_training_example_without_mpirun(tmp_path):
    model = tmp_path / "digits_cnn.onnx"
    sys.path.insert(0, os.path.dirname(ONNX_TRAIN))
    try:
        import onnx
        import train as onnx_train
        onnx.save(onnx_train.digits_cnn_onnx(1), str(model))
    finally:
        sys.path.pop(0)
        sys.modules.pop("train", None)
    out = tmp_path / "result.json"
    # A model file given as the argument, a sparse option, eager mode.
    p, _ = _run([PYTHON, ONNX_TRAIN, str(model), "--epoch", "2", "--bs", "64", "--dist-option",
                 "sparseThreshold", "--no-graph", "--quiet", "--out", str(tmp_path), "--json",
                 str(out)], timeout=90)
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(out.read_text())
    assert r["world_size"] == 1 and r["bytes_sent"] == 0 and len(r["history"]) == 2, r
    assert r["history"][-1]["loss"] < r["history"][0]["loss"], r
    assert "sparseThreshold: 1 rank(s)" in p.stdout, p.stdout


def _doc_script(tmp_path):
    """docs/distributed.md's script, as the page shows it."""
    page = open(os.path.join(ROOT, "docs", "distributed.md")).read()
    body = page.split("## Writing a distributed script", 1)[1].split("```python\n", 1)[1]
    script = tmp_path / "dist_script.py"
    script.write_text(body.split("```", 1)[0])
    return str(script)


def _epoch_losses(stdout):
    return [float(line.split("loss")[1]) for line in stdout.splitlines()
            if line.startswith("epoch")]


@pytest.mark.parametrize("ranks", [1, 2])
def test_the_distributed_page_script_runs_as_written(mpirun, tmp_path, ranks):
    script = _doc_script(tmp_path)
    p, _ = _run((_mpirun(ranks) if ranks > 1 else []) + [PYTHON, script], timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    losses = _epoch_losses(p.stdout)
    assert len(losses) == 3 and losses[-1] < losses[0] < 2.3, p.stdout


def test_the_readme_mpirun_line_runs_as_written(mpirun):
    readme = open(os.path.join(ROOT, "README.md")).read()
    lines = [cell for cell in readme.split("`") if cell.startswith("mpirun ")]
    assert lines, "the README shows no mpirun command"
    for line in lines:
        p, _ = _run(["bash", "-c", line], timeout=180)
        assert p.returncode == 0, f"{line}\n{p.stdout}\n{p.stderr}"
        assert "2 rank(s)" in p.stdout and "test accuracy" in p.stdout, p.stdout
