"""Hostile input: malformed models, files and arguments are refused with a
singa error that names what is wrong, before anything is allocated, and
nothing on disk is destroyed. One section per family."""
import _thread
import os
import signal
import struct
import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from singa import _singa, autograd, device, layer, model, opt, sonnx, tensor

BIG = 2 ** 40  # elements: refused long before it could be allocated


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _vi(name, shape=(2,), dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def _add_w(w, x_shape=(2,)):
    return _model([helper.make_node("Add", ["x", "w"], ["y"])], [_vi("x", x_shape)],
                  [_vi("y", x_shape)], [w])


# ---- sizes: dims whose product overflows or exceeds the memory limit ---------

@pytest.mark.parametrize("dims,error,match", [
    ([2 ** 32, 2 ** 32], ValueError, "initializer 'w'.*more elements than an int64"),
    ([2 ** 61, 2], ValueError, "initializer 'w'.*more bytes than"),
    ([BIG, 16], MemoryError, "initializer 'w'.*needs 70368744177664 bytes, more than the limit"),
])
def test_initializer_dims_are_checked_before_allocating(dims, error, match):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=dims, raw_data=b"\0" * 8)
    with pytest.raises(error, match=match):
        sonnx.prepare(_add_w(w))


@pytest.mark.parametrize("field", ["raw", "float_data"])
@pytest.mark.parametrize("n", [1, 3])
def test_initializer_data_must_match_its_dims(field, n):
    values = np.arange(n, dtype=np.float32)
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2])
    if field == "raw":
        w.raw_data = values.tobytes()
    else:
        w.float_data.extend(values.tolist())
    with pytest.raises(ValueError, match="initializer 'w'.*expected"):
        sonnx.prepare(_add_w(w))


@pytest.mark.parametrize("op,inputs,attrs", [
    ("ConstantOfShape", [np.array([BIG, BIG], np.int64)], {}),
    ("ConstantOfShape", [np.array([BIG, 1024], np.int64)], {}),
    ("OneHot", [np.array([0], np.int64), np.array(BIG * 1024, np.int64),
                np.array([0, 1], np.float32)], {}),
    ("Pad", [np.ones(1, np.float32), np.array([0, BIG * 1024], np.int64)], {}),
    ("Tile", [np.ones((2, 2), np.float32), np.array([BIG, BIG], np.int64)], {}),
    ("Range", [np.array(0, np.int64), np.array(2 ** 62, np.int64), np.array(1, np.int64)], {}),
])
def test_outputs_are_checked_before_allocating(op, inputs, attrs):
    """A size computed from data at run time: the node is named, nothing is
    allocated, and the model stays usable."""
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], name="huge", **attrs)
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in zip(names, inputs)]
    rep = sonnx.prepare(_model([node], vis, [helper.make_empty_tensor_value_info("y")]))
    with pytest.raises((MemoryError, ValueError), match=f"'huge'.*{op}|{op}.*'huge'"):
        rep.run(inputs)


def test_the_memory_limit_can_be_lowered():
    before = _singa.max_tensor_bytes()
    try:
        _singa.set_max_tensor_bytes(1 << 20)
        with pytest.raises(MemoryError, match=r"float32\[1024,1024\] needs 4194304 bytes"):
            tensor.Tensor((1024, 1024))
        with pytest.raises(MemoryError, match="output 0"):
            autograd.matmul(tensor.Tensor((1024, 1), data=np.ones((1024, 1), np.float32)),
                            tensor.Tensor((1, 1024), data=np.ones((1, 1024), np.float32)))
        assert tensor.Tensor((256, 256)).shape == (256, 256)
    finally:
        _singa.set_max_tensor_bytes(before)


