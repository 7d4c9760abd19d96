"""singa.sonnx: ONNX models in singa: import (prepare) and export (to_onnx).

    import onnx
    from singa import sonnx
    rep = sonnx.prepare("model.onnx")              # or an onnx.ModelProto, or bytes
    y = rep.run([x])                               # numpy arrays or Tensors -> [Tensor]
    f = rep.run([x], last_layers=-3)               # stop after the third-last node
    y, h = rep.run([x], aux_output=["hidden"])     # outputs, then named values
    rep.params                                     # {initializer name: Tensor}

    class MyModel(sonnx.SONNXModel):               # train or extend an imported model
        def forward(self, *x):
            return super().forward(*x)[0]

    y = model(x)                                   # ops record themselves, in any mode
    m = sonnx.to_onnx([x], [y])                    # -> onnx.ModelProto
    m = sonnx.to_onnx([x], model)                  # or: runs model.forward(x) recording
    sonnx.save(m, "model.onnx")

    rep = sonnx.prepare("zoo_opset9.onnx", batch_size=4)   # the batch of the placeholder
    model.compile([tensor.PlaceHolder((4, 3, 224, 224))])  # the same for a SONNXModel

The work happens in C++ (singa._singa.sonnx, include/singa/onnx/sonnx.h):
prepare reads the model once (opsets, topological order, initializers,
Constant nodes, external data, every node's op and parsed attributes); run
executes the nodes through the op registry, so with autograd.training on an
imported model records for backward and its initializers (parameters,
stores_grad) train. A "layer" for last_layers is a graph node in run order
(Constant nodes are folded at prepare and do not count). If, Loop and Scan
(opset 9+) run their subgraphs, which may read values of the enclosing graphs.

to_onnx (C++: singa/onnx/export.h) traces the op records back from the
outputs: every op records itself in any mode (an inference record keeps no
activation alive), an imported model's planned run and a captured graph
step record one node each, which the export expands. It writes one opset
for the whole model: ops recorded in an older form (a model imported at
opset 7-10, then extended) are upgraded to it, each by its op file.

Errors: UnsupportedOp (a NotImplementedError) for ops, domains or types singa
does not implement; InvalidModel (a ValueError) for malformed graphs;
SingaIOError (an OSError) for unreadable files; ShapeError / DTypeError (a
ValueError) for run inputs that do not fit the model. Each names the node,
op or input.
"""
import collections
import contextlib
import os

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from . import _singa
from . import model as _model
from .device import Device, memory_limit
from .tensor import Tensor, _ctensor_from_numpy, _wrap

_o = _singa.sonnx

save = onnx.save


def _device(device):
    """A singa Device from onnx's device strings ("CPU", "CUDA:0") or a Device."""
    if device is None:
        return Device.cpu()
    if isinstance(device, Device):
        return device
    kind, _, index = str(device).upper().partition(":")
    if kind == "CPU":
        return Device.cpu()
    if kind == "CUDA":
        return Device.cuda(int(index or 0))  # NotImplementedError without CUDA or a GPU
    raise ValueError(f"sonnx: unknown device {device!r} (expected 'CPU' or 'CUDA[:i]')")


def prepare(model, device="CPU", **kwargs):
    """A SingaRep for `model`: an onnx.ModelProto, a path, or serialized bytes.

    kwargs: batch_size, the first dimension of every graph input with a
    fixed one (SINGA's placeholder batch; shapes downstream follow);
    base_dir, the folder external data is read from when `model` is
    not a path (default: none; a path reads it next to the file);
    memory_limit, the most bytes of tensors the import may allocate
    (device.memory_limit; default: no limit)."""
    unknown = sorted(set(kwargs) - {"base_dir", "memory_limit", "batch_size"})
    if unknown:
        raise TypeError(f"sonnx.prepare: unexpected keyword argument {unknown[0]!r} "
                        f"(it takes batch_size, base_dir and memory_limit)")
    dev = _device(device)
    base_dir = os.fspath(kwargs.get("base_dir", ""))
    with _limit(kwargs.get("memory_limit"), dev):
        if isinstance(model, onnx.ModelProto):
            rep = _o.prepare_bytes(model.SerializeToString(), dev, base_dir)
        elif isinstance(model, (bytes, bytearray, memoryview)):
            rep = _o.prepare_bytes(bytes(model), dev, base_dir)
        elif isinstance(model, (str, os.PathLike)):
            rep = _o.prepare(os.fspath(model), dev)
        else:
            raise TypeError(f"sonnx.prepare: expected an onnx.ModelProto, a path or bytes, "
                            f"got {type(model).__name__}")
    if kwargs.get("batch_size") is not None:
        rep.set_batch_size(int(kwargs["batch_size"]))
    return SingaRep(rep)


