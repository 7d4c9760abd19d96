"""singa.layer: SINGA's layers.

    from singa import layer
    class MLP(layer.Layer):
        def __init__(self):
            super().__init__()
            self.fc1 = layer.Linear(64)      # input size taken from the first input
            self.relu = layer.ReLU()
            self.fc2 = layer.Linear(10)
        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))
    m = MLP(); y = m(x)
    m.get_params()                           # {'fc1.W': ..., 'fc1.b': ..., 'fc2.W': ..., ...}

A Layer registers the layers and parameters assigned to its attributes, in
assignment order; the dotted attribute path is the parameter's name (the
optimizer's state key and the ONNX initializer name).

Layer is the C++ nn::Layer (singa._singa.nn.Layer): the registry of
parameters, states and sub-layers lives there, and a Python subclass is a
C++ layer whose forward and initialize C++ calls back (a nanobind
trampoline). This module adds the Python call protocol: any arguments,
attributes that register themselves, Tensors in and out. The built-in
layers with parameters are the C++ ones; a Python subclass composes them
with autograd functions.
"""
from . import autograd
from . import _singa
from .tensor import Tensor, _ct, _ctensor_from_numpy, _wrap

_nn = _singa.nn


class _LayerProtocol:
    """The Python face of nn::Layer: attached to singa._singa.nn.Layer, so
    every layer (built-in, Python subclass, Model, SONNXModel) has it.

    Lazy initialization: `initialize(*x)` runs on the first call, with the
    first inputs and grad mode off, before `forward(*x)`."""

    name = None

    def __setattr__(self, key, value):
        if not _nn.Layer._constructed(self):
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                                 f"before setting attributes")
        self._remove(key)
        if isinstance(value, _nn.Layer):
            self._add_layer(key, value)
        elif isinstance(value, Tensor) and value.stores_grad:
            self._add_param(key, value.data)
        object.__setattr__(self, key, value)

    def register_state(self, name, value):
        """Registers a buffer (a state that is not trained, e.g. running statistics)."""
        self._remove(name)
        self._add_buffer(name, _ct(value))
        object.__setattr__(self, name, value)

    def initialize(self, *x):
        pass

    def forward(self, *x):
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __call__(self, *x, **kw):
        if not self.initialized:
            # Parameters are leaves: creating them is never recorded.
            grad, recording = _singa.grad_enabled(), _singa.recording_enabled()
            _singa.set_grad_enabled(False)
            _singa.set_recording(False)
            try:
                self.initialize(*x)
            finally:
                _singa.set_grad_enabled(grad)
                _singa.set_recording(recording)
            self._set_initialized()
        return self.forward(*x, **kw)

    # C++ (Layer::operator(), a C++ container) calls a Python subclass here.
    def _initialize_from_cpp(self, cts):
        self.initialize(*[_wrap(c) for c in cts])

    def _forward_from_cpp(self, cts):
        return _tensor_list(self.forward(*[_wrap(c) for c in cts]))

    # -- parameters and states by dotted name, in registration order --
    def get_params(self):
        return {k: _wrap(v) for k, v in self._params()}

    def get_states(self):
        return {k: _wrap(v) for k, v in self._states()}

    @staticmethod
    def _values(values, targets):
        return {k: v.data if isinstance(v, Tensor) else
                _ctensor_from_numpy(v, targets[k].dtype if k in targets else None)
                for k, v in values.items()}

    def set_params(self, parameters):
        self._set_params(self._values(parameters, dict(self._params())))

    def set_states(self, states):
        self._set_states(self._values(states, dict(self._states())))


def _attach(cls, methods):
    """Adds a protocol class's methods and attributes to a bound C++ class."""
    for k, v in vars(methods).items():
        if k not in ("__module__", "__dict__", "__weakref__", "__qualname__"):
            setattr(cls, k, v)


_attach(_nn.Layer, _LayerProtocol)
Layer = _nn.Layer


def _tensor_list(out, strict=True):
    """The CTensors of a forward's or a step's result, in order, for C++:
    Tensors, lists and tuples of them, None (nothing); `strict` refuses
    anything else, which otherwise adds nothing."""
    if isinstance(out, Tensor):
        return [out.data]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensor_list(o, strict)]
    if out is None or not strict:
        return []
    raise TypeError(f"a result that C++ keeps (a layer called from C++, a graph-mode step) "
                    f"must be Tensors or lists of them, got {type(out).__name__}")


class _Builtin:
    """A built-in C++ layer (Linear, Conv2d, ...): called through
    nn::Layer::operator(), its C++ forward."""

    def forward(self, *x):
        outs = self._call([_ct(t) for t in x])
        return _wrap(outs[0]) if len(outs) == 1 else tuple(_wrap(o) for o in outs)

    def __call__(self, *x):
        return self.forward(*x)


def _pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(a) for a in v]


class Linear(_Builtin, _nn.Linear):
    """y = x W + b. Linear(out_features) or Linear(in_features, out_features)."""

    def __init__(self, out_features, *args, bias=True):
        if args:
            super().__init__(int(out_features), int(args[0]), bias)
        else:
            super().__init__(_nn.LAZY, int(out_features), bias)


class Gemm(_Builtin, _nn.Gemm):
    def __init__(self, nb_kernels, alpha=1.0, beta=1.0, transA=False, transB=True, bias=True,
                 bias_shape=None):
        super().__init__(int(nb_kernels), float(alpha), float(beta), bool(transA), bool(transB),
                         bool(bias))


class Embedding(_Builtin, _nn.Embedding):
    def __init__(self, input_dim, output_dim, initializer="gaussian"):
        super().__init__(int(input_dim), int(output_dim))