def test_a_prepare_and_a_run_can_be_given_a_memory_limit():
    """The limit bounds what the work allocates beyond what is in use when it
    starts; past it, singa's MemoryError, and the model stays usable."""
    x = np.ones((512, 512), np.float32)  # 1 MiB; the run's two values need 2
    rep = sonnx.prepare(_model([helper.make_node("Relu", ["x"], ["a"], name="r"),
                                helper.make_node("Neg", ["a"], ["y"], name="n")],
                               [_vi("x", x.shape)], [_vi("y", x.shape)]))
    for plan in (True, False):
        rep.use_plan = plan
        with pytest.raises(MemoryError, match="memory limit: .* over the limit of 1048576"):
            rep.run([x], memory_limit=1 << 20)
        for limit in (8 << 20, None):
            np.testing.assert_array_equal(tensor.to_numpy(rep.run([x], memory_limit=limit)[0]),
                                          -x)
    w = numpy_helper.from_array(np.ones(2 << 18, np.float32), "w")  # 2 MiB
    with pytest.raises(MemoryError, match="memory limit"):
        sonnx.prepare(_add_w(w, (2 << 18,)), memory_limit=1 << 20)
    sonnx.prepare(_add_w(w, (2 << 18,)), memory_limit=4 << 20)
    with device.memory_limit(1 << 20):
        with pytest.raises(MemoryError, match="memory limit"):
            tensor.Tensor((1024, 1024))
        assert tensor.Tensor((16, 16)).shape == (16, 16)
    assert tensor.Tensor((1024, 1024)).shape == (1024, 1024)


# ---- external data -----------------------------------------------------------

def _external_model(tmp_path, location, offset=None, length=None):
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2])
    w.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location), ("offset", offset), ("length", length)]:
        if v is not None:
            e = w.external_data.add()
            e.key, e.value = k, str(v)
    path = tmp_path / "m.onnx"
    path.write_bytes(_add_w(w).SerializeToString())
    return str(path)


def test_external_data_must_be_a_regular_file(tmp_path):
    (tmp_path / "adir").mkdir()
    with pytest.raises(OSError, match="initializer 'w'.*adir.*not a regular file"):
        sonnx.prepare(_external_model(tmp_path, "adir"))
    os.mkfifo(tmp_path / "fifo")  # reading it would block forever
    with pytest.raises(OSError, match="initializer 'w'.*fifo.*not a regular file"):
        sonnx.prepare(_external_model(tmp_path, "fifo"))


@pytest.mark.parametrize("offset,length,match", [
    (9, None, "offset 9 is past the end"),
    (4, 8, "has 8 bytes; the tensor needs 8 from offset 4"),
    (0, 2 ** 62, "the tensor needs 4611686018427387904"),
    (0, 4, "4 bytes of data for float32.2. .expected 8"),
])
def test_external_data_bounds(tmp_path, offset, length, match):
    (tmp_path / "w.bin").write_bytes(np.ones(2, np.float32).tobytes())
    with pytest.raises((OSError, ValueError), match=f"initializer 'w'.*{match}"):
        sonnx.prepare(_external_model(tmp_path, "w.bin", offset, length))


# ---- losses: labels are data, checked on every step -------------------------------

