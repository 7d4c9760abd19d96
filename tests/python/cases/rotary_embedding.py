"""Rows for src/ops/rotary_embedding.cc."""
from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

POS = V([[0, 1, 2], [4, 2, 0]])


def rows(*args, **kw):
    """float32/float16 at the default tolerance; bfloat16 at a wider one."""
    why = ("each product is rounded to bfloat16 before the sum, as the spec's reference "
           "does; the oracle here computes in float32, and products up to ~9 carry half an "
           "ulp (0.03) each")
    return [Case(*args, dtypes=["float32", "float16"], **kw),
            Case(*args, dtypes=["bfloat16"], rtol=2e-2, atol=6e-2, why=why, **kw)]


CASES += [
    *rows("RotaryEmbedding", [T((2, 2, 3, 8)), T((5, 4)), T((5, 4)), POS], id="4d-pos"),
    *rows("RotaryEmbedding", [T((2, 2, 3, 8)), T((5, 4)), T((5, 4)), POS],
         {"interleaved": 1}, id="4d-interleaved"),
    *rows("RotaryEmbedding", [T((2, 3, 16)), T((5, 4)), T((5, 4)), POS], {"num_heads": 2},
         id="3d"),
    *rows("RotaryEmbedding", [T((2, 2, 3, 8)), T((2, 3, 4)), T((2, 3, 4))], id="no-pos"),
    *rows("RotaryEmbedding", [T((2, 2, 3, 8)), T((2, 3, 2)), T((2, 3, 2))],
         {"rotary_embedding_dim": 4}, id="partial"),
    *rows("RotaryEmbedding", [T((2, 3, 16)), T((5, 2)), T((5, 2)), POS],
         {"num_heads": 2, "rotary_embedding_dim": 4, "interleaved": 1},
         id="3d-partial-interleaved"),
    *rows("RotaryEmbedding", [T((0, 2, 3, 8)), T((0, 3, 4)), T((0, 3, 4))], id="empty"),
]

ERROR_CASES += [
    ErrorCase("RotaryEmbedding", [T((2, 3, 16)), T((5, 4)), T((5, 4)), POS],
              match="num_heads"),
    ErrorCase("RotaryEmbedding", [T((2, 2, 3, 8)), T((5, 3)), T((5, 3)), POS],
              match="caches"),
    ErrorCase("RotaryEmbedding", [T((2, 2, 3, 8)), T((2, 3, 4)), T((2, 3, 4))],
              {"rotary_embedding_dim": 3}, match="even"),
    ErrorCase("RotaryEmbedding", [T((2, 2, 3, 8)), T((2, 3, 4)), T((2, 3, 3))], match="differ"),
]
