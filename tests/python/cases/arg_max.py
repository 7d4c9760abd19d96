"""Rows for src/ops/arg_max.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
ERROR_CASES = []

for _op in ["ArgMax", "ArgMin"]:
    CASES += [
        Case(_op, [T((2, 3, 4))]),
        Case(_op, [T((2, 3, 4))], attrs={"axis": 1}, id="axis1"),
        Case(_op, [T((2, 3, 4))], attrs={"axis": -1, "keepdims": 0}, id="last_nokeep"),
        Case(_op, [T((5,))], attrs={"keepdims": 0}, id="vector_nokeep"),
        Case(_op, [T((3, 5, 300))], attrs={"axis": 1}, id="inner_blocks"),
        Case(_op, [T((0, 3))], attrs={"axis": 1}, id="empty"),
        Case(_op, [T((2, 1, 3))], attrs={"axis": 1}, id="unit_axis"),
        # Ties: the first index, or the last with select_last_index.
        Case(_op, [T((2, 4), values=[1, 3, 3, 0, 2, 2, 1, 2])], attrs={"axis": 1}, id="ties"),
        Case(_op, [T((2, 4), values=[1, 3, 3, 0, 2, 2, 1, 2])],
             attrs={"axis": 1, "select_last_index": 1}, id="ties_last"),
        Case(_op, [T((4, 2), values=[1, 2, 3, 2, 3, 0, 0, 0])],
             attrs={"select_last_index": 1, "keepdims": 0}, id="ties_last_axis0"),
        Case(_op, [T((3, 4))], attrs={"axis": 1}, opset=11, id="opset11"),
    ]

ERROR_CASES += [
    ErrorCase("ArgMax", [T((2, 3))], attrs={"axis": 2}, match="out of range"),
    ErrorCase("ArgMin", [T(())], match="rank >= 1"),
    ErrorCase("ArgMax", [T((0, 3))], match="empty axis"),
    ErrorCase("ArgMin", [T((2, 3))], dtype="bool", match="not supported"),
]