class _Classifier(model.Model):
    def __init__(self, loss):
        super().__init__()
        self.fc = layer.Linear(3)
        self.loss = loss

    def forward(self, x):
        return self.fc(x)

    def train_one_batch(self, x, y):
        out = self.forward(x)
        if self.loss == "cross_entropy":
            out = autograd.softmax(out)
        loss = getattr(autograd, self.loss)(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("loss", ["softmax_cross_entropy", "cross_entropy"])
def test_losses_refuse_labels_outside_the_classes(loss, graph):
    """torch raises for a label >= the class count or < 0; a loss that took
    it would train on a wrong (finite) value. In graph mode the check runs
    on every replayed step, not only the captured one."""
    m = _Classifier(loss)
    m.optimizer = opt.SGD(lr=0.1)
    x = tensor.from_numpy(np.ones((2, 4), np.float32))
    good = tensor.from_numpy(np.array([0, 2], np.int32))
    m.compile([x], is_train=True, use_graph=graph)
    losses = [float(tensor.to_numpy(m(x, good)[1])[0]) for _ in range(2)]
    assert np.isfinite(losses).all() and losses[1] < losses[0]
    for label in (3, -1):
        bad = tensor.from_numpy(np.array([0, label], np.int32))
        with pytest.raises(ValueError, match=f"target {label} is out of range for 3 classes"):
            m(x, bad)
    assert np.isfinite(tensor.to_numpy(m(x, good)[1])).all()  # the model goes on


# ---- states files --------------------------------------------------------------

class _Mlp(model.Model):
    def __init__(self):
        super().__init__()
        self.fc = layer.Linear(3)

    def forward(self, x):
        return self.fc(x)


def _compiled():
    m = _Mlp()
    m.compile([tensor.PlaceHolder((2, 4))], is_train=False)
    return m


def _states(name=b"fc.W", dtype=1, dims=(4, 3), nbytes=None, data=b""):
    out = b"SINGAST1" + struct.pack("<Q", 1) + struct.pack("<I", len(name)) + name
    out += struct.pack("<iI", dtype, len(dims)) + b"".join(struct.pack("<q", d) for d in dims)
    return out + struct.pack("<Q", 48 if nbytes is None else nbytes) + data


@pytest.mark.parametrize("content,match", [
    (_states(dims=(BIG, BIG)), "truncated|corrupt"),
    (_states(dims=(2 ** 62, 4), nbytes=0), r"corrupt .*'fc.W'"),
    (_states(dims=(4, 3), nbytes=2 ** 62), r"truncated \('fc.W' needs 4611686018427387904"),
    (_states(dims=(BIG,), nbytes=4 * BIG), "truncated"),
    (b"SINGAST1" + struct.pack("<QI", 1, 2 ** 31) + b"abc", r"corrupt \(name length\)"),
    (_states(dims=(-1, 3)), r"corrupt \(shape of 'fc.W'\)"),
])
def test_states_file_sizes_are_checked_before_allocating(tmp_path, content, match):
    path = tmp_path / "bad.states"
    path.write_bytes(content)
    with pytest.raises(OSError, match=f"bad.states.*({match})"):
        _compiled().load_states(path)


def _checkpoint(path, attrs, arrays=None, skip=()):
    """A SINGA checkpoint zip with the given states_attr.json text."""
    import io
    import zipfile
    npz = io.BytesIO()
    np.savez(npz, **(arrays if arrays is not None else {"fc.W": np.ones((4, 3), np.float32)}))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        if "npz" not in skip:
            zf.writestr("tensor_dict.npz", npz.getvalue())
        if "json" not in skip:
            zf.writestr("states_attr.json", attrs)


@pytest.mark.parametrize("attrs,skip,match", [
    ('{"fc.W": {"state_type": 0', (), "invalid JSON"),
    ('{"fc.W": {"state_type": 7}}', (), "no state_type 0 or 1"),
    ('{"other": {"state_type": 0}}', (), "'fc.W' has no entry in states_attr.json"),
    ('{"fc.W": {"state_type": 0}} trailing', (), "text after the JSON object"),
    ('[' * 100000, (), "invalid JSON"),
    ('{"fc.W": {"state_type": 0, "x": ' + "[" * 100 + "]" * 100 + "}}", (), "nested too deeply"),
    ('{"fc.W": {"state_type": 0}}', ("npz",), "lacks tensor_dict.npz"),
    ('{"fc.W": {"state_type": 0}}', ("json",), "lacks states_attr.json"),
])
def test_corrupt_checkpoints_are_refused(tmp_path, attrs, skip, match):
    path = tmp_path / "bad.zip"
    _checkpoint(path, attrs, skip=skip)
    with pytest.raises(OSError, match=match):
        _compiled().load_states(path)


def test_a_truncated_checkpoint_is_refused(tmp_path):
    path = tmp_path / "m.zip"
    _compiled().save_states(path)
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 10):
        path.write_bytes(data[:cut])
        with pytest.raises(OSError, match="m.zip"):
            _compiled().load_states(path)


def test_save_states_does_not_follow_a_planted_link(tmp_path):
    m = _compiled()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    target = tmp_path / "m.states"
    for name in ("m.states.tmp", ".m.states.tmp"):
        os.symlink(victim, tmp_path / name)
    m.save_states(target)
    assert victim.read_text() == "keep me"
    assert sorted(os.listdir(tmp_path)) == [".m.states.tmp", "m.states", "m.states.tmp",
                                            "victim.txt"]
    _compiled().load_states(target)


