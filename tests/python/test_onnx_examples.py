"""examples/onnx's workflow scripts (inference, export, transfer learning;
SINGA's ONNX page) run as documented and do what they print."""
import os
import runpy
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

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
    assert "input float32 (3, 1, 8, 8) -> output (3, 10)" in out, out


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
    monkeypatch.setattr(sys, "argv", [os.path.join(EXAMPLES, "mnist_earlier_api.py")])
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


SCRIPTS = ["../python/demo.py", "../python/train_digits.py", "../python/train_digits_dist.py",
           "export.py", "inference.py", "transfer_learning.py", "training/train.py",
           "mnist_earlier_api.py", "resnet18.py", "gpt2.py"]


def script_run(script, *args):
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, script), *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_shows_whole_sentences(script):
    """--help shows the script's description as its docstring writes it and
    says what each option is for."""
    p = script_run(script, "--help")
    assert p.returncode == 0, p.stderr
    doc = " ".join(p.stdout.split())
    path = os.path.join(EXAMPLES, script)
    first = open(path).read().split('"""')[1].split("\n\n")[0]
    if script in ("resnet18.py", "gpt2.py"):  # the zoo scripts share zoo_cli's text
        first = open(os.path.join(EXAMPLES, "zoo_cli.py")).read().split('"""')[1].split("\n\n")[0]
    assert " ".join(first.split()) in doc, p.stdout
    options = p.stdout.split("options:", 1)[1]
    for line in options.splitlines():
        words = line.split()
        # "  --flag VALUE  what it does" or a flag whose help wraps to the next line
        if words and words[0].startswith("--") and "  " not in line.strip():
            nxt = options.splitlines()[options.splitlines().index(line) + 1]
            assert nxt.startswith(" " * 10), f"{script}: {line.strip()} has no help"


def int64_model(path):
    emb = numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "emb")
    g = helper.make_graph([helper.make_node("Gather", ["emb", "ids"], ["e"]),
                           helper.make_node("ReduceMean", ["e"], ["y"], axes=[1])], "g",
                          [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [emb])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def test_inference_generates_inputs_of_the_declared_dtypes(tmp_path, monkeypatch, capsys):
    """An int64-input model runs as `singa run --generate` runs it."""
    int64_model(tmp_path / "ids.onnx")
    out = run("inference.py", [str(tmp_path / "ids.onnx")], monkeypatch, capsys)
    assert "input int64 (1, 5) -> output (1, 1, 4)" in out, out
    assert max(differences(out)) == 0, out


@pytest.mark.parametrize("case", ["missing model", "not a model", "wrong dtype", "input count"])
def test_a_file_the_example_cannot_take_is_one_line(tmp_path, case):
    int64_model(tmp_path / "ids.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    np.save(tmp_path / "f64.npy", np.zeros((1, 5)))
    args = {"missing model": [str(tmp_path / "none.onnx")],
            "not a model": [str(tmp_path / "junk.onnx")],
            "wrong dtype": [str(tmp_path / "ids.onnx"), "--input", str(tmp_path / "f64.npy")],
            "input count": [str(tmp_path / "ids.onnx"), "--input", str(tmp_path / "f64.npy"),
                            str(tmp_path / "f64.npy")]}[case]
    p = script_run("inference.py", *args)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("inference.py: error: "), p.stderr
    named = {"missing model": "none.onnx", "not a model": "junk.onnx", "wrong dtype": "float64",
             "input count": "1 input(s)"}[case]
    assert named in lines[0], lines[0]


def test_a_zoo_script_given_a_missing_file_is_one_line(tmp_path):
    p = script_run("resnet18.py", "--model", str(tmp_path / "none.onnx"))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "none.onnx" in p.stderr, p.stderr
