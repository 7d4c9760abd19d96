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
optimizer's state key and the ONNX initializer name). A list or tuple of
layers assigned to an attribute is kept as a ModuleList, whose layers are
named by their positions ("blocks.0.W"); a list filled after the assignment
is registered the same way at the first call, at compile and when the
parameters are read. A list of layers that are attributes of the same layer
as well stays a plain list (registering it would name them twice).
Sequential runs its layers in order.

    class Stack(layer.Layer):
        def __init__(self):
            super().__init__()
            self.blocks = [layer.Linear(32), layer.Linear(32)]   # blocks.0.W, blocks.1.W, ...
            self.head = layer.Sequential(layer.ReLU(), layer.Linear(10))
        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x)
    m = Stack(); y = m(x)
    print(m)                                 # one line per layer, then the totals
    m.named_parameters()                     # (name, Tensor) pairs, named as get_params names them

Layer is the C++ nn::Layer (singa._singa.nn.Layer): the registry of
parameters, states and sub-layers lives there, and a Python subclass is a
C++ layer whose forward and initialize C++ calls back (a nanobind
trampoline). This module adds the Python call protocol: any arguments,
attributes that register themselves, Tensors in and out. The built-in
layers with parameters are the C++ ones; a Python subclass composes them
with autograd functions.
"""
import contextlib
import warnings

import numpy as np

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
        held = _as_module_list(value, f"{type(self).__name__}.{key}", self, key)
        if held is not None:
            value = held
        self._remove(key)
        if isinstance(value, _nn.Layer):
            _register(self, key, value)
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
            self._adopt_layer_lists()
            # Parameters are leaves: creating them is never recorded.
            with _no_recording():
                self.initialize(*x)
            self._set_initialized()
        return self.forward(*x, **kw)

    # C++ (Layer::operator(), a C++ container) calls a Python subclass here.
    def _initialize_from_cpp(self, cts):
        self._adopt_layer_lists()
        self.initialize(*[_wrap(c) for c in cts])

    def _forward_from_cpp(self, cts):
        return _tensor_list(self.forward(*[_wrap(c) for c in cts]))

    def _adopt_layer_lists(self, seen=None):
        """Registers the lists and tuples of layers held by attributes that
        were filled after their assignment (`self.blocks = []`, then
        appends), here and in the sub-layers."""
        seen = set() if seen is None else seen
        if id(self) in seen:
            return
        seen.add(id(self))
        for key, value in list(vars(self).items()):
            if isinstance(value, (list, tuple)) and _holds_layers(value):
                setattr(self, key, value)
        for _, child in self._children():
            child._adopt_layer_lists(seen)

    def _children(self):
        """The sub-layers registered from Python, as (name, layer) in
        registration order (C++ layers' own sub-layers are not listed)."""
        return [(k, v) for k, v in vars(self).items() if isinstance(v, _nn.Layer)]

    # -- parameters and states by dotted name, in registration order --
    def get_params(self):
        """{dotted name: Tensor} of the trainable parameters (shared with the layer)."""
        self._adopt_layer_lists()
        return {k: _wrap(v) for k, v in self._params()}

    def get_states(self):
        """get_params plus the buffers (e.g. BatchNorm2d's running statistics)."""
        self._adopt_layer_lists()
        return {k: _wrap(v) for k, v in self._states()}

    def named_parameters(self):
        """Yields (dotted name, Tensor) for every parameter, in registration order."""
        self._adopt_layer_lists()
        for k, v in self._params():
            yield k, _wrap(v)

    def parameters(self):
        """The parameters as a list of Tensors, in registration order."""
        return [t for _, t in self.named_parameters()]

    def named_buffers(self):
        """Yields (dotted name, Tensor) for every buffer: a state that is not
        a parameter, such as BatchNorm2d's running statistics."""
        self._adopt_layer_lists()
        params = {k for k, _ in self._params()}
        for k, v in self._states():
            if k not in params:
                yield k, _wrap(v)

    @staticmethod
    def _values(values, targets):
        return {k: v.data if isinstance(v, Tensor) else
                _ctensor_from_numpy(v, targets[k].dtype if k in targets else None)
                for k, v in values.items()}

    def set_params(self, parameters):
        self._adopt_layer_lists()
        self._set_params(self._values(parameters, dict(self._params())))

    def set_states(self, states):
        self._adopt_layer_lists()
        self._set_states(self._values(states, dict(self._states())))

    def __str__(self):
        """A summary: the class, a line per tensor of the layer's own (an
        imported model's initializers), a line per sub-layer (dotted name,
        class, the shapes of its own parameters and buffers), then the
        totals."""
        self._adopt_layer_lists()
        rows = []
        _summary_rows(self, "", rows, set())
        params = dict(self._params())
        children = {k for k, _ in self._children()}
        own = [(k, "parameter" if k in params else "buffer", _shape(t))
               for k, t in self._states() if k.split(".", 1)[0] not in children]
        lines = [type(self).__name__ + ("  (not initialized)" if _uninitialized(self) else "")]
        table = own + rows[1:]
        if table:
            width = max(len(r[0]) for r in table)
            cls_width = max(len(r[1]) for r in table)
            lines += [f"  {name:<{width}}  {cls:<{cls_width}}  {desc}".rstrip()
                      for name, cls, desc in table]
        trainable = sum(t.numel() for t in params.values() if t.stores_grad and t.requires_grad)
        buffers = sum(t.numel() for k, t in self._states() if k not in params)
        total = f"parameters: {sum(t.numel() for t in params.values()):,} " \
                f"(trainable: {trainable:,})"
        if buffers:
            total += f", buffers: {buffers:,}"
        if any(_uninitialized(layer_) for layer_ in _all_layers(self)):
            total += ("; some layers are not initialized yet: their parameters are created "
                      "at the first call (or compile)")
        return "\n".join(lines + [total])


def _attach(cls, methods):
    """Adds a protocol class's methods and attributes to a bound C++ class."""
    for k, v in vars(methods).items():
        if k not in ("__module__", "__dict__", "__weakref__", "__qualname__"):
            setattr(cls, k, v)


_attach(_nn.Layer, _LayerProtocol)
Layer = _nn.Layer


@contextlib.contextmanager
def _no_recording():
    """Grad mode and recording off (parameters are created as leaves)."""
    grad, recording = _singa.grad_enabled(), _singa.recording_enabled()
    _singa.set_grad_enabled(False)
    _singa.set_recording(False)
    try:
        yield
    finally:
        _singa.set_grad_enabled(grad)
        _singa.set_recording(recording)


def _register(parent, name, child):
    """Registers child as parent's sub-layer `name` (in the C++ registry)
    and marks it as a sub-layer (an uncompiled Model then runs as a layer)."""
    parent._add_layer(name, child)
    vars(child)["_sublayer"] = True


def _holds_layers(value):
    """Whether a list or tuple holds a layer, directly or in nested lists."""
    return any(isinstance(v, _nn.Layer) or (isinstance(v, (list, tuple)) and _holds_layers(v))
               for v in value)


def _flat_layers(value):
    return [x for v in value
            for x in (_flat_layers(v) if isinstance(v, (list, tuple)) else [v])]


def _as_module_list(value, where, owner=None, key=None):
    """A ModuleList of a list or tuple that holds layers (nested lists
    become nested ModuleLists); None for any other value, and for a list
    of layers that are all attributes of `owner` already (a list kept to
    iterate over them, which registering would name twice)."""
    if not isinstance(value, (list, tuple)) or not _holds_layers(value):
        return None
    for i, v in enumerate(value):
        if not isinstance(v, (_nn.Layer, list, tuple)):
            raise TypeError(f"{where}: a list of layers must hold only layers (it is registered "
                            f"as a ModuleList), but item {i} is a {type(v).__name__}")
    if owner is not None:
        attrs = {id(v) for k, v in vars(owner).items() if k != key and isinstance(v, _nn.Layer)}
        items = _flat_layers(value)
        named = [isinstance(v, _nn.Layer) and id(v) in attrs for v in items]
        if all(named):
            return None
        if any(named):
            raise TypeError(f"{where}: some of its layers are attributes of "
                            f"{type(owner).__name__} as well, others are not; registering the "
                            f"list would name the first ones twice. Keep all of them as "
                            f"attributes too, or none")
    return ModuleList(value)


def _shape(ct):
    return "(" + ", ".join(str(d) for d in ct.shape) + ("," if ct.ndim() == 1 else "") + ")"


def _all_layers(root):
    """root and every sub-layer registered from Python, each once, depth first."""
    out, seen, todo = [], set(), [root]
    while todo:
        layer_ = todo.pop()
        if id(layer_) in seen:
            continue
        seen.add(id(layer_))
        out.append(layer_)
        todo.extend(child for _, child in reversed(layer_._children()))
    return out


def _uninitialized(layer_):
    """Whether a layer that creates its own parameters has not yet run."""
    return not (layer_.initialized or layer_._children() or isinstance(layer_, ModuleList))


def _summary_rows(layer_, prefix, rows, seen):
    """(dotted name, class name, own tensors) of layer_ and its sub-layers."""
    children = layer_._children()
    child_names = {k for k, _ in children}
    params = {k for k, _ in layer_._params()}
    own = [(k, t) for k, t in layer_._states() if k.split(".", 1)[0] not in child_names]
    parts = [f"{k} {_shape(t)}" for k, t in own if k in params]
    buffers = [f"{k} {_shape(t)}" for k, t in own if k not in params]
    desc = ", ".join(parts)
    if buffers:
        desc += ("; " if desc else "") + "buffers " + ", ".join(buffers)
    if not own and _uninitialized(layer_):
        desc = "(not initialized)"
    rows.append((prefix, type(layer_).__name__, desc))
    if id(layer_) in seen:
        return
    seen.add(id(layer_))
    for k, child in children:
        _summary_rows(child, f"{prefix}.{k}" if prefix else k, rows, seen)


class ModuleList(Layer):
    """A list of layers, registered as sub-layers named by their positions
    ("blocks.0.W", "blocks.1.W", ...). It behaves as a list (indexing,
    slicing, len, iteration, append, extend, insert, del, pop, index) and
    is not called itself: a forward calls its layers. A list or tuple of
    layers assigned to a layer's attribute becomes one.

        self.blocks = layer.ModuleList([layer.Linear(32) for _ in range(3)])
        self.blocks.append(layer.Linear(10))     # registered as blocks.3
    """

    def __init__(self, layers=()):
        super().__init__()
        object.__setattr__(self, "_items", [])
        self.extend(layers)

    def _item(self, value):
        if isinstance(value, _nn.Layer):
            return value
        held = _as_module_list(value, type(self).__name__)
        if held is None:
            raise TypeError(f"{type(self).__name__} holds layers, got a {type(value).__name__}")
        return held

    def _reregister(self, old_len):
        """Registers the items under their (new) positions, in order."""
        for i in range(old_len):
            self._remove(str(i))
        for i, item in enumerate(self._items):
            _register(self, str(i), item)

    def append(self, value):
        """Adds a layer at the end (registered as the next position)."""
        value = self._item(value)
        _register(self, str(len(self._items)), value)
        self._items.append(value)
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def insert(self, index, value):
        old = len(self._items)
        self._items.insert(index, self._item(value))
        self._reregister(old)

    def pop(self, index=-1):
        value = self._items[index]
        del self[index]
        return value

    def index(self, value):
        """The position of a layer (the same object) in the list."""
        for i, item in enumerate(self._items):
            if item is value:
                return i
        raise ValueError(f"{type(value).__name__} is not in this {type(self).__name__}")

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)._of(self._items[index])
        return self._items[index]

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            items = [self._item(v) for v in value]
        else:
            items = self._item(value)
        old = len(self._items)
        self._items[index] = items
        self._reregister(old)

    def __delitem__(self, index):
        old = len(self._items)
        del self._items[index]
        self._reregister(old)

    def __len__(self):
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __contains__(self, value):
        return any(item is value for item in self._items)

    @classmethod
    def _of(cls, items):
        return cls(items)

    def _children(self):
        return [(str(i), item) for i, item in enumerate(self._items)]

    def _adopt_layer_lists(self, seen=None):
        seen = set() if seen is None else seen
        if id(self) not in seen:
            seen.add(id(self))
            for item in self._items:
                item._adopt_layer_lists(seen)

    def __call__(self, *x, **kw):
        raise TypeError(f"a {type(self).__name__} is not called: call its layers in forward "
                        f"(or use layer.Sequential to run them in order)")


