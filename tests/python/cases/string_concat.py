"""Rows for src/ops/string_concat.cc."""
from op_harness import Case, ErrorCase, T, V

CASES = [
    Case("StringConcat", [T((2, 3)), T((2, 3))], dtypes=["string"]),
    Case("StringConcat", [T((2, 3)), T((3,))], dtypes=["string"], id="broadcast"),
    Case("StringConcat", [V(["ab", "", "的"], object), V([""], object)], id="empty-utf8"),
    Case("StringConcat", [T(()), T(())], dtypes=["string"], id="scalar"),
    Case("StringConcat", [T((0, 3)), T((3,))], dtypes=["string"], id="empty"),
]
ERROR_CASES = [
    ErrorCase("StringConcat", [T((2, 3)), T((2, 3))], match="not supported"),
    ErrorCase("StringConcat", [T((2, 3)), T((4,))], dtype="string", match="broadcast"),
]
