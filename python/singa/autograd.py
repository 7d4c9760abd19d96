"""singa.autograd: SINGA's autograd API over the C++ tape.

    from singa import autograd, tensor
    autograd.training = True                 # record ops; Dropout/BatchNorm train
    w = tensor.Tensor((3, 2), stores_grad=True); w.gaussian(0, 0.1)
    y = autograd.relu(autograd.matmul(x, w))
    loss = autograd.mse_loss(y, t)
    for p, g in autograd.backward(loss):     # (param, gradient) pairs
        p -= 0.1 * g

Every function runs registered ops (by their ONNX names) or a C++ loss made
of ops, and each result remembers the op that made it (`Tensor.creator`),
in any mode: sonnx.to_onnx walks these records. While `training` is on they
also keep what backward needs, and `backward` walks them back to the tensors
marked `stores_grad`; in inference a record keeps no activation alive.
"""
import sys
import types

import numpy as np

from . import _singa
from .tensor import Tensor, _ct, _int64s, _op1, _to_dtype, _wrap

_nn = _singa.nn


class _AutogradModule(types.ModuleType):
    """Makes `autograd.training` a switch of the C++ modes: recording for
    backward (grad mode) and train-time behaviour (training mode)."""

    @property
    def training(self):
        return _singa.training_mode()

    @training.setter
    def training(self, on):
        on = bool(on)
        _singa.set_training_mode(on)
        _singa.set_grad_enabled(on)


sys.modules[__name__].__class__ = _AutogradModule
# SINGA's default: inference until a model (or the user) switches training on.
_singa.set_training_mode(False)
_singa.set_grad_enabled(False)


def backward(y, dy=None):
    """Yields (param, gradient) for every tensor marked stores_grad that y
    depends on, in the order the gradients complete."""
    pairs = _singa.backward(_ct(y), None if dy is None else _ct(dy))
    for p, g in pairs:
        yield _wrap(p), _wrap(g)


def gradients(y, dy=None):
    """{param: gradient} for every parameter y depends on (keys are Tensors
    sharing the parameters' storage)."""
    return dict(backward(y, dy))


class Operator:
    """A differentiable function defined in Python (SINGA's Operator).
    Subclasses define forward(*xs) and backward(*dys) on Tensors; backward
    returns one gradient (or None) per input.

        class Cube(autograd.Operator):
            def forward(self, x):
                self.x = x
                return x * x * x
            def backward(self, dy):
                return dy * 3 * self.x * self.x

        y = Cube()(x)
    """

    def __call__(self, *xs):
        # The forward's own ops are not recorded: the Function record is.
        grad, recording = _singa.grad_enabled(), _singa.recording_enabled()
        _singa.set_grad_enabled(False)
        _singa.set_recording(False)
        try:
            ys = self.forward(*xs)
        finally:
            _singa.set_grad_enabled(grad)
            _singa.set_recording(recording)
        single = isinstance(ys, Tensor)
        ys = [ys] if single else list(ys)
        inputs = [_ct(x) for x in xs if isinstance(x, Tensor)]
        outs = _singa.record_function(type(self).__name__, inputs, [y.data for y in ys],
                                      self._backward)
        for y, o in zip(ys, outs):
            y.data = o
        return ys[0] if single else tuple(ys)

    def _backward(self, dys):
        dxs = self.backward(*[None if d is None else _wrap(d) for d in dys])
        dxs = [dxs] if isinstance(dxs, Tensor) or dxs is None else list(dxs)
        return [None if d is None else _ct(d) for d in dxs]

    def forward(self, *xs):
        raise NotImplementedError

    def backward(self, *dys):
        raise NotImplementedError