def update_batch_size(onnx_model, batch_size):
    """SINGA's helper: sets the first dimension of the graph inputs (those
    without an initializer) and outputs of `onnx_model` to batch_size, in
    place, and returns the model; prepare then takes that batch."""
    inits = {i.name for i in onnx_model.graph.initializer}
    for v in list(onnx_model.graph.input) + list(onnx_model.graph.output):
        if v.name in inits or not v.type.tensor_type.HasField("shape"):
            continue
        dims = v.type.tensor_type.shape.dim
        if len(dims):
            dims[0].Clear()
            dims[0].dim_value = int(batch_size)
    return onnx_model


def _limit(nbytes, dev):
    return contextlib.nullcontext() if nbytes is None else memory_limit(nbytes, dev)


# numpy dtypes the binding takes as they are (native byte order, no
# ml_dtypes extension type): SingaRep.run passes them to the binding as they are.
_PLAIN_NP = frozenset(np.dtype(t) for t in (
    np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8,
    np.uint16, np.uint32, np.uint64, np.bool_))


def _input_ct(x, name, sequence=True, dtype=None):
    """A graph value for the binding: None (an empty optional), a list of
    tensors (a sequence input), or a tensor (a numpy array, a Tensor, or
    nested Python lists for a tensor input, made of the input's dtype)."""
    if type(x) is np.ndarray and x.dtype in _PLAIN_NP:
        # (a small model's call spends more on these checks than on its work)
        ct = _singa.CTensor.from_numpy(x)
        ct.requires_grad = False
        return ct
    if x is None:
        return None
    as_list = isinstance(x, (list, tuple))
    if as_list and (sequence or any(isinstance(e, (np.ndarray, Tensor, _singa.CTensor))
                                    for e in x)):
        # A sequence (for a tensor input, run names the mismatch).
        return [_input_ct(e, f"{name}[{i}]", False) for i, e in enumerate(x)]
    if isinstance(x, Tensor):
        return x.data
    if isinstance(x, _singa.CTensor):
        return x
    try:
        arr = np.asarray(x)
    except ValueError as e:  # ragged nested lists
        raise TypeError(f"SingaRep.run: input {name!r} is not an array: {e}") from None
    odd = next((v for v in arr.ravel() if not isinstance(v, str)), None) \
        if arr.dtype == object else None
    if odd is not None:
        raise TypeError(f"SingaRep.run: input {name!r} holds {type(odd).__name__} values, "
                        f"not numbers or text")
    ct = _ctensor_from_numpy(arr, dtype if as_list else None)
    # An identity of its own: a planned run's record then keeps only its
    # dtype and shape, not the converted copy (no export can name it).
    ct.requires_grad = False
    return ct


def _output(v):
    """A result of the binding as the user sees it: Tensor, list or None."""
    if v is None:
        return None
    if isinstance(v, list):
        return [_wrap(e) for e in v]
    return _wrap(v)


def _numpy(v):
    if v is None:
        return None
    if isinstance(v, list):
        return [np.asarray(e) for e in v]
    return np.asarray(v)