class Sequential(ModuleList):
    """Layers run in order: Sequential(l1, l2, l3)(x) is l3(l2(l1(x))) (the
    first layer takes all the arguments, each next one the previous
    result). A ModuleList otherwise: the layers are named "0", "1", ...

        head = layer.Sequential(layer.Linear(64), layer.ReLU(), layer.Linear(10))
    """

    def __init__(self, *layers):
        super().__init__(layers)

    def _item(self, value):
        if not isinstance(value, _nn.Layer):
            raise TypeError(f"Sequential runs layers, got a {type(value).__name__} "
                            f"(pass the layers as arguments: Sequential(*layers))")
        return value

    @classmethod
    def _of(cls, items):
        return cls(*items)

    __call__ = Layer.__call__

    def forward(self, *x):
        if not self._items:
            return x[0] if len(x) == 1 else x
        y = self._items[0](*x)
        for item in self._items[1:]:
            y = item(y)
        return y


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


def _initialize_builtin(layer_, x):
    """Creates a built-in layer's parameters (its C++ initialization, from
    the inputs' shapes) without keeping the output or recording anything."""
    with _no_recording():
        layer_._call([_ct(t) for t in x])


class Gemm(_Builtin, _nn.Gemm):
    """ONNX Gemm: y = alpha * A' B' + beta * b, A' = A (or A^T with
    transA), B' = W (or W^T with transB). W is [nb_kernels, in] with transB
    (the default), else [in, nb_kernels]. bias_shape: the shape of b (default
    (nb_kernels,)); SINGA's checkpoints have (1, nb_kernels). b broadcasts
    to the output [batch, nb_kernels] as ONNX allows: its last dimension is 1
    or nb_kernels, a first one 1 or the batch size."""

    def __init__(self, nb_kernels, alpha=1.0, beta=1.0, transA=False, transB=True, bias=True,
                 bias_shape=None):
        super().__init__(int(nb_kernels), float(alpha), float(beta), bool(transA), bool(transB),
                         bool(bias))
        if bias_shape is not None:
            if not bias:
                raise ValueError("Gemm: bias_shape is given but bias=False")
            bias_shape = tuple(int(d) for d in bias_shape)
            if len(bias_shape) > 2 or (bias_shape and bias_shape[-1] not in (1, nb_kernels)):
                raise ValueError(f"Gemm: bias_shape {bias_shape} does not broadcast to "
                                 f"[batch, {nb_kernels}] (at most 2 dimensions, the last 1 or "
                                 f"{nb_kernels})")
        object.__setattr__(self, "_gemm", dict(alpha=float(alpha), beta=float(beta),
                                               transA=int(bool(transA)), transB=int(bool(transB))))
        object.__setattr__(self, "bias_shape", bias_shape)

    def forward(self, x):
        if self.bias_shape is None:
            return _Builtin.forward(self, x)
        if not self.initialized:
            _initialize_builtin(self, [x])
            w = dict(self._params())["W"]
            b = _ctensor_from_numpy(np.zeros(self.bias_shape), w.dtype).to_device(w.device)
            self._remove("b")
            self._add_param("b", b)
        p = dict(self._params())
        return autograd.gemm(x, _wrap(p["W"]), _wrap(p["b"]), **self._gemm)


