"""The grouped matmul of MoE experts (`ks.grouped_matmul`): its group sizes from a group list, and its golden rule.

x [M, K] holds the tokens' rows grouped by expert (group 0's rows first), weights [E, K, N] one matrix per
expert, group_list [E] the groups' sizes as run-time data: "count" (row counts) or "cumsum" (each group's end
row, non-decreasing). Rows [start_g, start_g + count_g) of the result are x's same rows @ weights[g]; rows past
the groups' total are zero.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.errors import InputError
from .node import Node

__all__ = ["GROUP_LIST_TYPES", "group_counts", "grouped_matmul_rule", "random_group_list"]

GROUP_LIST_TYPES = ("count", "cumsum")


def group_counts(group_list: np.ndarray, list_type: str, rows: int, who: str = "grouped_matmul") -> np.ndarray:
    """The groups' row counts (int64) of a group list, checked: no negative count, a non-decreasing cumsum,
    a total of at most `rows`."""
    g = np.asarray(group_list).reshape(-1).astype(np.int64)
    if list_type == "cumsum":
        if g.size and (g[0] < 0 or (np.diff(g) < 0).any()):
            i = 0 if g[0] < 0 else int(np.flatnonzero(np.diff(g) < 0)[0]) + 1
            raise InputError(f"{who}: group_list (cumsum) must be non-decreasing from 0, but entry {i} is {int(g[i])}"
                             + (f" after {int(g[i - 1])}" if i else "") + "; pass each group's end row")
        counts = np.diff(g, prepend=0)
    else:
        counts = g
        if (counts < 0).any():
            i = int(np.flatnonzero(counts < 0)[0])
            raise InputError(f"{who}: group_list (count) entry {i} is {int(counts[i])}; a group has 0 or more rows")
    total = int(counts.sum())
    if total > rows:
        raise InputError(f"{who}: group_list puts {total} rows in its groups but x has {rows}; the groups' rows "
                         f"must sum to at most {rows}")
    return counts


def grouped_matmul_rule(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    x, w, gl = args
    who = f"grouped_matmul{' ' + n.name if n.name else ''}"
    counts = group_counts(gl, n.attr("group_list_type"), x.shape[0], who)
    out = np.zeros((x.shape[0], w.shape[2]), dtype=np.float32)
    r0 = 0
    for g, c in enumerate(counts.tolist()):
        if c:
            out[r0:r0 + c] = np.matmul(x[r0:r0 + c].astype(np.float32), w[g].astype(np.float32))
        r0 += c
    return out


def random_group_list(rng: np.random.Generator, groups: int, rows: int, list_type: str) -> np.ndarray:
    """A valid group list: `rows` tokens spread over `groups` experts at random (counts, or their cumsum)."""
    counts = np.bincount(rng.integers(0, groups, size=rows), minlength=groups) if groups else np.zeros(0, int)
    return np.cumsum(counts) if list_type == "cumsum" else counts
