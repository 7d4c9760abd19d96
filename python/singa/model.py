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

Model is the C++ nn::Model (singa._singa.nn.Model): the modes, the
captured steps and the states file live there, and C++ calls a Python
subclass's forward and train_one_batch back. This module adds the Python
call protocol: arguments that are not Tensors (fixed at capture, part of
the step's signature), keyword arguments and results of any structure.
"""
import os

from . import _singa
from . import autograd
from . import layer
from .tensor import Tensor, _ct, _wrap

_nn = _singa.nn


class _ModelProtocol:
    """The Python face of nn::Model, attached to singa._singa.nn.Model (and
    so to SONNXModel)."""

    def compile(self, inputs, is_train=True, use_graph=False, sequential=False):
        """Initializes every layer with a forward pass over `inputs`
        (placeholders: their shapes matter), names the parameters by their
        dotted paths and sets the modes. A model is compiled before it is
        called (a Model held by another layer runs as a layer instead).

        is_train: calls run train_one_batch (else forward). use_graph: the
        first call of each mode and input signature is captured and later
        ones replay it (graph mode). sequential: SINGA's switch to run a
        captured graph in its recorded order rather than scheduling
        independent ops concurrently. It changes no result and no timing
        here: a step replays on one stream in its recorded order (already a
        dependency order), on the CPU and on a GPU. It is kept as the
        `sequential` property, and changing it (here or with graph())
        drops the captured steps, which the next calls capture again."""
        self._compile([_ct(t) for t in inputs], bool(is_train), bool(use_graph), bool(sequential))
        for k in ("_result", "_results"):
            self.__dict__.pop(k, None)
        self.__dict__["_compiled"] = True
        autograd.training = bool(is_train)

    def train(self, mode=True):
        self._train(bool(mode))
        autograd.training = bool(mode)

    def eval(self):
        self.train(False)

    def graph(self, mode=True, sequential=False):
        """Switches graph mode; a change (of either argument) drops the
        captured steps. sequential: see compile."""
        self._graph(bool(mode), bool(sequential))
        if self.num_captured_steps == 0:
            self.__dict__.pop("_results", None)

    def train_one_batch(self, *x, **kw):
        raise NotImplementedError(f"{type(self).__name__}.train_one_batch is not defined")

    def __call__(self, *x, **kw):
        if not self.__dict__.get("_compiled"):
            if self.__dict__.get("_sublayer"):
                return layer.Layer.__call__(self, *x, **kw)
            name = type(self).__name__
            raise _singa.Error(
                f"{name} is not compiled: call {name.lower()}.compile([inputs], is_train=..., "
                f"use_graph=...) first (inputs: placeholder Tensors of the input shapes), then "
                f"{name.lower()}(x) runs forward, or {name.lower()}(x, y) train_one_batch "
                f"with is_train=True")
        # Tensors are the step's inputs; the other arguments are fixed at
        # capture and name the step with the shapes (one step per mode and
        # signature).
        cts = [t.data for t in x if isinstance(t, Tensor)]
        tag = repr([a for a in x if not isinstance(a, Tensor)] + sorted(kw.items()))
        key = self._step_key(cts, tag) if self.graph_mode else None
        replay = key is not None and self._has_step(key)
        self.__dict__.update(_pending=(x, kw), _result=None)
        try:
            outs = self._call_step(cts, tag)
        finally:
            self.__dict__.pop("_pending", None)
            result = self.__dict__.pop("_result")
        autograd.training = self.training
        if key is None:
            return result
        # A replay does not run forward: the captured call's result gives the
        # structure, filled with this step's own (fresh) tensors.
        shapes = self.__dict__.setdefault("_results", {})
        if not replay:
            shapes[key] = _skeleton(result)
        return _rebuild(shapes[key], iter([_wrap(o) for o in outs]))

    # Model::Call runs the step here, with the arguments of __call__.
    def _train_from_cpp(self, cts):
        return self._run_from_cpp(self.train_one_batch, cts)

    def _forward_from_cpp(self, cts):
        return self._run_from_cpp(self.forward, cts)

    def _run_from_cpp(self, fn, cts):
        tensors = iter([_wrap(c) for c in cts])
        x, kw = self.__dict__.pop("_pending", (None, {}))
        args = list(tensors) if x is None else [next(tensors) if isinstance(a, Tensor) else a
                                                for a in x]
        out = fn(*args, **kw)
        self.__dict__["_result"] = out
        return layer._tensor_list(out, strict=self.graph_mode)

    def save_states(self, fpath, aux_states={}):  # noqa: B006 - SINGA's signature
        """Writes parameters, buffers and `aux_states` (name -> Tensor or
        array) to fpath in SINGA's checkpoint format (a zip of
        tensor_dict.npz and states_attr.json, which SINGA 3 loads), through a
        temporary file renamed into place."""
        aux = {k: _ct(v if isinstance(v, Tensor) else Tensor(data=v, requires_grad=False))
               for k, v in aux_states.items()}
        self._save_states(os.fspath(fpath), aux)

    def load_states(self, fpath):
        """Loads what save_states (or SINGA 3, or the earlier SINGAST1
        format) wrote; names, shapes and dtypes must match
        (OSError listing every difference otherwise). Returns the aux states."""
        return {k: _wrap(v) for k, v in self._load_states(os.fspath(fpath)).items()}


layer._attach(_nn.Model, _ModelProtocol)
Model = _nn.Model


_SLOT = object()


def _skeleton(result):
    """result's structure with a slot in place of each Tensor."""
    if isinstance(result, Tensor):
        return _SLOT
    if isinstance(result, (list, tuple)):
        return type(result)(_skeleton(r) for r in result)
    return result


def _rebuild(template, tensors):
    """template's structure with its slots filled in order from `tensors`."""
    if template is _SLOT:
        return next(tensors)
    if isinstance(template, (list, tuple)):
        return type(template)(_rebuild(t, tensors) for t in template)
    return template
