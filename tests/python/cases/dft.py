"""Rows for src/ops/dft.cc (DFT, STFT)."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

_FFT = dict(rtol=1e-4, atol=1e-5,
            why="the oracle is numpy's FFT in the input's precision; singa sums in double")
_F = ["float32", "float64"]

CASES += [
    Case("DFT", [T((2, 8, 1))], **_FFT, dtypes=_F, id="real"),
    Case("DFT", [T((2, 8, 2))], **_FFT, dtypes=_F, id="complex"),
    Case("DFT", [T((2, 6, 2))], **_FFT, dtypes=_F, id="complex-not-pow2"),
    Case("DFT", [T((2, 8, 1)), V(12, np.int64)], **_FFT, dtypes=_F, id="pad"),
    Case("DFT", [T((2, 8, 1)), V(5, np.int64)], **_FFT, dtypes=_F, id="truncate"),
    Case("DFT", [T((3, 4, 5, 2)), None, V(1, np.int64)], **_FFT, dtypes=_F, id="axis1"),
    Case("DFT", [T((3, 4, 5, 2)), None, V(-3, np.int64)], **_FFT, dtypes=_F, id="axis-neg"),
    Case("DFT", [T((2, 8, 2))], {"inverse": 1}, **_FFT, dtypes=_F, id="inverse"),
    Case("DFT", [T((2, 7, 2))], {"inverse": 1}, **_FFT, dtypes=_F, id="inverse-odd"),
    Case("DFT", [T((2, 8, 1))], {"onesided": 1}, **_FFT, dtypes=_F, id="rfft"),
    Case("DFT", [T((2, 9, 1))], {"onesided": 1}, **_FFT, dtypes=_F, id="rfft-odd"),
    Case("DFT", [T((2, 5, 2))], {"onesided": 1, "inverse": 1}, **_FFT, dtypes=_F, id="irfft"),
    Case("DFT", [T((2, 5, 2)), V(9, np.int64)], {"onesided": 1, "inverse": 1}, **_FFT,
         dtypes=_F, id="irfft-odd"),
    Case("DFT", [T((0, 8, 2))], dtypes=_F, id="empty"),
    Case("DFT", [T((2, 8, 2))], {"axis": 1}, opset=17, **_FFT, dtypes=_F, id="opset17"),
    Case("DFT", [T((2, 3, 4, 1))], {"axis": 2}, opset=17, **_FFT, dtypes=_F, id="opset17-axis2"),
    Case("DFT", [T((2, 8, 2))], {"inverse": 1}, opset=17, **_FFT, dtypes=_F, id="opset17-inv"),
]

CASES += [
    Case("STFT", [T((2, 16, 1)), V(4, np.int64), None, V(8, np.int64)], **_FFT, dtypes=_F,
         id="no-window"),
    Case("STFT", [T((2, 16, 1)), V(3, np.int64), T((6,), low=0, high=1)], **_FFT, dtypes=_F,
         id="window"),
    Case("STFT", [T((1, 16, 2)), V(4, np.int64), T((8,), low=0, high=1)], {"onesided": 0},
         **_FFT, dtypes=_F, id="complex"),
    Case("STFT", [T((0, 16, 1)), V(4, np.int64), None, V(8, np.int64)], dtypes=_F, id="empty"),
]

ERROR_CASES += [
    ErrorCase("DFT", [T((2, 8, 3))], match="complex"),
    ErrorCase("DFT", [T((2, 8, 2))], {"onesided": 1}, match="one-sided"),
    ErrorCase("DFT", [T((2, 8, 2)), None, V(2, np.int64)], match="axis"),
    ErrorCase("DFT", [T((2, 8, 2)), V(0, np.int64)], match="dft_length"),
    ErrorCase("STFT", [T((2, 16, 1)), V(4, np.int64)], match="window or a frame_length"),
    ErrorCase("STFT", [T((2, 16, 1)), V(4, np.int64), None, V(20, np.int64)],
              match="frame_length"),
]
