"""The `singa` command line on small models written here: info, run, bench and
check with their real outputs, and bad input (one line on stderr, exit 2)."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def _cli():
    """$SINGA_CLI, else the build tree's binary, else the one installed beside python."""
    for path in (os.environ.get("SINGA_CLI"), os.path.join(ROOT, "build", "singa"),
                 os.path.join(os.path.dirname(sys.executable), "singa"), shutil.which("singa")):
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    pytest.fail("the singa command line is not built (cmake --build build)")


def singa(*args, **env):
    e = {**os.environ, "SINGA_PYTHON": sys.executable, **env}
    return subprocess.run([_cli(), *map(str, args)], capture_output=True, text=True, env=e,
                          timeout=300)


@pytest.fixture(scope="module")
def cnn(tmp_path_factory):
    """Conv -> Relu -> MaxPool -> GlobalAveragePool -> Reshape -> MatMul, batch symbolic."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "B"),
             numpy_helper.from_array(rng.standard_normal((4, 5)).astype(np.float32), "G"),
             numpy_helper.from_array(np.array([0, -1], np.int64), "shape")]
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu1"),
             helper.make_node("MaxPool", ["r"], ["p"], name="pool1", kernel_shape=[2, 2],
                              strides=[2, 2]),
             helper.make_node("GlobalAveragePool", ["p"], ["gp"], name="gap"),
             helper.make_node("Reshape", ["gp", "shape"], ["f"], name="flat"),
             helper.make_node("MatMul", ["f", "G"], ["y"], name="fc"),
             helper.make_node("Softmax", ["y"], ["prob"], name="softmax", axis=1)]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5]),
         helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="test_cli", producer_version="1")
    onnx.checker.check_model(model)
    path = tmp_path_factory.mktemp("cli") / "cnn.onnx"
    onnx.save(model, path)
    return path


def _scaled(v):
    """The CLI's number format: 13824 -> '13.8 K'."""
    units = ["", " K", " M", " G"]
    u = 0
    while v >= 1000 and u < 3:
        v, u = v / 1000, u + 1
    return f"{v:.3g}{units[u]}" if u else f"{v:.0f}"


def _one_error_line(r):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("singa"), r.stderr
    assert "Traceback" not in r.stderr and "terminate" not in r.stderr
    return lines[0]


def test_info_reports_versions_io_params_flops_and_histogram(cnn):
    r = singa("info", cnn)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "IR version   " + str(onnx.load(cnn).ir_version) in out
    assert "ai.onnx 17" in out and "test_cli 1" in out
    assert "x: float32[N,3,8,8]" in out and "prob: float32[N,5]" in out
    assert "parameters   132 " in out  # 4*3*3*3 + 4 + 4*5 floats; the int64 shape is not one
    # Conv: 2 x (1*4*8*8 outputs) x (3*3*3) multiply-adds; MatMul: 2 x (1*5) x 4.
    conv, matmul = 2 * 4 * 8 * 8 * 27, 2 * 5 * 4
    flops = f"FLOPs        {_scaled(conv + matmul)} (Conv {_scaled(conv)}, MatMul 40; 2 nodes)"
    assert flops in out
    for op in ["Conv 1", "MatMul 1", "Softmax 1", "Reshape 1"]:
        assert op in out
    assert "supported    yes" in out


def test_info_flops_follow_dim(cnn):
    out = singa("info", cnn, "--dim", "N=4").stdout
    assert f"(Conv {_scaled(4 * 2 * 4 * 8 * 8 * 27)}, MatMul 160; 2 nodes)" in out


