"""singa.sonnx import: a small CNN against onnxruntime, last_layers and
aux_output, errors on bad models and inputs, re-training and transfer
learning as in SINGA's ONNX page."""
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from singa import autograd, device, layer, opt, sonnx, tensor

# The CNN is float32; onnxruntime and singa pick different kernels
# (summation order), hence a tolerance of a few float32 ulps of the outputs.
RTOL, ATOL = 1e-4, 1e-5
NODES = ["Conv", "Relu", "MaxPool", "Flatten", "Gemm"]


def _cnn(seed=0, classes=3, opset=17):
    """x[N,1,8,8] -> Conv(4, 3x3, pad 1) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm -> y[N,3]."""
    rng = np.random.default_rng(seed)
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 1, 3, 3)).astype(np.float32) * 0.5,
                                "conv.W"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32) * 0.1, "conv.b"),
        numpy_helper.from_array(rng.standard_normal((classes, 64)).astype(np.float32) * 0.2,
                                "fc.W"),
        numpy_helper.from_array(np.zeros(classes, np.float32), "fc.b"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "conv.W", "conv.b"], ["conv_out"], name="conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["conv_out"], ["relu_out"], name="relu"),
        helper.make_node("MaxPool", ["relu_out"], ["pool_out"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool_out"], ["flat_out"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat_out", "fc.W", "fc.b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _x(n=2, seed=1):
    return np.random.default_rng(seed).standard_normal((n, 1, 8, 8)).astype(np.float32)


def _ort(model, x, outputs=()):
    """onnxruntime's values of the graph outputs and of `outputs` (names)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for name in outputs:
        m.graph.output.append(helper.make_empty_tensor_value_info(name))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})


def test_cnn_matches_onnxruntime_from_proto_path_and_bytes(tmp_path):
    model = _cnn()
    x = _x(3)
    (want,) = _ort(model, x)
    path = tmp_path / "cnn.onnx"
    onnx.save(model, path)
    for source in (model, str(path), path, model.SerializeToString()):
        rep = sonnx.prepare(source, "CPU")
        (y,) = rep.run([x])
        assert isinstance(y, tensor.Tensor)
        np.testing.assert_allclose(tensor.to_numpy(y), want, rtol=RTOL, atol=ATOL)
    assert rep.num_nodes == 5 and rep.opset("") == 17
    assert sorted(rep.params) == ["conv.W", "conv.b", "fc.W", "fc.b"]
    assert all(t.stores_grad for t in rep.params.values())
    # A singa Tensor input and a batch size the model leaves symbolic.
    x5 = _x(5, seed=2)
    (y,) = rep.run([tensor.Tensor(data=x5, requires_grad=False)])
    np.testing.assert_allclose(tensor.to_numpy(y), _ort(model, x5)[0], rtol=RTOL, atol=ATOL)


def test_backend_interface():
    model = _cnn()
    assert sonnx.SingaBackend.supports_device("CPU")
    assert not sonnx.SingaBackend.supports_device("CUDA")
    x = _x()
    (y,) = sonnx.SingaBackend.run_model(model, [x])
    np.testing.assert_allclose(y, _ort(model, x)[0], rtol=RTOL, atol=ATOL)
    node = helper.make_node("Add", ["a", "b"], ["c"])
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(3, np.float32)
    (c,) = sonnx.SingaBackend.run_node(node, [a, b])
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("last_layers, value", [(-2, "flat_out"), (-3, "pool_out"),
                                                (-4, "relu_out"), (-5, "conv_out")])
def test_last_layers_cuts_after_the_nth_last_node(last_layers, value):
    model = _cnn()
    x = _x()
    rep = sonnx.prepare(model)
    (got,) = rep.run([x], last_layers=last_layers)
    want = _ort(model, x, [value])[1]
    np.testing.assert_allclose(tensor.to_numpy(got), want, rtol=RTOL, atol=ATOL)
    (full,) = rep.run([x], last_layers=-1)
    np.testing.assert_allclose(tensor.to_numpy(full), _ort(model, x)[0], rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="last_layers"):
        rep.run([x], last_layers=-6)
    with pytest.raises(ValueError, match="last_layers"):
        rep.run([x], last_layers=0)


def test_aux_output_returns_named_values_after_the_outputs():
    model = _cnn()
    x = _x()
    rep = sonnx.prepare(model)
    y, relu, w = rep.run([x], aux_output=["relu_out", "conv.W"])
    want_y, want_relu = _ort(model, x, ["relu_out"])
    np.testing.assert_allclose(tensor.to_numpy(y), want_y, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(tensor.to_numpy(relu), want_relu, rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(tensor.to_numpy(w), numpy_helper.to_array(
        model.graph.initializer[0]))
    flat, conv = rep.run([x], last_layers=-2, aux_output=["conv_out"])
    assert tuple(flat.shape) == (2, 64) and tuple(conv.shape) == (2, 4, 8, 8)
    with pytest.raises(ValueError, match="'nope'"):
        rep.run([x], aux_output=["nope"])
    with pytest.raises(ValueError, match="'y'.*'fc'"):
        rep.run([x], last_layers=-2, aux_output=["y"])


def test_constant_nodes_and_inputs_that_shadow_initializers():
    # y = x * c + b, c from a Constant node, b an initializer that is also a
    # graph input (IR < 4 style): b's value may be given at run time.
    c = helper.make_node("Constant", [], ["c"], name="const",
                         value=numpy_helper.from_array(np.float32(2.0)))
    mul = helper.make_node("Mul", ["x", "c"], ["xc"], name="mul")
    add = helper.make_node("Add", ["xc", "b"], ["y"], name="add")
    graph = helper.make_graph(
        [c, mul, add], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(np.ones(3, np.float32), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    rep = sonnx.prepare(model)
    assert rep.num_nodes == 2  # the Constant is folded
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(tensor.to_numpy(rep.run([x])[0]), x * 2 + 1)
    b = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(tensor.to_numpy(rep.run([x, b])[0]), x * 2 + b)
    np.testing.assert_array_equal(tensor.to_numpy(rep.run({"x": x})[0]), x * 2 + 1)


def test_external_data_is_read_next_to_the_model(tmp_path):
    model = _cnn()
    path = tmp_path / "m" / "cnn.onnx"
    path.parent.mkdir()
    onnx.save(_cnn(), path, save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    assert (path.parent / "weights.bin").exists()
    x = _x()
    (y,) = sonnx.prepare(str(path)).run([x])
    np.testing.assert_allclose(tensor.to_numpy(y), _ort(model, x)[0], rtol=RTOL, atol=ATOL)
    # Bytes of a model with external data need the folder.
    ext = onnx.load(path, load_external_data=False)
    with pytest.raises(OSError, match="folder"):
        sonnx.prepare(ext)
    (y,) = sonnx.prepare(ext, base_dir=path.parent).run([x])
    np.testing.assert_allclose(tensor.to_numpy(y), _ort(model, x)[0], rtol=RTOL, atol=ATOL)


def test_intermediates_are_dropped_after_their_last_reader():
    # A chain of 12 Relus on a 4 MiB input: each value is dropped once the
    # next node has read it, so at most the input and two values are alive.
    n, size = 12, 1 << 20
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}")
             for i in range(n)]
    model = _one_node_model(nodes, [_vi("v0", (size,))], [_vi(f"v{n}", (size,))])
    rep = sonnx.prepare(model)
    x = np.random.default_rng(0).standard_normal(size).astype(np.float32)
    tx = tensor.Tensor(data=x, requires_grad=False)
    dev = device.get_default_device()
    base = device.current_memory(dev)
    device.reset_peak_memory(dev)
    (y,) = rep.run([tx])
    peak = device.peak_memory(dev) - base
    np.testing.assert_array_equal(tensor.to_numpy(y), np.maximum(x, 0))
    assert peak <= 3 * 4 * size, f"peak {peak} bytes: intermediates were kept"


def test_control_flow_subgraphs_read_enclosing_values():
    """Loop (with a scan output) whose body holds an If; both read values of
    the enclosing graphs (w from the top level two levels down)."""
    f = TensorProto.FLOAT
    then_g = helper.make_graph([helper.make_node("Mul", ["acc", "w"], ["t"], name="then_mul")],
                               "then", [], [_vi("t", (2,))])
    else_g = helper.make_graph([helper.make_node("Add", ["acc", "w"], ["e"], name="else_add")],
                               "else", [], [_vi("e", (2,))])
    body = helper.make_graph(
        [helper.make_node("Less", ["i", "two"], ["small"], name="less"),
         helper.make_node("If", ["small"], ["acc_next"], name="branch", then_branch=then_g,
                          else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         helper.make_node("Identity", ["acc_next"], ["scan_out"], name="emit")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", f, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_next", f, [2]),
         helper.make_tensor_value_info("scan_out", f, [2])])
    loop = helper.make_node("Loop", ["trips", "", "x"], ["y", "ys"], name="loop", body=body)
    graph = helper.make_graph(
        [loop], "g", [_vi("x", (2,)), helper.make_tensor_value_info("trips", TensorProto.INT64, [])],
        [_vi("y", (2,)), _vi("ys", (4, 2))],
        [numpy_helper.from_array(np.array([2, 3], np.float32), "w"),
         numpy_helper.from_array(np.int64(2), "two")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    x, trips = np.array([1, -1], np.float32), np.array(4, np.int64)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x,
                                                                              "trips": trips})
    rep = sonnx.prepare(model)
    got = rep.run([x, trips])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(tensor.to_numpy(g), w)


def test_scan_runs_its_body_per_slice():
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x_t"], ["s_next"], name="acc"),
         helper.make_node("Identity", ["s_next"], ["out_t"], name="emit")],
        "body", [_vi("s", (2,)), _vi("x_t", (2,))], [_vi("s_next", (2,)), _vi("out_t", (2,))])
    scan = helper.make_node("Scan", ["s0", "xs"], ["s", "outs"], name="scan", body=body,
                            num_scan_inputs=1, scan_input_directions=[1])
    model = _one_node_model(scan, [_vi("s0", (2,)), _vi("xs", (3, 2))],
                            [_vi("s", (2,)), _vi("outs", (3, 2))])
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    s, outs = sonnx.prepare(model).run([np.zeros(2, np.float32), xs])
    np.testing.assert_array_equal(tensor.to_numpy(s), xs.sum(0))
    np.testing.assert_array_equal(tensor.to_numpy(outs), np.cumsum(xs[::-1], 0))


def test_scan8_scans_each_batch_row_up_to_its_sequence_length():
    """Scan-8: a batch axis on states and scan inputs, sequence_lens per row
    (outputs zero past it) and `directions`, against onnxruntime."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x_t"], ["s_next"], name="acc"),
         helper.make_node("Mul", ["s_next", "y_t"], ["out_t"], name="emit")],
        "body", [_vi("s", (2,)), _vi("x_t", (2,)), _vi("y_t", (2,))],
        [_vi("s_next", (2,)), _vi("out_t", (2,))])
    scan = helper.make_node("Scan", ["lens", "s0", "xs", "ys"], ["s", "outs"], name="scan",
                            body=body, num_scan_inputs=2, directions=[0, 1])
    model = _one_node_model(
        scan, [_vi("lens", (3,), TensorProto.INT64), _vi("s0", (3, 2)), _vi("xs", (3, 4, 2)),
               _vi("ys", (3, 4, 2))], [_vi("s", (3, 2)), _vi("outs", (3, 4, 2))], opset=8)
    rng = np.random.default_rng(0)
    feeds = {"lens": np.array([4, 2, 1], np.int64),
             "s0": rng.standard_normal((3, 2)).astype(np.float32),
             "xs": rng.standard_normal((3, 4, 2)).astype(np.float32),
             "ys": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)
    got = sonnx.prepare(model).run(list(feeds.values()))
    for g, w in zip(got, want):
        np.testing.assert_allclose(tensor.to_numpy(g), w, rtol=1e-6)
    with pytest.raises(ValueError, match="scan.*sequence_lens\\[1\\] = 5 is outside"):
        sonnx.prepare(model).run([np.array([4, 5, 1], np.int64)] + list(feeds.values())[1:])


