"""Per-op Python overhead: a 2x3 + 2x3 float32 add through singa.tensor,
the raw binding, torch and numpy (median of repeated timeit runs)."""
import timeit

import numpy as np
import torch

from singa import _singa, device, tensor

torch.set_num_threads(1)
device.set_num_threads(1)
a_np = np.random.default_rng(0).random((2, 3), dtype=np.float32)
b_np = a_np + 1
ta, tb = torch.from_numpy(a_np), torch.from_numpy(b_np)
sa, sb = tensor.from_numpy(a_np), tensor.from_numpy(b_np)
ca, cb = sa.data, sb.data
add = _singa.add

CASES = {
    "torch  a + b": lambda: ta + tb,
    "singa  a + b (Tensor)": lambda: sa + sb,
    "singa  a + 1.0 (Tensor)": lambda: sa + 1.0,
    "singa  a += b (Tensor)": None,
    "singa  _singa.add(CTensor)": lambda: add(ca, cb),
    "torch  a += b": None,
    "numpy  a + b": lambda: a_np + b_np,
}


def iadd_singa():
    global sa
    sa += sb


def iadd_torch():
    ta.add_(tb)


CASES["singa  a += b (Tensor)"] = iadd_singa
CASES["torch  a += b"] = iadd_torch

# The machine is shared: interleave the cases and keep each one's best run.
N, ROUNDS = 20_000, 40
best = {name: float("inf") for name in CASES}
for _ in range(ROUNDS):
    for name, fn in CASES.items():
        best[name] = min(best[name], timeit.timeit(fn, number=N) / N * 1e9)
for name, ns in best.items():
    print(f"{name:30s} {ns:8.0f} ns")
