"""The importer and the exporter walk the op registry: src/onnx names no op
type, except where listed below with the reason. The planner's passes
(src/onnx/plan.cc, src/onnx/passes/) are rewrite rules about particular ops
(Conv followed by BatchNormalization, ...) and may name them."""
import os
import re

from singa import _singa

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
ONNX_DIR = os.path.join(ROOT, "src", "onnx")

# (file, op): why that file names the op.
ALLOWED = {
    ("writer.cc", "Identity"): "an exported graph output that is also its input needs a node",
    ("rep.cc", "PlannedRun"): "the internal op the importer registers for its planned runs",
    ("rep.cc", "Reshape"): "after a batch change, a failing run names the Reshapes that "
                           "hard-code the model's own batch",
}


def _sources():
    for dirpath, _, files in os.walk(ONNX_DIR):
        rel = os.path.relpath(dirpath, ONNX_DIR)
        if rel.split(os.sep)[0] == "passes":
            continue
        for f in files:
            if f.endswith((".cc", ".h")) and not f.startswith("plan"):
                yield os.path.join(dirpath, f)


def test_src_onnx_names_no_op_type():
    ops = {s.name for s in _singa.op_schemas()}
    found = []
    for path in _sources():
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                for literal in re.findall(r'"([A-Za-z][A-Za-z0-9]*)"', line):
                    if literal in ops and (os.path.basename(path), literal) not in ALLOWED:
                        found.append(f"{os.path.relpath(path, ROOT)}:{lineno}: \"{literal}\"")
    assert not found, "op types named in src/onnx (use the registry):\n" + "\n".join(found)


def test_control_flow_and_value_ops_are_registered():
    for name in ["If", "Loop", "Scan", "SequenceMap", "SequenceAt", "SequenceConstruct",
                 "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
                 "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement",
                 "OptionalHasElement"]:
        s = _singa.find_op(name)
        assert s is not None and s.has_value_kernel, name
    assert _singa.find_op("If").graph_attributes == ["then_branch", "else_branch"]
    assert _singa.find_op("Loop").graph_attributes == ["body"]
    grad = _singa.find_op("Gradient", 1, "ai.onnx.preview.training")
    assert grad is not None and grad.has_value_kernel
    flex = _singa.find_op("FlexAttention", 1, "ai.onnx.preview")
    assert flex.has_tensor_kernel and flex.has_value_kernel
    assert flex.graph_attributes == ["score_mod", "prob_mod"]