class SingaRep(BackendRep):
    """A prepared model: run(inputs, last_layers=-1, aux_output=()).

    inputs: one value per graph input without an initializer, in the model's
    order (numpy arrays or Tensors), or a dict by input name. Returns a list
    of Tensors: the graph outputs (or, with last_layers=-N for N > 1, the
    outputs of the N-th last node), then the aux_output values.

    A sequence value (ONNX seq(tensor)) is a list of arrays or Tensors, an
    empty optional is None: in inputs and results alike."""

    def __init__(self, rep):
        self._rep = rep
        # (name, sequence, dtype) of each input, read once: run() needs them on every call.
        self._input_meta = [(v.name, v.sequence, v.dtype) for v in rep.inputs]
        # One Tensor per initializer, kept: optimizers key state by identity.
        self.params = {k: _wrap(v) for k, v in rep.params.items()}

    @property
    def inputs(self):
        return list(self._rep.inputs)

    @property
    def outputs(self):
        return list(self._rep.outputs)

    @property
    def num_nodes(self):
        return self._rep.num_nodes

    @property
    def device(self):
        return self._rep.device

    def opset(self, domain=""):
        return self._rep.opset(domain)

    @property
    def use_plan(self):
        """Inference runs use the static plan (one per input signature)."""
        return self._rep.use_plan

    @use_plan.setter
    def use_plan(self, on):
        self._rep.use_plan = on

    @property
    def num_plans(self):
        return self._rep.num_plans

    @property
    def planned_op_types(self):
        """The op types of the latest plan's nodes, after folding and fusion."""
        return list(self._rep.planned_op_types)

    def cancel(self):
        """Stops the runs in progress on this model, from another thread:
        they raise singa Cancelled (a RuntimeError) at their next Loop, Scan
        or SequenceMap iteration, so even a Loop without bound ends. Ctrl-C
        stops a run the same way (KeyboardInterrupt)."""
        self._rep.cancel()

    @property
    def tensor_map(self):
        """SINGA's name for params: {initializer name: Tensor}."""
        return self.params

    def run(self, inputs, last_layers=-1, aux_output=(), all_outputs=False, memory_limit=None,
            profile=None):
        """all_outputs: SINGA's option to return every value the run computes
        as an OrderedDict {value name: Tensor} in run order (the result and
        aux_output values among them). memory_limit: the most bytes of
        tensors this run may allocate beyond what is in use when it starts
        (device.memory_limit; default: no limit). profile: a path where the
        run's profile (see profile()) is written in the Chrome trace format."""
        if profile is not None:
            if all_outputs:
                raise ValueError("SingaRep.run: profile= and all_outputs= do not go together")
            with _limit(memory_limit, self._rep.device):
                p = self.profile(inputs, last_layers, aux_output)
            p.save(profile)
            return p.outputs
        if all_outputs:
            n = self._rep.num_nodes
            end = n + int(last_layers) + 1 if -n <= int(last_layers) < 0 else n
            names = [v for outs in self._rep.node_output_names[:end] for v in outs]
            names += [a for a in aux_output if a not in names]
            values = self.run(inputs, last_layers, names, memory_limit=memory_limit)
            return collections.OrderedDict(zip(names, values[len(values) - len(names):]))
        with _limit(memory_limit, self._rep.device):
            outs = self._rep.run(self._inputs(inputs), int(last_layers),
                                 [str(a) for a in aux_output])
        return [_output(o) for o in outs]

    def profile(self, inputs, last_layers=-1, aux_output=()):
        """Runs like run() and times every node the run executes: a
        Profile. A run that uses the static plan times the plan (built
        first when these inputs' shapes have none), so the profile is of a
        steady-state run."""
        outs, nodes, total, planned, replayed, trace = self._rep.profile(
            self._inputs(inputs), int(last_layers), [str(a) for a in aux_output])
        return Profile([_output(o) for o in outs], nodes, total, planned, replayed, trace)

    def _inputs(self, inputs):
        """The C++ values of run()'s `inputs`."""
        meta = self._input_meta
        if isinstance(inputs, dict):
            names = [m[0] for m in meta]
            try:
                if len(inputs) != len(names):
                    raise KeyError
                inputs = [inputs[n] for n in names]
            except KeyError:
                missing = [n for n in names if n not in inputs]
                extra = [n for n in inputs if n not in names]
                raise ValueError(f"SingaRep.run: inputs by name must be exactly {names}; "
                                 f"missing {missing}, unknown {extra}") from None
        elif isinstance(inputs, (np.ndarray, Tensor)):
            inputs = [inputs]
        # Plain arrays go as they are: the binding reads them in place (a
        # replayed plan copies them into its own memory) instead of a copy
        # made here, which the pool would keep cached per input shape.
        return [x if type(x) is np.ndarray and x.dtype in _PLAIN_NP
                else _input_ct(x, *meta[i]) if i < len(meta) else _input_ct(x, f"input {i}")
                for i, x in enumerate(inputs)]


