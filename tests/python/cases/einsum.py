"""Rows for src/ops/einsum.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

CASES += [
    Case("Einsum", [T((2, 3)), T((3, 4))], {"equation": "ij,jk->ik"}, id="matmul"),
    Case("Einsum", [T((2, 3, 4)), T((2, 4, 5))], {"equation": "bij, bjk -> bik"},
         id="batch-matmul-spaces"),
    Case("Einsum", [T((3, 4))], {"equation": "ij->ji"}, id="transpose"),
    Case("Einsum", [T((3, 4))], {"equation": "ij"}, id="implicit-identity"),
    Case("Einsum", [T((3, 4))], {"equation": "ji"}, id="implicit-transpose"),
    Case("Einsum", [T((3, 4))], {"equation": "ij->"}, id="sum-all"),
    Case("Einsum", [T((5,)), T((5,))], {"equation": "i,i"}, id="inner"),
    Case("Einsum", [T((3,)), T((4,))], {"equation": "i,j->ij"}, id="outer"),
    Case("Einsum", [T((2, 3, 3))], {"equation": "...ii->...i"}, id="batch-diagonal"),
    Case("Einsum", [T((3, 3))], {"equation": "ii"}, id="trace"),
    Case("Einsum", [T((2, 1, 3, 4)), T((5, 4, 2))], {"equation": "...ij,...jk->...ik"},
         id="ellipsis-broadcast"),
    Case("Einsum", [T((2, 3)), T((3, 4)), T((4,))], {"equation": "ij,jk,k->i"},
         id="three-operands"),
    Case("Einsum", [T(()), T((3,))], {"equation": ",i->i"}, id="scalar-operand"),
    Case("Einsum", [T((2, 3, 4))], {"equation": "abc->cab"}, id="permute"),
    Case("Einsum", [T((2, 3)), T((3, 4))], {"equation": "Ab,bC->AC"}, id="upper-case"),
    Case("Einsum", [T((0, 3)), T((3, 4))], {"equation": "ij,jk->ik"}, id="empty-out"),
    Case("Einsum", [T((2, 0)), T((0, 4))], {"equation": "ij,jk->ik"}, id="empty-sum"),
    Case("Einsum", [T((2, 3, 4)), T((2, 4, 5))], {"equation": "bij,bjk->bik"}, opset=28,
         id="opset28"),
]

# Gradient-check rows (the rows above with float64 are checked too).
CASES += [
    Case("Einsum", [T((2, 3)), T((4,))], {"equation": "ij,k->i"}, id="grad-summed-only-label"),
    Case("Einsum", [T((1, 3)), T((2, 3))], {"equation": "...j,...j->...j"},
         id="grad-broadcast-ellipsis"),
]

ERROR_CASES += [
    ErrorCase("Einsum", [T((2, 3)), T((4, 5))], {"equation": "ij,jk->ik"}, match="sizes"),
    ErrorCase("Einsum", [T((2, 3))], {"equation": "ijk->i"}, match="does not match"),
    ErrorCase("Einsum", [T((2, 3)), T((3, 4))], {"equation": "ij->i"}, match="terms"),
    ErrorCase("Einsum", [T((2, 3))], {"equation": "ij->iz"}, match="output label"),
    ErrorCase("Einsum", [T((2, 3))], {"equation": "i1->i"}, match="invalid character"),
]