_EMBEDDING_INIT = {"gaussian": lambda w: w.gaussian(0.0, 1.0),
                   "uniform": lambda w: w.uniform(-1.0, 1.0),
                   "zeros": lambda w: w.set_value(0.0)}


class Embedding(_Builtin, _nn.Embedding):
    """Rows of W [input_dim, output_dim] picked by integer indices.

    initializer: "gaussian" (N(0, 1), SINGA's default), "uniform" (U(-1, 1),
    SINGA's), "zeros", or a callable given W (a Tensor) that fills it in
    place, or returns an array or Tensor of W's shape to copy into it.
    padding_idx: an index (negative counts from the end) whose row starts at
    zero and gets no gradient, as in torch; positions holding it give zero
    rows (the row's value is not read)."""

    def __init__(self, input_dim, output_dim, initializer="gaussian", padding_idx=None):
        super().__init__(int(input_dim), int(output_dim))
        if isinstance(initializer, str):
            if initializer not in _EMBEDDING_INIT:
                raise ValueError(f"Embedding: initializer {initializer!r} is not one of "
                                 f"{sorted(_EMBEDDING_INIT)} (or a callable)")
        elif not callable(initializer):
            raise TypeError(f"Embedding: initializer must be a name or a callable, got "
                            f"{type(initializer).__name__}")
        if padding_idx is not None:
            padding_idx = int(padding_idx)
            if not -input_dim <= padding_idx < input_dim:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is out of range for "
                                 f"input_dim {input_dim}")
            padding_idx %= int(input_dim)
        object.__setattr__(self, "initializer", initializer)
        object.__setattr__(self, "padding_idx", padding_idx)

    def _initialize_weights(self, x):
        _initialize_builtin(self, [x])
        w = _wrap(dict(self._params())["W"])
        init = self.initializer
        if init != "gaussian":  # the C++ initialization is SINGA's gaussian
            fill = _EMBEDDING_INIT[init] if isinstance(init, str) else init
            out = fill(w)
            if out is not None and out is not w:
                arr = np.asarray(out.numpy() if isinstance(out, Tensor) else out)
                if arr.shape != tuple(w.shape):
                    raise ValueError(f"Embedding: the initializer returned shape {arr.shape}, "
                                     f"W is {tuple(w.shape)}")
                w.copy_from_numpy(arr)
        if self.padding_idx is not None:
            w.data.slice(0, self.padding_idx, self.padding_idx + 1).fill(0.0)

    def forward(self, x):
        if not self.initialized and (self.initializer != "gaussian"
                                     or self.padding_idx is not None):
            self._initialize_weights(x)
        y = _Builtin.forward(self, x)
        if self.padding_idx is None:
            return y
        pad = Tensor(data=np.array(self.padding_idx), dtype=x.dtype, device=x.device,
                     requires_grad=False)
        zero = Tensor(data=np.array(0.0), dtype=y.dtype, device=y.device, requires_grad=False)
        at_pad = autograd.unsqueeze(autograd.equal(x, pad), -1)
        return autograd.where(zero, y, at_pad)


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
    """BatchNorm2d(momentum=0.9) or BatchNorm2d(num_features, momentum=0.9):
    the channels come from the input.

    momentum follows SINGA's and ONNX's convention: in training, running =
    momentum * running + (1 - momentum) * batch statistic, so the default
    0.9 keeps most of the old statistics. torch's momentum is the weight of
    the batch statistic instead (its default 0.1 is 0.9 here): a value below
    0.5 gives a UserWarning that suggests 1 - value."""

    def __init__(self, *args, momentum=0.9, epsilon=1e-5):
        momentum = float(momentum)
        if not 0.0 <= momentum <= 1.0:
            raise ValueError(f"BatchNorm2d: momentum must be in [0, 1], got {momentum}")
        if momentum < 0.5:
            warnings.warn(
                f"BatchNorm2d(momentum={momentum:g}): SINGA and ONNX update running = momentum * "
                f"running + (1 - momentum) * batch, so {momentum:g} keeps only "
                f"{momentum:.0%} of the old statistics; torch's momentum={momentum:g} is "
                f"momentum={1 - momentum:g} here", UserWarning, stacklevel=2)
        super().__init__(momentum, float(epsilon))


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


