"""singa.data: mini-batches of numpy arrays.

    from singa import data, tensor
    train = data.batches(x_train, y_train, batch_size=64, shuffle=True, drop_last=True, seed=0)
    for epoch in range(epochs):
        for xb, yb in train:                 # a new order each pass (epoch)
            tx.copy_from_numpy(xb)
            ty.copy_from_numpy(yb)
            out, loss = m(tx, ty)
    len(train)                               # batches per pass
    for xb in data.batches(x_test, batch_size=256):
        ...                                  # one array: the batches are arrays

`batches(*arrays, ...)` returns a Batches: an iterable over the arrays'
rows (their first axis, of the same length) in batches of batch_size, as a
tuple with one array per given array (the array itself when only one is
given). Iterating it again is another pass; with shuffle each pass takes a
new permutation from the Batches' own random generator (seed: an int or a
numpy Generator; None draws a fresh seed), so a seeded Batches gives the
same sequence of orders every run. drop_last leaves out the last, smaller
batch: graph mode captures one step per input shape, so training in graph
mode uses full batches. The arrays are not copied: an unshuffled batch is a
view of them, a shuffled one a copy of its rows.
"""
import numbers

import numpy as np

__all__ = ["Batches", "batches"]


class Batches:
    """The batches of `arrays`; see the module documentation and batches()."""

    def __init__(self, arrays, batch_size, shuffle=False, drop_last=False, seed=None):
        if not arrays:
            raise TypeError("batches: give at least one array")
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
                or batch_size <= 0:
            raise ValueError(f"batches: batch_size must be a positive integer, got {batch_size!r}")
        self.arrays = [np.asarray(a) for a in arrays]
        for i, a in enumerate(self.arrays):
            if a.ndim == 0:
                raise ValueError(f"batches: array {i} is a scalar; batches are taken along the "
                                 f"first axis")
        lengths = [len(a) for a in self.arrays]
        if len(set(lengths)) > 1:
            raise ValueError(f"batches: the arrays must have the same length (first axis), got "
                             f"{lengths}")
        self.num_samples = lengths[0]
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def __len__(self):
        """The number of batches of one pass."""
        if self.drop_last:
            return self.num_samples // self.batch_size
        return -(-self.num_samples // self.batch_size)

    def __iter__(self):
        order = self.rng.permutation(self.num_samples) if self.shuffle else None
        for b in range(len(self)):
            lo = b * self.batch_size
            hi = min(lo + self.batch_size, self.num_samples)
            rows = slice(lo, hi) if order is None else order[lo:hi]
            out = tuple(a[rows] for a in self.arrays)
            yield out[0] if len(out) == 1 else out


def batches(*arrays, batch_size=64, shuffle=False, drop_last=False, seed=None):
    """A Batches over `arrays` (numpy arrays or what np.asarray takes, of the
    same length): iterate it for one pass of batches of batch_size rows,
    each a tuple of arrays (the array itself for a single array).
    shuffle: a new random order each pass, drawn from seed (an int, a
    numpy Generator, or None for a fresh one). drop_last: leave out the
    last batch when it is smaller than batch_size. len() is the number of
    batches of a pass."""
    return Batches(arrays, batch_size, shuffle, drop_last, seed)
