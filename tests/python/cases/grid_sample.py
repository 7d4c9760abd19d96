"""Rows for src/ops/grid_sample.cc."""
from op_harness import Case, ErrorCase, T

CASES = []
for _mode in ["linear", "nearest", "cubic"]:
    for _pad in ["zeros", "border", "reflection"]:
        for _align in [0, 1]:
            # Grid positions reach past [-1, 1] so the padding modes matter. float32
            # only: the oracle computes positions and weights in float32; its
            # float32 cubic weights differ from these (double) by a few ulps.
            CASES.append(Case("GridSample", [T((2, 3, 4, 5)), T((2, 3, 4, 2), -1.3, 1.3)],
                              {"mode": _mode, "padding_mode": _pad, "align_corners": _align},
                              dtypes=["float32"], grad=False, rtol=1e-5, atol=1e-5,
                              why="float32 oracle weights", id=f"2d_{_mode}_{_pad}_{_align}"))
CASES += [
    Case("GridSample", [T((1, 2, 3, 4, 5)), T((1, 2, 3, 2, 3), -1.2, 1.2)],
         {"mode": "linear", "padding_mode": "border"}, dtypes=["float32"], grad=False,
         id="3d_linear"),
    Case("GridSample", [T((1, 2, 3, 4, 5)), T((1, 2, 3, 2, 3), -1.2, 1.2)],
         {"mode": "nearest", "align_corners": 1}, dtypes=["float32"], grad=False,
         id="3d_nearest"),
    # (The oracle knows only opset 20's mode names: opset 16's bilinear/bicubic
    # are covered by the conformance cases.)
]

ERROR_CASES = [
    ErrorCase("GridSample", [T((1, 2, 4, 5)), T((1, 3, 4, 3))], match="grid must be"),
    ErrorCase("GridSample", [T((1, 2, 4, 5)), T((1, 3, 4, 2))], {"mode": "area"}, match="mode"),
    ErrorCase("GridSample", [T((1, 2, 4, 5)), T((1, 3, 4, 2))], {"padding_mode": "wrap"},
              match="padding_mode"),
]

# Small float64 rows for the gradient check (test_grads.py); the oracle's
# float32 positions bound the agreement with it to float32's precision.
for _mode in ["linear", "nearest", "cubic"]:
    for _pad in ["zeros", "border", "reflection"]:
        CASES.append(Case("GridSample", [T((1, 2, 3, 4)), T((1, 2, 3, 2), -1.3, 1.3)],
                          {"mode": _mode, "padding_mode": _pad, "align_corners": 0},
                          dtypes=["float64"], rtol=1e-5, atol=1e-5, why="float32 oracle",
                          id=f"grad_{_mode}_{_pad}"))
CASES.append(Case("GridSample", [T((1, 1, 2, 3, 3)), T((1, 2, 2, 2, 3), -1.2, 1.2)],
                  {"mode": "linear", "padding_mode": "reflection", "align_corners": 1},
                  dtypes=["float64"], rtol=1e-5, atol=1e-5, why="float32 oracle",
                  id="grad_3d_linear"))
