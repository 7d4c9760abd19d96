"""Rows for src/ops/identity.cc (sequences and empty optionals pass through
its value kernel: model rows)."""
from op_harness import Case, Opt, Seq, T

CASES = [
    Case("Identity", [T((2, 3, 4))]),
    Case("Identity", [T(())], dtypes=["float32", "string", "bool"]),
    Case("Identity", [T((0, 3))], dtypes=["float32"]),
    Case("Identity", [T((2, 3))], opset=11, dtypes=["float32"], id="opset11"),
    Case("Identity", [Seq([T((2,)), T((3, 1))])], dtypes=["float32", "int64", "bool"], id="seq"),
    Case("Identity", [Seq([])], dtypes=["float32"], id="empty-seq"),
    Case("Identity", [Opt(T((2,)))], dtypes=["float32"], id="optional"),
    # onnx's reference evaluator cannot return an empty optional from Identity.
    Case("Identity", [Opt(None)], dtypes=["float32"], oracle=lambda x, attrs, scope: [x[0]],
         id="empty-optional"),
]
