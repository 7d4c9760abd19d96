"""Rows for src/ops/tfidf_vectorizer.cc.

onnx's reference evaluator fails on IDF and TFIDF without weights (it takes
len(None)), so those modes have rows with weights only; and it indexes the
weights by output column where the spec (and onnxruntime) index them by pool
n-gram, so weighted rows keep ngram_indexes in pool order (0, 1, 2, ...),
where the two agree."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

# The pool of onnx's backend cases: 1-grams 2 3 5 4, 2-grams (5 6) (7 8) (6 7).
POOL = {"pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7], "ngram_counts": [0, 4],
        "ngram_indexes": [0, 1, 2, 3, 4, 5, 6]}
# 1-grams 1 2, 2-grams (3 4) (1 1), 3-grams (2 3 4) (4 4 4).
POOL3 = {"pool_int64s": [1, 2, 3, 4, 1, 1, 2, 3, 4, 4, 4, 4], "ngram_counts": [0, 2, 6],
         "ngram_indexes": [5, 0, 1, 2, 3, 4]}
SEQ = V([1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8], np.int32)
BATCH = V([[1, 1, 3, 3, 3, 7], [8, 6, 7, 5, 6, 8]], np.int64)


def tf(lo, hi, skip, **kw):
    return {"mode": "TF", "min_gram_length": lo, "max_gram_length": hi, "max_skip_count": skip,
            **POOL, **kw}


INTS = ["int32", "int64"]
CASES = [
    Case("TfIdfVectorizer", [SEQ], tf(2, 2, 0), id="bigrams"),
    Case("TfIdfVectorizer", [SEQ], tf(2, 2, 5), id="bigrams-skip5"),
    Case("TfIdfVectorizer", [SEQ], tf(1, 2, 5), id="uniandbigrams-skip5"),
    Case("TfIdfVectorizer", [BATCH], tf(1, 2, 5), id="batch-skip5"),
    Case("TfIdfVectorizer", [BATCH], tf(2, 2, 5), id="batch-bigrams-skip5"),
    Case("TfIdfVectorizer", [V([[1, 1, 3], [3, 3, 7]], np.int32)],
         {**tf(2, 2, 0), "ngram_counts": [0, 4], "pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7]},
         id="no-hits"),
    Case("TfIdfVectorizer", [SEQ], {**tf(1, 2, 1), "mode": "IDF",
                                    "weights": [0.5, 1, 2, 4, 8, 16, 32]}, id="idf-weights"),
    Case("TfIdfVectorizer", [SEQ], {**tf(1, 2, 1), "mode": "TFIDF",
                                    "weights": [0.5, 1, 2, 4, 8, 16, 32]}, id="tfidf-weights"),
    # 3-grams, columns out of pool order, and every length range.
    *[Case("TfIdfVectorizer", [T((3, 10), low=0, high=5)],
           {"mode": "TF", "min_gram_length": lo, "max_gram_length": hi, "max_skip_count": skip,
            **POOL3}, dtypes=INTS, id=f"grams{lo}{hi}-skip{skip}")
      for lo, hi, skip in [(1, 1, 0), (1, 3, 0), (2, 3, 1), (3, 3, 2), (1, 3, 3)]],
    # Strings (the harness draws "s0" ... "s9").
    Case("TfIdfVectorizer", [T((2, 12))],
         {"mode": "TFIDF", "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 2,
          "pool_strings": ["s1", "s5", "s7", "s2", "s3", "s4", "s4", "s9", "s0"],
          "ngram_counts": [0, 3], "ngram_indexes": [0, 1, 2, 3, 4, 5],
          "weights": [1.5, 2, 0.5, 3, 1, 1]}, dtypes=["string"], id="strings"),
    Case("TfIdfVectorizer", [T((2, 12))],
         {"mode": "TF", "min_gram_length": 1, "max_gram_length": 2, "max_skip_count": 2,
          "pool_strings": ["s1", "s5", "s7", "s2", "s3", "s4", "s4", "s9", "s0"],
          "ngram_counts": [0, 3], "ngram_indexes": [2, 0, 1, 3, 5, 4]}, dtypes=["string"],
         id="strings-columns"),
    Case("TfIdfVectorizer", [T((7,))],
         {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0,
          "pool_strings": ["s1", "s2"], "ngram_counts": [0], "ngram_indexes": [0, 1]},
         dtypes=["string"], id="strings-1d"),
    Case("TfIdfVectorizer", [T((3, 0))], tf(1, 2, 1), dtypes=INTS, id="empty"),
    Case("TfIdfVectorizer", [T((40, 300), low=0, high=9)], tf(1, 2, 3), dtypes=INTS,
         id="large"),
]
ERROR_CASES = [
    ErrorCase("TfIdfVectorizer", [SEQ], {**tf(2, 2, 0), "mode": "BM25"}, match="mode must be"),
    ErrorCase("TfIdfVectorizer", [SEQ], {**tf(2, 2, 0), "mode": "IDF", "weights": [1.0, 2.0]},
              match="weights has 2 entries for the 7 n-grams"),
    ErrorCase("TfIdfVectorizer", [SEQ], {**tf(2, 2, 0), "pool_strings": ["a"]},
              match="exactly one of pool_int64s and pool_strings"),
    ErrorCase("TfIdfVectorizer", [SEQ], tf(3, 2, 0), match="min_gram_length <= max_gram_length"),
    ErrorCase("TfIdfVectorizer", [SEQ], {**tf(2, 2, 0), "ngram_indexes": [0, 1, 2]},
              match="ngram_indexes has 3 entries for the 7 n-grams"),
    ErrorCase("TfIdfVectorizer", [SEQ], {**tf(2, 2, 0), "ngram_counts": [0, 3]},
              match="not a multiple of 2"),
    ErrorCase("TfIdfVectorizer", [V(["a", "b"], object)], tf(2, 2, 0),
              match="pool_int64s needs an integer X"),
    ErrorCase("TfIdfVectorizer", [V([[[1, 2]]], np.int64)], tf(2, 2, 0), match="X must be"),
    ErrorCase("TfIdfVectorizer", [V([1.0, 2.0], np.float32)], tf(2, 2, 0), match="not supported"),
]
