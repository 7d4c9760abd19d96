"""Rows for src/ops/optional.cc: Optional, OptionalHasElement and
OptionalGetElement (model rows: optionals in and out of a one-node model)."""
from op_harness import SEQ_DTYPES, Case, ErrorCase, Opt, Seq, T, type_proto


def _optional(inputs, attrs, scope):
    """Optional's result is its input (or empty). onnx's reference evaluator
    wraps it in a list, which reads as a sequence, so this oracle stands in."""
    return [inputs[0] if inputs else None]


CASES = [
    Case("Optional", [T((2, 3))], dtypes=SEQ_DTYPES, oracle=_optional, id="tensor"),
    Case("Optional", [Seq([T((2,)), T((3,))])], dtypes=["float32", "int64", "bool"],
         oracle=_optional, id="seq"),
    Case("Optional", [Seq([])], dtypes=["float32", "int64"], oracle=_optional, id="empty-seq"),
    # No input: an empty optional of the type the attribute gives.
    *[Case("Optional", [], {"type": type_proto("", dt)}, dtypes=[dt], oracle=_optional,
           id="empty") for dt in ("float32", "int64", "bool")],
    Case("Optional", [], {"type": type_proto("seq", "float32")}, dtypes=["float32"],
         oracle=_optional, id="empty-of-seq"),

    Case("OptionalHasElement", [Opt(T((2, 3)))], dtypes=SEQ_DTYPES, id="full"),
    Case("OptionalHasElement", [Opt(None)], dtypes=["float32", "int64", "bool"], id="empty"),
    Case("OptionalHasElement", [Opt(Seq([T((2,))]))], dtypes=["float32", "int64", "bool"],
         id="full-seq"),
    Case("OptionalHasElement", [Opt(Seq([]))], dtypes=["float32", "int64"], id="empty-seq"),
    Case("OptionalHasElement", [Opt(None, seq=True)], dtypes=["float32", "int64"],
         id="empty-of-seq"),
    # Since opset 18 the input may be a plain tensor or sequence, or absent.
    Case("OptionalHasElement", [T((2,))], dtypes=["float32", "int64", "bool"], id="tensor"),
    Case("OptionalHasElement", [Seq([T((2,))])], dtypes=["float32", "int64"], id="seq"),
    Case("OptionalHasElement", [], dtypes=["float32"], id="absent"),

    Case("OptionalGetElement", [Opt(T((2, 3)))], dtypes=SEQ_DTYPES, id="tensor"),
    Case("OptionalGetElement", [Opt(Seq([T((2,)), T((1, 2))]))],
         dtypes=["float32", "int64", "bool"], id="seq"),
    Case("OptionalGetElement", [Opt(Seq([]))], dtypes=["float32", "int64"], id="empty-seq"),
    Case("OptionalGetElement", [T(())], dtypes=["float32", "int64", "bool"], id="plain-tensor"),
    Case("OptionalGetElement", [Seq([T((3,))])], dtypes=["float32", "int64"], id="plain-seq"),
]

ERROR_CASES = [
    ErrorCase("OptionalGetElement", [Opt(None)], match="the optional input is empty"),
    ErrorCase("OptionalGetElement", [Opt(None, seq=True)], match="the optional input is empty"),
]