class Conv2d(_Builtin, _nn.Conv2d):
    """Conv2d(nb_kernels, kernel_size, ...) or Conv2d(in_channels,
    nb_kernels, kernel_size, ...): the input channels come from the input."""

    def __init__(self, nb_kernels, kernel_size, *args, stride=1, padding=0, dilation=1, group=1,
                 bias=True, pad_mode="NOTSET", activation="NOTSET"):
        if args:
            nb_kernels, kernel_size = kernel_size, args[0]
        super().__init__(int(nb_kernels), _pair(kernel_size), _pair(stride), _pair(padding),
                         _pair(dilation), int(group), bool(bias), str(pad_mode),
                         str(activation))


class SeparableConv2d(_Builtin, _nn.SeparableConv2d):
    def __init__(self, nb_kernels, kernel_size, *args, stride=1, padding=0, bias=False):
        if args:
            nb_kernels, kernel_size = kernel_size, args[0]
        super().__init__(int(nb_kernels), int(kernel_size), _pair(stride), _pair(padding),
                         bool(bias))


class BatchNorm2d(_Builtin, _nn.BatchNorm2d):
    """BatchNorm2d(momentum=0.9) or BatchNorm2d(num_features, momentum=0.9)."""

    def __init__(self, *args, momentum=0.9, epsilon=1e-5):
        super().__init__(float(momentum), float(epsilon))


class Pooling2d(_Builtin, _nn.Pooling):
    def __init__(self, kernel_size, stride=None, padding=0, is_max=True, pad_mode="NOTSET"):
        stride = kernel_size if stride is None else stride
        super().__init__(_pair(kernel_size), _pair(stride), _pair(padding), bool(is_max),
                         str(pad_mode))


class MaxPool2d(Pooling2d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, True, pad_mode)


class AvgPool2d(Pooling2d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, False, pad_mode)


class _Pooling1d(_Builtin, _nn.Pooling):
    def __init__(self, kernel_size, stride, padding, is_max, pad_mode):
        stride = kernel_size if stride is None else stride
        super().__init__([int(kernel_size)], [int(stride)], [int(padding)], is_max,
                         str(pad_mode))


class MaxPool1d(_Pooling1d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, True, pad_mode)


class AvgPool1d(_Pooling1d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, False, pad_mode)


class Dropout(_Builtin, _nn.Dropout):
    def __init__(self, ratio=0.5):
        super().__init__(float(ratio))


class _Recurrent(_Builtin):
    """Takes x [T, N, input] (or a list of T tensors [N, input], SINGA's
    form) and optional initial states; returns (y, h) for RNN and
    (y, (h, c)) for LSTM, y a list when x was."""

    def forward(self, x, *states):
        as_list = isinstance(x, (list, tuple))
        if as_list:
            x = autograd.cat([autograd.unsqueeze(s, 0) for s in x], 0)
        if len(states) == 1 and isinstance(states[0], (list, tuple)):
            states = tuple(states[0])
        outs = [_wrap(o) for o in self._call([_ct(x)] + [_ct(s) for s in states])]
        y = outs[0]
        if as_list:
            y = [autograd.squeeze(t, 0) for t in autograd.split(y, 0, [1] * y.shape[0])]
        return (y, outs[1]) if len(outs) == 2 else (y, (outs[1], outs[2]))


class RNN(_Recurrent, _nn.RNN):
    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0, bidirectional=False):
        super().__init__(int(input_size), int(hidden_size), int(num_layers), str(nonlinearity),
                         bool(bias), bool(batch_first), float(dropout), bool(bidirectional))


class LSTM(_Recurrent, _nn.LSTM):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0, bidirectional=False):
        super().__init__(int(input_size), int(hidden_size), int(num_layers), bool(bias),
                         bool(batch_first), float(dropout), bool(bidirectional))


# ---- layers without parameters ---------------------------------------------
class ReLU(Layer):
    def forward(self, x):
        return autograd.relu(x)


class Sigmoid(Layer):
    def forward(self, x):
        return autograd.sigmoid(x)


class SoftMax(Layer):
    def __init__(self, axis=1):
        super().__init__()
        self.axis = axis

    def forward(self, x):
        return autograd.softmax(x, self.axis)


class Add(Layer):
    def forward(self, a, b):
        return autograd.add(a, b)


class Flatten(Layer):
    def __init__(self, axis=1):
        super().__init__()
        self.axis = axis

    def forward(self, x):
        return autograd.flatten(x, self.axis)


class Cat(Layer):
    def __init__(self, axis=0):
        super().__init__()
        self.axis = axis

    def forward(self, xs):
        return autograd.cat(xs, self.axis)


class Reshape(Layer):
    def forward(self, x, shape):
        return autograd.reshape(x, shape)


class SoftMaxCrossEntropy(Layer):
    def forward(self, x, t):
        return autograd.softmax_cross_entropy(x, t)


class MeanSquareError(Layer):
    def forward(self, x, t):
        return autograd.mse_loss(x, t)


class CrossEntropy(Layer):
    def forward(self, x, t):
        return autograd.cross_entropy(x, t)


class BinaryCrossEntropy(Layer):
    def forward(self, x, t):
        return autograd.binary_cross_entropy(x, t)


# SINGA 2's names for the layers, still used by the earlier ONNX page's
# example: autograd.Conv2d(in_channels, out_channels, kernel_size, ...),
# autograd.Linear(in_features, out_features, bias=...), autograd.MaxPool2d, ...
for _name in ("Linear", "Conv2d", "BatchNorm2d", "MaxPool2d", "AvgPool2d"):
    setattr(autograd, _name, globals()[_name])
del _name
