"""examples/onnx's workflow scripts (inference, export, transfer learning;
seeds/onnx.md) run as documented and do what they print."""
import os
import runpy
import sys

import numpy as np
import onnx
import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "onnx")


def run(script, args, monkeypatch, capsys):
    path = os.path.join(EXAMPLES, script)
    monkeypatch.setattr(sys, "argv", [path] + args)
    with pytest.raises(SystemExit) as done:
        runpy.run_path(path, run_name="__main__")
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    return out


def last_accuracy(out):
    line = [l for l in out.splitlines() if l.startswith("test accuracy")][-1]
    return float(line.split()[-1])


def differences(out):
    return [float(l.rsplit(" ", 1)[1]) for l in out.splitlines() if "max |difference|" in l]


def test_export_writes_a_checked_model_that_runs_the_same(tmp_path, monkeypatch, capsys):
    out = run("export.py", ["--epochs", "4", "--out", str(tmp_path)], monkeypatch, capsys)
    model = onnx.load(tmp_path / "digits_cnn.onnx")
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node].count("Conv") == 2
    diffs = differences(out)
    assert len(diffs) == 2 and max(diffs) < 1e-5, out  # sonnx and onnxruntime
    assert last_accuracy(out) > 0.85
    assert (tmp_path / "export.png").stat().st_size > 1000


def test_inference_of_a_given_file_and_of_the_digits_cnn(tmp_path, monkeypatch, capsys):
    out = run("inference.py", ["--epochs", "4", "--out", str(tmp_path)], monkeypatch, capsys)
    # The export's forward, the graph-mode model, the static plan (fused,
    # blocked kernels) and onnxruntime each sum Conv and Gemm in their own
    # order (which may vary with threading), and logits of magnitude ~10
    # have a float32 spacing of ~1e-6: the atol of 1e-5, as the
    # export test (1e-6 failed on a loaded CI host).
    assert last_accuracy(out) > 0.85 and max(differences(out)) < 1e-5, out
    x = np.random.default_rng(0).random((3, 1, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    out = run("inference.py", [str(tmp_path / "digits_cnn.onnx"), "--input",
                               str(tmp_path / "x.npy")], monkeypatch, capsys)
    assert "input (3, 1, 8, 8) -> output (3, 10)" in out, out


def test_transfer_learning_raises_the_new_tasks_accuracy(tmp_path, monkeypatch, capsys):
    out = run("transfer_learning.py", ["--out", str(tmp_path)], monkeypatch, capsys)
    line = [l for l in out.splitlines() if l.startswith("parity test accuracy")][-1]
    before, after = float(line.split()[3]), float(line.split()[5])
    assert after > 0.9 and after > before + 0.2, out
    exported = onnx.load(tmp_path / "digits_parity.onnx")
    onnx.checker.check_model(exported, full_check=True)
    assert exported.graph.output[0].type.tensor_type.shape.dim[1].dim_value == 2
    assert (tmp_path / "transfer_learning.png").stat().st_size > 1000


def _write_mnist(folder):
    """MNIST's four files, made of scikit-learn's digits (8x8, scaled up
    three times and padded to 28x28): 1280 training and 512 test images."""
    import gzip
    import struct

    from sklearn.datasets import load_digits
    d = load_digits()
    images = np.kron(d.images, np.ones((3, 3))) * (255 / 16)
    images = np.pad(images, ((0, 0), (2, 2), (2, 2))).astype(np.uint8)
    labels = d.target.astype(np.uint8)
    for prefix, sl in (("train", slice(0, 1280)), ("t10k", slice(1280, 1792))):
        with gzip.open(folder / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, len(images[sl]), 28, 28) + images[sl].tobytes())
        with gzip.open(folder / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, len(labels[sl])) + labels[sl].tobytes())


def test_earlier_page_mnist_example_runs(tmp_path, monkeypatch, capsys):
    _write_mnist(tmp_path)
    monkeypatch.setenv("MNIST_DIR", str(tmp_path))
    monkeypatch.setenv("MNIST_ONNX", str(tmp_path / "mnist.onnx"))
    runpy.run_path(os.path.join(EXAMPLES, "mnist_earlier_api.py"), run_name="__main__")
    out = capsys.readouterr().out
    for step in ("training completed", "The model is saved.", "re-training completed",
                 "transfer-learning completed"):
        assert step in out, out
    assert "Downloading" not in out
    accs = [float(l.split()[-1]) for l in out.splitlines() if l.startswith("testing acc")]
    assert len(accs) == 2 and all(0 <= a <= 1 for a in accs), out
    model = onnx.load(tmp_path / "mnist.onnx")
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node].count("Conv") == 2
