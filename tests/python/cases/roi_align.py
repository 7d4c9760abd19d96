"""Rows for src/ops/roi_align.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

_ROIS = V([[0.0, 0.0, 4.0, 4.0], [1.2, 0.5, 7.5, 5.8], [3.0, 2.0, 6.0, 6.5]], np.float32)
_BATCH = V([0, 1, 0])
CASES = [
    Case("RoiAlign", [T((2, 3, 8, 8)), _ROIS, _BATCH],
         {"output_height": 2, "output_width": 3, "sampling_ratio": 2}, dtypes=["float32"],
         id="avg"),
    Case("RoiAlign", [T((2, 3, 8, 8)), _ROIS, _BATCH],
         {"output_height": 3, "output_width": 2, "spatial_scale": 0.5}, dtypes=["float32"],
         id="avg_adaptive"),
    Case("RoiAlign", [T((2, 3, 8, 8)), _ROIS, _BATCH],
         {"output_height": 2, "output_width": 2, "mode": "max", "sampling_ratio": 2},
         dtypes=["float32"], id="max"),
    Case("RoiAlign", [T((2, 3, 8, 8)), _ROIS, _BATCH],
         {"output_height": 2, "output_width": 2, "coordinate_transformation_mode":
          "output_half_pixel"}, dtypes=["float32"], id="output_half_pixel"),
    # (No opset 10 row: the oracle applies opset 16's half_pixel default there.)
]

ERROR_CASES = [
    ErrorCase("RoiAlign", [T((2, 3, 8, 8)), V([[0.0, 0.0, 4.0]], np.float32), V([0])],
              match="rois must be"),
    ErrorCase("RoiAlign", [T((2, 3, 8, 8)), V([[0.0, 0.0, 4.0, 4.0]], np.float32), V([0])],
              {"mode": "sum"}, match="mode"),
]

# Small float64 rows for the gradient check of X (test_grads.py).
_ROIS64 = V([[0.5, 0.0, 3.5, 4.0], [1.2, 1.5, 4.5, 3.8]], np.float64)
CASES += [
    Case("RoiAlign", [T((2, 2, 5, 5)), _ROIS64, V([1, 0])],
         {"output_height": 2, "output_width": 2}, dtypes=["float64"], id="grad_avg"),
    Case("RoiAlign", [T((2, 2, 5, 5)), _ROIS64, V([0, 0])],
         {"output_height": 2, "output_width": 3, "mode": "max", "sampling_ratio": 2},
         dtypes=["float64"], id="grad_max"),
]
