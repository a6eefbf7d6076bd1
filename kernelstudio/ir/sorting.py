"""Golden rules of the sort and routing ops: `sort` (stable, either direction) and `histogram` (ids per bin).

The kernels sort in float32 (TopK sorts half or float): an int32 key is exact there when |key| < 2**24,
so the golden model refuses larger int32 keys rather than differ from the kernels.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.errors import InputError
from .node import Node

__all__ = ["sort_rule", "histogram_rule", "INT_KEY_LIMIT"]

INT_KEY_LIMIT = 2**24  # every int32 of smaller magnitude is a float32 exactly


def _who(op: str, n: Node) -> str:
    return f"{op}{' ' + n.name if n.name else ''}"


def sort_rule(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    a, ax = args[0], n.attr("axis")
    if a.dtype.kind in "iu":
        big = np.abs(a) >= INT_KEY_LIMIT
        if big.any():
            pos = tuple(int(i) for i in np.argwhere(big)[0])
            raise InputError(f"{_who('sort', n)}: int32 key {int(a[pos])} at {list(pos)} has magnitude >= 2**24; "
                             "the kernel sorts keys as float32, exact below 2**24: pass smaller keys")
    keys = -a if n.attr("descending") else a  # float32 / int64: negation is exact
    order = np.argsort(keys, axis=ax, kind="stable")  # equal keys keep their order
    return order if n.attr("which") == "indices" else np.take_along_axis(a, order, axis=ax)


def histogram_rule(n: Node, args: Sequence[np.ndarray]) -> np.ndarray:
    ids = np.asarray(args[0]).reshape(-1)
    bins, per = n.attr("bins"), n.attr("per_row") or 1
    bad = (ids < 0) | (ids >= bins)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        where = f"[{i // per}, {i % per}]" if per > 1 else f"[{i}]"
        raise InputError(f"{_who('histogram', n)}: id {int(ids[i])} at {where} is outside [0, {bins}) (the first "
                         f"of {int(bad.sum())} such); pass ids in [0, {bins}) or raise the number of bins")
    return np.bincount(ids, minlength=bins)
