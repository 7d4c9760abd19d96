"""The include graph follows the layer order of docs/architecture.md: a file
includes only headers of its own layer or of the layers below it, never of a
layer above or of a sibling; public headers (include/) include
no private header (src/), and neither do the binding and the CLI, which are
built on the public API."""
import os
import re

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCANNED = ["include", "src", "python/src", "tools"]

# Bottom up; layers of one rank are siblings and may not include each other.
RANK = {
    "core": 0,
    "kernels": 1,
    "ops": 2,
    "autograd": 3,
    "dist": 4,
    "opt": 5,
    "nn": 6,
    "onnx": 7,  # SONNXModel is an nn::Model
    "umbrella": 8,  # include/singa/singa.h: the C++ API in one header
    "bindings": 9,
    "tools": 9,
}
# Generated at build time (not in the tree): protobuf's C++ for onnx-ml.proto,
# included by src/onnx only.
GENERATED = {"onnx-ml.pb.h": "onnx"}

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(path):
    """The layer of a file, by its path relative to the repository root."""
    parts = path.split("/")
    if parts[:2] == ["include", "singa"]:
        return "umbrella" if len(parts) == 3 else parts[2]
    if parts[:2] == ["python", "src"]:
        return "bindings"
    if parts[0] == "tools":
        return "tools"
    if parts[0] == "src":
        return parts[1]
    raise ValueError(f"{path}: not in a layer")


def resolve(includer, target, root=ROOT):
    """The repository path an `#include "target"` in `includer` names (as the
    compiler looks: the includer's folder, then the build's include paths
    include/ and src/), or None for a generated header."""
    for base in (os.path.dirname(includer), "include", "src"):
        candidate = os.path.normpath(os.path.join(base, target))
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    if target in GENERATED:
        return None
    raise AssertionError(f"{includer}: cannot find the included \"{target}\"")


def sources(root=ROOT):
    for top in SCANNED:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".h", ".hpp", ".cc", ".cpp")):
                    yield os.path.relpath(os.path.join(folder, name), root)


def violations(root=ROOT):
    """One line per include that breaks the layering: 'file:line: ...'."""
    found = []
    for path in sources(root):
        src = layer_of(path)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines = f.readlines()
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            resolved = resolve(path, target, root)
            dst = GENERATED[target] if resolved is None else layer_of(resolved)
            where = f"{path}:{number}: #include \"{target}\""
            if RANK[dst] > RANK[src]:
                found.append(f"{where}: {src} includes {dst}, a layer above it")
            elif RANK[dst] == RANK[src] and dst != src:
                found.append(f"{where}: {src} includes {dst}, a sibling layer")
            if resolved is not None and resolved.startswith("src/"):
                if path.startswith("include/"):
                    found.append(f"{where}: a public header ({src}) includes the private "
                                 f"{resolved} ({dst})")
                elif src in ("bindings", "tools"):
                    found.append(f"{where}: {src} (built on the public API) includes the "
                                 f"private {resolved} ({dst})")
    return found


def test_every_file_has_a_layer():
    for path in sources():
        assert layer_of(path) in RANK, f"{path}: layer {layer_of(path)!r} is not in RANK"


def test_includes_follow_the_layer_order():
    found = violations()
    assert not found, "includes against the layer order:\n" + "\n".join(found)


@pytest.mark.parametrize("path,layer", [
    ("include/singa/core/tensor.h", "core"),
    ("include/singa/ops/export_ctx.h", "ops"),
    ("include/singa/singa.h", "umbrella"),
    ("src/kernels/cpu/loops.h", "kernels"),
    ("src/onnx/writer.cc", "onnx"),
    ("python/src/bindings.cc", "bindings"),
    ("tools/singa/main.cc", "tools"),
])
def test_layer_of(path, layer):
    assert layer_of(path) == layer
