"""Tensor: the handle DSL users compute with, a thin immutable wrapper around a graph Node."""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from typing import Any

from ..core.errors import UnsupportedError
from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Op
from .shapes import fmt_shape

__all__ = ["Tensor"]

# exponents `x ** p` maps to one DSL op (the same values as NumPy's power, op for op)
_POWERS = {2: "square", 0.5: "sqrt", -0.5: "rsqrt", -1: "reciprocal"}

# `a OP b` written with where(): (whether relu(a - b) or relu(b - a) is the condition, whether a and
# b swap); where(cond, a, b) picks a where cond != 0
_COMPARE = {">": (True, False), "<": (False, False), ">=": (False, True), "<=": (True, True)}


def _difference(p: str, q: str) -> str:
    """`p - q` as text, with a zero operand left out."""
    if q in ("0", "0.0"):
        return p
    return f"-{q}" if p in ("0", "0.0") else f"{p} - {q}"


def _label(v: object) -> str:
    if isinstance(v, Tensor):
        return v.name
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return str(int(v))
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return repr(float(v))
    return type(v).__name__


_OPS: Any = None  # the op constructors (dsl/ops.py, which builds Tensors and so sits above this module)


def bind_ops(ops: Any) -> None:
    """Give Tensor's operators (+, @, .T, ...) the op constructors; dsl/ops.py calls it as it loads."""
    global _OPS
    _OPS = ops


def _ops() -> Any:
    return _OPS


class Tensor:
    """A value in the compute graph: ``.node`` plus its shape and dtype.

    Arithmetic operators build graph nodes (``+ - * / @``, unary ``-``, ``abs()``, ``x ** 2`` ->
    ``square``, ``** 0.5`` -> ``sqrt``, ``** -0.5`` -> ``rsqrt``, ``** -1`` -> ``reciprocal``,
    ``x.T`` -> ``transpose``); Python scalars promote to constants of the tensor's dtype. ``==``
    keeps identity semantics (it does not build a comparison); the hash follows the node, so equal
    subgraphs hash equal. ``< <= > >=``, other powers, indexing and iteration raise
    `UnsupportedError` naming the DSL ops to write instead.
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
    def format(self) -> str:
        """"NZ" for a placeholder stored in FRACTAL_NZ (`placeholder(..., format="NZ")`), else "ND"."""
        return str(self.node.attr("format", "ND")) if self.node.op is Op.PLACEHOLDER else "ND"

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

    def __pow__(self, other: object, modulo: object = None) -> Tensor:
        op = None
        if modulo is None and isinstance(other, numbers.Real) and not isinstance(other, bool):
            op = _POWERS.get(float(other))
        if op is None:
            ops = ", ".join(f"** {k} ({v})" for k, v in _POWERS.items())
            n = self.name
            raise UnsupportedError(
                f"{self.describe()} ** {_label(other)}: the DSL maps only {ops} to an op; write other "
                f"powers with mul ({n} * {n} * {n} for ** 3) or, for positive values, exp(log({n}) * p)"
            )
        return getattr(_ops(), op)(self)

    def __rpow__(self, other: object) -> Tensor:
        raise UnsupportedError(
            f"{_label(other)} ** {self.describe()}: the DSL has no power op with a tensor exponent; "
            f"write c ** {self.name} as exp({self.name} * math.log(c)) for a positive constant c"
        )

    # layout -----------------------------------------------------------------------------
    @property
    def T(self) -> Tensor:  # noqa: N802 - NumPy's name
        """The dims reversed, as NumPy's ``.T``: ``transpose(x)`` (a 0-d or 1-d tensor is returned as is)."""
        if self.ndim < 2:
            return self
        return _ops().transpose(self)

    def __getitem__(self, key: object) -> Tensor:
        raise UnsupportedError(
            f"{self.describe()}[{key!r}]: DSL tensors cannot be indexed or sliced; use gather(x, indices, "
            "axis=0) to pick rows by an int32 index tensor, reshape / transpose / broadcast_to to change the "
            "layout, or give the piece its own placeholder (ks.evaluate(x, inputs) returns NumPy values to index)"
        )

    def __iter__(self) -> Iterator[Tensor]:
        raise UnsupportedError(
            f"{self.describe()} is not iterable: a DSL tensor is a graph value, not data; ks.evaluate(x, inputs) "
            "returns its NumPy values, and gather(x, indices, axis=0) picks rows inside the graph"
        )

    # comparisons (== and != keep identity semantics so tensors stay usable as dict keys) --------
    def _compare(self, sym: str, other: object) -> Tensor:
        lhs, rhs = self.name, _label(other)
        lhs_first, swap = _COMPARE[sym]
        c = f"relu({_difference(lhs, rhs) if lhs_first else _difference(rhs, lhs)})"
        pick = f"where({c}, a, b)" if not swap else f"where({c}, b, a)"
        raise UnsupportedError(
            f"{self.describe()} {sym} {rhs}: the DSL has no comparison op (no bool masks); where(cond, a, b) "
            f"picks a where cond != 0, so write where({lhs} {sym} {rhs}, a, b) as {pick}"
        )

    def __gt__(self, other: object) -> Tensor:
        return self._compare(">", other)

    def __ge__(self, other: object) -> Tensor:
        return self._compare(">=", other)

    def __lt__(self, other: object) -> Tensor:
        return self._compare("<", other)

    def __le__(self, other: object) -> Tensor:
        return self._compare("<=", other)
