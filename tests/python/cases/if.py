"""Rows for src/ops/if.cc (model rows: the branches are graph attributes
that read the enclosing graph's values outer0, outer1, ...)."""
import numpy as np

from op_harness import SEQ_DTYPES, Case, ErrorCase, G, N, Seq, T, V

NUMERIC = ["float32", "float64", "float16", "int32", "int64", "int8"]

ADD = G([N("Add", "outer0 outer1", "y")], [], ["y"], name="then")
SUB = G([N("Sub", "outer0 outer1", "y")], [], ["y"], name="else")
# The branches' outputs differ in shape (each gives its own outer value and its shape).
FIRST = G([N("Identity", "outer0", "y"), N("Shape", "outer0", "s")], [], ["y", "s:int64"],
          name="then")
SECOND = G([N("Identity", "outer1", "y"), N("Shape", "outer1", "s")], [], ["y", "s:int64"],
           name="else")
# Sequence results.
PAIR = G([N("SequenceConstruct", "outer0 outer0", "s")], [], ["s:seq"], name="then")
ROWS = G([N("SplitToSequence", "outer0", "s", axis=0)], [], ["s:seq"], name="else")
# A nested If in else_branch, reading outer0 / outer1 two graphs down.
NESTED = G([N("If", "outer2", "y", then_branch=SUB.build("float32"),
              else_branch=ADD.build("float32"))], [], ["y"], name="else")

CASES = [
    Case("If", [V(True, np.bool_)], {"then_branch": ADD, "else_branch": SUB},
         outer=[T((2, 3)), T((2, 3))], dtypes=NUMERIC, id="then"),
    Case("If", [V(False, np.bool_)], {"then_branch": ADD, "else_branch": SUB},
         outer=[T((2, 3)), T((2, 3))], dtypes=NUMERIC, id="else"),
    # A one-element [1] cond; the branches give shapes of their own.
    Case("If", [V([True], np.bool_)], {"then_branch": FIRST, "else_branch": SECOND},
         outer=[T((2, 3)), T((4,))], dtypes=SEQ_DTYPES, id="then-two-outputs"),
    Case("If", [V([False], np.bool_)], {"then_branch": FIRST, "else_branch": SECOND},
         outer=[T((2, 3)), T((4,))], dtypes=SEQ_DTYPES, id="else-two-outputs"),
    Case("If", [V(True, np.bool_)], {"then_branch": PAIR, "else_branch": ROWS},
         outer=[T((3, 2))], dtypes=["float32", "int64", "bool"], id="then-seq"),
    Case("If", [V(False, np.bool_)], {"then_branch": PAIR, "else_branch": ROWS},
         outer=[T((3, 2))], dtypes=["float32", "int64", "bool"], id="else-seq"),
    Case("If", [V(False, np.bool_)], {"then_branch": ADD, "else_branch": NESTED},
         outer=[T((2, 3)), T((2, 3)), V(True, np.bool_)], dtypes=["float32"], id="nested"),
]

ERROR_CASES = [
    ErrorCase("If", [V(True, np.bool_)], {"then_branch": ADD, "else_branch": SUB}, outputs=2,
              outer=[T((2,)), T((2,))],
              match="a branch takes 0 inputs and gives 1 outputs; it must take none and give 2"),
    ErrorCase("If", [V([True, False], np.bool_)], {"then_branch": ADD, "else_branch": SUB},
              outer=[T((2,)), T((2,))], match="cond must have one element"),
    ErrorCase("If", [Seq([V(True, np.bool_)])], {"then_branch": ADD, "else_branch": SUB},
              outer=[T((2,)), T((2,))], match="cond must be a tensor, got seq"),
]
