"""Rows for src/ops/string_split.cc."""
from op_harness import Case, ErrorCase, T, V

_WORDS = V([["hello world", "def.net"], ["o n  n x ", "  the quick brown fox"]], object)
CASES = [
    Case("StringSplit", [V(["abc.com", "def.net", "x"], object)], {"delimiter": "."}, outputs=2),
    Case("StringSplit", [V(["o-n-n--x-", "o-n----nx"], object)], {"delimiter": "-"}, outputs=2,
         id="consecutive"),
    Case("StringSplit", [V(["a::b::::c", "::"], object)], {"delimiter": "::"}, outputs=2,
         id="multichar"),
    Case("StringSplit", [_WORDS], outputs=2, id="whitespace"),
    Case("StringSplit", [_WORDS], {"delimiter": ""}, outputs=2, id="empty-delimiter"),
    Case("StringSplit", [_WORDS], {"maxsplit": 1}, outputs=2, id="maxsplit-whitespace"),
    Case("StringSplit", [V(["a.b.c.d", "e"], object)], {"delimiter": ".", "maxsplit": 2},
         outputs=2, id="maxsplit"),
    Case("StringSplit", [V(["", " ", "a"], object)], outputs=2, id="blank"),
    Case("StringSplit", [T((0,))], dtypes=["string"], outputs=2, id="empty"),
]
ERROR_CASES = [
    ErrorCase("StringSplit", [T((2,))], match="not supported"),
    ErrorCase("StringSplit", [T((2,))], {"maxsplit": -1}, dtype="string", match="maxsplit"),
]
