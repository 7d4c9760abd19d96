"""A mutation campaign against the importer: small valid models of several
kinds are mutated (bytes, dims and data, attributes, graph wiring,
subgraphs, declared inputs) and each mutant is prepared and run, with
generated inputs, in a fresh process. Reports per family how many mutants
crashed (a signal), hung (past --timeout), raised an exception that is not
one of singa's, were refused with a singa error, or ran.

    .venv/bin/python tools/fuzz/mutation_campaign.py --cases 600 --seed 1
    .venv/bin/python tools/fuzz/mutation_campaign.py --keep failures/   # save what failed

Exit status 1 when any mutant crashed, hung or raised a foreign exception."""
import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WORKER = r"""
import json, sys
import numpy as np
from singa import _singa, sonnx
SINGA = tuple(getattr(_singa, n) for n in ("Error", "ShapeError", "DTypeError", "InvalidModel",
                                           "UnsupportedOp", "SingaIOError", "SingaMemoryError"))
data = open(sys.argv[1], "rb").read()
try:
    rep = sonnx.prepare(data)
    inputs = []
    for info in rep.inputs:
        # Symbolic dims 1; declared dims past 64 are cut to 64 (the mutants
        # declare dims of any size; the run then gets inputs that differ).
        dims = [min(d, 64) if d >= 0 else 1 for d in info.dims] if info.has_shape else [2]
        dt = info.dtype or _singa.DType.float32
        name = _singa.dtype_name(dt)
        arr = np.ones(dims, np.float32) if name == "string" or "float8" in name or "int4" in name \
            or name in ("bfloat16", "int2", "uint2", "float4e2m1", "float8e8m0") \
            else np.ones(dims, name if name != "bool" else np.bool_)
        inputs.append([arr] if info.sequence else arr)
    for _ in range(2):
        rep.run(inputs)
    print(json.dumps({"result": "ran"}))
except SINGA as e:
    print(json.dumps({"result": "refused", "type": type(e).__name__}))
except Exception as e:
    print(json.dumps({"result": "foreign", "type": type(e).__name__, "message": str(e)[:300]}))
"""


# ---- seed models -----------------------------------------------------------

