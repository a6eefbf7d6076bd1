"""One core's simulated events: rows appended as the engine walks, kept in numpy blocks (the steady-state
shortcut copies whole blocks of them)."""

from __future__ import annotations

import bisect
from itertools import chain

import numpy as np

# each pipe's lane name, as msprof's timeline labels its rows
LANES = {"S": "SCALAR", "MTE1": "MTE1", "MTE2": "MTE2", "MTE3": "MTE3", "M": "CUBE", "V": "VECTOR",
         "FIX": "FIXP", "FLOW": "FLOWCTRL", "LAUNCH": "LAUNCH"}

__all__ = ["LANES", "EVENT_COLUMNS", "EventLog"]

# columns of an event row: start, end (cycles), pipe index, static instruction id, tile (outermost
# enclosing loop variable, -1 outside loops), inner (innermost loop variable), bytes, flops, slot
# (queue slot the instruction wrote, else read; -1 for none) and why (what held its start back:
# see `why_code`)
EVENT_COLUMNS = ("start", "end", "pipe", "sid", "tile", "inner", "bytes", "flops", "slot", "why")
_NCOL = len(EVENT_COLUMNS)


class EventLog:
    """Events of one core: a list of rows being appended plus numpy blocks (flushed or copied)."""

    __slots__ = ("raw", "blocks", "ends")

    def __init__(self) -> None:
        self.raw: list[tuple] = []
        self.blocks: list[np.ndarray] = []
        self.ends: list[int] = []  # cumulative row count after each block

    def total(self) -> int:
        return (self.ends[-1] if self.ends else 0) + len(self.raw)

    def flush(self) -> None:
        if self.raw:  # the rows' numbers in one stream: about twice as fast as np.array of the row tuples
            n = len(self.raw) * _NCOL
            self._add(np.fromiter(chain.from_iterable(self.raw), dtype=np.float64, count=n).reshape(-1, _NCOL))
            self.raw.clear()

    def _add(self, a: np.ndarray) -> None:
        self.blocks.append(a)
        self.ends.append((self.ends[-1] if self.ends else 0) + len(a))

    def since(self, pos: int) -> np.ndarray:
        """Rows from absolute row index `pos` to the end."""
        self.flush()
        i = bisect.bisect_right(self.ends, pos)
        if i >= len(self.blocks):
            return np.empty((0, _NCOL))
        start = self.ends[i - 1] if i else 0
        parts = [self.blocks[i][pos - start:]] + self.blocks[i + 1:]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def add_copies(self, seg: np.ndarray, r: int, delta: float, tile_step: np.ndarray,
                   inner_step: np.ndarray) -> None:
        """Append `r` copies of `seg`, copy j shifted by j*delta and its loop columns by j*step."""
        n = len(seg)
        if n == 0 or r <= 0:
            return
        rep = np.tile(seg, (r, 1))
        j = np.repeat(np.arange(1, r + 1, dtype=np.float64), n)
        rep[:, 0] += j * delta
        rep[:, 1] += j * delta
        rep[:, 4] += j * np.tile(tile_step, r)
        rep[:, 5] += j * np.tile(inner_step, r)
        self._add(rep)

    def array(self) -> np.ndarray:
        self.flush()
        if not self.blocks:
            return np.empty((0, _NCOL))
        return self.blocks[0] if len(self.blocks) == 1 else np.concatenate(self.blocks)
