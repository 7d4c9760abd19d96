"""The machinery behind the op table (op_cases.py): input generation, the
oracle (onnx's reference evaluator on a one-node model), and comparison.

A row is `Case(op, inputs, attrs=..., ...)`. Inputs are:
  T(shape, ...)   a tensor of the swept dtype (the row runs once per dtype the
                  op claims for that input, or per `dtypes=` of the row)
  V(values, dt)   a fixed tensor (axes, shapes, indices): never swept
  None            an absent optional input
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


def _shapes_id(inputs) -> str:
    parts = []
    for x in inputs:
        if isinstance(x, T):
            parts.append("x".join(map(str, x.shape)) or "scalar")
        elif isinstance(x, V):
            parts.append("v")
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
