"""ONNX export (sonnx.to_onnx): every exportable row of the op table and a
few trained models are exported, checked by onnx.checker (full_check), run
in onnxruntime and re-imported by sonnx, and compared with our eager run;
bad inputs raise errors naming the tensor or op and leave files untouched."""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from singa import _singa, autograd, layer, model, opt, sonnx, tensor
from singa.tensor import _op1
from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as NotImplementedError_
from op_harness import (RNG_SEED, T, V, assert_close, default_tolerance, dtype_name_of,
                        make_array, singa_attrs, to_numpy, to_singa)
from op_cases import CASES

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python"))
from train_digits import CNN  # noqa: E402

NEWEST = min(onnx.defs.onnx_opset_version(), _singa.LATEST_OPSET)
# float32 round-off: onnxruntime may sum in another order or use other kernels.
RTOL, ATOL = 1e-5, 1e-6

# Rows checked by re-import only: onnxruntime cannot run them or differs
# from the ONNX spec (our run matches onnx's reference evaluator there,
# test_ops.py), or the row feeds our op an input ONNX does not allow.
ORT_DIFFERS = {
    "Mod": "onnxruntime has no float Mod with fmod=0",
    "Resize": "onnxruntime's nearest/align_corners/cubic/zero-size Resize differ from the spec",
    "NonZero-scalar": "onnxruntime gives a scalar one nonzero axis",
    "Conv-2d_same_upper_dilated": "onnxruntime: no dilation with SAME_UPPER",
    "LayerNormalization-empty-rows": "onnxruntime refuses empty normalized axes",
    "NegativeLogLikelihoodLoss-empty_mean": "onnxruntime's mean over no elements is 0, not NaN",
    "SoftmaxCrossEntropyLoss-empty": "onnxruntime refuses or zeroes empty batches",
    "ReduceMean-empty": "onnxruntime's mean over no elements is 0, not NaN",
    "Pad-reflect": "onnxruntime refuses reflect pads wider than the axis",
    "Pad-axes_int32": "onnx's checker parses Pad's int32 axes as int64 (the spec allows int32)",
    "Pad-axes_reflect_f64": "onnx's checker parses Pad's int32 axes as int64 (the spec allows "
                            "int32); onnxruntime refuses the wide reflect pads",
    "Transpose-negperm": "negative perm entries: our extension, not ONNX",
    "Pow-exact_int": "onnxruntime computes integer Pow through float64 (inexact for large powers)",
    "Pad-string": "onnxruntime has no string Pad",
    "OneHot-scalar": "onnx shape inference refuses scalar indices",
    "OneHot-depth0": "onnxruntime refuses depth 0",
    "Cast-to_string": "onnxruntime formats floats as strings differently",
    "Cast-round_mode": "onnxruntime refuses round_mode except for float8e8m0",
    "Attention-short-mask-padded": "onnxruntime refuses a mask shorter than the key sequence "
                                   "(the spec pads it with -inf)",
    "Attention-empty-batch": "onnxruntime refuses an empty batch",
    "Attention-qk-bias-causal": "onnxruntime's qk_matmul_output (mode 2) has -FLT_MAX where "
                                "the causal mask gives -inf",
    "Attention-grad-": "onnxruntime computes float64 Attention at float32 precision "
                       "(relative differences ~1e-7)",
    "CenterCropPad-axes_chw": "onnxruntime's CenterCropPad function body mixes the int32 shape "
                              "with int64 (a Max type error)",
    "GridSample-2d_cubic_border": "onnxruntime clamps bicubic taps at the border differently",
    "GridSample-grad_cubic_border": "onnxruntime clamps bicubic taps at the border differently",
    "MaxUnpool-2d_output_shape": "onnxruntime places the values of an explicit output_shape "
                                 "differently from the spec",
    "DynamicQuantizeLinear-zeros": "onnxruntime's scale for an all-zero input differs "
                                   "(the spec gives 0)",
    "ConvInteger-zp-pads": "onnxruntime has no per-channel weight zero point",
    "ConvInteger-strided": "onnxruntime: no dilation with SAME_UPPER",
    "LRN-even-size": "onnxruntime requires an odd size",
    "StringNormalizer": "onnxruntime's StringNormalizer needs the en_US.UTF-8 locale, which "
                        "this machine does not have",
    "StringSplit-maxsplit-whitespace": "onnxruntime counts maxsplit differently when splitting "
                                       "on whitespace",
    "Unique-nan": "onnxruntime drops NaNs from Unique; the spec (numpy) keeps one",
    "CausalConvWithState-empty-length": "onnxruntime's function body refuses an empty sequence "
                                        "(its Conv)",
    "LinearAttention-empty-seq": "onnxruntime's function body refuses an empty sequence "
                                 "(its Reshape)",
    "Einsum-ellipsis-broadcast": "onnxruntime does not broadcast ellipses of different ranks",
    "RNN-layout1": "onnxruntime has no batch-first (layout 1) recurrent ops",
    "GRU-layout1": "onnxruntime has no batch-first (layout 1) recurrent ops",
    "LSTM-layout1": "onnxruntime has no batch-first (layout 1) recurrent ops",
    "GRU-empty-batch": "onnxruntime aborts the process on an empty batch",
    "LSTM-empty-batch": "onnxruntime aborts the process on an empty batch",
    "HannWindow-empty": "onnx's shape inference refuses size 0",
    "HammingWindow-empty": "onnx's shape inference refuses size 0",
    "BlackmanWindow-empty": "onnx's shape inference refuses size 0",
    "FlexAttention": "onnxruntime has no ai.onnx.preview ops",
    "Adagrad": "onnxruntime has no ai.onnx.preview.training ops (only its training builds do)",
    "Adam": "onnxruntime has no ai.onnx.preview.training ops (only its training builds do)",
    "Momentum": "onnxruntime has no ai.onnx.preview.training ops (only its training builds do)",
    "LabelEncoder-repeated-key": "onnxruntime maps a repeated key to its first value; opset 4's "
                                 "spec (and onnx's reference) to its last",
}
# onnxruntime has no float64 kernel for these ops.
ORT_NO_DOUBLE = {"GRU", "LSTM"}
# Rows the onnx checker refuses (reasons above, or here).
ONNX_REFUSES = ("Pad-axes_int32", "Pad-axes_reflect_f64", "OneHot-scalar", "Transpose-negperm",
                # onnx's STFT shape inference ignores onesided's default of 1 (its reference
                # evaluator and onnxruntime give frame_length / 2 + 1 bins, as we do).
                "STFT-no-window", "STFT-window", "STFT-empty",
                # onnx's shape inference (in onnxruntime too) refuses windows of size 0.
                "HannWindow-empty", "HammingWindow-empty", "BlackmanWindow-empty",
                # onnx's shape inference does not broadcast ellipses of different ranks.
                "Einsum-ellipsis-broadcast",
                # onnx's full check fails expanding MVN's function body with default axes.
                "MeanVarianceNormalization-2x3x4x5",
                # onnx marks GroupNormalization-18 deprecated: no opset accepts it.
                "GroupNormalization-opset18",
                # onnx's shape inference for the training optimizers wants every output.
                "Adagrad-x-only", "Adam-x-v-only")