def test_failed_saves_leave_the_old_file_and_no_temporaries(tmp_path):
    m = _compiled()
    path = tmp_path / "m.states"
    m.save_states(path)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="string"):
        m.save_states(path, {"s": tensor.from_numpy(np.array(["a"], dtype=object))})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.states"]
    with pytest.raises(OSError, match="nowhere"):
        m.save_states(tmp_path / "nowhere" / "m.states")
    x = tensor.Tensor(data=np.ones((2, 4), np.float32))
    onnx_path = tmp_path / "m.onnx"
    sonnx.to_onnx([x], m, path=onnx_path)
    assert sorted(os.listdir(tmp_path)) == ["m.onnx", "m.states"]
    assert oct(os.stat(onnx_path).st_mode & 0o777) == "0o644"


# ---- run-time arguments ----------------------------------------------------------

def _relu_rep():
    return sonnx.prepare(_model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", (2, 2))],
                                [_vi("y", (2, 2))]))


@pytest.mark.parametrize("last", [0, 1, -2, -(2 ** 31), 2 ** 31 - 1])
def test_last_layers_is_range_checked(last):
    with pytest.raises(ValueError, match="last_layers"):
        _relu_rep().run([np.ones((2, 2), np.float32)], last_layers=last)


def test_nested_lists_are_arrays_or_a_type_error():
    rep = _relu_rep()
    y, = rep.run([[[1.0, -1.0], [-2.0, 2.0]]])
    np.testing.assert_array_equal(tensor.to_numpy(y), [[1, 0], [0, 2]])
    with pytest.raises(TypeError, match="input 'x' is not an array"):
        rep.run([[[1.0, -1.0], [-2.0]]])
    with pytest.raises(TypeError, match="input 'x' holds dict values"):
        rep.run([[{}, {}]])


def test_text_does_not_become_zeros():
    with pytest.raises(ValueError, match="cannot convert text data to float32"):
        tensor.Tensor(data=np.array(["x"]))
    np.testing.assert_array_equal(tensor.to_numpy(tensor.Tensor(data=np.array(["1.5", "-2"]))),
                                  np.array([1.5, -2], np.float32))
    assert tensor.Tensor(data=np.array(["x"]), dtype=tensor.string).dtype == tensor.string


# ---- names that are not UTF-8 ----------------------------------------------------

def _with_bytes(m, placeholder, raw):
    assert len(placeholder) == len(raw)
    data = m.SerializeToString()
    assert placeholder in data
    return data.replace(placeholder, raw)


@pytest.mark.parametrize("where", ["node", "value"])
def test_names_that_are_not_utf8_are_refused_by_name(where):
    if where == "node":
        node = helper.make_node("Relu", ["x"], ["y"], name="NAMEX")
        vis = ([_vi("x", (2, 2))], [_vi("y", (2, 2))])
    else:
        node = helper.make_node("Relu", ["x"], ["VALUEX"])
        vis = ([_vi("x", (2, 2))], [_vi("VALUEX", (2, 2))])
    m = _model([node], *vis)
    placeholder = b"NAMEX" if where == "node" else b"VALUEX"
    data = _with_bytes(m, placeholder, placeholder[:-2] + b"\xff\xfe")
    with pytest.raises(ValueError, match=r"\\xff\\xfe.*not UTF-8"):
        sonnx.prepare(data)


def test_unknown_attribute_named_with_bytes_is_a_singa_error():
    m = _model([helper.make_node("Relu", ["x"], ["y"], ATTRX=1)], [_vi("x", (2, 2))],
               [_vi("y", (2, 2))])
    with pytest.raises(ValueError, match=r"ATT\\xff\\xfe"):
        sonnx.prepare(_with_bytes(m, b"ATTRX", b"ATT\xff\xfe"))


def test_a_layer_works_after_a_refused_initialization():
    """A refusal leaves no half state: the layer initializes on the next call."""
    fc = layer.Linear(3)
    x = tensor.Tensor(data=np.ones((2, 4), np.float32))
    before = _singa.max_tensor_bytes()
    _singa.set_max_tensor_bytes(16)
    try:
        with pytest.raises(MemoryError, match="needs 48 bytes"):
            fc(x)
    finally:
        _singa.set_max_tensor_bytes(before)
    assert fc(x).shape == (2, 3) and list(fc.get_params()) == ["W", "b"]


# ---- a run can be stopped ---------------------------------------------------------