class Profile:
    """A profiled run (SingaRep.profile): `outputs` (as run() returns
    them), `nodes` (one dict per node run: op_type (after the plan's
    fusions), name, inputs (dtype and shape of each), kernels (the oneDNN
    implementations it ran), start_us, duration_us), `duration_us` (the
    whole run), `planned` (whether the static plan ran) and `replayed`
    (whether the plan replayed its recorded ops; a plan with nodes whose
    results' shapes depend on computed values walks its nodes)."""

    def __init__(self, outputs, nodes, duration_us, planned, replayed, chrome_trace):
        self.outputs, self.nodes = outputs, nodes
        self.duration_us, self.planned, self.replayed = duration_us, planned, replayed
        self._trace = chrome_trace

    def chrome_trace(self):
        """The run in the Chrome trace format (chrome://tracing, Perfetto),
        as onnxruntime's profiler writes it: a JSON list of events."""
        return self._trace

    def save(self, path):
        with open(os.fspath(path), "w") as f:
            f.write(self._trace)

    def by_op_type(self):
        """[(op_type, total microseconds, node count)], slowest first."""
        total = collections.defaultdict(lambda: [0.0, 0])
        for n in self.nodes:
            total[n["op_type"]][0] += n["duration_us"]
            total[n["op_type"]][1] += 1
        return sorted(((k, t, c) for k, (t, c) in total.items()), key=lambda r: -r[1])


class SingaBackend(Backend):
    """onnx.backend.base.Backend over singa (CPU only in this build)."""

    @classmethod
    def prepare(cls, model, device="CPU", **kwargs):
        return prepare(model, device, **kwargs)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return [_numpy(t) for t in cls.prepare(model, device, **kwargs).run(inputs)]

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, **kwargs):
        """Runs one NodeProto on numpy inputs (positional, in node.input
        order; absent optional inputs are skipped by their empty names). A
        list of arrays is a sequence input."""
        values = [[np.asarray(e) for e in x] if isinstance(x, (list, tuple)) else np.asarray(x)
                  for x in inputs]
        present = [n for n in node.input if n]
        if len(present) != len(values):
            raise ValueError(f"run_node: node {node.name or node.op_type!r} has {len(present)} "
                             f"inputs, {len(values)} values given")

        def value_info(name, v):
            if isinstance(v, list):
                elem = onnx.helper.np_dtype_to_tensor_dtype(v[0].dtype) if v else \
                    onnx.TensorProto.FLOAT
                return onnx.helper.make_tensor_sequence_value_info(name, elem, None)
            return onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)

        graph_inputs = [value_info(n, v) for n, v in zip(present, values)]
        graph_outputs = [onnx.helper.make_empty_tensor_value_info(n) for n in node.output if n]
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        graph = onnx.helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        model = onnx.helper.make_model(
            graph, opset_imports=[onnx.helper.make_opsetid(node.domain or "", opset)])
        rep = cls.prepare(model, device)
        return [_numpy(t) for t in rep.run(values)]

    @classmethod
    def supports_device(cls, device):
        try:
            _device(device)
        except (NotImplementedError, ValueError):
            return False
        return True


def _ct_list(ts, what):
    if isinstance(ts, (Tensor, _singa.CTensor)):
        ts = [ts]
    out = []
    for i, t in enumerate(ts):
        if isinstance(t, Tensor):
            out.append(t.data)
        elif isinstance(t, _singa.CTensor):
            out.append(t)
        else:
            raise TypeError(f"sonnx.to_onnx: {what} {i} must be a singa Tensor, got "
                            f"{type(t).__name__}")
    return out


