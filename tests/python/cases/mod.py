"""Rows for src/ops/mod.cc."""
import numpy as np

from op_harness import Case, ErrorCase, T, V

CASES = []
ERROR_CASES = []

for _fmod in (0, 1):
    _a = {"fmod": _fmod}
    CASES += [
        Case("Mod", [T((2, 3, 4), low=-9, high=9), T((2, 3, 4), nonzero=True)], attrs=_a),
        Case("Mod", [T((2, 3, 4), low=-9, high=9), T((4,), nonzero=True)], attrs=_a),
        Case("Mod", [T((3, 1), low=-9, high=9), T((1, 4), nonzero=True)], attrs=_a),
        Case("Mod", [T((), low=-9, high=9), T((), nonzero=True)], attrs=_a),
        Case("Mod", [T((0, 3)), T((3,), nonzero=True)], attrs=_a),
        Case("Mod", [T((70000,), low=-9, high=9), T((1,), values=[4])], attrs=_a, id="large"),
        # Every sign combination, and exact multiples (remainder 0).
        Case("Mod", [T((8,), values=[7, -7, 7, -7, 6, -6, 0, 5]),
                     T((8,), values=[3, 3, -3, -3, 3, -3, 2, 5])],
             attrs=_a, dtypes=["int8", "int16", "int32", "int64", "float32", "float64"],
             id="signs"),
        Case("Mod", [T((2, 3), low=-9, high=9), T((3,), nonzero=True)], attrs=_a, opset=10,
             dtypes=["int32", "float32"], id="opset10"),
    ]
CASES += [
    Case("Mod", [T((3,), values=[-128, 127, -128]), T((3,), values=[-1, -1, 3])],
         attrs={"fmod": 1}, dtypes=["int8"], id="int8_min"),
    Case("Mod", [V([-2**63, 5], np.int64), V([-1, -1], np.int64)], attrs={"fmod": 1},
         id="int64_min"),
    Case("Mod", [V([-2**63, 5], np.int64), V([-1, -1], np.int64)], id="int64_min_py"),
    # Floats: division by zero and infinities give what C's fmod gives.
    Case("Mod", [T((4,), values=[5.5, -5.5, np.inf, 3]), T((4,), values=[0, 2, 2, np.inf])],
         attrs={"fmod": 1}, dtypes=["float32", "float64"], id="float_special"),
]

ERROR_CASES += [
    ErrorCase("Mod", [T((2,)), T((2,), values=[0, 1])], match="modulo by zero", dtype="int32"),
    ErrorCase("Mod", [T((2,)), T((2,), values=[0, 1])], attrs={"fmod": 1},
              match="modulo by zero", dtype="uint8"),
    ErrorCase("Mod", [T((2,)), T((2,))], match="not supported", dtype="bool"),
    ErrorCase("Mod", [T((2,)), V([1, 2], np.int64)], match="same dtype"),
]