def _endless_loop_rep():
    """A Loop with neither a trip count nor a cond that ever turns false."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]),
         helper.make_node("Add", ["v", "one"], ["v_out"])],
        "body", [_vi("i", [], TensorProto.INT64), _vi("cond", [], TensorProto.BOOL),
                 _vi("v", [1])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("v_out", [1])],
        [numpy_helper.from_array(np.ones(1, np.float32), "one")])
    node = helper.make_node("Loop", ["", "go", "x"], ["y"], body=body, name="forever")
    return sonnx.prepare(_model([node], [_vi("x", [1]), _vi("go", [], TensorProto.BOOL)],
                                [_vi("y", [1])]))


def _inputs():
    return [np.zeros(1, np.float32), np.array(True)]


@pytest.fixture(params=[False, True], ids=["inference", "recorded"])
def tape(request):
    """Runs with the tape off and on. Recorded, a cancelled endless Loop
    leaves a chain of hundreds of thousands of records, which must be freed
    without recursion (it once overflowed the stack)."""
    was = autograd.training
    autograd.training = request.param
    yield
    autograd.training = was


def test_a_loop_without_bound_ends_when_cancelled(tape):
    rep = _endless_loop_rep()
    timer = threading.Timer(1.0, rep.cancel)
    timer.start()
    started = time.monotonic()
    with pytest.raises(_singa.Cancelled, match="'forever'.*cancelled"):
        rep.run(_inputs())
    assert time.monotonic() - started < 30
    timer.join()
    # Later runs are not affected.
    stop = [np.zeros(1, np.float32), np.array(False)]
    np.testing.assert_array_equal(tensor.to_numpy(rep.run(stop)[0]), [0.0])


def test_ctrl_c_stops_a_run(tape):
    rep = _endless_loop_rep()
    # Python's own SIGINT handler, whatever an earlier test installed (without
    # it interrupt_main does nothing); a missed interrupt ends the run by
    # cancelling it after 60 s, failing the test instead of hanging it.
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    backstop = threading.Timer(60, rep.cancel)
    timer.start()
    backstop.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            rep.run(_inputs())
    finally:
        backstop.cancel()
        timer.join()
        signal.signal(signal.SIGINT, handler)


# ---- arguments a function does not take --------------------------------------------

@pytest.mark.parametrize("call,arg", [
    (lambda: layer.Conv2d(8, 3, paddin=1), "paddin"),
    (lambda: layer.Linear(4, 10, bias_init=0.1), "bias_init"),
    (lambda: _relu_rep().run([np.ones((2, 2), np.float32)], all_output=True), "all_output"),
    (lambda: sonnx.prepare(_model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x")],
                                  [_vi("y")]), base_dri="."), "base_dri"),
])
def test_unknown_keyword_arguments_are_type_errors(call, arg):
    with pytest.raises(TypeError, match=arg):
        call()


# ---- errors users can catch ------------------------------------------------------

def test_errors_live_at_singa_and_derive_from_singa_error_and_a_builtin():
    import singa
    for name, builtin in [("ShapeError", ValueError), ("DTypeError", ValueError),
                          ("InvalidModel", ValueError), ("UnsupportedOp", NotImplementedError),
                          ("SingaIOError", OSError), ("SingaMemoryError", MemoryError),
                          ("Cancelled", RuntimeError), ("Error", RuntimeError)]:
        cls = getattr(singa, name)
        assert cls is getattr(_singa, name)
        assert issubclass(cls, singa.Error) and issubclass(cls, builtin), name
    with pytest.raises(singa.Error, match="not a valid ONNX model"):
        sonnx.prepare(b"\x08\x07junk")
    with pytest.raises(singa.ShapeError):
        autograd.add(tensor.Tensor((2,)), tensor.Tensor((3,)))


def test_numpy_where_a_tensor_is_expected_is_a_type_error_saying_so():
    x = np.ones((2, 3), np.float32)
    for call in (lambda: autograd.relu(x), lambda: layer.Linear(3)(x),
                 lambda: autograd.softmax_cross_entropy(tensor.from_numpy(x), [0, 1])):
        with pytest.raises(TypeError, match="expected a singa Tensor, got numpy.ndarray|"
                                            "expected a singa Tensor, got builtins.list"):
            call()