class GELU(Layer):
    """GELU(approximate="none"): x * Phi(x), Phi the standard normal CDF;
    approximate="tanh" uses the tanh approximation (the ONNX Gelu op,
    opset 20)."""

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x):
        return autograd.gelu(x, self.approximate)


class LayerNorm(Layer):
    """Normalizes over the trailing dimensions `normalized_shape` (an int or
    a tuple; None takes the last dimension of the first input): y = (x -
    mean) / sqrt(var + eps) * scale + bias, the biased variance (the ONNX
    LayerNormalization op). elementwise_affine: learn scale (ones) and bias
    (zeros), of shape normalized_shape; without it there are no parameters."""

    def __init__(self, normalized_shape=None, eps=1e-5, elementwise_affine=True):
        super().__init__()
        if normalized_shape is not None:
            dims = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
            normalized_shape = tuple(int(d) for d in dims)
            if not normalized_shape or any(d <= 0 for d in normalized_shape):
                raise ValueError(f"LayerNorm: normalized_shape must be positive dimensions, got "
                                 f"{normalized_shape}")
        self.normalized_shape = normalized_shape
        self.eps = float(eps)
        self.elementwise_affine = bool(elementwise_affine)

    def _check(self, x):
        n = len(self.normalized_shape)
        if tuple(x.shape[-n:]) != self.normalized_shape or x.ndim() < n:
            raise ValueError(f"LayerNorm: input of shape {tuple(x.shape)} does not end with "
                             f"normalized_shape {self.normalized_shape}")

    def initialize(self, x):
        if self.normalized_shape is None:
            if x.ndim() == 0:
                raise ValueError("LayerNorm: the input must have a dimension to normalize")
            self.normalized_shape = (x.shape[-1],)
        self._check(x)
        ones = np.ones(self.normalized_shape)
        if self.elementwise_affine:
            self.scale = Tensor(data=ones, dtype=x.dtype, device=x.device, stores_grad=True)
            self.bias = Tensor(data=np.zeros(self.normalized_shape), dtype=x.dtype,
                               device=x.device, stores_grad=True)
        else:
            object.__setattr__(self, "_ones", Tensor(data=ones, dtype=x.dtype, device=x.device,
                                                     requires_grad=False))

    def forward(self, x):
        self._check(x)
        axis = -len(self.normalized_shape)
        if self.elementwise_affine:
            return autograd.layer_norm(x, self.scale, self.bias, axis, self.eps)
        return autograd.layer_norm(x, self._ones, None, axis, self.eps)


