"""Fewer garbage collections while one knob move is built: `fewer_collections()`.

A move allocates hundreds of thousands of small objects (TileIR statements and expressions, simulator rows,
view data). With Python's default first threshold (700 net allocations) the collector runs every few hundred
of them; the move's temporaries still alive at that moment are scanned, promoted, scanned again by the older
generations and so bring on full collections, each of which walks every object the memos keep (their
kernels, programs and texts: about 100,000 objects after a few moves). Inside the block the first threshold is
`MOVE_GC_THRESHOLD`, so most temporaries are freed by their reference counts before any collection sees
them; the older thresholds, and what is collected, do not change. A compiler's build does the same (mypy
raises the threshold for its whole run); here it holds for the block alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from .config import MOVE_GC_THRESHOLD

__all__ = ["fewer_collections"]


@contextmanager
def fewer_collections(threshold: int = MOVE_GC_THRESHOLD) -> Iterator[None]:
    """Run the block with the collector's first threshold at least `threshold`, then restore it (nested
    blocks and a disabled collector are left as they are)."""
    old = gc.get_threshold()
    if old[0] >= threshold:
        yield
        return
    gc.set_threshold(threshold, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)