# ---- bad models and inputs: the exception names what is wrong -------------

def _one_node_model(node, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph([node] if not isinstance(node, list) else node, "g", inputs,
                              outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape=(2,), dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def test_truncated_file_is_refused(tmp_path):
    data = _cnn().SerializeToString()
    path = tmp_path / "cut.onnx"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.onnx.*(truncated|corrupt)"):
        sonnx.prepare(str(path))
    with pytest.raises(OSError, match="missing.onnx"):
        sonnx.prepare(str(tmp_path / "missing.onnx"))
    with pytest.raises(OSError, match="directory"):
        sonnx.prepare(str(tmp_path))


# VmHWM, the peak RSS of this process's memory since exec (ru_maxrss would
# also count the forking test process's RSS).
_PEAK_CHILD = """
import sys
from singa import sonnx
def vm(key):
    return next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(key))
before = vm("VmRSS:")
rep = sonnx.prepare(sys.argv[1])
print((vm("VmHWM:") - before) * 1024)
"""


def test_prepare_holds_the_weights_about_once(tmp_path):
    """Loading a file keeps neither the file's bytes nor the parsed proto's
    copy of each initializer beside the weights' tensors: for 16 weights of
    16 MiB the peak RSS growth stays well below twice the model's size (it
    was three times)."""
    n, size = 16, 16 << 20
    weights = [numpy_helper.from_array(np.full(size // 4, i, np.float32), f"w{i}")
               for i in range(n)]
    nodes = [helper.make_node("Add", ["x" if i == 0 else f"s{i}", f"w{i}"],
                              ["y" if i == n - 1 else f"s{i + 1}"], name=f"add{i}")
             for i in range(n)]
    model = _one_node_model(nodes, [_vi("x", (size // 4,))], [_vi("y", (size // 4,))], weights)
    path = tmp_path / "big.onnx"
    path.write_bytes(model.SerializeToString())
    del model, weights
    out = subprocess.run([sys.executable, "-c", _PEAK_CHILD, str(path)], check=True,
                         capture_output=True, text=True).stdout
    assert int(out) < 1.5 * n * size, f"peak RSS growth {int(out) >> 20} MiB for 256 MiB weights"


def test_unknown_op_names_node_and_op():
    model = _one_node_model(helper.make_node("FooBar", ["a"], ["b"], name="mystery"),
                            [_vi("a")], [_vi("b")])
    with pytest.raises(NotImplementedError, match="mystery.*FooBar"):
        sonnx.prepare(model)
    model = _one_node_model(helper.make_node("Relu", ["a"], ["b"], name="r", domain="com.x"),
                            [_vi("a")], [_vi("b")])
    model.opset_import.append(helper.make_opsetid("com.x", 1))
    with pytest.raises(NotImplementedError, match="'r'.*com.x"):
        sonnx.prepare(model)


def test_subgraph_errors_name_the_node():
    then = helper.make_graph([helper.make_node("Identity", ["nowhere"], ["t"], name="inner")],
                             "then", [], [_vi("t")])
    node = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then, else_branch=then)
    model = _one_node_model(node, [_vi("c", (), TensorProto.BOOL), _vi("a")], [_vi("y")])
    with pytest.raises(ValueError, match="'branch'.*subgraph reads 'nowhere'"):
        sonnx.prepare(model)
    then = helper.make_graph([helper.make_node("Identity", ["a"], ["t"], name="inner")],
                             "then", [], [_vi("t")])
    node = helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then)
    model = _one_node_model(node, [_vi("c", (), TensorProto.BOOL), _vi("a")], [_vi("y")])
    with pytest.raises(ValueError, match="branch.*else_branch"):
        sonnx.prepare(model)


def test_wrong_run_inputs_name_the_input():
    rep = sonnx.prepare(_cnn())
    with pytest.raises(ValueError, match="1 input.*x: float32\\[N,1,8,8\\].*got 2"):
        rep.run([_x(), _x()])
    with pytest.raises(ValueError, match="got 0"):
        rep.run([])
    with pytest.raises(ValueError, match="'x'.*float32\\[2,2,8,8\\]"):
        rep.run([np.zeros((2, 2, 8, 8), np.float32)])
    with pytest.raises(ValueError, match="'x'.*rank 3"):
        rep.run([np.zeros((1, 8, 8), np.float32)])
    with pytest.raises(ValueError, match="'x'.*float64"):
        rep.run([_x().astype(np.float64)])


def test_cycle_names_its_nodes():
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"),
             helper.make_node("Add", ["a", "c"], ["b"], name="loop_add"),
             helper.make_node("Relu", ["b"], ["c"], name="loop_relu"),
             helper.make_node("Relu", ["b"], ["y"], name="last")]
    model = _one_node_model(nodes, [_vi("x")], [_vi("y")])
    with pytest.raises(ValueError, match="cycle.*loop_add.*loop_relu.*loop_add"):
        sonnx.prepare(model)


def test_missing_initializer_names_node_and_input():
    node = helper.make_node("Add", ["x", "bias"], ["y"], name="add_bias")
    model = _one_node_model(node, [_vi("x")], [_vi("y")])
    with pytest.raises(ValueError, match="add_bias.*'bias'"):
        sonnx.prepare(model)
    model = _one_node_model(helper.make_node("Relu", ["x"], ["z"]), [_vi("x")], [_vi("y")])
    with pytest.raises(ValueError, match="graph output 'y'"):
        sonnx.prepare(model)


def test_old_ir_version_is_refused():
    model = _cnn()
    model.ir_version = 2
    with pytest.raises(ValueError, match="IR version is 2"):
        sonnx.prepare(model)


@pytest.mark.parametrize("location", ["../outside.bin", "sub/../../outside.bin", "ABS"])
def test_external_data_outside_the_model_folder_is_refused(tmp_path, location):
    (tmp_path / "outside.bin").write_bytes(np.ones(2, np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    if location == "ABS":
        location = str(tmp_path / "outside.bin")
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", "0"), ("length", "8")):
        entry = w.external_data.add()
        entry.key, entry.value = k, v
    model = _one_node_model(helper.make_node("Add", ["x", "w"], ["y"], name="add_w"),
                            [_vi("x")], [_vi("y")], [w])
    path = folder / "m.onnx"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(OSError, match="initializer 'w'.*outside.bin"):
        sonnx.prepare(str(path))


def _cast_add_model(w):
    """y = x + Cast(w, to=float) with w an initializer."""
    nodes = [helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x", "wf"], ["y"])]
    return _one_node_model(nodes, [_vi("x", (5,))], [_vi("y", (5,))], [w], opset=25)


@pytest.mark.parametrize("dt,values", [
    (ml_dtypes.int2, [1, -2, -1, 0, 1]), (ml_dtypes.uint2, [3, 0, 2, 1, 3]),
    (ml_dtypes.float8_e8m0fnu, [0.25, 1, 2, 1024, 2.0**-100]), (ml_dtypes.int4, [7, -8, 0, 1, -1])])
@pytest.mark.parametrize("raw", [True, False])
def test_packed_initializers_are_read(dt, values, raw):
    """2-bit types come four to a byte (int4 two), in raw_data or int32_data."""
    w = np.array(values, np.float32).astype(dt)
    proto = helper.make_tensor("w", helper.np_dtype_to_tensor_dtype(w.dtype), [5],
                               w if raw else w.astype(np.float32), raw=raw)
    x = np.arange(5, dtype=np.float32)
    got = sonnx.prepare(_cast_add_model(proto)).run([x])[0]
    np.testing.assert_array_equal(tensor.to_numpy(got), x + w.astype(np.float32))


def test_packed_initializer_of_the_wrong_size_names_the_tensor():
    w = TensorProto(name="w", data_type=TensorProto.INT2, dims=[5], raw_data=b"\x00\x00\x00")
    with pytest.raises(ValueError, match="initializer 'w'.*3 bytes.*int2.*expected 2"):
        sonnx.prepare(_cast_add_model(w))
    w = TensorProto(name="w", data_type=TensorProto.UINT2, dims=[5], int32_data=[0])
    with pytest.raises(ValueError, match="initializer 'w'.*1 values in int32_data.*uint2"):
        sonnx.prepare(_cast_add_model(w))
    w = TensorProto(name="w", data_type=TensorProto.FLOAT8E8M0, dims=[5], raw_data=b"\x7f")
    with pytest.raises(ValueError, match="initializer 'w'.*1 bytes.*float8e8m0.*expected 5"):
        sonnx.prepare(_cast_add_model(w))


def test_external_data_errors_name_the_tensor(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.ones(1, np.float32).tobytes())

    def model_with(entries):
        w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2])
        w.data_location = TensorProto.EXTERNAL
        for k, v in entries:
            entry = w.external_data.add()
            entry.key, entry.value = k, v
        m = _one_node_model(helper.make_node("Add", ["x", "w"], ["y"]), [_vi("x")], [_vi("y")],
                            [w])
        path = tmp_path / "m.onnx"
        path.write_bytes(m.SerializeToString())
        return str(path)

    with pytest.raises(OSError, match="initializer 'w'.*4 bytes.*truncated"):
        sonnx.prepare(model_with([("location", "w.bin"), ("offset", "0"), ("length", "8")]))
    with pytest.raises(ValueError, match="initializer 'w'.*offset 'x'"):
        sonnx.prepare(model_with([("location", "w.bin"), ("offset", "x")]))
    with pytest.raises(OSError, match="initializer 'w'.*nothere.bin"):
        sonnx.prepare(model_with([("location", "nothere.bin")]))


# ---- training an imported model (SINGA's ONNX page) ----------------------------

class RetrainModel(sonnx.SONNXModel):
    def __init__(self, onnx_model):
        super().__init__(onnx_model)

    def forward(self, *x):
        return super().forward(*x)[0]

    def train_one_batch(self, x, y, dist_option="fp32", spars=None):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


class TransferModel(RetrainModel):
    """Cut after Flatten (the second last node) and append a Linear layer."""

    def __init__(self, onnx_model):
        super().__init__(onnx_model)
        self.linear = layer.Linear(64, 2)

    def forward(self, *x):
        y = sonnx.SONNXModel.forward(self, *x, last_layers=-2)[0]
        return self.linear(y)


def _labels(x, classes):
    return (x.reshape(len(x), -1)[:, :classes].argmax(1)).astype(np.int32)


def _train(cls, use_graph, classes, steps=15):
    device.get_default_device().SetRandSeed(0)
    onnx_model = _cnn(classes=3)
    m = cls(onnx_model)
    m.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
    x = _x(16, seed=3)
    tx = tensor.Tensor(data=x, requires_grad=False)
    ty = tensor.Tensor(data=_labels(x, classes), dtype=tensor.int32, requires_grad=False)
    m.compile([tx], is_train=True, use_graph=use_graph, sequential=True)
    w0 = {k: tensor.to_numpy(v).copy() for k, v in m.get_params().items()}
    losses = []
    for _ in range(steps):
        out, loss = m(tx, ty, "fp32", None)
        losses.append(float(tensor.to_numpy(loss).reshape(-1)[0]))
    return m, w0, losses


@pytest.mark.parametrize("use_graph", [False, True], ids=["eager", "graph"])
def test_retraining_an_imported_model_lowers_the_loss(use_graph):
    m, w0, losses = _train(RetrainModel, use_graph, classes=3)
    assert losses[-1] < 0.7 * losses[0], losses
    params = m.get_params()
    assert sorted(params) == ["conv.W", "conv.b", "fc.W", "fc.b"]
    for k, v in params.items():
        assert not np.array_equal(tensor.to_numpy(v), w0[k]), f"{k} was not trained"


@pytest.mark.parametrize("use_graph", [False, True], ids=["eager", "graph"])
def test_transfer_learning_cuts_and_appends_a_layer(use_graph):
    m, w0, losses = _train(TransferModel, use_graph, classes=2)
    assert losses[-1] < 0.7 * losses[0], losses
    params = m.get_params()
    assert {"conv.W", "conv.b", "linear.W", "linear.b"} <= set(params)
    # The cut-off Gemm is not run, so its weights get no gradient.
    np.testing.assert_array_equal(tensor.to_numpy(params["fc.W"]), w0["fc.W"])
    assert not np.array_equal(tensor.to_numpy(params["conv.W"]), w0["conv.W"])


def test_states_round_trip(tmp_path):
    m, _, _ = _train(RetrainModel, False, classes=3, steps=2)
    f = os.path.join(tmp_path, "states.bin")
    m.save_states(f)
    m2 = RetrainModel(_cnn(classes=3))
    m2.load_states(f)
    for k, v in m.get_states().items():
        np.testing.assert_array_equal(tensor.to_numpy(m2.get_states()[k]), tensor.to_numpy(v))


@pytest.mark.parametrize("cls, classes", [(RetrainModel, 3), (TransferModel, 2)],
                         ids=["retrain", "transfer"])
def test_graph_mode_trains_like_eager(cls, classes):
    m1, _, l1 = _train(cls, False, classes, steps=5)
    m2, _, l2 = _train(cls, True, classes, steps=5)
    np.testing.assert_array_equal(l1, l2)
    for k, v in m1.get_params().items():
        np.testing.assert_array_equal(tensor.to_numpy(v), tensor.to_numpy(m2.get_params()[k]),
                                      err_msg=k)
