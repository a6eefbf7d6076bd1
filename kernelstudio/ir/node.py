"""Graph nodes: frozen, hashable, comparable by structure."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from .ops import OP_INFO, Op, OpInfo

__all__ = ["Node", "Composite"]

_composite_ids = itertools.count()


@dataclass(frozen=True, slots=True)
class Composite:
    """Marks the primitive nodes one composite call (layer_norm, gelu, ...) expanded into."""

    name: str  # "layer_norm", "softmax", "gelu", ...
    uid: int  # one per call; nodes of the same call share it

    @staticmethod
    def new(name: str) -> Composite:
        return Composite(name, next(_composite_ids))


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """One operation in the compute graph.

    `name` is the user's name or "" (the Graph then gives a readable one); `attrs` is a sorted
    tuple of (key, value) pairs with hashable values.
    """

    op: Op
    inputs: tuple[Node, ...]
    shape: tuple[int, ...]
    dtype: str
    attrs: tuple[tuple[str, Any], ...] = ()
    name: str = ""
    composite: Composite | None = None
    _hash: int = field(default=0, repr=False, compare=False)

    def __post_init__(self) -> None:
        h = hash((self.op, tuple(hash(i) for i in self.inputs), self.shape, self.dtype, self.attrs,
                  self.name, self.composite))
        object.__setattr__(self, "_hash", h)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node) or self._hash != other._hash:
            return False
        return (self.op, self.shape, self.dtype, self.attrs, self.name, self.composite) == (
            other.op, other.shape, other.dtype, other.attrs, other.name, other.composite
        ) and self.inputs == other.inputs

    def attr(self, key: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    @property
    def info(self) -> OpInfo:
        return OP_INFO[self.op]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n
