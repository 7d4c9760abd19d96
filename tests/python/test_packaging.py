"""singa as a wheel: one build serves every test here.

The wheel is built from this tree by pip, in a fresh environment that holds
only the build requirements pyproject.toml declares (and those its build
backend asks for), with MPI and the image codecs off; it is installed into a
second fresh environment. The tests check that

- the installed package imports and runs a model from outside the tree;
- the build is for the baseline CPU (no -march=native in its compile commands);
- the Python tests that need MPI or the image codecs skip, each with a
  one-line reason naming the option, and the rest of them pass;
- a C++ program finds the installed package with find_package(singa),
  links singa::singa and runs an ONNX model.

The build takes many minutes: the tests run when SINGA_TEST_WHEEL=1
(`make test-wheel`) and skip otherwise. The environments and the build live
in SINGA_WHEEL_DIR (default /tmp/singa-wheel), emptied before the build and
removed afterwards; a fixed folder lets ccache, when installed, reuse an
earlier build's objects.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

pytestmark = pytest.mark.skipif(os.environ.get("SINGA_TEST_WHEEL") != "1",
                                reason="builds a wheel for many minutes: make test-wheel")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.environ.get("SINGA_WHEEL_DIR", "/tmp/singa-wheel")
# The optional parts this build leaves out, and a CPU build (a GPU is not
# needed to build or test a wheel).
OPTIONS = {"SINGA_MPI": "OFF", "SINGA_IMAGE": "OFF", "SINGA_CUDA": "OFF"}
# The Python tests of MPI and the image codecs: the no-MPI, no-codec build
# passes or skips each of them.
SUBSET = ["tests/python/test_dist.py", "tests/python/test_image_decoder.py",
          "tests/python/test_ops.py", "tests/conformance/test_backend_suites.py",
          "-k", "test_dist or test_image_decoder or ImageDecoder"]
# What those tests import besides singa and its dependencies.
TEST_PACKAGES = ["pytest", "pillow", "scikit-learn", "matplotlib", "tqdm"]


def _check(args, timeout, **kwargs):
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    assert p.returncode == 0, f"{' '.join(args)}\n{p.stdout[-5000:]}\n{p.stderr[-5000:]}"
    return p


def _venv(path):
    _check([sys.executable, "-m", "venv", path], timeout=120)
    return os.path.join(path, "bin", "python")


def _build_requirements():
    import tomllib  # Python 3.11

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["build-system"]["requires"]


class Wheel:
    """The built wheel, its build folder and the environment it is installed in."""

    def __init__(self, work):
        self.work = work
        self.build_dir = os.path.join(work, "build")
        self.python = None
        self.site = None


@pytest.fixture(scope="module")
def wheel():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    w = Wheel(WORK)
    # The build environment: the declared requirements, then whatever the
    # backend asks for on top (cmake or ninja where the machine lacks them).
    build_py = _venv(os.path.join(WORK, "build-env"))
    _check([build_py, "-m", "pip", "install", "-q"] + _build_requirements(), timeout=900)
    asked = _check([build_py, "-c", "import json; from scikit_build_core.build import "
                    "get_requires_for_build_wheel as r; print(json.dumps(r()))"],
                   timeout=120, cwd=ROOT).stdout
    if json.loads(asked):
        _check([build_py, "-m", "pip", "install", "-q"] + json.loads(asked), timeout=900)
    settings = [f"-Cbuild-dir={w.build_dir}"]
    settings += [f"-Ccmake.define.{k}={v}" for k, v in OPTIONS.items()]
    if shutil.which("ccache"):
        settings.append("-Ccmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache")
    env = dict(os.environ, PATH=os.path.dirname(build_py) + os.pathsep + os.environ["PATH"])
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    dist = os.path.join(WORK, "dist")
    _check([build_py, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", dist]
           + settings + [ROOT], timeout=7200, env=env)
    (whl,) = glob.glob(os.path.join(dist, "singa-*.whl"))
    # The user's environment: the wheel, its dependencies from the index,
    # and what the Python tests import.
    w.python = _venv(os.path.join(WORK, "venv"))
    _check([w.python, "-m", "pip", "install", "-q", whl] + TEST_PACKAGES, timeout=1800)
    w.site = _check([w.python, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                    timeout=60).stdout.strip()
    yield w
    shutil.rmtree(WORK, ignore_errors=True)


def _linear_model(path):
    """y = relu(x @ W + b) as an ONNX file; returns W and b."""
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 2)).astype(np.float32), np.float32([2.0, -0.25])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["z"]),
         helper.make_node("Relu", ["z"], ["y"])], "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return w, b


X = np.float32([[1.0, -2.0, 0.5]])

USER_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import singa
    from singa import _singa, autograd, layer, model, opt, sonnx, tensor

    # An ONNX model, run.
    rep = sonnx.prepare(sys.argv[1])
    (y,) = rep.run([tensor.Tensor(data=np.float32([[1.0, -2.0, 0.5]]))])
    # A model of layers, trained a few steps.
    class Net(model.Model):
        def __init__(self):
            super().__init__()
            self.fc = layer.Linear(2)
        def forward(self, x):
            return self.fc(x)
        def train_one_batch(self, x, t):
            loss = autograd.softmax_cross_entropy(self.forward(x), t)
            self.optimizer.backward_and_update(loss)
            return loss
    rng = np.random.default_rng(0)
    x = tensor.Tensor(data=rng.standard_normal((16, 4)).astype(np.float32))
    t = tensor.Tensor(data=(rng.random(16) > 0.5).astype(np.int32), dtype=tensor.int32)
    net = Net()
    net.optimizer = opt.SGD(lr=0.5)
    net.compile([x], is_train=True, use_graph=False)
    losses = [tensor.to_numpy(net(x, t)).item() for _ in range(20)]
    print(json.dumps({"file": singa.__file__, "y": tensor.to_numpy(y).tolist(),
                      "losses": losses, "build": _singa.build_info()}))
""")


