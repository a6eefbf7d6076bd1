"""Tensor: the handle DSL users compute with, a thin immutable wrapper around a graph Node."""

from __future__ import annotations

from typing import Any

from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Op
from .shapes import fmt_shape

__all__ = ["Tensor"]


def _ops() -> Any:
    from . import ops  # ops builds Tensors, so it is imported on first use

    return ops


class Tensor:
    """A value in the compute graph: ``.node`` plus its shape and dtype.

    Arithmetic operators build graph nodes (``+ - * / @``, unary ``-``, ``abs()``); Python
    scalars promote to constants of the tensor's dtype. ``==`` keeps identity semantics (it does
    not build a comparison); the hash follows the node, so equal subgraphs hash equal.
    """

    __slots__ = ("node",)
    __array_ufunc__ = None  # numpy defers to our reflected operators (which then explain the error)

    node: Node

    def __init__(self, node: Node):
        if not isinstance(node, Node):
            raise TypeError(f"Tensor wraps a graph Node, got {type(node).__name__}")
        object.__setattr__(self, "node", node)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError("Tensor is immutable; build a new tensor with an op instead")

    def __delattr__(self, key: str) -> None:
        raise AttributeError("Tensor is immutable")

    def __hash__(self) -> int:
        return hash(self.node)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @property
    def dtype(self) -> str:
        return self.node.dtype

    @property
    def ndim(self) -> int:
        return len(self.node.shape)

    @property
    def op(self) -> Op:
        return self.node.op

    @property
    def name(self) -> str:
        """The user's name, or the name the graph of this tensor gives it (e.g. "matmul", "add_2")."""
        if self.node.name:
            return self.node.name
        return Graph(self.node).name(self.node)

    def describe(self) -> str:
        """``x[64,256] float16``: how messages refer to this tensor."""
        return f"{self.name}{fmt_shape(self.shape)} {self.dtype}"

    def __repr__(self) -> str:
        return f"Tensor({self.name}: {fmt_shape(self.shape)} {self.dtype} = {self.node.op.value})"

    # arithmetic -------------------------------------------------------------------------
    def __add__(self, other: object) -> Tensor:
        return _ops().add(self, other)

    def __radd__(self, other: object) -> Tensor:
        return _ops().add(other, self)

    def __sub__(self, other: object) -> Tensor:
        return _ops().sub(self, other)

    def __rsub__(self, other: object) -> Tensor:
        return _ops().sub(other, self)

    def __mul__(self, other: object) -> Tensor:
        return _ops().mul(self, other)

    def __rmul__(self, other: object) -> Tensor:
        return _ops().mul(other, self)

    def __truediv__(self, other: object) -> Tensor:
        return _ops().div(self, other)

    def __rtruediv__(self, other: object) -> Tensor:
        return _ops().div(other, self)

    def __matmul__(self, other: object) -> Tensor:
        return _ops().matmul(self, other)

    def __rmatmul__(self, other: object) -> Tensor:
        return _ops().matmul(other, self)

    def __neg__(self) -> Tensor:
        return _ops().neg(self)

    def __abs__(self) -> Tensor:
        return _ops().abs(self)

    def abs(self) -> Tensor:
        """Elementwise absolute value (same as ``abs(t)``)."""
        return _ops().abs(self)
