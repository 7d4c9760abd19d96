"""singa.model: SINGA's Model.

    class CNN(model.Model):
        def __init__(self):
            super().__init__()
            self.conv = layer.Conv2d(16, 3, padding=1)
            self.flat = layer.Flatten()
            self.fc = layer.Linear(10)
        def forward(self, x):
            return self.fc(self.flat(autograd.relu(self.conv(x))))
        def train_one_batch(self, x, y):
            out = self.forward(x)
            loss = autograd.softmax_cross_entropy(out, y)
            self.optimizer.backward_and_update(loss)
            return out, loss
        def set_optimizer(self, optimizer):
            self.optimizer = optimizer

    m = CNN(); m.set_optimizer(opt.SGD(lr=0.05, momentum=0.9))
    m.compile([tx], is_train=True, use_graph=True, sequential=False)
    out, loss = m(tx, ty)                    # train_one_batch, captured once, then replayed

In graph mode the first call of a mode (training or inference) with given
input shapes is captured by the C++ device and later calls with those
shapes replay it natively: no Python runs, and the tensors returned are the
same objects, holding the new results (read them before the next call).
New inputs are copied into the captured ones.
"""
import os

from . import _singa
from . import autograd
from . import layer
from .tensor import Tensor, _ct, _wrap

_nn = _singa.nn


class Model(layer.Layer):

    def __init__(self):
        super().__init__()
        self.__dict__.update(training=False, graph_mode=False, sequential=False,
                             _steps={})

    def compile(self, inputs, is_train=True, use_graph=False, sequential=False):
        """Initializes every layer with a forward pass over `inputs`
        (placeholders: their shapes matter), names the parameters by their
        dotted paths and sets the modes."""
        was = autograd.training
        autograd.training = False
        try:
            self(*inputs)
        finally:
            autograd.training = was
        self._name_tensors()
        self.train(is_train)
        self.graph(use_graph, sequential)

    def train(self, mode=True):
        self.__dict__["training"] = bool(mode)
        autograd.training = bool(mode)

    def eval(self):
        self.train(False)

    def graph(self, mode=True, sequential=False):
        if bool(mode) != self.graph_mode or bool(sequential) != self.sequential:
            self._steps.clear()
        self.__dict__.update(graph_mode=bool(mode), sequential=bool(sequential))

    def train_one_batch(self, *x, **kw):
        raise NotImplementedError(f"{type(self).__name__}.train_one_batch is not defined")

    def __call__(self, *x, **kw):
        if not self._initialized:
            return super().__call__(*x, **kw)
        autograd.training = self.training
        fn = self.train_one_batch if self.training else self.forward
        if not self.graph_mode:
            return fn(*x, **kw)
        # Tensors are the graph's inputs; other arguments are fixed at capture.
        # One captured step per mode and input signature.
        tensors = [t for t in x if isinstance(t, Tensor)]
        key = (self.training,) + tuple((tuple(t.shape), t.dtype) for t in tensors) + tuple(
            repr(a) for a in x if not isinstance(a, Tensor))
        if key in self._steps:
            step, result = self._steps[key]
            step.replay([_ct(t) for t in tensors])
            return result
        step = _nn.GraphStep()

        template = []

        def run(cts):
            it = iter(cts)
            args = [_wrap(next(it)) if isinstance(a, Tensor) else a for a in x]
            out = fn(*args, **kw)
            template.append(out)
            return [_ct(t) for t in _flatten(out)]

        outs = step.capture([_ct(t) for t in tensors], run)
        result = _rebuild(template[0], iter([_wrap(o) for o in outs]))
        self._steps[key] = (step, result)
        return result

    def save_states(self, fpath, aux_states={}):  # noqa: B006 - SINGA's signature
        """Writes parameters, buffers and `aux_states` (name -> Tensor or
        array) to fpath through a temporary file renamed into place."""
        states = {k: _ct(v) for k, v in self.get_states().items()}
        aux = {k: _ct(v if isinstance(v, Tensor) else Tensor(data=v, requires_grad=False))
               for k, v in aux_states.items()}
        _nn.save_states_file(os.fspath(fpath), states, aux)

    def load_states(self, fpath):
        """Loads what save_states wrote; names, shapes and dtypes must match
        (OSError listing every difference otherwise). Returns the aux states."""
        targets = {k: _ct(v) for k, v in self.get_states().items()}
        return {k: _wrap(v) for k, v in _nn.load_states_into(targets, os.fspath(fpath)).items()}


def _flatten(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    if out is None:
        return []
    raise TypeError(f"graph mode: a step must return Tensors (or lists of them), got "
                    f"{type(out).__name__}")


def _rebuild(template, tensors):
    """template's structure with its Tensors taken in order from `tensors`."""
    if isinstance(template, Tensor):
        return next(tensors)
    if isinstance(template, (list, tuple)):
        return type(template)(_rebuild(t, tensors) for t in template)
    return template