def test_info_lists_unsupported_ops_with_node_names(tmp_path):
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r"),
             helper.make_node("FooBar", ["a"], ["b"], name="foo1", domain="com.example"),
             helper.make_node("FooBar", ["b"], ["c"], name="foo2", domain="com.example"),
             helper.make_node("Softmax", ["c"], ["y"], name="sm", axis=7)]
    graph = helper.make_graph(nodes, "u", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    onnx.save(model, tmp_path / "u.onnx")
    r = singa("info", tmp_path / "u.onnx")
    assert r.returncode == 0, r.stderr
    assert "supported    no" in r.stdout
    assert "unsupported op com.example:FooBar (2 nodes: foo1, foo2)" in r.stdout
    assert "com.example:FooBar 2" in r.stdout and "FLOPs        n/a" in r.stdout


def test_info_names_unsupported_nodes_inside_subgraphs(tmp_path):
    then_g = helper.make_graph([helper.make_node("Neg", ["a"], ["t"], name="neg")], "then", [],
                               [helper.make_tensor_value_info("t", 1, [2])])
    else_g = helper.make_graph([helper.make_node("Weird", ["a"], ["e"], domain="x.y")], "else",
                               [], [helper.make_tensor_value_info("e", 1, [2])])
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], name="if1", then_branch=then_g,
                          else_branch=else_g)], "g",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a", 1, [2])], [helper.make_tensor_value_info("y", 1, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("x.y", 1)])
    onnx.save(model, tmp_path / "if.onnx")
    out = singa("info", tmp_path / "if.onnx").stdout
    assert "nodes        3" in out and "If 1, Neg 1, x.y:Weird 1" in out
    assert "unsupported op x.y:Weird (1 node: if1/else_branch/Weird#0)" in out


def test_run_matches_the_reference_evaluator(cnn, tmp_path):
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = singa("run", cnn, "--input", tmp_path / "x.npy", "--output", tmp_path / "out.npz")
    assert r.returncode == 0, r.stderr
    assert "y: float32[2,5]" in r.stdout
    want = ReferenceEvaluator(str(cnn)).run(None, {"x": x})
    with np.load(tmp_path / "out.npz") as got:
        assert sorted(got.files) == ["prob", "y"]
        np.testing.assert_allclose(got["y"], want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got["prob"], want[1], rtol=1e-5, atol=1e-6)


def test_run_takes_options_before_the_model(cnn, tmp_path):
    """--input takes one or more files; the model ends them (an argument ending
    in .onnx), as do the next option and --."""
    x = np.random.default_rng(3).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    want = ReferenceEvaluator(str(cnn)).run(None, {"x": x})[1]
    other = tmp_path / "cnn.model"  # a model file not named .onnx
    other.write_bytes(cnn.read_bytes())
    orders = [("--input", tmp_path / "x.npy", cnn, "--output"),
              (cnn, "--input", tmp_path / "x.npy", "--output"),
              ("--output", tmp_path / "o.npz", "--input", tmp_path / "x.npy", cnn),
              ("--input", f"x={tmp_path / 'x.npy'}", "--", other, "--output"),
              ("--input", tmp_path / "x.npy", "--threads", "1", other, "--output")]
    for args in orders:
        out = tmp_path / "o.npz"
        out.unlink(missing_ok=True)
        r = singa("run", *args, *([out] if args[-1] == "--output" else []))
        assert r.returncode == 0, (args, r.stderr)
        np.testing.assert_allclose(np.load(out)["prob"], want, rtol=1e-5, atol=1e-6)
    line = _one_error_line(singa("run", "--input", tmp_path / "x.npy", other))
    assert f"no MODEL.onnx given: --input takes the files up to the next option, so '{other}' " \
           "is read as an input" in line


def test_run_output_file_errors_come_before_the_run(cnn, tmp_path):
    for name, message in [("o.txt", "the file name must end in .npy or .npz"),
                          ("o.npy", "the model has 2 outputs and an .npy file holds one; write "
                                    "them to an .npz")]:
        r = singa("run", cnn, "--generate", "--output", tmp_path / name)
        assert message in _one_error_line(r), r.stderr
        assert r.stdout == "" and not (tmp_path / name).exists()


