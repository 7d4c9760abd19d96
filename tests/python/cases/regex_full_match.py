"""Rows for src/ops/regex_full_match.cc."""
from op_harness import Case, ErrorCase, T, V

_URLS = V([["www.google.com", "www.facebook.com"], ["www.bbc.co.uk", "google.com"]], object)
CASES = [
    Case("RegexFullMatch", [_URLS], {"pattern": r"www\.[\w.-]+\.\bcom\b"}),
    Case("RegexFullMatch", [V(["a@gmail.com", "b@hotmail.com", "x", ""], object)],
         {"pattern": r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)"}, id="email"),
    Case("RegexFullMatch", [V(["abc", "ab", "abcabc", ""], object)], {"pattern": "(abc)*"},
         id="star"),
    Case("RegexFullMatch", [T((2, 3))], {"pattern": "s[0-4]"}, dtypes=["string"], id="random"),
    Case("RegexFullMatch", [T((0, 2))], {"pattern": "a"}, dtypes=["string"], id="empty"),
]
ERROR_CASES = [
    ErrorCase("RegexFullMatch", [T((2,))], {"pattern": "(a"}, dtype="string", match="pattern"),
    ErrorCase("RegexFullMatch", [T((2,))], dtype="string", match="pattern"),
]