# numpy cannot carry these into onnxruntime.
ORT_DTYPES = {"bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
              "int4", "uint4", "float4e2m1", "float8e8m0", "int2", "uint2"}
# float32 summation order: onnxruntime adds in another order, and the error
# of a sum is relative to its summands (up to ~50 in the rows), not to the result.
ORT_ATOL = 1e-5


class Recording:
    """Grad mode and tracing on (every op records itself), the training mode given."""

    def __init__(self, training=False):
        self.training = training

    def __enter__(self):
        self.prev = (_singa.grad_enabled(), _singa.training_mode(),
                     _singa.sonnx.tracing_enabled())
        _singa.set_grad_enabled(True)
        _singa.set_training_mode(self.training)
        _singa.sonnx.set_tracing(True)

    def __exit__(self, *exc):
        _singa.set_grad_enabled(self.prev[0])
        _singa.set_training_mode(self.prev[1])
        _singa.sonnx.set_tracing(self.prev[2])


def ort_run(m, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, feeds)))


def check_model(m):
    onnx.checker.check_model(m, full_check=True)


# ---- the op table ------------------------------------------------------------
def _dtype(case):
    """One dtype per row: float32 where the op takes it, else its first."""
    if case.dtypes is not None:
        return "float32" if "float32" in case.dtypes else list(case.dtypes)[0]
    if not any(isinstance(x, T) for x in case.inputs):
        return "float32"
    s = _singa.find_op(case.op, case.opset or NEWEST, case.domain)
    first_t = next(i for i, x in enumerate(case.inputs) if isinstance(x, T))
    for allowed, inputs in s.dtype_rules:
        if first_t in inputs or (inputs and first_t >= inputs[-1] and s.inputs[-1].endswith("...")):
            names = [_singa.dtype_name(d) for d in allowed]
            return "float32" if "float32" in names else names[0]
    return "float32"