def _record(fn, inputs, training):
    """Runs fn(*inputs) recording (grad mode, and tracing: the records keep
    the values export hooks may read) in the training mode `training`;
    returns its outputs as a list."""
    grad, mode, tracing = _singa.grad_enabled(), _singa.training_mode(), _o.tracing_enabled()
    _singa.set_grad_enabled(True)
    _singa.set_training_mode(bool(training))
    _o.set_tracing(True)
    try:
        forward = fn.forward if isinstance(fn, _model.Model) else fn
        ys = forward(*inputs)
    finally:
        _singa.set_grad_enabled(grad)
        _singa.set_training_mode(mode)
        _o.set_tracing(tracing)
    if isinstance(ys, (Tensor, _singa.CTensor)):
        return [ys]
    return list(ys)


def to_onnx(inputs, outputs, model_name="sonnx", opset=None, dynamic_batch=False, training=False,
            input_names=None, output_names=None, path=None):
    """The computation from `inputs` to `outputs` as an onnx.ModelProto.

    outputs: Tensors computed from `inputs`, as in SINGA, in any mode (a
    Model's forward or training step, eager or graph mode, an imported
    model's run, functions called on tensors); or a callable (a Model, whose
    forward is used, or a function) that to_onnx runs on `inputs`.
    Parameters become initializers named by their dotted paths.
    opset: the target ai.onnx opset (default: the newest at which every
    recorded op keeps its form; when none has them all, the newest any
    recorded op needs, at least 11, with older forms upgraded; an explicit
    target >= 11 upgrades what is older). dynamic_batch: dim 0 of the graph
    inputs and outputs becomes the symbol "batch". training=False writes ops
    recorded in training form (BatchNormalization, Dropout) in their
    inference form. path: also write the model there, atomically.
    Errors name the tensor or op: ValueError for a tensor without recorded
    history (computed with recording off), an unused input or a name clash;
    NotImplementedError for an op without an ONNX form or an upgrade to the
    target opset."""
    if isinstance(inputs, (Tensor, _singa.CTensor)):
        inputs = [inputs]
    inputs = list(inputs)
    if callable(outputs) and not isinstance(outputs, (Tensor, _singa.CTensor, list, tuple)):
        outputs = _record(outputs, inputs, training)
    args = (_ct_list(inputs, "input"), _ct_list(outputs, "output"), str(model_name),
            int(opset or 0), bool(dynamic_batch), bool(training),
            [str(n) for n in (input_names or [])], [str(n) for n in (output_names or [])])
    data = _o.to_onnx(*args)
    if path is not None:
        _o.save_onnx(os.fspath(path), *args)
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model


class SingaFrontend:
    """SINGA's exporter: singa_to_onnx_model (the same as to_onnx) builds
    the model around singa_to_onnx_graph's graph."""

    @classmethod
    def singa_to_onnx_model(cls, inputs, y, model_name="sonnx", **kwargs):
        return to_onnx(inputs, y, model_name=model_name, **kwargs)

    @classmethod
    def singa_to_onnx_graph(cls, inputs, y, model_name="sonnx", **kwargs):
        return cls.singa_to_onnx_model(inputs, y, model_name, **kwargs).graph


class SONNXModel(_o.SONNXModel):
    """An imported ONNX model as a singa Model (C++: sonnx::SONNXModel):
    subclass it to train it (train_one_batch) or to extend it (append layers
    after forward with last_layers). Its floating-point initializers are the
    parameters, named by their ONNX names (get_params); get_states adds the
    others."""

    def __init__(self, onnx_model, device="CPU"):
        rep = prepare(onnx_model, device)
        super().__init__(rep._rep)
        self.sg_ir = rep

    def initialize(self, *x):
        """Compile's placeholders (or the first call's inputs) give the batch
        size: their first dimensions replace the declared ones."""
        self.sg_ir._rep.adopt_batch_size([t.data for t in x if isinstance(t, Tensor)])

    def forward(self, *x, last_layers=-1, aux_output=()):
        return self.sg_ir.run(list(x), last_layers=last_layers, aux_output=aux_output)


__all__ = ["prepare", "SingaRep", "SingaBackend", "SingaFrontend", "SONNXModel", "to_onnx",
           "save", "update_batch_size"]
