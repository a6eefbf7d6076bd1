"""Answers computed once per kernel: several readers (the capacity check, the code generator, the
simulator) ask the same questions of one kernel, and of the `dataclasses.replace` copies the program
holds, which share its buffers, tiling and statements.

`KernelMemo.get(parts, compute)` keys by the identity of `parts` (those shared objects) plus an
optional hashable `extra`; it keeps `parts` alive with the answer, so an id is never reused while it is
cached, and holds the last `size` answers only (a larger heap makes every garbage collection slower).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["KernelMemo"]

T = TypeVar("T")


class KernelMemo:
    def __init__(self, size: int = 16) -> None:
        self.size = size
        self._answers: dict[tuple, tuple[tuple, Any]] = {}

    def get(self, parts: tuple, compute: Callable[[], T], extra: Hashable = None) -> T:
        key = (*map(id, parts), extra)
        hit = self._answers.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], parts, strict=True)):
            return hit[1]
        value = compute()
        if len(self._answers) >= self.size:
            self._answers.clear()
        self._answers[key] = (parts, value)
        return value