def _skip_reason(case):
    if case.op == "Dropout" and len(case.inputs) == 3 and isinstance(case.inputs[2], V) \
            and bool(np.asarray(case.inputs[2].values)) \
            and (not isinstance(case.inputs[1], V) or float(np.asarray(case.inputs[1].values)) > 0):
        return "random mask: the kept elements differ between runtimes"
    if case.op == "Bernoulli":
        return "random draws differ between runtimes"
    return None


def _ort_differs(case, dtype):
    rid = case.name(dtype)
    for prefix, reason in ORT_DIFFERS.items():
        if rid.startswith(prefix + "-") or rid.startswith(prefix):
            return reason
    return None


def _rows():
    for case in CASES:
        if not case.domain and (case.opset or NEWEST) < 11:
            continue  # export targets ai.onnx opset 11 and newer (other domains: any version)
        dt = _dtype(case)
        yield pytest.param(case, dt, id=case.name(dt))


@pytest.mark.parametrize("case,dtype", list(_rows()))
def test_export_op_row(case, dtype):
    reason = _skip_reason(case)
    if reason:
        pytest.skip(reason)
    rng = np.random.default_rng(RNG_SEED)
    arrays = [make_array(spec, dtype, rng) for spec in case.inputs]
    tensors = [to_singa(a) for a in arrays]
    # T inputs are graph inputs; V inputs (axes, shapes, indices) constants.
    feeds = [(t, a) for t, a, s in zip(tensors, arrays, case.inputs) if isinstance(s, T)]
    n_out = case.outputs if case.outputs is not None else -1
    with Recording(training=True):
        outs = _singa.call_op(case.op, tensors, singa_attrs(case.attrs), case.opset or NEWEST,
                              n_out, False, case.domain)
    ours = [to_numpy(o) for o in outs]
    m = sonnx.to_onnx([t for t, _ in feeds], list(outs), model_name=case.op, training=True)
    assert [n.op_type for n in m.graph.node] == [case.op]
    # Re-import: our importer runs what we wrote.
    rtol, atol = default_tolerance(dtype)
    if case.rtol is not None:
        rtol, atol = case.rtol, case.atol if case.atol is not None else atol
    back = sonnx.prepare(m).run([a for _, a in feeds])
    for i, (g, w) in enumerate(zip(back, ours)):
        assert_close(to_numpy(g.data), w, rtol, atol, f"{case.name(dtype)} output {i} (re-import)")

    differs = _ort_differs(case, dtype)
    if not any(case.name(dtype).startswith(p) for p in ONNX_REFUSES):
        check_model(m)
    dtypes = {dtype_name_of(a.dtype) for _, a in feeds} | {dtype_name_of(o.dtype) for o in ours}
    if differs or dtypes & ORT_DTYPES or (case.op in ORT_NO_DOUBLE and "float64" in dtypes):
        return
    try:
        got = ort_run(m, [np.asarray(a) for _, a in feeds])
    except NotImplementedError_ as e:  # onnxruntime has no kernel for this op and dtype
        assert any(m in str(e) for m in ("Could not find an implementation",
                                         "Failed to find kernel")), str(e)
        return
    for i, (g, w) in enumerate(zip(got, ours)):
        g = np.asarray(g)
        if w.dtype == object:
            g = g.astype(object)
        assert_close(g, w, rtol, max(atol, ORT_ATOL) if w.dtype == np.float32 else atol,
                     f"{case.name(dtype)} output {i} (onnxruntime)")


