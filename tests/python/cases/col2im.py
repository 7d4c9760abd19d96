"""Rows for src/ops/col2im.cc."""
from op_harness import Case, ErrorCase, T, V

CASES = [
    Case("Col2Im", [T((1, 5, 5)), V([5, 5]), V([1, 5])], id="2d"),
    Case("Col2Im", [T((2, 8, 6)), V([4, 5]), V([2, 2])], {"strides": [1, 2]}, id="2d_channels"),
    Case("Col2Im", [T((1, 4, 36)), V([6, 6]), V([2, 2])], {"pads": [1, 1, 0, 0]}, id="2d_pads"),
    Case("Col2Im", [T((1, 4, 9)), V([5, 5]), V([2, 2])], {"dilations": [2, 2]}, id="2d_dilations"),
    Case("Col2Im", [T((1, 8, 8)), V([3, 3, 3]), V([2, 2, 2])], id="3d"),
]

ERROR_CASES = [
    ErrorCase("Col2Im", [T((1, 5, 4)), V([5, 5]), V([1, 5])], match="number of blocks"),
    ErrorCase("Col2Im", [T((1, 6, 5)), V([5, 5]), V([1, 5])], match="multiple of"),
    ErrorCase("Col2Im", [T((1, 5, 5)), V([5, 5]), V([5])], match="one length"),
]
