"""Rows for src/ops/string_normalizer.cc.

onnx's reference evaluator also strips accents and removes stopwords inside
space-separated strings, which the spec does not ask for: rows use single
words without accents (and no letters, like German sharp s, whose full case
mapping is longer than the simple one singa applies)."""
from op_harness import Case, ErrorCase, T, V

_DAYS = V(["monday", "Tuesday", "wednesday", "Monday", "THURSDAY"], object)
CASES = [
    Case("StringNormalizer", [_DAYS]),
    Case("StringNormalizer", [_DAYS], {"case_change_action": "LOWER"}, id="lower"),
    Case("StringNormalizer", [_DAYS], {"case_change_action": "UPPER", "stopwords": ["monday"]},
         id="upper-insensitive"),
    Case("StringNormalizer", [_DAYS], {"is_case_sensitive": 1, "stopwords": ["monday"]},
         id="sensitive"),
    Case("StringNormalizer", [V([["monday", "Monday"]], object)],
         {"stopwords": ["MONDAY"], "case_change_action": "LOWER"}, id="all-removed"),
    Case("StringNormalizer", [V([["ΩMEGA", "ПРИВЕТ", "Abc"]], object)],
         {"case_change_action": "LOWER", "stopwords": ["привет"]}, id="unicode-lower"),
    Case("StringNormalizer", [V(["ωmega", "привет"], object)], {"case_change_action": "UPPER"},
         id="unicode-upper"),
]
ERROR_CASES = [
    ErrorCase("StringNormalizer", [T((2, 3))], dtype="string", match="X must be"),
    ErrorCase("StringNormalizer", [T((3,))], {"case_change_action": "TITLE"}, dtype="string",
              match="case_change_action"),
]
