"""The machinery behind the op table (op_cases.py): input generation, the
oracle (onnx's reference evaluator on a one-node model), and comparison.

A row is `Case(op, inputs, attrs=..., ...)`. Inputs are:
  T(shape, ...)   a tensor of the swept dtype (the row runs once per dtype the
                  op claims for that input, or per `dtypes=` of the row)
  V(values, dt)   a fixed tensor (axes, shapes, indices): never swept
  None            an absent optional input
  Seq([T(..), ..])  a sequence (ONNX seq(tensor)); T elements are of the
                  swept dtype; Seq([]) is an empty one
  Opt(spec)       an optional holding spec (T, V or Seq); Opt(None) is empty

Attributes are Python values, numpy arrays (tensor attributes), or graphs:
an onnx.GraphProto, or G(nodes, inputs, outputs), a graph typed with the
swept dtype when the row runs (see G). N(op, "a b", "c", **attrs) makes a node.

Rows of ops without a tensor kernel (control flow, sequences, optionals,
Gradient), and rows with a Seq/Opt input, a graph attribute, `nodes` or
`outer`, run as a model (`is_model_row`): the op is one node named 'case'
with inputs in0, in1, ... (the row's inputs) and outputs out0, out1, ...;
`outer` adds graph inputs outer0, outer1, ... that the node's graphs (or
`nodes`) read from the enclosing scope, and `nodes` are nodes before it
(Gradient's y). The model runs through sonnx.prepare(...).run(...) and
through onnx's ReferenceEvaluator (or the row's `oracle`, for an op the
evaluator lacks or gets wrong).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import ml_dtypes
import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from singa import _singa

RNG_SEED = 1234
# Default opset of the rows: the newest both onnx and singa know.
NEWEST = min(onnx.defs.onnx_opset_version(), _singa.LATEST_OPSET)

NP_DTYPES = {
    "float32": np.float32, "float64": np.float64, "float16": np.float16,
    "bfloat16": ml_dtypes.bfloat16,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "bool": np.bool_, "string": np.object_,
    "float8e4m3fn": ml_dtypes.float8_e4m3fn, "float8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8e5m2": ml_dtypes.float8_e5m2, "float8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4, "float4e2m1": ml_dtypes.float4_e2m1fn,
    "float8e8m0": ml_dtypes.float8_e8m0fnu, "int2": ml_dtypes.int2, "uint2": ml_dtypes.uint2,
}
CARRIER = {1: np.uint8, 2: np.uint16}
SPECIAL = {"bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz",
           "int4", "uint4", "float4e2m1", "float8e8m0", "int2", "uint2"}
# [min, max] of the integer types np.iinfo does not know.
SMALL_INT_RANGE = {"int4": (-8, 7), "uint4": (0, 15), "int2": (-2, 1), "uint2": (0, 3)}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
# What rows of ops that only move tensors (sequences, optionals, control
# flow around Identity) sweep.
SEQ_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int32", "int64", "uint8",
              "bool", "string"]


@dataclasses.dataclass
class T:
    """A tensor of the swept dtype. Float values are uniform in [low, high);
    integer values uniform integers in [low, high] (clipped to the dtype);
    `nonzero` avoids 0, `positive` keeps values > 0."""
    shape: Sequence[int]
    low: float = -3.0
    high: float = 3.0
    nonzero: bool = False
    positive: bool = False
    values: Any = None  # explicit values (cast to the swept dtype)


@dataclasses.dataclass
class V:
    """A fixed tensor, never swept."""
    values: Any
    dtype: Any = np.int64


@dataclasses.dataclass
class Seq:
    """A sequence input. Its T elements are of the swept dtype, V elements
    fixed; `dtype` fixes the element dtype instead (also the type of an
    empty one, which is otherwise the swept dtype)."""
    elements: Sequence = ()
    dtype: str | None = None


@dataclasses.dataclass
class Opt:
    """An optional input holding `value` (T, V or Seq); Opt(None) is an empty
    one, of type optional(tensor) of the swept dtype (optional(seq) with
    seq=True)."""
    value: Any = None
    seq: bool = False


def N(op: str, inputs, outputs, **attrs) -> onnx.NodeProto:
    """A node for G and Case.nodes: inputs and outputs as space-separated
    names (or lists, where a name is "" for an absent input)."""
    if isinstance(inputs, str):
        inputs = inputs.split()
    if isinstance(outputs, str):
        outputs = outputs.split()
    return helper.make_node(op, list(inputs), list(outputs), **_onnx_attrs(attrs))


@dataclasses.dataclass
class G:
    """A graph attribute whose types follow the swept dtype. `inputs` and
    `outputs` are "name" (a tensor of the swept dtype) or "name:type" with
    type a dtype name ("int64", "bool"), "seq" / "seq(int64)" (a sequence of
    the swept / given dtype), "opt" / "opt(seq)" / "opt(int64)", or "?"
    (untyped). Nodes read the graph's inputs and the enclosing graph's
    values (in0.., outer0..)."""
    nodes: Sequence
    inputs: Sequence[str] = ()
    outputs: Sequence[str] = ()
    name: str = "body"

    def build(self, dtype: str) -> onnx.GraphProto:
        return helper.make_graph(list(self.nodes), self.name,
                                 [_value_info(s, dtype) for s in self.inputs],
                                 [_value_info(s, dtype) for s in self.outputs])


@dataclasses.dataclass
class Case:
    op: str
    inputs: list
    attrs: dict = dataclasses.field(default_factory=dict)
    dtypes: Sequence[str] | None = None  # default: what the op claims for its first T input
    opset: int | None = None             # default: the newest
    outputs: int | None = None           # how many outputs to request (default: the op's minimum)
    rtol: float | None = None            # override, with `why`
    atol: float | None = None
    why: str = ""                        # the reason for a tolerance override
    noncontig: bool = True               # also run with non-contiguous T inputs
    grad: bool = True                    # gradient-check the row (False: values at a kink/pole)
    domain: str = ""                     # the op's domain ("" is ai.onnx)
    id: str = ""
    # Model rows (see the module's docstring):
    outer: list = dataclasses.field(default_factory=list)  # specs of graph inputs outer0, ...
    nodes: list = dataclasses.field(default_factory=list)  # nodes before the op's node
    # oracle(inputs, attrs, scope) -> outputs, in place of the reference
    # evaluator: inputs as fed (arrays, lists, None), attrs with graphs as
    # GraphProtos, scope {name: value} of the model's inputs (in0.., outer0..).
    oracle: Any = None

    def name(self, dtype: str) -> str:
        return f"{self.op}-{self.id or _shapes_id(self.inputs)}-{dtype}"


@dataclasses.dataclass
class ErrorCase:
    op: str
    inputs: list
    attrs: dict = dataclasses.field(default_factory=dict)
    error: type = ValueError
    match: str = ""
    dtype: str = "float32"
    opset: int | None = None  # default: the newest
    domain: str = ""
    outputs: int | None = None  # model rows: how many outputs the node has
    outer: list = dataclasses.field(default_factory=list)
    nodes: list = dataclasses.field(default_factory=list)


def _shapes_id(inputs) -> str:
    parts = []
    for x in inputs:
        if isinstance(x, T):
            parts.append("x".join(map(str, x.shape)) or "scalar")
        elif isinstance(x, V):
            parts.append("v")
        elif isinstance(x, Seq):
            parts.append(f"seq{len(x.elements)}")
        elif isinstance(x, Opt):
            parts.append("opt" + ("" if x.value is not None else "none"))
        else:
            parts.append("none")
    return "_".join(parts)


def np_dtype(name: str):
    return NP_DTYPES[name]


def make_array(spec, dtype: str, rng: np.random.Generator) -> np.ndarray | None:
    if spec is None:
        return None
    if isinstance(spec, V):
        return np.array(spec.values, dtype=spec.dtype)
    nd = np_dtype(dtype)
    shape = tuple(spec.shape)
    if spec.values is not None:
        return np.array(spec.values, dtype=np.float64).astype(nd).reshape(shape)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "string":
        return np.array([f"s{int(v)}" for v in rng.integers(0, 10, size=shape).ravel()],
                        dtype=object).reshape(shape)
    if dtype in FLOATS or dtype.startswith("float"):
        low = max(spec.low, 0.1) if spec.positive else spec.low
        v = rng.uniform(low, spec.high, size=shape)
        if spec.nonzero:
            v = np.where(np.abs(v) < 0.1, 0.5, v)
        if dtype == "float8e8m0":
            # Powers of two only, no sign, no zero: magnitudes away from 0.
            v = np.abs(v) + 2.0**-6
        return v.astype(nd)
    lo, hi = int(np.floor(spec.low)), int(np.ceil(spec.high))
    if spec.positive:
        lo = max(lo, 1)
    if dtype in SMALL_INT_RANGE:
        tmin, tmax = SMALL_INT_RANGE[dtype]
    else:
        tmin, tmax = int(np.iinfo(nd).min), int(np.iinfo(nd).max)
    lo, hi = max(lo, tmin), min(hi, tmax)
    v = rng.integers(lo, hi + 1, size=shape)
    if spec.nonzero:
        v = np.where(v == 0, 1, v)
    return v.astype(nd)


def to_singa(a: np.ndarray | None):
    if a is None:
        return None
    if a.dtype == object:
        return _singa.CTensor.from_strings([str(x) for x in a.ravel()], list(a.shape))
    name = dtype_name_of(a.dtype)
    if name in SPECIAL:
        return _singa.CTensor.from_numpy(a.view(CARRIER[a.dtype.itemsize]), name)
    return _singa.CTensor.from_numpy(a)


def dtype_name_of(dt) -> str:
    dt = np.dtype(dt)
    for name, nd in NP_DTYPES.items():
        if name != "string" and np.dtype(nd) == dt:
            return name
    if dt == object:
        return "string"
    raise TypeError(f"no singa dtype for {dt}")


def to_numpy(t) -> np.ndarray:
    name = _singa.dtype_name(t.dtype)
    out = t.numpy()
    if name == "string":
        return np.array(out, dtype=object).reshape(t.shape)
    if name in SPECIAL:
        return np.asarray(out).view(NP_DTYPES[name])
    return np.asarray(out)


def noncontiguous(t):
    """The same values as `t` in a non-contiguous (transposed) layout."""
    if t is None or t.ndim() < 2:
        return t
    perm = list(range(t.ndim()))[::-1]
    return t.permute(perm).contiguous().permute(perm)


def onnx_elem_type(a: np.ndarray) -> int:
    if a.dtype == object:
        return onnx.TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(a.dtype)


# Ops the evaluator lacks, checked as the op that replaced them (same
# semantics) at the first opset that has it.
ORACLE_ALIAS = {"Scatter": ("ScatterElements", 11)}


def run_reference(op: str, arrays: list, attrs: dict, opset: int, n_out: int, domain: str = ""):
    """Runs one node through onnx.reference and returns its outputs."""
    if op in ORACLE_ALIAS:
        op, first = ORACLE_ALIAS[op]
        opset = max(opset, first)
    in_names, feeds, inits = [], {}, []
    for i, a in enumerate(arrays):
        if a is None:
            in_names.append("")
            continue
        name = f"in{i}"
        in_names.append(name)
        feeds[name] = a
    while in_names and in_names[-1] == "":
        in_names.pop()
    out_names = [f"out{i}" for i in range(n_out)]
    node = helper.make_node(op, in_names, out_names, domain=domain, **_onnx_attrs(attrs))
    graph = helper.make_graph(
        [node], "case",
        [helper.make_tensor_value_info(n, onnx_elem_type(feeds[n]), feeds[n].shape) for n in feeds],
        [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in out_names],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    outs = ReferenceEvaluator(model).run(None, feeds)
    return [np.asarray(o) if not isinstance(o, np.ndarray) else o for o in outs]


def _onnx_attrs(attrs: dict) -> dict:
    out = {}
    for k, v in attrs.items():
        if isinstance(v, np.ndarray):
            out[k] = numpy_helper.from_array(v)
        else:
            out[k] = v
    return out


def singa_attrs(attrs: dict) -> dict:
    out = {}
    for k, v in attrs.items():
        if isinstance(v, np.ndarray):
            out[k] = to_singa(v)
        else:
            out[k] = v
    return out


def default_tolerance(dtype: str) -> tuple[float, float]:
    # Each is the round-off of the dtype over a few ulps of accumulated error.
    return {
        "float64": (1e-10, 1e-12),
        "float32": (1e-5, 1e-6),
        "float16": (1e-2, 1e-3),   # float16 has an 11-bit significand
        "bfloat16": (2e-2, 1e-2),  # bfloat16 has an 8-bit significand
    }.get(dtype, (0.0, 0.0))


def assert_close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float, what: str):
    assert got.shape == want.shape, f"{what}: shape {got.shape} != expected {want.shape}"
    if want.dtype == object or got.dtype == object:
        assert got.tolist() == want.tolist(), f"{what}: {got} != {want}"
        return
    if got.dtype in (ml_dtypes.bfloat16,) or dtype_name_of(got.dtype) in SPECIAL:
        got = got.astype(np.float32)
        want = want.astype(np.float32)
    if np.issubdtype(want.dtype, np.floating) or np.issubdtype(got.dtype, np.floating):
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


# ---- model rows: sequences, optionals, graph attributes ------------------------
def is_model_row(case) -> bool:
    """Whether a row (Case or ErrorCase) runs as a model: its op has no
    tensor kernel, or it has a Seq/Opt input, a graph attribute, or
    outer/nodes."""
    schema = _singa.find_op(case.op, case.opset or NEWEST, case.domain)
    if schema is not None and not schema.has_tensor_kernel:
        return True
    return (any(isinstance(x, (Seq, Opt)) for x in case.inputs)
            or any(isinstance(v, (G, onnx.GraphProto)) for v in case.attrs.values())
            or bool(case.outer) or bool(case.nodes))


def elem_type(dtype: str) -> int:
    if dtype == "string":
        return onnx.TensorProto.STRING
    return helper.np_dtype_to_tensor_dtype(np.dtype(NP_DTYPES[dtype]))


def _inner(t: str) -> str:
    return t[t.index("(") + 1:-1] if "(" in t else ""


def type_proto(t: str, dtype: str) -> onnx.TypeProto:
    """The TypeProto of a type string of G (see there), of the swept dtype."""
    if t == "?":
        return onnx.TypeProto()
    if t.startswith("seq"):
        return helper.make_sequence_type_proto(type_proto(_inner(t), dtype))
    if t.startswith("opt"):
        return helper.make_optional_type_proto(type_proto(_inner(t), dtype))
    return helper.make_tensor_type_proto(elem_type(t or dtype), None)


def _value_info(spec: str, dtype: str) -> onnx.ValueInfoProto:
    name, _, t = spec.partition(":")
    return helper.make_value_info(name, type_proto(t, dtype))


def make_value(spec, dtype: str, rng: np.random.Generator):
    """The value of an input spec: an array, a list of arrays (Seq) or None
    (an absent input, or Opt(None))."""
    if isinstance(spec, Seq):
        return [make_array(e, spec.dtype or dtype, rng) for e in spec.elements]
    if isinstance(spec, Opt):
        return make_value(spec.value, dtype, rng)
    return make_array(spec, dtype, rng)


def _array_type(a: np.ndarray) -> onnx.TypeProto:
    return helper.make_tensor_type_proto(onnx_elem_type(a), a.shape)


def input_type(spec, value, dtype: str) -> onnx.TypeProto:
    """The declared type of a model input: of its value, or, for an empty
    sequence or optional, of the swept dtype."""
    if isinstance(spec, Seq):
        elem = onnx_elem_type(value[0]) if value else elem_type(spec.dtype or dtype)
        return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None))
    if isinstance(spec, Opt):
        if spec.value is None:
            return type_proto("opt(seq)" if spec.seq else "opt", dtype)
        return helper.make_optional_type_proto(input_type(spec.value, value, dtype))
    return _array_type(value)


def materialize_attrs(attrs: dict, dtype: str) -> dict:
    """G attributes built as GraphProtos of the swept dtype."""
    return {k: v.build(dtype) if isinstance(v, G) else v for k, v in attrs.items()}


# Ops with variadic outputs: how many the node has by default.
_DEFAULT_OUTPUTS = {
    "If": lambda a: len(a["then_branch"].output),
    "Loop": lambda a: len(a["body"].output) - 1,
    "Scan": lambda a: len(a["body"].output),
    "SequenceMap": lambda a: len(a["body"].output),
    "Gradient": lambda a: len(a["xs"]),
}


def num_outputs(case, attrs: dict) -> int:
    if case.outputs is not None:
        return case.outputs
    if case.op in _DEFAULT_OUTPUTS:
        return _DEFAULT_OUTPUTS[case.op](attrs)
    schema = _singa.find_op(case.op, case.opset or NEWEST, case.domain)
    return max(1, sum(1 for o in schema.outputs if "?" not in o))


@dataclasses.dataclass
class ModelRow:
    """A row as a one-node model, with its feeds."""
    model: onnx.ModelProto
    inputs: list   # the node's input values (None where absent or empty)
    feeds: dict    # {model input name: value}
    attrs: dict    # with graphs as GraphProtos
    num_outputs: int


def build_model(case, dtype: str, rng: np.random.Generator) -> ModelRow:
    """The row as a model: graph inputs in0.. (the node's present inputs) and
    outer0..; `case.nodes`, then the node 'case'; outputs out0.., typed by
    onnx's type inference where it can (element types only)."""
    opset = case.opset or NEWEST
    values = [make_value(spec, dtype, rng) for spec in case.inputs]
    outer = [make_value(spec, dtype, rng) for spec in case.outer]
    attrs = materialize_attrs(case.attrs, dtype)
    n_out = num_outputs(case, attrs)
    in_names, graph_inputs, feeds = [], [], {}
    for i, (spec, v) in enumerate(zip(case.inputs, values)):
        if spec is None:
            in_names.append("")
            continue
        name = f"in{i}"
        in_names.append(name)
        graph_inputs.append(helper.make_value_info(name, input_type(spec, v, dtype)))
        feeds[name] = v
    while in_names and in_names[-1] == "":
        in_names.pop()
    for j, (spec, v) in enumerate(zip(case.outer, outer)):
        name = f"outer{j}"
        graph_inputs.append(helper.make_value_info(name, input_type(spec, v, dtype)))
        feeds[name] = v
    out_names = [f"out{k}" for k in range(n_out)]
    node = helper.make_node(case.op, in_names, out_names, name="case", domain=case.domain,
                            **_onnx_attrs(attrs))
    graph = helper.make_graph(list(case.nodes) + [node], "case", graph_inputs,
                              [helper.make_value_info(n, onnx.TypeProto()) for n in out_names])
    imports = [helper.make_opsetid("", opset if not case.domain else NEWEST)]
    if case.domain:
        imports.append(helper.make_opsetid(case.domain, opset))
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    _type_outputs(model)
    return ModelRow(model, values, feeds, attrs, n_out)


def _strip_shapes(t: onnx.TypeProto) -> None:
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        t.tensor_type.ClearField("shape")
    elif kind == "sequence_type":
        _strip_shapes(t.sequence_type.elem_type)
    elif kind == "optional_type":
        _strip_shapes(t.optional_type.elem_type)


def _type_outputs(model: onnx.ModelProto) -> None:
    """Declares the graph outputs' types (tensor, sequence or optional, with
    their element types) as onnx's type inference gives them."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    except Exception:  # noqa: BLE001 - an op onnx cannot infer: outputs stay untyped
        return
    types = {v.name: v.type for v in list(inferred.graph.output) + list(inferred.graph.value_info)}
    for out in model.graph.output:
        t = types.get(out.name)
        if t is not None and t.WhichOneof("value") is not None:
            out.type.CopyFrom(t)
            _strip_shapes(out.type)


def run_reference_model(row: ModelRow) -> list:
    return list(ReferenceEvaluator(row.model).run(None, row.feeds))


def run_graph(graph: onnx.GraphProto, inputs: list, scope: dict | None = None,
              opset: int | None = None) -> list:
    """Runs a graph attribute through onnx's ReferenceEvaluator (for row
    oracles): `inputs` bind its inputs in order, `scope` the enclosing
    values it reads."""
    scope = scope or {}
    extra = [helper.make_value_info(k, onnx.TypeProto()) for k in scope]
    g = onnx.GraphProto()
    g.CopyFrom(graph)
    g.input.extend(extra)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset or NEWEST)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION)
    feeds = {i.name: v for i, v in zip(graph.input, inputs)}
    feeds.update(scope)
    return list(ReferenceEvaluator(model).run(None, feeds))


def to_singa_value(v):
    """A model input for SingaRep.run: None, a list of CTensors, or a CTensor."""
    if v is None:
        return None
    if isinstance(v, list):
        return [to_singa(e) for e in v]
    return to_singa(v)


def from_singa_value(v):
    """A result of SingaRep.run as numpy: None, a list of arrays, or an array."""
    if v is None:
        return None
    if isinstance(v, list):
        return [to_numpy(e.data) for e in v]
    return to_numpy(v.data)


def run_singa_model(row: ModelRow, runs: int = 2) -> list:
    """The model through sonnx: prepared once, run `runs` times (a plan is
    built on the first run and replayed after); each run's outputs."""
    from singa import sonnx
    rep = sonnx.prepare(row.model)
    feeds = [to_singa_value(row.feeds[i.name]) for i in rep.inputs]
    return [[from_singa_value(o) for o in rep.run(feeds)] for _ in range(runs)]


def _as_oracle_value(v):
    if v is None or isinstance(v, list):
        return v
    a = np.asarray(v)
    if a.dtype.kind == "U":  # the oracle gives numpy str arrays; ours come back as object
        a = a.astype(object)
    return a


def assert_values_close(got, want, rtol: float, atol: float, what: str):
    """Compares a model output: None with None, sequences elementwise (dtype,
    shape, values), tensors as assert_close with equal dtypes."""
    want = _as_oracle_value(want)
    if want is None:
        assert got is None, f"{what}: expected an empty optional, got {got!r}"
        return
    if isinstance(want, list):
        assert isinstance(got, list), f"{what}: expected a sequence, got {type(got).__name__}"
        assert len(got) == len(want), f"{what}: {len(got)} elements != expected {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_values_close(g, w, rtol, atol, f"{what}[{i}]")
        return
    assert isinstance(got, np.ndarray), f"{what}: expected a tensor, got {got!r}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != expected {want.dtype}"
    assert_close(got, want, rtol, atol, what)