# ---- models ------------------------------------------------------------------
def _train(m, x, y, steps, lr=0.05):
    m.set_optimizer(opt.SGD(lr=lr, momentum=0.9))
    m.compile([x], is_train=True, use_graph=False)
    for _ in range(steps):
        m(x, y)


class _Trainable(model.Model):

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


class ResNetBlock(_Trainable):
    """conv-bn-relu-conv-bn + identity shortcut, relu, global pool, linear."""

    def __init__(self):
        super().__init__()
        self.stem = layer.Conv2d(8, 3, padding=1)
        self.conv1 = layer.Conv2d(8, 3, padding=1, bias=False)
        self.bn1 = layer.BatchNorm2d()
        self.conv2 = layer.Conv2d(8, 3, padding=1, bias=False)
        self.bn2 = layer.BatchNorm2d()
        self.fc = layer.Linear(10)

    def forward(self, x):
        x = autograd.relu(self.stem(x))
        y = autograd.relu(self.bn1(self.conv1(x)))
        y = autograd.relu(autograd.add(self.bn2(self.conv2(y)), x))
        return self.fc(autograd.flatten(autograd.globalaveragepool(y)))


class LSTMModel(_Trainable):
    """An LSTM over [T, N, 4] with a linear head on the last step."""

    def __init__(self):
        super().__init__()
        self.lstm = layer.LSTM(4, 6)
        self.fc = layer.Linear(10)

    def forward(self, x):
        y, _ = self.lstm(x)
        last = autograd.squeeze(autograd.slice(y, [y.shape[0] - 1], [y.shape[0]], [0]), 0)
        return self.fc(last)


class LayerNorm(layer.Layer):

    def initialize(self, x):
        d = x.shape[-1]
        self.scale = tensor.Tensor((d,), stores_grad=True)
        self.scale.set_value(1.0)
        self.bias = tensor.Tensor((d,), stores_grad=True)
        self.bias.set_value(0.0)

    def forward(self, x):
        return _op1("LayerNormalization", x, self.scale, self.bias, axis=-1)


class Transformer(_Trainable):
    """One pre-norm encoder block (single head) on [N, S, D], mean-pooled."""

    def __init__(self, d=8):
        super().__init__()
        self.d = d
        self.ln1 = LayerNorm()
        self.q = layer.Linear(d)
        self.k = layer.Linear(d)
        self.v = layer.Linear(d)
        self.o = layer.Linear(d)
        self.ln2 = LayerNorm()
        self.ff1 = layer.Linear(16)
        self.ff2 = layer.Linear(d)
        self.head = layer.Linear(10)

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        s = autograd.matmul(q, autograd.transpose(k, (0, 2, 1)))
        s = autograd.mul(s, tensor.Tensor(data=np.float32(1 / np.sqrt(self.d)),
                                          requires_grad=False))
        x = autograd.add(x, self.o(autograd.matmul(autograd.softmax(s, -1), v)))
        x = autograd.add(x, self.ff2(autograd.relu(self.ff1(self.ln2(x)))))
        return self.head(autograd.reduce_mean(x, [1], 0))


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    x = tensor.Tensor(data=rng.standard_normal(shape).astype(np.float32), requires_grad=False)
    n = shape[1] if len(shape) == 3 and shape[0] == 5 else shape[0]  # the LSTM's is [T, N, .]
    y = tensor.Tensor(data=rng.integers(0, 10, n).astype(np.int32), dtype=tensor.int32,
                      requires_grad=False)
    return x, y


class Reimported(sonnx.SONNXModel):

    def forward(self, *x):
        return super().forward(*x)[0]

    def train_one_batch(self, x, y):
        out = self.forward(x)
        loss = autograd.softmax_cross_entropy(out, y)
        self.optimizer.backward_and_update(loss)
        return out, loss

    def set_optimizer(self, optimizer):
        self.optimizer = optimizer


def _export_and_compare(m, x, name):
    """Exports m (its forward on x, inference form), checks it, runs it in
    onnxruntime and compares with m's eval forward; returns the ModelProto."""
    om = sonnx.to_onnx([x], m, model_name=name)
    check_model(om)
    m.eval()
    want = tensor.to_numpy(m(x))
    got = ort_run(om, [tensor.to_numpy(x)])[0]
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-5,
                               err_msg=f"{name}: onnxruntime vs singa")
    return om


