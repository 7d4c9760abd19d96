"""The onnx backend test suites run through singa.sonnx.SingaBackend.

Shared by test_backend_suites.py (pytest, against skip_list.txt) and
bench/conformance_counts.py (pass counts for singa and onnxruntime).

Suites: "node" (onnx's generated one-node cases), "simple", "pytorch-converted"
and "pytorch-operator" (model directories shipped with the onnx wheel). Each
case is named "<suite>/<test name>".

Regenerate the skip list from a real run (every failing case, with its reason):
    python tests/conformance/backend_cases.py --write-skip-list
"""
import glob
import os
import re
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.loader import load_model_tests

SUITES = ["node", "simple", "pytorch-converted", "pytorch-operator"]
HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_LIST = os.path.join(HERE, "skip_list.txt")


def load_cases():
    """{"suite/name": onnx TestCase} for every case of SUITES."""
    cases = {}
    for suite in SUITES:
        for case in load_model_tests(kind=suite):
            cases[f"{suite}/{case.name}"] = case
    return cases


def _read_pb(path, type_proto):
    """A test data file as numpy: tensors, and sequences/optionals of them."""
    with open(path, "rb") as f:
        data = f.read()
    which = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if which == "sequence_type":
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        return numpy_helper.to_list(p)
    if which == "optional_type":
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return numpy_helper.to_optional(p)
    p = onnx.TensorProto()
    p.ParseFromString(data)
    return numpy_helper.to_array(p)


