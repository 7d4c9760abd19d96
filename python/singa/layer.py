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
optimizer's state key and the ONNX initializer name). The built-in layers
with parameters run the C++ layers (singa._singa.nn); a Python subclass
composes them with autograd functions.
"""
from . import autograd
from . import _singa
from .tensor import Tensor, _ct, _wrap

_nn = _singa.nn


class Layer:
    """Lazy initialization: `initialize(*x)` runs on the first call, with
    the first inputs, before `forward(*x)`."""

    def __init__(self):
        self.__dict__["_layers"] = {}
        self.__dict__["_params"] = {}
        self.__dict__["_states"] = {}
        self.__dict__["_initialized"] = False
        self.__dict__["name"] = None

    def __setattr__(self, key, value):
        if "_layers" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                                 "before setting attributes")
        for reg in (self._layers, self._params, self._states):
            reg.pop(key, None)
        if isinstance(value, Layer):
            self._layers[key] = value
        elif isinstance(value, Tensor) and value.stores_grad:
            self._params[key] = value
        object.__setattr__(self, key, value)

    def register_state(self, name, value):
        """Registers a buffer (a state that is not trained, e.g. running statistics)."""
        object.__setattr__(self, name, value)
        self._states[name] = value

    def initialize(self, *x):
        pass

    def forward(self, *x):
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __call__(self, *x, **kw):
        if not self._initialized:
            grad = _singa.grad_enabled()
            _singa.set_grad_enabled(False)
            try:
                self.initialize(*x)
            finally:
                _singa.set_grad_enabled(grad)
            self.__dict__["_initialized"] = True
        return self.forward(*x, **kw)

    # -- parameters and states by dotted name --
    def _collect(self, prefix, with_states, out):
        for k, p in self._params.items():
            out[prefix + k] = p
        if with_states:
            for k, s in self._states.items():
                out[prefix + k] = s
        for k, sub in self._layers.items():
            sub._collect(prefix + k + ".", with_states, out)

    def get_params(self):
        out = {}
        self._collect("", False, out)
        return out

    def get_states(self):
        out = {}
        self._collect("", True, out)
        return out

    def _assign(self, values, with_states, what):
        mine = self.get_states() if with_states else self.get_params()
        for k, v in values.items():
            if k not in mine:
                raise ValueError(f"{what}: {type(self).__name__} has no "
                                 f"{'state' if with_states else 'parameter'} named {k!r}")
            target = mine[k]
            v = v if isinstance(v, Tensor) else Tensor(data=v, dtype=target.dtype,
                                                        requires_grad=False)
            if tuple(v.shape) != tuple(target.shape):
                raise ValueError(f"{what}: {k!r} is {tuple(target.shape)}, the value is "
                                 f"{tuple(v.shape)}")
            target.data.copy_from(v.data)

    def set_params(self, parameters):
        self._assign(parameters, False, "set_params")

    def set_states(self, states):
        self._assign(states, True, "set_states")

    def _name_tensors(self):
        for k, t in self.get_states().items():
            t.name = k


class _CLayer(Layer):
    """A Python face for a C++ layer (singa._singa.nn): its parameters and
    states appear under this layer's name."""

    def __init__(self, impl):
        super().__init__()
        self.__dict__["_impl"] = impl

    def forward(self, *x):
        outs = self._impl([_ct(t) for t in x])
        return _wrap(outs[0]) if len(outs) == 1 else tuple(_wrap(o) for o in outs)

    def __call__(self, *x):
        self.__dict__["_initialized"] = True
        return self.forward(*x)

    def _collect(self, prefix, with_states, out):
        tensors = self._impl.get_states() if with_states else self._impl.get_params()
        for k, ct in tensors.items():
            out[prefix + k] = _wrap(ct)
        super()._collect(prefix, with_states, out)


def _pair(v):
    return [int(v), int(v)] if isinstance(v, int) else [int(a) for a in v]


class Linear(_CLayer):
    """y = x W + b. Linear(out_features) or Linear(in_features, out_features)."""

    def __init__(self, out_features, *args, bias=True, **kwargs):
        if args:
            impl = _nn.Linear(int(out_features), int(args[0]), bias)
        else:
            impl = _nn.Linear(_nn.LAZY, int(out_features), bias)
        super().__init__(impl)


