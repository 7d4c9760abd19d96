"""ONNX models in the styles that real third-party exporters produce, for
bench/real_bench.py and tests/python/test_real_models.py.

bench/onnx_infer.py's models come from torch's exporter at its newest opset:
clean graphs of fused-friendly ops with static shapes. Models found in the
wild look different, and each generator here writes one such graph with
onnx.helper and seeded numpy weights (no downloads, each built in well under
a second):

- paddle_textline_op9, paddle_textline_op15: a Paddle2ONNX-style PP-LCNet /
  MobileNetV3 text-direction classifier, 3x48xW (batch 6 at W = 192);
  HardSwish and HardSigmoid spelled as Add/Clip/Mul/Div with Constant-node
  operands (Clip's bounds are attributes at opset 9, inputs at 15),
  unfused BatchNormalization, depthwise convolutions (group = channels),
  squeeze-excitation blocks, a dynamic batch and width, and the classifier's
  flatten computed through Shape/Cast/Gather/Unsqueeze/Concat/Reshape;
- paddle_docori_op9, paddle_docori_op15: the same architecture as a
  4-way document-orientation classifier at 3x224x224;
- yolo_op11, yolo_op17: a YOLOv8-style detector at 3x320x320 (convolutions
  with folded batch norm, SiLU as Sigmoid and Mul, C2f blocks with Split,
  SPPF, nearest Resize by scales, a box-distribution head with Softmax and
  the anchor decoding); opset 11 spells Split's sizes and Resize's empty
  roi the old way, with a static batch, opset 17 has a dynamic batch;
- crnn_op12: a CRNN captcha/OCR recognizer, 1x3x32xW: a convolution stack,
  Reshape/Transpose to a sequence, a bidirectional LSTM, MatMul, Softmax;
- dbnet_op11: a DB-style text detector at 3x320x320 (strided backbone, an
  FPN whose top-down path upsamples with ConvTranspose, nearest Resize and
  Concat to a quarter of the input, a ConvTranspose head and Sigmoid);
- stream_op13: a streaming voice-activity model, one 32 ms frame (512
  samples at 16 kHz) per call: an If on the sample rate picks one of two
  convolutional front ends (one reads the outer graph's initializers, the
  other holds its own), then an LSTM whose state (h, c) is a graph input and
  output;
- gemm_op11: a wake-word head, Flatten and four Gemm+Relu layers, then a
  Gemm and Softmax, batch 1.

    import real_models
    path = real_models.write("crnn_op12")            # cached .onnx path
    feeds = real_models.feeds("crnn_op12", width=160)
"""
from __future__ import annotations

import hashlib
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64