def test_dim_errors_name_the_dim_and_list_the_models_dims(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", 1, ["batch", "seq", 4]),
         helper.make_tensor_value_info("b", 1, ["batch", "seq", "width"])],
        [helper.make_tensor_value_info("y", 1, ["batch", "seq", 4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "sym.onnx")
    fixed = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "f",
                              [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    onnx.save(helper.make_model(fixed, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "fixed.onnx")
    for command in [("run", "--generate"), ("bench",), ("info",), ("check",)]:
        line = _one_error_line(singa(*command, tmp_path / "sym.onnx", "--dim", "N=2"))
        assert "no symbolic dim 'N' (they have batch, seq, width)" in line, line
    line = _one_error_line(singa("run", tmp_path / "fixed.onnx", "--generate", "--dim", "N=2"))
    assert "no symbolic dim 'N' (they have none)" in line


def test_run_reads_named_npz_inputs(cnn, tmp_path):
    x = np.random.default_rng(2).standard_normal((3, 3, 8, 8)).astype(np.float32)
    np.savez_compressed(tmp_path / "in.npz", x=x)  # a deflated entry
    r = singa("run", cnn, "--input", tmp_path / "in.npz", "--output", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    want = ReferenceEvaluator(str(cnn)).run(None, {"x": x})[1]
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["prob"], want, rtol=1e-5, atol=1e-6)


def test_run_generates_inputs_with_dims(cnn, tmp_path):
    r = singa("run", cnn, "--generate", "--dim", "N=3", "--output", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    with np.load(tmp_path / "o.npz") as got:
        assert got["prob"].shape == (3, 5)
        np.testing.assert_allclose(got["prob"].sum(axis=1), 1, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int64", "int8", "uint16", "bool"])
def test_npy_round_trip_through_identity(tmp_path, dtype):
    """Every dtype numpy writes comes back from the CLI's reader and writer unchanged,
    including Fortran-ordered arrays."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id",
                              [helper.make_tensor_value_info("x", elem, [2, 3])],
                              [helper.make_tensor_value_info("y", elem, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "id.onnx")
    x = np.asfortranarray((np.arange(6).reshape(2, 3) % 3).astype(dtype))
    np.save(tmp_path / "x.npy", x)
    r = singa("run", tmp_path / "id.onnx", "--input", f"x={tmp_path / 'x.npy'}", "--output",
              tmp_path / "y.npy")
    assert r.returncode == 0, r.stderr
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == x.dtype and np.array_equal(y, x)


def test_bench_reports_percentiles_throughput_and_memory(cnn):
    r = singa("bench", cnn, "--batch", "1", "4", "--threads", "1", "--iterations", "3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "1 thread, 3 iterations" in lines[0]
    assert lines[1].split()[:4] == ["batch", "p50", "ms", "p90"]
    rows = [line.split() for line in lines[2:4]]
    assert [row[0] for row in rows] == ["1", "4"]
    for row in rows:
        p50, p90, p99, mean, per_s = map(float, row[1:6])
        assert 0 < p50 <= p90 <= p99 and mean > 0 and per_s > 0
    assert lines[4].startswith("peak RSS ")


def test_bench_profile_prints_the_top_ops_and_writes_a_chrome_trace(cnn, tmp_path):
    trace = tmp_path / "profile.json"
    r = singa("bench", cnn, "--batch", "1", "4", "--iterations", "2", "--profile", trace)
    assert r.returncode == 0, r.stderr
    heads = [line for line in r.stdout.splitlines() if line.startswith("profile of batch")]
    assert [h.split()[3] for h in heads] == ["1:", "4:"], r.stdout
    table = r.stdout.split(heads[0], 1)[1].splitlines()[1:]
    assert table[0].split()[:2] == ["op", "type"]
    assert "FusedConv" in r.stdout and f"profile written to {trace}" in r.stdout
    events = json.loads(trace.read_text())
    runs = [e for e in events if e["cat"] == "Session"]
    assert [e["tid"] for e in runs] == [1, 2]
    nodes = [e for e in events if e["cat"] == "Node"]
    assert {e["tid"] for e in nodes} == {1, 2} and all(e["ph"] == "X" for e in events)
    assert {"op_name", "inputs", "kernels"} <= set(nodes[0]["args"])


def test_check_agrees_with_onnxruntime(cnn):
    pytest.importorskip("onnxruntime")
    r = singa("check", cnn, "--dim", "N=2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1].startswith("ok:")
    for name in ["y ", "prob "]:
        row = next(line for line in r.stdout.splitlines() if line.startswith(name))
        assert row.split()[1] == "float32[2,5]" and row.endswith("ok")
        assert float(row.split()[3]) < 1e-4  # max abs difference


def test_check_fails_when_outputs_differ(tmp_path):
    """Dropout in training mode draws different masks in singa and onnxruntime."""
    pytest.importorskip("onnxruntime")
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
             numpy_helper.from_array(np.array(True), "training")]
    graph = helper.make_graph(
        [helper.make_node("Dropout", ["x", "ratio", "training"], ["y"])], "d",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [256])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              tmp_path / "d.onnx")
    r = singa("check", tmp_path / "d.onnx")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1].startswith("FAIL")


def _stub_module(folder, name, text):
    """A package `name` in `folder` that shadows the installed one (PYTHONPATH=folder)."""
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text(text)
    return str(folder)


def test_check_without_onnxruntime_runs_singa_only(cnn, tmp_path):
    stub = _stub_module(tmp_path, "onnxruntime",
                        "raise ImportError(\"No module named 'onnxruntime'\")\n")
    r = singa("check", cnn, PYTHONPATH=stub)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "y: float32[1,5]", "prob: float32[1,5]",
        f"no comparison: onnxruntime is not installed for {sys.executable} "
        "(No module named 'onnxruntime')"]


def test_check_when_onnxruntime_fails_on_the_model(cnn, tmp_path):
    stub = _stub_module(tmp_path, "onnxruntime", (
        "class SessionOptions:\n    pass\n\n\n"
        "class InferenceSession:\n    def __init__(self, *args, **kwargs):\n"
        "        raise RuntimeError('cannot load the model\\nat line 2')\n"))
    r = singa("check", cnn, PYTHONPATH=stub)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr == ("singa check: onnxruntime failed on the model: RuntimeError: cannot load "
                        "the model\n")


def test_check_without_python_runs_singa_only(cnn, tmp_path):
    r = singa("check", cnn, SINGA_PYTHON=str(tmp_path / "no-python"))
    assert r.returncode == 0, r.stderr
    assert "y: float32[1,5]" in r.stdout
    assert f"no comparison: cannot run {tmp_path / 'no-python'} (No such file" in r.stdout


def test_check_finds_the_active_virtual_environments_python(cnn, tmp_path):
    """Without $SINGA_PYTHON and no python beside the binary (a build tree),
    singa check runs $VIRTUAL_ENV's python."""
    cli = tmp_path / "bin" / "singa"
    cli.parent.mkdir()
    shutil.copy(_cli(), cli)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "argv.txt"
    fake = venv / "bin" / "python"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\n")
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "SINGA_PYTHON"}
    r = subprocess.run([str(cli), "check", str(cnn)], capture_output=True, text=True,
                       env={**env, "VIRTUAL_ENV": str(venv)}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines()[:2] == ["-m", "singa.check"]


def test_check_runs_the_python_module(cnn, tmp_path):
    """singa check checks its arguments, then runs `python -m singa.check` with them."""
    log = tmp_path / "argv.txt"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {log}\n")
    fake.chmod(0o755)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 3, 8, 8), np.float32))
    r = singa("check", "--input", x, cnn, "--dim", "N=1", "--atol", "0.5", SINGA_PYTHON=str(fake))
    assert r.returncode == 0, r.stderr
    assert log.read_text().splitlines() == ["-m", "singa.check", "--atol=0.5", "--dim=N=1",
                                            f"--input={x}", "--", str(cnn)]
    # Bad arguments are refused before Python runs.
    log.unlink()
    assert "--atol takes a non-negative number" in _one_error_line(
        singa("check", cnn, "--atol", "x", SINGA_PYTHON=str(fake)))
    assert not log.exists()


def test_python_module_is_the_check(cnn):
    """python -m singa.check prints what singa check prints, with its exit codes."""
    pytest.importorskip("onnxruntime")
    module = subprocess.run([sys.executable, "-m", "singa.check", cnn, "--dim", "N=2"],
                            capture_output=True, text=True, timeout=300)
    assert module.returncode == 0, module.stderr
    assert module.stdout == singa("check", cnn, "--dim", "N=2").stdout
    assert module.stdout.splitlines()[-1].startswith("ok:")
    bad = subprocess.run([sys.executable, "-m", "singa.check", cnn, "--dim", "Q=2"],
                         capture_output=True, text=True, timeout=300)
    assert "no symbolic dim 'Q' (they have N)" in _one_error_line(bad)


@pytest.mark.parametrize("command", ["info", "run", "bench", "check"])
def test_help(command):
    r = singa(command, "--help")
    assert r.returncode == 0 and r.stdout.startswith(f"usage: singa {command} ")
    assert "--help" in r.stdout


def test_main_help_lists_commands():
    r = singa("--help")
    assert r.returncode == 0
    for command in ["info", "run", "bench", "check"]:
        assert f"\n  {command} " in r.stdout


def _help_entries(text):
    """{name: description} of the indented rows of a --help text, a
    description's wrapped lines joined."""
    entries, name = {}, None
    for line in text.splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name, _, desc = line.strip().partition("  ")
            entries[name] = desc.strip()
        elif line.startswith("   ") and name is not None:
            entries[name] = (entries[name] + " " + line.strip()).strip()
        else:
            name = None
    return entries


@pytest.mark.parametrize("command", [None, "info", "run", "bench", "check"])
def test_help_shows_whole_sentences(command):
    r = singa(*([command] if command else []), "--help")
    assert r.returncode == 0, r.stderr
    entries = _help_entries(r.stdout)
    names = ["info", "run", "bench", "check"] if command is None else ["-h, --help"]
    assert set(names) <= set(entries), entries
    for name, desc in entries.items():
        assert desc[:1].isupper() and desc.endswith("."), (name, desc)
    assert max(map(len, r.stdout.splitlines())) <= 88


def test_run_help_says_where_input_files_end():
    help_text = singa("run", "--help").stdout
    assert "-h, --help" in help_text and "--input [NAME=]FILE ..." in help_text
    assert "an argument ending in .onnx" in " ".join(help_text.split())


def test_bad_input_is_one_line_and_exit_2(cnn, tmp_path):
    corrupt = tmp_path / "corrupt.onnx"
    corrupt.write_bytes(cnn.read_bytes()[:200])
    np.save(tmp_path / "wrong.npy", np.zeros((2, 4, 8, 8), np.float32))
    (tmp_path / "junk.npy").write_text("not numpy")
    # A header promising far more data than the file has (and than memory holds).
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 3, 8, 8), }"
    header += " " * (-(10 + len(header) + 1) % 64) + "\n"
    (tmp_path / "huge.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                                        + header.encode() + bytes(64))
    np.savez(tmp_path / "cut.npz", x=np.zeros((2, 3, 8, 8), np.float32))
    (tmp_path / "cut.npz").write_bytes((tmp_path / "cut.npz").read_bytes()[:-40])
    cases = {
        ("info", tmp_path / "missing.onnx"): "cannot open ONNX model",
        ("run", tmp_path / "missing.onnx", "--input", tmp_path / "wrong.npy"):
            "cannot open ONNX model",
        ("info", corrupt): "not a valid ONNX model",
        ("check", corrupt): "not a valid ONNX model",
        ("run", cnn, "--input", tmp_path / "wrong.npy"): "got float32[2,4,8,8]",
        ("run", cnn, "--input", tmp_path / "missing.npy"): "cannot open",
        ("run", cnn, "--input", tmp_path / "junk.npy"): "is not a .npy file",
        ("run", cnn, "--input", tmp_path / "huge.npy"): "truncated file",
        ("run", cnn, "--input", tmp_path / "cut.npz"): "is not an .npz file",
        ("run", cnn): "input x: float32[N,3,8,8] is not given",
        ("run", cnn, "--input", f"z={tmp_path / 'wrong.npy'}"): "the model has no input 'z'",
        ("bench", cnn, "--frobnicate"): "unknown option '--frobnicate'",
        ("bench", cnn, "--batch"): "--batch needs a value",
        ("bench", cnn, "--iterations", "2", "--iterations", "3"): "--iterations is given twice",
        ("info", cnn, tmp_path / "other.onnx"): "unexpected argument",
        ("bench", cnn, "--batch", "two"): "--batch takes an integer",
        ("bench", cnn, "--iterations", "0"): "--iterations must be at least 1",
        ("info",): "no MODEL.onnx given",
        ("explode", cnn): "unknown command 'explode'",
        (): "no command given",
    }
    for args, message in cases.items():
        line = _one_error_line(singa(*args))
        assert message in line, (args, line)


def test_hostile_sizes_and_names_in_arguments(cnn, tmp_path):
    """Dims and batch sizes from the command line go through the same checked
    sizes as a model's: refused by name before anything is allocated, with
    nothing written."""
    out = tmp_path / "o.npz"
    cases = {
        ("run", cnn, "--generate", "--dim", "Q=3"): "no symbolic dim 'Q' (they have N)",
        ("run", cnn, "--generate", "--dim", f"N={2 ** 40}"):
            "input 'x': float32[1099511627776,3,8,8] needs 844424930131968 bytes, more than the "
            "limit",
        ("run", cnn, "--generate", "--dim", f"N={2 ** 62}"):
            "input 'x': shape [4611686018427387904,3,8,8] has more elements than",
        ("run", cnn, "--generate", "--dim", "N=" + "9" * 30): "--dim N takes an integer",
        ("check", cnn, "--dim", "batch=2"): "no symbolic dim 'batch'",
        ("info", cnn, "--dim", "T=2"): "no symbolic dim 'T'",
        ("bench", cnn, "--batch", str(2 ** 40)): "input 'x': float32[1099511627776,3,8,8] needs",
        ("bench", cnn, "--batch", "-3"): "--batch values must be at least 1, got -3",
        ("run", cnn, "--generate", "--output", tmp_path / "o.txt"): "must end in .npy or .npz",
        ("run", cnn, "--generate", "--dim", "N=2", "--output", out): "",
    }
    for args, message in cases.items():
        r = singa(*args)
        if message:
            assert message in _one_error_line(r), (args, r.stderr)
            assert not out.exists() and not (tmp_path / "o.txt").exists()
        else:
            assert r.returncode == 0 and out.exists(), r.stderr


def test_version_matches_the_package():
    import tomllib

    import singa as package
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        version = tomllib.load(f)["project"]["version"]
    assert package.__version__ == version
    r = singa("--version")
    assert r.returncode == 0 and r.stdout == f"singa {version}\n"


def test_info_lists_the_ops_a_gpu_would_run_on_the_cpu(cnn):
    from singa import _singa

    r = singa("info", cnn, "--device", "cuda")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("on a GPU"))
    if not _singa.build_info().get("cuda"):
        assert "this build has no CUDA device" in line, line
        return
    # Conv, Relu, MaxPool, GlobalAveragePool, MatMul and Softmax have GPU kernels; Reshape
    # is a view.
    assert line == "on a GPU     every node of the top graph runs on the GPU", line
    # A MaxPool with dilations is not cuDNN's, nor an LRN at all.
    model = onnx.load(cnn)
    model.graph.node[2].attribute.append(helper.make_attribute("dilations", [2, 2]))
    model.graph.node.insert(1, helper.make_node("LRN", ["c"], ["c2"], size=3))
    model.graph.node[2].input[0] = "c2"
    path = os.path.join(os.path.dirname(cnn), "cnn_cpu_ops.onnx")
    onnx.save(model, path)
    r = singa("info", path, "--device", "cuda")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("on a GPU"))
    assert line == ("on a GPU     2 nodes would run on the CPU, inputs and outputs copied: "
                    "LRN 1, MaxPool 1"), line
    bad = singa("info", cnn, "--device", "tpu")
    assert bad.returncode == 2 and "--device must be cpu or cuda, not 'tpu'" in bad.stderr