def call_op(op_type, *inputs, opset=None, domain="", num_outputs=None, **attrs):
    """Runs the registered op `op_type` (its ONNX name) on `inputs` with
    attributes `attrs`, recorded like every function here: autograd
    differentiates it where the op has a backward, and sonnx.to_onnx
    exports it.

        y = autograd.call_op("Gelu", x, approximate="tanh")
        y, mean, inv_std = autograd.call_op("LayerNormalization", x, scale, bias,
                                            epsilon=1e-5, num_outputs=3)
        y = autograd.call_op("Attention", q, k, v, opset=23, num_outputs=1, q_num_heads=4,
                             kv_num_heads=4)

    inputs: Tensors, None for an absent optional input, numpy arrays or
    lists (constants of their own dtype) and numbers (0-d constants of the
    first Tensor input's dtype, or of numpy's without one). attrs:
    numbers, strings, lists of them, or Tensors. opset: the op's version
    is the newest registered one not above it (default: the newest);
    domain: the op's domain ("" is ai.onnx).
    num_outputs: how many outputs to compute (default: the op's required
    ones, before its optional outputs). Returns a Tensor, or a tuple when
    the op gives several outputs (None for an optional output not
    computed). docs/ops.md lists the ops.
    """
    like = next((x for x in inputs if isinstance(x, Tensor)), None)
    cts = []
    for i, x in enumerate(inputs):
        if x is None or isinstance(x, Tensor):
            cts.append(_ct(x))
        elif isinstance(x, (bool, int, float)) and like is not None:
            cts.append(_scalar(x, like).data)
        elif isinstance(x, (np.ndarray, np.generic, list, tuple, bool, int, float)):
            cts.append(Tensor(data=np.asarray(x), dtype=np.asarray(x).dtype,
                              requires_grad=False).data)
        else:
            raise TypeError(f"call_op({op_type!r}): input {i} is a {type(x).__name__}; "
                            f"inputs are Tensors, arrays, numbers or None")
    attrs = {k: _attr_value(v) for k, v in attrs.items()}
    outs = _singa.call_op(str(op_type), cts, attrs,
                          _singa.LATEST_OPSET if opset is None else int(opset),
                          -1 if num_outputs is None else int(num_outputs), False, str(domain))
    outs = [_wrap(o) if o is not None and o.defined else None for o in outs]
    return outs[0] if len(outs) == 1 else tuple(outs)


def _attr_value(v):
    if isinstance(v, Tensor):
        return v.data
    if isinstance(v, np.ndarray):
        return Tensor(data=v, dtype=v.dtype, requires_grad=False).data
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, tuple):
        return [_attr_value(e) for e in v]
    return v


def _axes(axes):
    return _int64s([axes] if isinstance(axes, int) else list(axes))


# ---- activations ----------------------------------------------------------
def relu(x):
    return _op1("Relu", x)


def leakyrelu(x, a=0.01):
    return _op1("LeakyRelu", x, alpha=float(a))


def elu(x, alpha=1.0):
    return _op1("Elu", x, alpha=float(alpha))


def selu(x, alpha=1.67326, gamma=1.0507):
    return _op1("Selu", x, alpha=float(alpha), gamma=float(gamma))


def prelu(x, slope):
    return _op1("PRelu", x, slope)


def sigmoid(x):
    return _op1("Sigmoid", x)


def hardsigmoid(x, alpha=0.2, gamma=0.5):
    return _op1("HardSigmoid", x, alpha=float(alpha), beta=float(gamma))


def softplus(x):
    return _op1("Softplus", x)


def softsign(x):
    return _op1("Softsign", x)


def tanh(x):
    return _op1("Tanh", x)


def softmax(x, axis=1):
    return _op1("Softmax", x, axis=int(axis))