def _vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def _init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def seeds():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    cnn = _model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Flatten", ["p"], ["f"]),
         helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)],
        [_vi("x", ["N", 2, 4, 4])], [_vi("y", ["N", 3])],
        [_init("w", w), _init("b", np.zeros(4, np.float32)),
         _init("fw", rng.standard_normal((3, 16)).astype(np.float32)),
         _init("fb", np.zeros(3, np.float32))])
    shapes = _model(
        [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "i0"], ["n"], axis=0),
         helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
         helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
         helper.make_node("Reshape", ["x", "shape"], ["r"]),
         helper.make_node("ReduceSum", ["r", "ax1"], ["y"], keepdims=0)],
        [_vi("x", ["N", 3, 4])], [_vi("y", ["N"])],
        [_init("i0", np.array(0, np.int64)), _init("ax", np.array([0], np.int64)),
         _init("m1", np.array([-1], np.int64)), _init("ax1", np.array([1], np.int64))])
    then = helper.make_graph([helper.make_node("Add", ["x", "one"], ["t"])], "then", [],
                             [_vi("t", [2])], [_init("one", np.ones(2, np.float32))])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [_vi("e", [2])])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc", "x"], ["acc2"]),
         helper.make_node("Identity", ["cond"], ["cond2"])],
        "body", [_vi("iter", [], TensorProto.INT64), _vi("cond", [], TensorProto.BOOL),
                 _vi("acc", [2])],
        [_vi("cond2", [], TensorProto.BOOL), _vi("acc2", [2])])
    control = _model(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         helper.make_node("Greater", ["s", "zero"], ["c"]),
         helper.make_node("If", ["c"], ["i"], then_branch=then, else_branch=other),
         helper.make_node("Loop", ["trip", "t", "i"], ["y"], body=body)],
        [_vi("x", [2])], [_vi("y", [2])],
        [_init("zero", np.array(0, np.float32)), _init("trip", np.array(3, np.int64)),
         _init("t", np.array(True))])
    dtypes = _model(
        [helper.make_node("Cast", ["a"], ["af"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["h"], ["hf"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["af", "hf"], ["s"]),
         helper.make_node("Mul", ["s", "x"], ["m"]),
         helper.make_node("Where", ["mask", "m", "x"], ["y"])],
        [_vi("x", [4])], [_vi("y", [4])],
        [_init("a", np.arange(4, dtype=np.int32)), _init("h", np.ones(4, np.float16)),
         _init("mask", np.array([True, False, True, False]))])
    attn = _model(
        [helper.make_node("MatMul", ["x", "wq"], ["q"]),
         helper.make_node("Transpose", ["q"], ["qt"], perm=[0, 2, 1]),
         helper.make_node("MatMul", ["q", "qt"], ["sc"]),
         helper.make_node("Softmax", ["sc"], ["p"], axis=-1),
         helper.make_node("MatMul", ["p", "q"], ["o"]),
         helper.make_node("LayerNormalization", ["o", "g", "bb"], ["y"], axis=-1)],
        [_vi("x", ["B", "T", 8])], [_vi("y", ["B", "T", 8])],
        [_init("wq", rng.standard_normal((8, 8)).astype(np.float32)),
         _init("g", np.ones(8, np.float32)), _init("bb", np.zeros(8, np.float32))])
    seq = _model(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0),
         helper.make_node("SequenceAt", ["s", "i"], ["a"]),
         helper.make_node("SequenceLength", ["s"], ["n"]),
         helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
        [_vi("x", [3, 2])], [_vi("y", [6]), _vi("a", [2]), _vi("n", [], TensorProto.INT64)],
        [_init("i", np.array(1, np.int64))])
    return {"cnn": cnn, "shapes": shapes, "control": control, "dtypes": dtypes, "attn": attn,
            "sequence": seq}


# ---- mutations ---------------------------------------------------------------

INTS = [0, 1, -1, 2, 3, 7, 255, 2 ** 31 - 1, -2 ** 31, 2 ** 32, 2 ** 40, 2 ** 62, -2 ** 63,
        2 ** 63 - 1]
OPS = ["Add", "Conv", "Reshape", "Gather", "Loop", "If", "Scan", "Split", "Concat", "Pad",
       "Resize", "TopK", "NonZero", "Tile", "Expand", "OneHot", "Range", "ConstantOfShape",
       "Slice", "Transpose", "Einsum", "SequenceAt", "Softmax", "Cast", "Identity", "Unknown"]


def _nodes(g):
    """Every node of g and of its subgraphs, with the graph holding it."""
    for n in g.node:
        yield g, n
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(a.g)


def _graphs(g):
    yield g
    for _, n in _nodes(g):
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield a.g


def mutate_bytes(m, r):
    data = bytearray(m.SerializeToString())
    kind = r.choice(["flip", "truncate", "insert", "splice"])
    if kind == "flip":
        for _ in range(r.randint(1, 8)):
            i = r.randrange(len(data))
            data[i] ^= 1 << r.randrange(8)
    elif kind == "truncate":
        data = data[:r.randrange(len(data))]
    elif kind == "insert":
        i = r.randrange(len(data))
        data[i:i] = bytes(r.randrange(256) for _ in range(r.randint(1, 16)))
    else:
        i, j = sorted(r.randrange(len(data)) for _ in range(2))
        data[i:i] = data[j:j + r.randint(1, 64)]
    return bytes(data)


def mutate_dims(m, r):
    inits = [t for g in _graphs(m.graph) for t in g.initializer]
    t = r.choice(inits)
    kind = r.choice(["dim", "dtype", "data", "external"])
    if kind == "dim" and t.dims:
        t.dims[r.randrange(len(t.dims))] = r.choice(INTS)
    elif kind == "dtype":
        t.data_type = r.choice(list(range(0, 30)))
    elif kind == "data":
        raw = numpy_helper.to_array(t).tobytes()
        t.ClearField("raw_data")
        t.raw_data = raw[:r.randrange(len(raw) + 1)] + bytes(r.randrange(3))
    else:
        t.data_location = TensorProto.EXTERNAL
        for k, v in [("location", r.choice(["w.bin", "../w.bin", "/etc/passwd", "."])),
                     ("offset", str(r.choice(INTS))), ("length", str(r.choice(INTS)))]:
            e = t.external_data.add()
            e.key, e.value = k, v
    return m.SerializeToString()


def mutate_attrs(m, r):
    nodes = [n for _, n in _nodes(m.graph) if n.attribute]
    if not nodes:
        return mutate_graph(m, r)
    n = r.choice(nodes)
    a = r.choice(list(n.attribute))
    if a.type == onnx.AttributeProto.INT:
        a.i = r.choice(INTS)
    elif a.type == onnx.AttributeProto.INTS:
        if a.ints:
            a.ints[r.randrange(len(a.ints))] = r.choice(INTS)
        else:
            a.ints.extend([r.choice(INTS)])
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = r.choice([float("nan"), float("inf"), -1e38, 0.0])
    elif a.type == onnx.AttributeProto.GRAPH:
        a.g.ClearField("output") if r.random() < 0.5 else a.g.ClearField("input")
    else:
        n.attribute.append(helper.make_attribute(r.choice(["axis", "perm", "to", "xyz"]),
                                                 r.choice(INTS)))
    return m.SerializeToString()


def mutate_graph(m, r):
    g, n = r.choice(list(_nodes(m.graph)))
    kind = r.choice(["input", "output", "op", "opset", "drop", "dup"])
    if kind == "input" and n.input:
        n.input[r.randrange(len(n.input))] = r.choice(["", "nothere", n.output[0], "x"])
    elif kind == "output" and n.output:
        n.output[r.randrange(len(n.output))] = r.choice(["", "x", "dup"])
    elif kind == "op":
        n.op_type = r.choice(OPS)
    elif kind == "opset":
        m.opset_import[0].version = r.choice([0, 1, 6, 7, 9, 11, 13, 19, 25, 26, 99, -1])
    elif kind == "drop" and n.input:
        del n.input[r.randrange(len(n.input))]
    else:
        n.input.extend([r.choice(["x", "", "nothere"])])
    return m.SerializeToString()


def mutate_subgraph(m, r):
    graphs = list(_graphs(m.graph))[1:]
    if not graphs:
        return mutate_graph(m, r)
    g = r.choice(graphs)
    kind = r.choice(["inputs", "outputs", "node"])
    if kind == "inputs":
        g.input.append(_vi(f"extra{r.randrange(9)}", [2]))
    elif kind == "outputs" and g.output:
        del g.output[r.randrange(len(g.output))]
    elif g.node:
        n = r.choice(list(g.node))
        n.input.extend(["nothere"]) if r.random() < 0.5 else n.output.extend(["acc"])
    return m.SerializeToString()


def mutate_inputs(m, r):
    vi = r.choice(list(m.graph.input))
    t = vi.type.tensor_type
    if t.HasField("shape") and t.shape.dim:
        d = t.shape.dim[r.randrange(len(t.shape.dim))]
        d.dim_value = r.choice(INTS)
    else:
        t.elem_type = r.choice(list(range(0, 27)))
    return m.SerializeToString()


FAMILIES = {"bytes": mutate_bytes, "dims and data": mutate_dims, "attributes": mutate_attrs,
            "graph": mutate_graph, "subgraphs": mutate_subgraph, "declared inputs": mutate_inputs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=600, help="mutants in all (default 600)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30, help="seconds before a mutant hangs")
    ap.add_argument("--keep", help="folder to save the mutants that crashed, hung or leaked")
    args = ap.parse_args()
    r = random.Random(args.seed)
    models = seeds()
    counts = collections.defaultdict(collections.Counter)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "w.bin"), "wb") as f:
            f.write(b"\0" * 64)
        for name, m in models.items():  # the seeds themselves must run
            path = os.path.join(tmp, f"{name}.onnx")
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            p = subprocess.run([sys.executable, "-c", WORKER, path], capture_output=True, text=True)
            if '"ran"' not in p.stdout:
                sys.exit(f"seed model {name} does not run: {p.stdout}{p.stderr}")
        for i in range(args.cases):
            family = list(FAMILIES)[i % len(FAMILIES)]
            seed_name = r.choice(list(models))
            m = onnx.ModelProto()
            m.CopyFrom(models[seed_name])
            data = FAMILIES[family](m, r)
            path = os.path.join(tmp, f"case{i}.onnx")
            with open(path, "wb") as f:
                f.write(data)
            try:
                p = subprocess.run([sys.executable, "-c", WORKER, path], capture_output=True,
                                   text=True, timeout=args.timeout, cwd=tmp)
                if p.returncode < 0:
                    outcome, detail = "crashed", f"signal {-p.returncode}"
                else:
                    line = (p.stdout.strip().splitlines() or ["{}"])[-1]
                    res = json.loads(line) if line.startswith("{") else {"result": "foreign",
                                                                         "type": p.stderr[-300:]}
                    outcome, detail = res["result"], res.get("type", "") + " " + res.get(
                        "message", "")
            except subprocess.TimeoutExpired:
                outcome, detail = "hung", f"over {args.timeout} s"
            counts[family][outcome] += 1
            if outcome in ("crashed", "hung", "foreign"):
                bad.append((family, seed_name, i, outcome, detail.strip()))
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    with open(os.path.join(args.keep, f"{outcome}-{i}.onnx"), "wb") as f:
                        f.write(data)
    print(f"{'family':<16} {'cases':>6} {'ran':>6} {'refused':>8} {'crashed':>8} {'hung':>6} "
          f"{'foreign':>8}")
    for family in FAMILIES:
        c = counts[family]
        print(f"{family:<16} {sum(c.values()):>6} {c['ran']:>6} {c['refused']:>8} "
              f"{c['crashed']:>8} {c['hung']:>6} {c['foreign']:>8}")
    for b in bad:
        print("  ", *b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
