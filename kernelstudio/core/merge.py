"""The merge of two sorted runs of (key, index) pairs, shared by the interpreter and the tests.

`merge_runs` is what the TileIR's `MrgSort` computes per row: the first `first` columns are one run, the rest
the other, each sorted by key (ascending, or descending with `largest`) with equal keys by increasing index;
the result is the pairs of both runs in that order. Ties compare the indices, so the order is total (indices
are distinct) and merging the runs of a stable sort gives the stable sort of their union.
"""

from __future__ import annotations

import numpy as np

__all__ = ["merge_runs"]


def merge_runs(keys: np.ndarray, indices: np.ndarray, first: int,
               largest: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(keys, indices) of each row's two runs merged (module doc); 2-D [rows, cols] in and out."""
    k = np.asarray(keys, dtype=np.float32)
    i = np.asarray(indices, dtype=np.int32)
    if k.shape != i.shape or k.ndim != 2:
        raise ValueError(f"merge_runs: keys {k.shape} and indices {i.shape} must be equal 2-D shapes")
    if not 0 <= first <= k.shape[1]:
        raise ValueError(f"merge_runs: first={first} outside the row of {k.shape[1]}")
    by = -k.astype(np.float64) if largest else k.astype(np.float64)
    order = np.lexsort((i, by), axis=-1)
    return np.take_along_axis(k, order, axis=-1), np.take_along_axis(i, order, axis=-1)