def gelu(x, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; approximate="tanh" uses the
    tanh approximation (ONNX Gelu)."""
    return _op1("Gelu", x, approximate=str(approximate))


# ---- arithmetic and math ----------------------------------------------------
def add(a, b):
    return _op1("Add", a, b)


def sub(a, b):
    return _op1("Sub", a, b)


def mul(a, b):
    return _op1("Mul", a, b)


def div(a, b):
    return _op1("Div", a, b)


def pow(a, b):  # noqa: A001 - SINGA's name
    return _op1("Pow", a, b)


def matmul(a, b):
    return _op1("MatMul", a, b)


def gemm(A, B, C=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    inputs = [A, B] + ([C] if C is not None else [])
    return _op1("Gemm", *inputs, alpha=float(alpha), beta=float(beta), transA=int(transA),
                transB=int(transB))


def add_bias(x, b, axis=0):
    return _wrap(_nn.add_bias(_ct(x), _ct(b), axis))


def _unary(name):
    def fn(x):
        return _op1(name, x)
    fn.__name__ = name.lower()
    fn.__doc__ = f"The ONNX {name} op, elementwise."
    return fn


identity = _unary("Identity")
abs = _unary("Abs")  # noqa: A001 - SINGA's name
exp = _unary("Exp")
log = _unary("Log")
sqrt = _unary("Sqrt")
sign = _unary("Sign")
negative = _unary("Neg")
reciprocal = _unary("Reciprocal")
ceil = _unary("Ceil")
floor = _unary("Floor")
rounde = _unary("Round")  # ONNX Round: half to even
erf = _unary("Erf")
cos, cosh, acos, acosh = _unary("Cos"), _unary("Cosh"), _unary("Acos"), _unary("Acosh")
sin, sinh, asin, asinh = _unary("Sin"), _unary("Sinh"), _unary("Asin"), _unary("Asinh")
tan, atan, atanh = _unary("Tan"), _unary("Atan"), _unary("Atanh")


def round(x):  # noqa: A001 - SINGA's name
    """Half away from zero (SINGA's round; rounde rounds half to even)."""
    return mul(sign(x), floor(add(abs(x), _scalar(0.5, x))))


def _scalar(v, like):
    return Tensor(data=np.array(v, dtype=np.float64), dtype=_ct(like).dtype,
                  device=_ct(like).device, requires_grad=False)


def clip(x, min=None, max=None):  # noqa: A002 - SINGA's names
    lo = None if min is None else _scalar(min, x)
    hi = None if max is None else _scalar(max, x)
    return _op1("Clip", x, lo, hi)


def min(*xs):  # noqa: A001 - SINGA's name
    return _op1("Min", *xs)


def max(*xs):  # noqa: A001 - SINGA's name
    return _op1("Max", *xs)


def mean(*xs):
    return _op1("Mean", *xs)


def sum(*xs):  # noqa: A001 - SINGA's name
    return _op1("Sum", *xs)


def less(x, y):
    return _op1("Less", x, y)


def greater(x, y):
    return _op1("Greater", x, y)


def equal(x, y):
    return _op1("Equal", x, y)


def where(x, y, condition):
    """condition ? x : y (SINGA's argument order)."""
    return _op1("Where", condition, x, y)


def cast(x, to):
    return _op1("Cast", x, to=int(_to_dtype(to).value))


def reduce_sum(x, axes=None, keepdims=1):
    if axes is None:
        return _op1("ReduceSum", x, keepdims=int(keepdims))
    return _op1("ReduceSum", x, _axes(axes), keepdims=int(keepdims))


def reduce_mean(x, axes=None, keepdims=1):
    if axes is None:
        return _op1("ReduceMean", x, keepdims=int(keepdims))
    return _op1("ReduceMean", x, _axes(axes), keepdims=int(keepdims))


# ---- shapes and data movement ---------------------------------------------
def reshape(x, shape):
    return _op1("Reshape", x, _int64s(list(shape)))


def flatten(x, axis=1):
    return _op1("Flatten", x, axis=int(axis))


def transpose(x, shape=None):
    if shape is None:
        return _op1("Transpose", x)
    return _op1("Transpose", x, perm=[int(a) for a in shape])


def squeeze(x, axis=None):
    if axis is None or (not isinstance(axis, int) and len(axis) == 0):
        return _op1("Squeeze", x)
    return _op1("Squeeze", x, _axes(axis))


def unsqueeze(x, axis):
    return _op1("Unsqueeze", x, _axes(axis))


def cat(xs, axis=0):
    return _op1("Concat", *xs, axis=int(axis))


def split(x, axis, parts, num_output=None):
    """Splits x along axis into pieces of the sizes in `parts` (or
    num_output equal pieces when parts is None)."""
    if parts is None:
        outs = _singa.call_op("Split", [_ct(x)], {"axis": int(axis), "num_outputs": int(num_output)},
                              _singa.LATEST_OPSET, int(num_output))
    else:
        outs = _singa.call_op("Split", [_ct(x), _int64s(list(parts))], {"axis": int(axis)},
                              _singa.LATEST_OPSET, len(parts))
    return tuple(_wrap(o) for o in outs)


def slice(x, starts, ends, axes=None, steps=None):  # noqa: A001 - SINGA's name
    args = [x, _int64s(starts), _int64s(ends)]
    if axes is not None or steps is not None:
        args.append(_int64s(axes if axes is not None else range(len(starts))))
    if steps is not None:
        args.append(_int64s(steps))
    return _op1("Slice", *args)


def gather(x, axis, indices):
    if not isinstance(indices, Tensor):
        indices = Tensor(data=np.asarray(indices, dtype=np.int64), requires_grad=False)
    return _op1("Gather", x, indices, axis=int(axis))


def scatter_elements(x, indices, updates, axis=0):
    return _op1("ScatterElements", x, indices, updates, axis=int(axis))


def tile(x, repeats):
    return _op1("Tile", x, _int64s(list(repeats)))


def expand(x, shape):
    return _op1("Expand", x, _int64s(list(shape)))


def pad(x, mode, pads, constant=0.0):
    return _op1("Pad", x, _int64s(list(pads)), _scalar(constant, x), mode=str(mode))


def upsample(x, mode, scales):
    scales = Tensor(data=np.asarray(scales, dtype=np.float32), requires_grad=False)
    return _op1("Resize", x, None, scales, mode=str(mode))


def depth_to_space(x, blocksize, mode="DCR"):
    return _op1("DepthToSpace", x, blocksize=int(blocksize), mode=str(mode))


def space_to_depth(x, blocksize):
    return _op1("SpaceToDepth", x, blocksize=int(blocksize))


def onehot(axis, indices, depth, values):
    depth = Tensor(data=np.asarray(depth, dtype=np.int64), requires_grad=False)
    values = values if isinstance(values, Tensor) else Tensor(
        data=np.asarray(values, dtype=np.float32), requires_grad=False)
    return _op1("OneHot", indices, depth, values, axis=int(axis))


def shape(x):
    return _op1("Shape", x)


def constant_of_shape(x, value=0.0):
    v = Tensor(data=np.asarray([value], dtype=np.float32), requires_grad=False)
    return _op1("ConstantOfShape", x, value=v.data)


def nonzero(x):
    return _op1("NonZero", x)


# ---- neural-network ops ---------------------------------------------------
def dropout(x, ratio=0.5):
    """Drops elements with probability `ratio` in training mode (scaling
    the rest by 1 / (1 - ratio)); the identity otherwise."""
    if not _singa.training_mode() or ratio == 0:
        return x
    r = Tensor(data=np.array(ratio, np.float32), requires_grad=False)
    on = Tensor(data=np.array(True), requires_grad=False)
    return _op1("Dropout", x, r, on)


def conv2d(x, W, b=None, stride=1, padding=0, dilation=1, group=1):
    pair = (lambda v: [int(v)] * 2 if isinstance(v, int) else [int(a) for a in v])
    pads = pair(padding)
    inputs = [x, W] + ([b] if b is not None else [])
    return _op1("Conv", *inputs, strides=pair(stride), pads=pads + pads,
                dilations=pair(dilation), group=int(group))


def batchnorm_2d(x, scale, bias, running_mean, running_var, momentum=0.9, epsilon=1e-5):
    """Batch statistics (updating the running ones in place) in training
    mode, the running statistics otherwise."""
    train = _singa.training_mode()
    outs = _singa.call_op(
        "BatchNormalization", [_ct(x), _ct(scale), _ct(bias), _ct(running_mean), _ct(running_var)],
        {"epsilon": float(epsilon), "momentum": float(momentum), "training_mode": int(train)},
        _singa.LATEST_OPSET, 3 if train else 1)
    if train:
        _ct(running_mean).copy_from(outs[1])
        _ct(running_var).copy_from(outs[2])
    return _wrap(outs[0])


def layer_norm(x, scale, bias=None, axis=-1, epsilon=1e-5):
    """ONNX LayerNormalization: normalizes x over its dimensions from
    `axis` on (biased variance), then scales and shifts by scale and bias
    (shaped as those dimensions; bias may be None)."""
    outs = _singa.call_op("LayerNormalization", [_ct(x), _ct(scale), _ct(bias)],
                          {"axis": int(axis), "epsilon": float(epsilon)}, _singa.LATEST_OPSET, 1)
    return _wrap(outs[0])


def pooling_2d(x, kernel_size, stride=None, padding=0, is_max=True):
    pair = (lambda v: [int(v)] * 2 if isinstance(v, int) else [int(a) for a in v])
    pads = pair(padding)
    return _op1("MaxPool" if is_max else "AveragePool", x, kernel_shape=pair(kernel_size),
                strides=pair(stride if stride is not None else kernel_size), pads=pads + pads)


def globalaveragepool(x, data_format="channels_first"):
    if data_format == "channels_last":
        x = transpose(x, [0, x.ndim() - 1] + list(range(1, x.ndim() - 1)))
    return _op1("GlobalAveragePool", x)


def embedding(x, w):
    return _op1("Gather", w, x)


def cossim(a, b):
    return _wrap(_nn.cossim(_ct(a), _ct(b)))


# ---- losses (shape (1,), as SINGA's) --------------------------------------
def softmax_cross_entropy(x, t):
    """Mean over the batch of the cross entropy of softmax(x) and t, where t
    holds class indices or one-hot rows."""
    return _wrap(_nn.softmax_cross_entropy(_ct(x), _ct(t)))


def cross_entropy(y, t):
    return _wrap(_nn.cross_entropy(_ct(y), _ct(t)))


def binary_cross_entropy(x, t):
    return _wrap(_nn.binary_cross_entropy(_ct(x), _ct(t)))


def mse_loss(x, t):
    return _wrap(_nn.mse_loss(_ct(x), _ct(t)))


def ranking_loss(pos, neg, M=0.2):
    return _wrap(_nn.ranking_loss(_ct(pos), _ct(neg), float(M)))
