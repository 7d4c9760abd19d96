"""Writes docs/ops.md, the supported-operator table, from the op registry.

    python tools/gen_op_table.py            # (re)write docs/ops.md  (also: make docs)
    python tools/gen_op_table.py --check    # exit 1 when docs/ops.md is out of date

One row per op (and domain): the opset versions singa registers (a model of
opset N gets the highest version not above N), the dtypes the newest version
accepts, whether it has a backward and whether export writes it.
tests/python/test_docs.py runs the check, so CI fails when an op is added
without regenerating the table.
"""
import argparse
import difflib
import glob
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "docs", "ops.md")

# This checkout's build comes first (python/singa holds the extension after a
# build), not another singa the environment may point to.
if glob.glob(os.path.join(ROOT, "python", "singa", "_singa*.so")):
    sys.path.insert(0, os.path.join(ROOT, "python"))

from singa import _singa  # noqa: E402

# Named sets, so that a row reads "floats, ints" rather than twelve names.
GROUPS = [
    ("floats", ["float16", "bfloat16", "float32", "float64"]),
    ("ints", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]),
    ("float8", ["float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz"]),
]


def dtype_list(dtypes):
    names = [_singa.dtype_name(d) for d in dtypes]
    out = []
    for group, members in GROUPS:
        if all(m in names for m in members):
            out.append(group)
            names = [n for n in names if n not in members]
    return ", ".join(out + names)


def dtypes_cell(schema):
    """Each dtype rule: the inputs it constrains, then the dtypes allowed."""
    rules = schema.dtype_rules
    if len(rules) == 1 and rules[0][1] == [0] and len(schema.inputs) <= 1:
        return dtype_list(rules[0][0])
    parts = []
    for allowed, inputs in rules:
        names = [schema.inputs[i].rstrip("?.") if i < len(schema.inputs) else str(i)
                 for i in inputs]
        parts.append(f"{', '.join(names)}: {dtype_list(allowed)}")
    return "; ".join(parts)


def backward_cell(versions):
    if not versions[-1].has_tensor_kernel:
        # Ops over values run registered ops, which autograd records.
        return "through its ops"
    has = [v.has_backward for v in versions]
    if all(has):
        return "yes"
    if not any(has):
        return "no"
    return "from " + str(min(v.since_version for v in versions if v.has_backward))


def export_cell(versions):
    if versions[-1].domain == "ai.singa" or not versions[-1].has_tensor_kernel:
        return "no"
    return "hook" if any(v.has_export_hook for v in versions) else "yes"


# The table's columns: (header, cell function of the op's registered versions,
# oldest first).
COLUMNS = [
    ("op", lambda vs: vs[-1].name),
    ("domain", lambda vs: vs[-1].domain or "ai.onnx"),
    ("opset versions", lambda vs: ", ".join(str(v.since_version) for v in vs)),
    ("dtypes (newest version)", lambda vs: dtypes_cell(vs[-1])),
    ("backward", backward_cell),
    ("export", export_cell),
]


def render():
    by_op = {}
    for s in _singa.op_schemas():
        by_op.setdefault((s.domain, s.name), []).append(s)
    rows = []
    for key in sorted(by_op, key=lambda k: (k[0] != "", k[0], k[1])):
        versions = sorted(by_op[key], key=lambda s: s.since_version)
        rows.append([fn(versions) for _, fn in COLUMNS])
    n_backward = sum(1 for r in rows if r[4] not in ("no", "through its ops"))
    n_export = sum(1 for r in rows if r[5] != "no")
    nondeterministic = sorted({s.name for s in _singa.op_schemas() if s.nondeterministic})
    lines = [
        "# Supported operators",
        "",
        "Generated from the op registry by `tools/gen_op_table.py` (`make docs`); do not edit.",
        "A model of opset N runs each op's highest registered version not above N.",
        "dtypes: floats = float16, bfloat16, float32, float64; ints = int8..int64, uint8..uint64;",
        "float8 = the four float8 types. backward: whether autograd differentiates the op",
        "(\"through its ops\": control flow and the ops over sequences and optionals run",
        "registered ops, which autograd records). export: whether sonnx.to_onnx writes it",
        "(opsets 11 and newer): yes as recorded, hook through the op's own export where singa's",
        "form differs from ONNX's, no for singa's internal ops and the ops over values.",
        "Nondeterministic (the ONNX planner never folds them into constants): "
        + ", ".join(nondeterministic) + ".",
        "",
        f"{len(rows)} ops, {n_backward} with a backward, {n_export} exported.",
        "",
        "| " + " | ".join(h for h, _ in COLUMNS) + " |",
        "|" + "|".join(" --- " for _ in COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    ap.add_argument("--out", default=OUT)
    args = ap.parse_args()
    text = render()
    if args.check:
        old = open(args.out).read() if os.path.exists(args.out) else ""
        if old != text:
            diff = difflib.unified_diff(old.splitlines(), text.splitlines(), args.out,
                                        "registry", lineterm="", n=0)
            print("\n".join(list(diff)[:40]))
            print(f"{args.out} is out of date: run `make docs` (tools/gen_op_table.py)")
            return 1
        return 0
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