class Gemm(_CLayer):
    def __init__(self, nb_kernels, alpha=1.0, beta=1.0, transA=False, transB=True, bias=True,
                 bias_shape=None):
        super().__init__(_nn.Gemm(int(nb_kernels), float(alpha), float(beta), bool(transA),
                                  bool(transB), bool(bias)))


class Embedding(_CLayer):
    def __init__(self, input_dim, output_dim, initializer="gaussian"):
        super().__init__(_nn.Embedding(int(input_dim), int(output_dim)))


class Conv2d(_CLayer):
    """Conv2d(nb_kernels, kernel_size, ...) or Conv2d(in_channels,
    nb_kernels, kernel_size, ...): the input channels come from the input."""

    def __init__(self, nb_kernels, kernel_size, *args, stride=1, padding=0, dilation=1, group=1,
                 bias=True, pad_mode="NOTSET", activation="NOTSET", **kwargs):
        if args:
            nb_kernels, kernel_size = kernel_size, args[0]
        super().__init__(_nn.Conv2d(int(nb_kernels), _pair(kernel_size), _pair(stride),
                                    _pair(padding), _pair(dilation), int(group), bool(bias),
                                    str(pad_mode), str(activation)))


class SeparableConv2d(_CLayer):
    def __init__(self, nb_kernels, kernel_size, *args, stride=1, padding=0, bias=False):
        if args:
            nb_kernels, kernel_size = kernel_size, args[0]
        super().__init__(_nn.SeparableConv2d(int(nb_kernels), int(kernel_size), _pair(stride),
                                             _pair(padding), bool(bias)))


class BatchNorm2d(_CLayer):
    """BatchNorm2d(momentum=0.9) or BatchNorm2d(num_features, momentum=0.9)."""

    def __init__(self, *args, momentum=0.9, epsilon=1e-5):
        super().__init__(_nn.BatchNorm2d(float(momentum), float(epsilon)))


class Pooling2d(_CLayer):
    def __init__(self, kernel_size, stride=None, padding=0, is_max=True, pad_mode="NOTSET"):
        stride = kernel_size if stride is None else stride
        super().__init__(_nn.Pooling(_pair(kernel_size), _pair(stride), _pair(padding),
                                     bool(is_max), str(pad_mode)))


class MaxPool2d(Pooling2d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, True, pad_mode)


class AvgPool2d(Pooling2d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, False, pad_mode)


class _Pooling1d(_CLayer):
    def __init__(self, kernel_size, stride, padding, is_max, pad_mode):
        stride = kernel_size if stride is None else stride
        super().__init__(_nn.Pooling([int(kernel_size)], [int(stride)], [int(padding)], is_max,
                                     str(pad_mode)))


class MaxPool1d(_Pooling1d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, True, pad_mode)


class AvgPool1d(_Pooling1d):
    def __init__(self, kernel_size, stride=None, padding=0, pad_mode="NOTSET"):
        super().__init__(kernel_size, stride, padding, False, pad_mode)


class Dropout(_CLayer):
    def __init__(self, ratio=0.5):
        super().__init__(_nn.Dropout(float(ratio)))


class _Recurrent(_CLayer):
    """Takes x [T, N, input] (or a list of T tensors [N, input], SINGA's
    form) and optional initial states; returns (y, h) for RNN and
    (y, (h, c)) for LSTM, y a list when x was."""

    def forward(self, x, *states):
        as_list = isinstance(x, (list, tuple))
        if as_list:
            x = autograd.cat([autograd.unsqueeze(s, 0) for s in x], 0)
        if len(states) == 1 and isinstance(states[0], (list, tuple)):
            states = tuple(states[0])
        outs = [_wrap(o) for o in self._impl([_ct(x)] + [_ct(s) for s in states])]
        y = outs[0]
        if as_list:
            y = [autograd.squeeze(t, 0) for t in autograd.split(y, 0, [1] * y.shape[0])]
        return (y, outs[1]) if len(outs) == 2 else (y, (outs[1], outs[2]))


class RNN(_Recurrent):
    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0, bidirectional=False):
        super().__init__(_nn.RNN(int(input_size), int(hidden_size), int(num_layers),
                                 str(nonlinearity), bool(bias), bool(batch_first),
                                 float(dropout), bool(bidirectional)))


class LSTM(_Recurrent):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0, bidirectional=False):
        super().__init__(_nn.LSTM(int(input_size), int(hidden_size), int(num_layers), bool(bias),
                                  bool(batch_first), float(dropout), bool(bidirectional)))


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