class _Graph:
    """Nodes, initializers and fresh value names for one (sub)graph."""

    def __init__(self, opset, seed, prefix="t"):
        self.opset = opset
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.prefix = prefix
        self.count = 0

    def name(self, op):
        self.count += 1
        return f"{self.prefix}.{op}.{self.count}"

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(op) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=outs[0] + ".node", **attrs))
        return outs[0] if n_out == 1 else outs

    def init(self, array, name=None):
        name = name or self.name("w")
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, array):
        """A Constant node, the way Paddle2ONNX and torch spell scalars."""
        out = self.name("Constant")
        self.nodes.append(helper.make_node("Constant", [], [out], name=out + ".node",
                                           value=numpy_helper.from_array(np.asarray(array))))
        return out

    def weight(self, shape, fan_in, gain=1.0):
        return self.init((self.rng.standard_normal(shape) * gain / np.sqrt(fan_in))
                         .astype(np.float32))

    def bias(self, n, scale=0.05):
        return self.init((self.rng.standard_normal(n) * scale).astype(np.float32))

    def conv(self, x, cin, cout, k, stride=1, group=1, bias=True, gain=1.4, pad=None):
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        ph, pw = (kh // 2, kw // 2) if pad is None else (pad, pad)
        w = self.weight((cout, cin // group, kh, kw), cin // group * kh * kw, gain)
        inputs = [x, w] + ([self.bias(cout)] if bias else [])
        return self.node("Conv", inputs, kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[ph, pw, ph, pw], group=group, dilations=[1, 1])

    def bn(self, x, c):
        r = self.rng
        scale = self.init((1.0 + 0.1 * r.standard_normal(c)).astype(np.float32))
        shift = self.init((0.1 * r.standard_normal(c)).astype(np.float32))
        mean = self.init((0.1 * r.standard_normal(c)).astype(np.float32))
        var = self.init((1.0 + 0.2 * r.random(c)).astype(np.float32))
        return self.node("BatchNormalization", [x, scale, shift, mean, var], epsilon=1e-5,
                         momentum=0.9)

    def clip(self, x, lo, hi):
        if self.opset < 11:
            return self.node("Clip", [x], min=float(lo), max=float(hi))
        return self.node("Clip", [x, self.const(np.float32(lo)), self.const(np.float32(hi))])

    def unsqueeze(self, x, axes):
        if self.opset < 13:
            return self.node("Unsqueeze", [x], axes=axes)
        return self.node("Unsqueeze", [x, self.init(np.array(axes, np.int64))])

    def squeeze(self, x, axes):
        if self.opset < 13:
            return self.node("Squeeze", [x], axes=axes)
        return self.node("Squeeze", [x, self.init(np.array(axes, np.int64))])

    def split(self, x, sizes, axis=1):
        if self.opset < 13:
            return self.node("Split", [x], n_out=len(sizes), axis=axis, split=sizes)
        return self.node("Split", [x, self.init(np.array(sizes, np.int64))], n_out=len(sizes),
                         axis=axis)

    def resize_nearest(self, x, factor):
        scales = self.init(np.array([1, 1, factor, factor], np.float32))
        # Resize-11 requires its roi input (an empty tensor); 13 and later may omit it.
        roi = self.init(np.zeros(0, np.float32)) if self.opset < 13 else ""
        return self.node("Resize", [x, roi, scales], mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor")

    def model(self, inputs, outputs, doc):
        graph = helper.make_graph(self.nodes, doc.split(":")[0], inputs, outputs, self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="singa bench/real_models.py", doc_string=doc)
        m.ir_version = 7 if self.opset <= 15 else 8
        return m


# ---- Paddle2ONNX-style PP-LCNet / MobileNetV3 ---------------------------------------


def _hard_swish(g, x):
    """x * Clip(x + 3, 0, 6) / 6, as Paddle2ONNX writes hard_swish before opset 14."""
    t = g.node("Add", [x, g.const(np.float32(3.0))])
    t = g.clip(t, 0.0, 6.0)
    t = g.node("Mul", [x, t])
    return g.node("Div", [t, g.const(np.float32(6.0))])


def _hard_sigmoid(g, x):
    """Clip(0.2 x + 0.5, 0, 1), Paddle's hardsigmoid (slope 0.2, offset 0.5)."""
    t = g.node("Mul", [x, g.const(np.float32(0.2))])
    t = g.node("Add", [t, g.const(np.float32(0.5))])
    return g.clip(t, 0.0, 1.0)


def _conv_bn_hswish(g, x, cin, cout, k, stride=1, group=1):
    # Gain 1.75: hard swish halves small activations, so unit-gain weights would let them
    # fade to nothing over the 21 layers.
    return _hard_swish(g, g.bn(g.conv(x, cin, cout, k, stride, group, bias=False, gain=1.75),
                               cout))


def _squeeze_excite(g, x, c):
    s = g.node("GlobalAveragePool", [x])
    s = g.node("Relu", [g.conv(s, c, c // 4, 1)])
    s = _hard_sigmoid(g, g.conv(s, c // 4, c, 1))
    return g.node("Mul", [x, s])


# (depthwise kernel, stride (h, w), output channels, squeeze-excitation): PP-LCNet x0.5's
# blocks, with the stride (2, 1) stages of the text-line classifier's variant.
_LCNET = [(3, 1, 32, False), (3, 2, 64, False), (3, 1, 64, False), (3, 2, 128, False),
          (3, 1, 128, False), (5, 2, 256, False), (5, 1, 256, False), (5, 1, 256, False),
          (5, 2, 512, True), (5, 1, 512, True)]


def paddle_lcnet(opset, classes, height, seed):
    g = _Graph(opset, seed, prefix="p2o")
    x = "x"
    c = 16
    t = _conv_bn_hswish(g, x, 3, c, 3, 2)
    for k, stride, cout, se in _LCNET:
        t = _conv_bn_hswish(g, t, c, c, k, stride, group=c)  # depthwise
        if se:
            t = _squeeze_excite(g, t, c)
        t = _conv_bn_hswish(g, t, c, cout, 1)  # pointwise
        c = cout
    t = g.node("GlobalAveragePool", [t])
    t = _hard_swish(g, g.conv(t, c, 640, 1, bias=False, gain=2.5))
    # Paddle2ONNX's flatten: the batch read from the tensor's shape at run time.
    shape = g.node("Cast", [g.node("Shape", [t])], to=I64)
    batch = g.unsqueeze(g.node("Gather", [shape, g.const(np.int64(0))], axis=0), [0])
    t = g.node("Reshape", [t, g.node("Concat", [batch, g.const(np.array([-1], np.int64))],
                                     axis=0)])
    logits = g.node("Add", [g.node("MatMul", [t, g.weight((640, classes), 640, 2.0)]),
                            g.bias(classes)])
    g.nodes.append(helper.make_node("Softmax", [logits], ["softmax_0.tmp_0"], axis=1,
                                    name="softmax_0"))
    inputs = [helper.make_tensor_value_info("x", F32, ["batch", 3, height, "width"])]
    outputs = [helper.make_tensor_value_info("softmax_0.tmp_0", F32, ["batch", classes])]
    return g.model(inputs, outputs, f"PP-LCNet-style {classes}-way classifier, opset {opset}: "
                   "Paddle2ONNX style")


# ---- YOLOv8-style detector -------------------------------------------------------------


def _silu(g, x):
    return g.node("Mul", [x, g.node("Sigmoid", [x])])


def _cbs(g, x, cin, cout, k, stride=1):
    """Conv (batch norm folded into weights and bias) + SiLU."""
    return _silu(g, g.conv(x, cin, cout, k, stride, gain=1.7))


def _c2f(g, x, cin, cout, n=1, shortcut=True):
    c = cout // 2
    y = g.split(_cbs(g, x, cin, 2 * c, 1), [c, c])
    parts = list(y)
    for _ in range(n):
        b = _cbs(g, _cbs(g, parts[-1], c, c, 3), c, c, 3)
        parts.append(g.node("Add", [parts[-1], b]) if shortcut else b)
    return _cbs(g, g.node("Concat", parts, axis=1), (2 + n) * c, cout, 1)


def _sppf(g, x, c):
    t = _cbs(g, x, c, c // 2, 1)
    pools = [t]
    for _ in range(3):
        pools.append(g.node("MaxPool", [pools[-1]], kernel_shape=[5, 5], strides=[1, 1],
                            pads=[2, 2, 2, 2]))
    return _cbs(g, g.node("Concat", pools, axis=1), 2 * c, c, 1)


YOLO_CLASSES = 80
YOLO_REG = 16
YOLO_SIZE = 320


def _anchors(size, strides=(8, 16, 32)):
    points, stride_of = [], []
    for s in strides:
        n = size // s
        ys, xs = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        points.append(np.stack([xs.ravel(), ys.ravel()]))
        stride_of.append(np.full((1, n * n), s))
    return (np.concatenate(points, 1).astype(np.float32),
            np.concatenate(stride_of, 1).astype(np.float32))


def yolo(opset, seed=0):
    g = _Graph(opset, seed, prefix="/model")
    dynamic = opset >= 13
    t = _cbs(g, "images", 3, 16, 3, 2)
    t = _c2f(g, _cbs(g, t, 16, 32, 3, 2), 32, 32)
    p3 = _c2f(g, _cbs(g, t, 32, 64, 3, 2), 64, 64, 2)
    p4 = _c2f(g, _cbs(g, p3, 64, 128, 3, 2), 128, 128, 2)
    p5 = _sppf(g, _c2f(g, _cbs(g, p4, 128, 256, 3, 2), 256, 256), 256)
    n4 = _c2f(g, g.node("Concat", [g.resize_nearest(p5, 2.0), p4], axis=1), 384, 128,
              shortcut=False)
    o3 = _c2f(g, g.node("Concat", [g.resize_nearest(n4, 2.0), p3], axis=1), 192, 64,
              shortcut=False)
    o4 = _c2f(g, g.node("Concat", [_cbs(g, o3, 64, 64, 3, 2), n4], axis=1), 192, 128,
              shortcut=False)
    o5 = _c2f(g, g.node("Concat", [_cbs(g, o4, 128, 128, 3, 2), p5], axis=1), 384, 256,
              shortcut=False)
    no = 4 * YOLO_REG + YOLO_CLASSES
    batch = 0 if dynamic else 1  # Reshape's 0 copies the input's dimension
    levels = []
    for o, c in ((o3, 64), (o4, 128), (o5, 256)):
        box = _cbs(g, _cbs(g, o, c, 64, 3), 64, 64, 3)
        box = g.conv(box, 64, 4 * YOLO_REG, 1)
        cls = _cbs(g, _cbs(g, o, c, YOLO_CLASSES, 3), YOLO_CLASSES, YOLO_CLASSES, 3)
        cls = g.conv(cls, YOLO_CLASSES, YOLO_CLASSES, 1)
        both = g.node("Concat", [box, cls], axis=1)
        levels.append(g.node("Reshape", [both, g.init(np.array([batch, no, -1], np.int64))]))
    t = g.node("Concat", levels, axis=2)
    box, cls = g.split(t, [4 * YOLO_REG, YOLO_CLASSES])
    proj = np.arange(YOLO_REG, dtype=np.float32)
    if dynamic:
        # The box distribution, as ultralytics exports it: softmax over the 16 bins, then a
        # 1x1 convolution with weights 0..15 takes its expectation.
        d = g.node("Reshape", [box, g.init(np.array([0, 4, YOLO_REG, -1], np.int64))])
        d = g.node("Softmax", [g.node("Transpose", [d], perm=[0, 2, 1, 3])], axis=1)
        d = g.node("Conv", [d, g.init(proj.reshape(1, YOLO_REG, 1, 1))], kernel_shape=[1, 1])
        dist = g.node("Reshape", [d, g.init(np.array([0, 4, -1], np.int64))])
    else:
        # Softmax before opset 13 flattens from its axis on: the bins go last first.
        d = g.node("Reshape", [box, g.init(np.array([1, 4, YOLO_REG, -1], np.int64))])
        d = g.node("Softmax", [g.node("Transpose", [d], perm=[0, 1, 3, 2])], axis=3)
        d = g.node("MatMul", [d, g.init(proj.reshape(YOLO_REG, 1))])
        dist = g.node("Reshape", [d, g.init(np.array([1, 4, -1], np.int64))])
    points, strides = _anchors(YOLO_SIZE)

    def part(lo, hi):
        return g.node("Slice", [dist, g.init(np.array([lo], np.int64)),
                                g.init(np.array([hi], np.int64)), g.init(np.array([1], np.int64))])

    anchors = g.init(points[None])
    lt, rb = part(0, 2), part(2, 4)
    x1y1 = g.node("Sub", [anchors, lt])
    x2y2 = g.node("Add", [anchors, rb])
    centre = g.node("Div", [g.node("Add", [x1y1, x2y2]), g.const(np.float32(2.0))])
    wh = g.node("Sub", [x2y2, x1y1])
    boxes = g.node("Mul", [g.node("Concat", [centre, wh], axis=1), g.init(strides[None])])
    g.nodes.append(helper.make_node("Concat", [boxes, g.node("Sigmoid", [cls])], ["output0"],
                                    axis=1, name="/model/Concat_out"))
    anchors_n = points.shape[1]
    b = "batch" if dynamic else 1
    inputs = [helper.make_tensor_value_info("images", F32, [b, 3, YOLO_SIZE, YOLO_SIZE])]
    outputs = [helper.make_tensor_value_info("output0", F32, [b, 4 + YOLO_CLASSES, anchors_n])]
    return g.model(inputs, outputs, f"YOLOv8-style detector, opset {opset}")


# ---- CRNN recognizer ------------------------------------------------------------------

CRNN_CLASSES = 37  # 0-9, a-z and the CTC blank
CRNN_HIDDEN = 64


def crnn(opset=12, seed=0):
    g = _Graph(opset, seed)
    r = g.rng

    def block(x, cin, cout, pool=None, bn=False):
        t = g.conv(x, cin, cout, 3)
        if bn:
            t = g.bn(t, cout)
        t = g.node("Relu", [t])
        if pool:
            t = g.node("MaxPool", [t], kernel_shape=list(pool), strides=list(pool))
        return t

    t = block("input", 3, 32, (2, 2))          # 16 x W/2
    t = block(t, 32, 64, (2, 2))               # 8 x W/4
    t = block(t, 64, 128, bn=True)
    t = block(t, 128, 128, (2, 1))             # 4 x W/4
    t = block(t, 128, 128, (2, 1), bn=True)    # 2 x W/4
    t = g.node("Relu", [g.conv(t, 128, 128, (2, 1), pad=0)])  # 1 x W/4
    t = g.node("Reshape", [t, g.init(np.array([0, 128, -1], np.int64))])  # N, C, T
    seq = g.node("Transpose", [t], perm=[2, 0, 1])                        # T, N, C
    h = CRNN_HIDDEN
    w = g.init((r.standard_normal((2, 4 * h, 128)) / np.sqrt(128)).astype(np.float32))
    rr = g.init((r.standard_normal((2, 4 * h, h)) / np.sqrt(h)).astype(np.float32))
    b = g.init((r.standard_normal((2, 8 * h)) * 0.1).astype(np.float32))
    y = g.node("LSTM", [seq, w, rr, b], direction="bidirectional", hidden_size=h)
    y = g.node("Transpose", [y], perm=[0, 2, 1, 3])                       # T, N, 2, H
    y = g.node("Reshape", [y, g.init(np.array([0, 0, 2 * h], np.int64))])
    logits = g.node("Add", [g.node("MatMul", [y, g.weight((2 * h, CRNN_CLASSES), 2 * h, 2.0)]),
                            g.bias(CRNN_CLASSES)])
    g.nodes.append(helper.make_node("Softmax", [logits], ["output"], axis=2, name="softmax"))
    inputs = [helper.make_tensor_value_info("input", F32, [1, 3, 32, "width"])]
    outputs = [helper.make_tensor_value_info("output", F32, ["steps", 1, CRNN_CLASSES])]
    return g.model(inputs, outputs, "CRNN recognizer, opset 12: bidirectional LSTM")


# ---- DB text detector -----------------------------------------------------------------


def dbnet(opset=11, seed=0):
    g = _Graph(opset, seed)

    def cbr(x, cin, cout, k=3, stride=1):
        return g.node("Relu", [g.bn(g.conv(x, cin, cout, k, stride, bias=False), cout)])

    t = cbr("x", 3, 16, 3, 2)                                 # 1/2
    feats = []
    c = 16
    for cout in (32, 64, 128, 256):                           # 1/4 .. 1/32
        t = cbr(cbr(t, c, cout, 3, 2), cout, cout)
        feats.append(t)
        c = cout
    inner = [g.conv(f, ch, 64, 1, bias=False) for f, ch in zip(feats, (32, 64, 128, 256))]
    top = inner[3]
    merged = [top]
    for lat in reversed(inner[:3]):                           # top-down, ConvTranspose x2
        up = g.node("ConvTranspose", [top, g.weight((64, 64, 2, 2), 64)],
                    kernel_shape=[2, 2], strides=[2, 2])
        top = g.node("Add", [up, lat])
        merged.insert(0, top)
    outs = []
    for level, m in enumerate(merged):                        # each level to 1/4, 16 channels
        p = g.conv(m, 64, 16, 3, bias=False)
        outs.append(g.resize_nearest(p, float(2 ** level)) if level else p)
    fuse = g.node("Concat", outs, axis=1)                     # 64 channels at 1/4
    t = cbr(fuse, 64, 16)
    t = g.node("ConvTranspose", [t, g.weight((16, 16, 2, 2), 16), g.bias(16)],
               kernel_shape=[2, 2], strides=[2, 2])
    t = g.node("Relu", [g.bn(t, 16)])
    t = g.node("ConvTranspose", [t, g.weight((16, 1, 2, 2), 16), g.bias(1)],
               kernel_shape=[2, 2], strides=[2, 2])
    g.nodes.append(helper.make_node("Sigmoid", [t], ["maps"], name="sigmoid"))
    inputs = [helper.make_tensor_value_info("x", F32, ["batch", 3, "height", "width"])]
    outputs = [helper.make_tensor_value_info("maps", F32, ["batch", 1, "height", "width"])]
    return g.model(inputs, outputs, "DB-style text detector, opset 11")


# ---- streaming model: If over two front ends, LSTM with carried state --------------------

STREAM_FRAME = 512
STREAM_HIDDEN = 64
STREAM_FEATURES = 32


def _front_end(g, kernel, stride, own_weights):
    """Conv1d front end ending in [1, 1, 32] (one step, batch 1, features). With
    own_weights its weights are initializers of the subgraph, else of the outer graph."""
    sub = _Graph(g.opset, int(g.rng.integers(1 << 30)), prefix=f"front{kernel}")
    home = sub if own_weights else g
    t = sub.node("Reshape", ["frame", home.init(np.array([1, 1, STREAM_FRAME], np.int64))])
    w1 = home.weight((STREAM_FEATURES, 1, kernel), kernel, 1.4)
    t = sub.node("Relu", [sub.node("Conv", [t, w1, home.bias(STREAM_FEATURES)],
                                   kernel_shape=[kernel], strides=[stride])])
    w2 = home.weight((STREAM_FEATURES, STREAM_FEATURES, 3), STREAM_FEATURES * 3, 1.4)
    t = sub.node("Relu", [sub.node("Conv", [t, w2, home.bias(STREAM_FEATURES)],
                                   kernel_shape=[3], strides=[2], pads=[1, 1])])
    t = sub.node("ReduceMean", [t], axes=[2], keepdims=1)
    out = f"features_{kernel}"
    sub.nodes.append(helper.make_node("Transpose", [t], [out], perm=[2, 0, 1],
                                      name=out + ".node"))
    return helper.make_graph(sub.nodes, f"front_end_{kernel}", [],
                             [helper.make_tensor_value_info(out, F32, [1, 1, STREAM_FEATURES])],
                             sub.inits)


def stream(opset=13, seed=0):
    g = _Graph(opset, seed)
    r = g.rng
    then_g = _front_end(g, 64, 32, own_weights=False)   # 16 kHz
    else_g = _front_end(g, 32, 16, own_weights=True)    # 8 kHz
    is16k = g.node("Equal", ["sr", g.init(np.array(16000, np.int64))])
    feats = g.node("If", [is16k], then_branch=then_g, else_branch=else_g)
    h, f = STREAM_HIDDEN, STREAM_FEATURES
    w = g.init((r.standard_normal((1, 4 * h, f)) / np.sqrt(f)).astype(np.float32))
    rr = g.init((r.standard_normal((1, 4 * h, h)) / np.sqrt(h)).astype(np.float32))
    b = g.init((r.standard_normal((1, 8 * h)) * 0.1).astype(np.float32))
    g.nodes.append(helper.make_node("LSTM", [feats, w, rr, b, "", "h", "c"],
                                    ["lstm_y", "hn", "cn"], hidden_size=h, name="lstm"))
    y = g.squeeze(g.squeeze("lstm_y", [0]), [0])                          # 1, H
    y = g.node("Relu", [y])
    logit = g.node("Add", [g.node("MatMul", [y, g.weight((h, 1), h, 2.0)]), g.bias(1)])
    g.nodes.append(helper.make_node("Sigmoid", [logit], ["prob"], name="prob.node"))
    state = [1, 1, h]
    inputs = [helper.make_tensor_value_info("frame", F32, [1, STREAM_FRAME]),
              helper.make_tensor_value_info("sr", I64, []),
              helper.make_tensor_value_info("h", F32, state),
              helper.make_tensor_value_info("c", F32, state)]
    outputs = [helper.make_tensor_value_info("prob", F32, [1, 1]),
               helper.make_tensor_value_info("hn", F32, state),
               helper.make_tensor_value_info("cn", F32, state)]
    return g.model(inputs, outputs, "Streaming VAD-style model, opset 13: If and LSTM state")


# ---- Gemm stack ---------------------------------------------------------------------


def gemm_stack(opset=11, seed=0):
    g = _Graph(opset, seed)
    t = g.node("Flatten", ["embeddings"], axis=1)
    c = 16 * 96
    for cout in (256, 256, 128, 64):
        t = g.node("Relu", [g.node("Gemm", [t, g.weight((cout, c), c, 1.4), g.bias(cout)],
                                   transB=1)])
        c = cout
    t = g.node("Gemm", [t, g.weight((2, c), c, 2.0), g.bias(2)], transB=1)
    g.nodes.append(helper.make_node("Softmax", [t], ["scores"], axis=1, name="softmax"))
    inputs = [helper.make_tensor_value_info("embeddings", F32, [1, 16, 96])]
    outputs = [helper.make_tensor_value_info("scores", F32, [1, 2])]
    return g.model(inputs, outputs, "Wake-word Gemm head, opset 11")


# ---- registry -----------------------------------------------------------------------


class Spec:
    """A model: its builder, a label, the feeds' shape rule and the tolerances
    singa's outputs are held to against onnxruntime's."""

    def __init__(self, build, label, feeds, rtol=1e-3, atol=1e-4):
        self.build, self.label, self._feeds = build, label, feeds
        self.rtol, self.atol = rtol, atol


def _image(shape, rng):
    return rng.standard_normal(shape, dtype=np.float32)


def _textline(batch=6, width=192, rng=None):
    return {"x": _image((batch, 3, 48, width), rng)}


def _docori(batch=1, width=224, rng=None):
    return {"x": _image((batch, 3, 224, width), rng)}


def _stream_feeds(rng=None, sr=16000):
    return {"frame": (0.1 * rng.standard_normal((1, STREAM_FRAME))).astype(np.float32),
            "sr": np.array(sr, np.int64),
            "h": np.zeros((1, 1, STREAM_HIDDEN), np.float32),
            "c": np.zeros((1, 1, STREAM_HIDDEN), np.float32)}


SPECS = {
    "paddle_textline_op9": Spec(lambda: paddle_lcnet(9, 2, 48, 1),
                                "PP-LCNet text direction 6x3x48x192, opset 9", _textline),
    "paddle_textline_op15": Spec(lambda: paddle_lcnet(15, 2, 48, 1),
                                 "PP-LCNet text direction 6x3x48x192, opset 15", _textline),
    "paddle_docori_op9": Spec(lambda: paddle_lcnet(9, 4, 224, 2),
                              "PP-LCNet doc orientation 1x3x224x224, opset 9", _docori),
    "paddle_docori_op15": Spec(lambda: paddle_lcnet(15, 4, 224, 2),
                               "PP-LCNet doc orientation 1x3x224x224, opset 15", _docori),
    # NOTE: atol 1e-3 for the detector: a box centre is the mean of two corners that are
    # anchor -/+ distances of up to ~100 pixels, so a centre near 0 (0.076 at output [0, 1,
    # 1643]) carries their float32 round-off, and onnxruntime's own optimized and unoptimized
    # graphs differ there by 1.3e-4.
    "yolo_op11": Spec(lambda: yolo(11), "YOLOv8-style 1x3x320x320, opset 11",
                      lambda rng=None: {"images": rng.random((1, 3, 320, 320), np.float32)},
                      atol=1e-3),
    "yolo_op17": Spec(lambda: yolo(17), "YOLOv8-style 1x3x320x320, opset 17",
                      lambda rng=None: {"images": rng.random((1, 3, 320, 320), np.float32)},
                      atol=1e-3),
    "crnn_op12": Spec(crnn, "CRNN BiLSTM 1x3x32x128, opset 12",
                      lambda width=128, rng=None: {"input": _image((1, 3, 32, width), rng)},
                      atol=1e-3),
    "dbnet_op11": Spec(dbnet, "DB text detector 1x3x320x320, opset 11",
                       lambda rng=None: {"x": _image((1, 3, 320, 320), rng)}),
    "stream_op13": Spec(stream, "Streaming If+LSTM, 512-sample frame, opset 13", _stream_feeds,
                        atol=1e-3),
    "gemm_op11": Spec(gemm_stack, "Wake-word Gemm stack 1x16x96, opset 11",
                      lambda rng=None: {"embeddings": _image((1, 16, 96), rng)}),
}
NAMES = list(SPECS)


def build(name):
    """The onnx.ModelProto of model `name` (one of NAMES)."""
    if name not in SPECS:
        raise ValueError(f"real_models: unknown model {name!r} (expected one of {NAMES})")
    return SPECS[name].build()


def feeds(name, seed=0, **kwargs):
    """Seeded inputs by input name; kwargs: the model's shape options (width,
    batch for the classifiers, width for the CRNN, sr for the streaming model)."""
    if name not in SPECS:
        raise ValueError(f"real_models: unknown model {name!r} (expected one of {NAMES})")
    return SPECS[name]._feeds(rng=np.random.default_rng(seed), **kwargs)


def cache_dir():
    d = os.environ.get("SINGA_REAL_MODELS") or os.path.join(tempfile.gettempdir(),
                                                            "singa-real-models")
    os.makedirs(d, exist_ok=True)
    return d


def write(name, directory=None):
    """Writes model `name` and returns its path: in `directory`, or in
    cache_dir() under a name keyed by this file's source, reused while the
    generators stay the same (the files of older generators are removed)."""
    if directory is None:
        with open(__file__, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:12]
        path = os.path.join(cache_dir(), f"{name}-{digest}.onnx")
        if os.path.exists(path):
            return path
        for old in os.listdir(cache_dir()):
            if old.startswith(name + "-") and old.endswith(".onnx") and len(old) == len(
                    os.path.basename(path)):
                os.remove(os.path.join(cache_dir(), old))
    else:
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"{name}.onnx")
    model = build(name)
    tmp = f"{path}.{os.getpid()}.tmp"
    onnx.save(model, tmp)
    os.replace(tmp, path)
    return path