def test_the_wheel_runs_models_outside_the_source_tree(wheel, tmp_path):
    w, b = _linear_model(tmp_path / "linear.onnx")
    (tmp_path / "user.py").write_text(USER_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = _check([wheel.python, "user.py", "linear.onnx"], timeout=300, cwd=tmp_path, env=env)
    r = json.loads(p.stdout.splitlines()[-1])
    assert r["file"].startswith(wheel.site), r["file"]
    np.testing.assert_allclose(r["y"], np.maximum(X @ w + b, 0), rtol=1e-5)
    assert r["losses"][-1] < 0.8 * r["losses"][0], r["losses"]
    assert r["build"]["mpi"] is False and r["build"]["image_codecs"] is False, r["build"]


def test_the_wheel_is_built_for_the_baseline_cpu(wheel):
    with open(os.path.join(wheel.build_dir, "compile_commands.json")) as f:
        commands = json.load(f)
    ours = [c for c in commands if c["file"].startswith(os.path.join(ROOT, "src") + os.sep)]
    assert len(ours) > 100 and all(" -O3 " in c["command"] for c in ours), len(ours)
    native = [c["file"] for c in commands if "-march=native" in c["command"]]
    assert not native, f"-march=native in the wheel's build: {native[:5]}"
    with open(os.path.join(wheel.build_dir, "CMakeCache.txt")) as f:
        assert "SINGA_NATIVE:BOOL=OFF" in f.read().splitlines()


def test_the_python_tests_skip_what_the_build_lacks(wheel, tmp_path):
    report = tmp_path / "report.xml"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    p = subprocess.run([wheel.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--junitxml={report}"] + SUBSET, capture_output=True, text=True,
                       timeout=1800, cwd=ROOT, env=env)
    assert p.returncode == 0, p.stdout[-8000:] + p.stderr[-3000:]
    passed, skipped = set(), {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname').rsplit('.', 1)[-1]}::{case.get('name')}"
        skip = case.find("skipped")
        if skip is not None:
            skipped[name] = skip.get("message", "")
        elif case.find("failure") is None and case.find("error") is None:
            passed.add(name)
    reasons = set(skipped.values())
    assert all("\n" not in r for r in reasons), reasons
    mpi = {n for n, r in skipped.items() if "built without MPI (SINGA_MPI=OFF)" in r}
    codecs = {n for n, r in skipped.items()
              if "built without the image codecs (SINGA_IMAGE=OFF)" in r}
    assert any(n.startswith("test_dist::") for n in mpi), skipped
    assert any(n.startswith("test_image_decoder::") for n in codecs), skipped
    assert any(n.startswith("test_ops::") for n in codecs), skipped
    assert any(n.startswith("test_backend_suites::") for n in codecs), skipped
    # What the build has still runs: one process of DistOpt, BMP and PNM,
    # and the errors that name the missing options.
    must_pass = ["test_dist::test_single_process_without_mpirun_has_world_size_one",
                 "test_dist::test_a_build_without_mpi_refuses_a_process_an_mpi_launcher_started",
                 "test_image_decoder::test_netpbm_ascii_and_wide_samples_scale_to_8_bits",
                 "test_image_decoder::test_streams_that_do_not_decode_give_an_empty_image[BMP]",
                 "test_image_decoder::test_a_build_without_codecs_refuses_their_formats[PNG]",
                 "test_ops::test_op[ImageDecoder-bmp-RGB-float32]",
                 "test_backend_suites::test_case[node/test_image_decoder_decode_pnm_rgb]"]
    missing = [n for n in must_pass if n not in passed]
    assert not missing, (missing, sorted(passed)[:40])


CONSUMER_CMAKE = textwrap.dedent("""
    cmake_minimum_required(VERSION 3.24)
    project(consumer LANGUAGES CXX)
    find_package(singa 0.1 CONFIG REQUIRED)
    add_executable(consumer main.cc)
    target_link_libraries(consumer PRIVATE singa::singa)
""")

CONSUMER_MAIN = textwrap.dedent("""
    // Runs an ONNX model on x = [1, -2, 0.5] and prints y, and adds two tensors.
    #include <cstdio>

    #include "singa/onnx/sonnx.h"
    #include "singa/singa.h"
    using namespace singa;

    int main(int argc, char** argv) {
      if (argc != 2) return 2;
      auto rep = sonnx::Prepare(argv[1]);
      Tensor x = Tensor::FromVector<float>({1, 3}, {1.0f, -2.0f, 0.5f});
      Tensor y = rep->Run({x})[0];
      Tensor sum = Call1("Add", {y, y});
      for (int64_t i = 0; i < y.numel(); ++i)
        std::printf("%.6f %.6f\\n", y.At<float>({0, i}), sum.At<float>({0, i}));
      return 0;
    }
""")


def test_a_cpp_program_builds_against_the_installed_package(wheel, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(CONSUMER_CMAKE)
    (src / "main.cc").write_text(CONSUMER_MAIN)
    prefix = os.path.join(wheel.site, "singa")
    assert os.path.isfile(os.path.join(prefix, "include", "singa", "core", "tensor.h"))
    build = tmp_path / "build"
    _check(["cmake", "-S", str(src), "-B", str(build), f"-DCMAKE_PREFIX_PATH={prefix}"],
           timeout=300)
    _check(["cmake", "--build", str(build)], timeout=600)
    w, b = _linear_model(tmp_path / "linear.onnx")
    p = _check([str(build / "consumer"), str(tmp_path / "linear.onnx")], timeout=60)
    got = np.array([[float(v) for v in line.split()] for line in p.stdout.splitlines()])
    want = np.maximum(X @ w + b, 0)[0]
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-5)
    np.testing.assert_allclose(got[:, 1], 2 * want, rtol=1e-5)