def _initializers(om):
    return {i.name: onnx.numpy_helper.to_array(i) for i in om.graph.initializer}


MODELS = {
    "cnn": (lambda: CNN(), (6, 1, 8, 8)),
    "resnet_block": (ResNetBlock, (6, 3, 8, 8)),
    "lstm": (LSTMModel, (5, 6, 4)),  # [T, N, input]
    "transformer": (Transformer, (6, 5, 8)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_export_trained_model(name):
    make, shape = MODELS[name]
    x, y = _data(shape)
    m = make()
    _train(m, x, y, 3)
    om = _export_and_compare(m, x, name)
    # The trained values (and running statistics) are the initializers,
    # named by their dotted paths.
    inits = _initializers(om)
    for k, p in m.get_states().items():
        assert k in inits, f"{name}: parameter {k} missing from the export"
        np.testing.assert_array_equal(inits[k], tensor.to_numpy(p))

    # Re-imported, trained one more step, exported again: the new weights.
    re = Reimported(om)
    re.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
    re.compile([x], is_train=True, use_graph=False)
    before = {k: tensor.to_numpy(v).copy() for k, v in re.get_params().items()}
    re(x, y)
    om2 = _export_and_compare(re, x, name + "_retrained")
    inits2 = _initializers(om2)
    changed = 0
    for k, p in re.get_params().items():
        np.testing.assert_array_equal(inits2[k], tensor.to_numpy(p))
        changed += not np.array_equal(inits2[k], before[k])
    assert changed > 0, f"{name}: the re-trained export has the old weights"


class Transfer(Reimported):
    """The imported model cut before its last layer, with a new head."""

    def __init__(self, om, classes):
        super().__init__(om)
        self.new_head = layer.Linear(classes)

    def forward(self, *x):
        return self.new_head(sonnx.SONNXModel.forward(self, *x, last_layers=-2)[0])


def test_export_transfer_learning():
    x, y = _data((6, 1, 8, 8))
    m = CNN()
    _train(m, x, y, 2)
    om = _export_and_compare(m, x, "cnn")
    t = Transfer(om, 2)
    t.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
    t.compile([x], is_train=True, use_graph=False)
    t(x, tensor.Tensor(data=(tensor.to_numpy(y) % 2).astype(np.int32), dtype=tensor.int32,
                       requires_grad=False))
    om2 = _export_and_compare(t, x, "transfer")
    inits = _initializers(om2)
    assert "new_head.W" in inits and inits["new_head.W"].shape == (64, 2)
    assert "fc2.W" not in inits  # the cut layer is gone
    np.testing.assert_array_equal(inits["new_head.W"],
                                  tensor.to_numpy(t.get_params()["new_head.W"]))


def test_dynamic_batch_and_names():
    x, y = _data((6, 1, 8, 8))
    m = CNN()
    _train(m, x, y, 1)
    om = sonnx.to_onnx([x], m, dynamic_batch=True, input_names=["image"],
                       output_names=["logits"])
    check_model(om)
    assert om.graph.input[0].name == "image" and om.graph.output[0].name == "logits"
    assert om.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    m.eval()
    x3 = tensor.Tensor(data=tensor.to_numpy(x)[:3], requires_grad=False)
    got = ort_run(om, [tensor.to_numpy(x3)])[0]
    np.testing.assert_allclose(got, tensor.to_numpy(m(x3)), rtol=RTOL, atol=1e-5)


def test_export_after_training_forward_as_in_the_seed():
    """SINGA's ONNX page: y from a training-mode forward, then to_onnx([x], [y])."""
    x, y = _data((6, 3, 8, 8))
    m = ResNetBlock()
    _train(m, x, y, 1)
    m.train()
    out, _ = m(x, y)
    om = sonnx.to_onnx([x], [out])
    check_model(om)
    # BatchNormalization is written in inference form (running statistics).
    bns = [n for n in om.graph.node if n.op_type == "BatchNormalization"]
    assert bns and all(len(n.output) == 1 for n in bns)
    assert all(a.name != "training_mode" for n in bns for a in n.attribute)
    m.eval()
    got = ort_run(om, [tensor.to_numpy(x)])[0]
    np.testing.assert_allclose(got, tensor.to_numpy(m(x)), rtol=RTOL, atol=1e-5)


def test_older_opset():
    x, y = _data((6, 1, 8, 8))
    m = CNN()
    _train(m, x, y, 1)
    om = sonnx.to_onnx([x], m, opset=13)
    check_model(om)
    assert om.opset_import[0].version == 13
    m.eval()
    np.testing.assert_allclose(ort_run(om, [tensor.to_numpy(x)])[0], tensor.to_numpy(m(x)),
                               rtol=RTOL, atol=1e-5)


# ---- bad input ---------------------------------------------------------------
def _small():
    x = tensor.Tensor(data=np.ones((2, 3), np.float32), requires_grad=False)
    w = tensor.Tensor(data=np.full((3, 4), 0.5, np.float32), stores_grad=True, name="w")
    return x, w


class NoRecording(Recording):
    """Recording off (set_recording(False), C++'s NoGradGuard): ops leave
    no record, not even the structure an inference forward keeps."""

    def __enter__(self):
        super().__enter__()
        _singa.set_grad_enabled(False)
        self.recording = _singa.recording_enabled()
        _singa.set_recording(False)

    def __exit__(self, *exc):
        _singa.set_recording(self.recording)
        super().__exit__(*exc)


def test_error_no_recorded_history():
    x, w = _small()
    with NoRecording():
        y = autograd.matmul(x, w)
    y.name = "logits"
    with pytest.raises(ValueError, match="'logits'.*no recorded history"):
        sonnx.to_onnx([x], [y])


def test_error_unused_input():
    x, w = _small()
    other = tensor.Tensor(data=np.ones((2, 3), np.float32), requires_grad=False)
    with Recording():
        y = autograd.matmul(other, w)
    with pytest.raises(ValueError, match="input 0 .* not used"):
        sonnx.to_onnx([x], [y])


def test_error_op_without_onnx_form():

    class Cube(autograd.Operator):

        def forward(self, x):
            return autograd.mul(autograd.mul(x, x), x)

        def backward(self, dy):
            return dy

    x, w = _small()
    with Recording():
        y = Cube()(autograd.matmul(x, w))
    with pytest.raises(NotImplementedError, match="Function.*ai.singa.*no ONNX form"):
        sonnx.to_onnx([x], [y])


def test_error_name_clash():
    x, w = _small()
    w2 = tensor.Tensor(data=np.ones((3, 4), np.float32), stores_grad=True, name="w")
    with Recording():
        y = autograd.add(autograd.matmul(x, w), autograd.matmul(x, w2))
    with pytest.raises(ValueError, match="name clash: 'w'"):
        sonnx.to_onnx([x], [y])
    with Recording():
        y = autograd.matmul(x, w)
    with pytest.raises(ValueError, match="name clash: 'w'"):
        sonnx.to_onnx([x], [y], input_names=["w"])


def test_failed_export_leaves_file_untouched(tmp_path):
    path = tmp_path / "model.onnx"
    path.write_bytes(b"previous contents")
    x, w = _small()
    with NoRecording():
        y = autograd.matmul(x, w)
    with pytest.raises(ValueError, match="no recorded history"):
        sonnx.to_onnx([x], [y], path=path)
    assert path.read_bytes() == b"previous contents"
    assert os.listdir(tmp_path) == ["model.onnx"]
    with Recording():
        y = autograd.relu(autograd.matmul(x, w))
    om = sonnx.to_onnx([x], [y], path=path)
    assert onnx.load(str(path)) == om
    assert os.listdir(tmp_path) == ["model.onnx"]
    with pytest.raises(OSError):
        sonnx.to_onnx([x], [y], path=tmp_path / "no-such-dir" / "m.onnx")


def test_outputs_that_are_inputs_or_repeated():
    x, w = _small()
    with Recording():
        y = autograd.matmul(x, w)
    om = sonnx.to_onnx([x], [y, y, x])
    check_model(om)
    got = ort_run(om, [tensor.to_numpy(x)])
    np.testing.assert_allclose(got[0], tensor.to_numpy(y))
    np.testing.assert_allclose(got[1], tensor.to_numpy(y))
    np.testing.assert_allclose(got[2], tensor.to_numpy(x))