def model_and_data(case):
    """(ModelProto or path, [(inputs, expected outputs)]) of a case."""
    if case.model is not None:  # generated node case: in memory
        return case.model, case.data_sets
    path = os.path.join(case.model_dir, "model.onnx")
    model = onnx.load(path, load_external_data=False)
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    in_types = [i.type for i in graph.input if i.name not in inits]
    out_types = [o.type for o in graph.output]
    data_sets = []
    for d in sorted(glob.glob(os.path.join(case.model_dir, "test_data_set_*"))):
        n_in = len(glob.glob(os.path.join(d, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(d, "output_*.pb")))
        ins = [_read_pb(os.path.join(d, f"input_{i}.pb"), in_types[i] if i < len(in_types)
                        else None) for i in range(n_in)]
        outs = [_read_pb(os.path.join(d, f"output_{i}.pb"), out_types[i] if i < len(out_types)
                         else None) for i in range(n_out)]
        data_sets.append((ins, outs))
    return path, data_sets


def _normalize(value):
    """Generated cases may hold TensorProtos and numpy scalars (onnx's
    runner converts them the same way)."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    return value


def _compare_value(what, e, g, rtol, atol):
    """None when value g matches e, else why. Sequences (lists) match element
    by element, an empty optional (None) only None."""
    e = _normalize(e)
    if e is None or g is None:
        return None if e is None and g is None else \
            f"{what}: {'none' if g is None else 'a value'}, expected " + \
            ("none" if e is None else "a value")
    if isinstance(e, list):
        if not isinstance(g, list):
            return f"{what}: a tensor, expected a sequence"
        if len(e) != len(g):
            return f"{what}: a sequence of {len(g)}, expected {len(e)}"
        return _first_difference([f"{what}[{j}]" for j in range(len(e))], e, g, rtol, atol)
    if not isinstance(e, np.ndarray):
        return f"{what}: expected a {type(e).__name__}, not a tensor"
    if isinstance(g, list):
        return f"{what}: a sequence, expected a tensor"
    g = np.asarray(g)
    if e.dtype != g.dtype and not (e.dtype.kind in "OUS" and g.dtype.kind in "OUS"):
        return f"{what}: dtype {g.dtype}, expected {e.dtype}"
    if e.shape != g.shape:
        return f"{what}: shape {g.shape}, expected {e.shape}"
    if e.dtype.kind in "OUSb" or e.dtype.kind in "iu":
        if not np.array_equal(e.astype(object) if e.dtype.kind in "OUS" else e,
                              g.astype(object) if g.dtype.kind in "OUS" else g):
            return f"{what}: values differ"
        return None
    ef, gf = e.astype(np.float64), g.astype(np.float64)
    # As onnx's runner: bfloat16 results are compared to two bfloat16 ulps.
    r = max(rtol, 2**-6) if e.dtype.name == "bfloat16" else rtol
    if not np.allclose(gf, ef, rtol=r, atol=atol, equal_nan=True):
        with np.errstate(invalid="ignore"):
            err = np.nanmax(np.abs(gf - ef)) if ef.size else 0.0
        return f"{what}: max abs error {err:.3g} (rtol {r}, atol {atol})"
    return None


def compare(expected, got, rtol, atol):
    """None when got matches expected (onnx's runner's rule: same count,
    dtype and shape; allclose for numbers, equality otherwise), else why."""
    if len(expected) != len(got):
        return f"{len(got)} outputs, expected {len(expected)}"
    return _first_difference([f"output {i}" for i in range(len(expected))], expected, got,
                             rtol, atol)


def _first_difference(names, expected, got, rtol, atol):
    """Why the first of the paired values differs, or None."""
    for name, e, g in zip(names, expected, got):
        why = _compare_value(name, e, g, rtol, atol)
        if why:
            return why
    return None


def run_case(backend, case):
    """None when the case passes on `backend` (an onnx Backend class), else
    (kind, message): kind is "error" (an exception) or "mismatch"."""
    try:
        model, data_sets = model_and_data(case)
        if isinstance(model, str):
            model = onnx.load(model)  # external data next to the file is loaded here
        rep = backend.prepare(model, "CPU")
        for inputs, expected in data_sets:
            # Twice: singa's first inference run builds the static plan, the
            # second replays it.
            for attempt in ("first run", "second run"):
                got = rep.run([_normalize(x) for x in inputs])
                why = compare(expected, got, case.rtol, case.atol)
                if why:
                    return "mismatch", f"{attempt}: {why}"
    except Exception as e:  # noqa: BLE001 - every failure is reported by its type
        return "error", f"{type(e).__name__}: {e}"
    return None


def op_types(case):
    model, _ = model_and_data(case)
    if isinstance(model, str):
        model = onnx.load(model, load_external_data=False)
    return sorted({n.op_type for n in model.graph.node})


def reason(case, failure):
    """A short reason for the skip list, grouped by cause."""
    kind, msg = failure
    first = msg.splitlines()[0] if msg else ""
    m = re.search(r"op (\S+) of domain (\S+) is not supported", first)
    if m:
        return f"op {m.group(1)} not implemented" + (
            f" (domain {m.group(2)})" if m.group(2) != "ai.onnx" else "")
    m = re.search(r"op (\S+) of domain \S+ is not implemented for opset (\d+)", first)
    if m:
        return f"op {m.group(1)} not implemented for opset {m.group(2)}"
    m = re.search(r"(?:element type|dtype code:?) (\d+)", first)
    if m:
        code = int(m.group(1))
        return f"dtype {onnx.TensorProto.DataType.Name(code).lower()} not supported"
    if "is a graph" in first or "unknown graph attribute" in first:
        return "graph attribute not supported by the op"
    for word, what in (("is a sequence", "sequence types not supported"),
                       ("is optional", "optional types not supported"),
                       ("sparse", "sparse tensors not supported"),
                       ("is a map", "map types not supported")):
        if word in first:
            return what
    if "expected a list" in first or "expected a NoneType" in first:
        return "sequence/optional types not supported"
    ops = ",".join(op_types(case))
    if kind == "mismatch" and case.name.startswith("test_training_dropout"):
        return ("Dropout in training mode: the reference's mask comes from numpy's random "
                "generator, which singa's does not reproduce")
    if kind == "mismatch":
        return f"{ops}: wrong result ({first})"
    first = re.sub(r"\s+", " ", first)
    return f"{ops}: {first[:160]}"


def read_skip_list(path=SKIP_LIST):
    skips = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, why = line.partition("#")
            skips[name.strip()] = why.strip()
    return skips


def write_skip_list(path=SKIP_LIST):
    from singa import sonnx

    cases = load_cases()
    rows = []
    start = time.time()
    for name, case in cases.items():
        failure = run_case(sonnx.SingaBackend, case)
        if failure:
            rows.append((reason(case, failure), name))
    rows.sort(key=lambda r: (r[0], r[1]))
    with open(path, "w") as f:
        f.write("# onnx backend test cases singa does not pass yet, one per line:\n"
                "#   <suite>/<case>  # reason\n"
                "# Generated by `python tests/conformance/backend_cases.py --write-skip-list`\n"
                "# from a real run; delete a line when its case passes (the test says so).\n")
        width = max(len(n) for _, n in rows) if rows else 0
        for why, name in rows:
            f.write(f"{name:<{width}}  # {why}\n")
    print(f"{len(cases) - len(rows)} of {len(cases)} cases pass; {len(rows)} written to "
          f"{path} in {time.time() - start:.0f} s")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write-skip-list"]:
        write_skip_list()
    else:
        print(__doc__)