class MultiHeadAttention(Layer):
    """Multi-head scaled dot-product attention, as torch.nn.MultiheadAttention:
    the query, key and value projections (q_proj, k_proj, v_proj: Linear
    layers, W [in, embed_dim]), the ONNX Attention op (opset 23) over
    num_heads heads of embed_dim // num_heads, and out_proj.

        mha = layer.MultiHeadAttention(64, 8, batch_first=True)
        y = mha(x)                          # self-attention, x [batch, seq, 64]
        y = mha(q, k, v, is_causal=True)

    Inputs are [seq, batch, dim] (torch's default), or [batch, seq, dim] with
    batch_first. key defaults to query and value to key; kdim and vdim are
    their feature sizes (default embed_dim). forward returns the output
    only (torch also returns the attention weights). attn_mask: a Tensor (or
    array) broadcastable to [batch, num_heads, q_seq, kv_seq]; float values
    are added to the scores, a boolean one keeps the True positions (as
    ONNX and torch's scaled_dot_product_attention; torch's
    MultiheadAttention masks the True positions instead). is_causal: query
    i attends to keys 0..i only."""

    def __init__(self, embed_dim, num_heads, bias=True, batch_first=False, kdim=None, vdim=None):
        super().__init__()
        embed_dim, num_heads = int(embed_dim), int(num_heads)
        if embed_dim <= 0 or num_heads <= 0 or embed_dim % num_heads:
            raise ValueError(f"MultiHeadAttention: embed_dim ({embed_dim}) must be a positive "
                             f"multiple of num_heads ({num_heads})")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.batch_first = bool(batch_first)
        self.q_proj = Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = Linear(int(kdim or embed_dim), embed_dim, bias=bias)
        self.v_proj = Linear(int(vdim or embed_dim), embed_dim, bias=bias)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key=None, value=None, attn_mask=None, is_causal=False):
        key = query if key is None else key
        value = key if value is None else value
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor) or t.ndim() != 3:
                raise ValueError(f"MultiHeadAttention: {name} must be a 3-D Tensor "
                                 f"[{'batch, seq' if self.batch_first else 'seq, batch'}, dim], "
                                 f"got {tuple(t.shape) if isinstance(t, Tensor) else type(t)}")
        if not self.batch_first:
            query, key, value = (autograd.transpose(t, [1, 0, 2]) for t in (query, key, value))
        inputs = [self.q_proj(query), self.k_proj(key), self.v_proj(value)]
        if attn_mask is not None:
            if not isinstance(attn_mask, Tensor):
                arr = np.asarray(attn_mask)
                attn_mask = Tensor(data=arr, dtype=arr.dtype if arr.dtype == np.bool_ else
                                   query.dtype, device=query.device, requires_grad=False)
            inputs.append(attn_mask)
        y = autograd.call_op("Attention", *inputs, opset=23, num_outputs=1,
                             q_num_heads=self.num_heads, kv_num_heads=self.num_heads,
                             is_causal=int(bool(is_causal)))
        y = self.out_proj(y)
        return y if self.batch_first else autograd.transpose(y, [1, 0, 2])


# SINGA 2's names for the layers, still used by the earlier ONNX page's
# example: autograd.Conv2d(in_channels, out_channels, kernel_size, ...),
# autograd.Linear(in_features, out_features, bias=...), autograd.MaxPool2d, ...
for _name in ("Linear", "Conv2d", "BatchNorm2d", "MaxPool2d", "AvgPool2d"):
    setattr(autograd, _name, globals()[_name])
del _name
