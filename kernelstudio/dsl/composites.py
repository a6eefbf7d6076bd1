"""Composite ops: expand into primitive nodes, all tagged with one `Composite` per call.

The expansion is the definition: the golden model, the fusion pass and the code generator all
see the primitive nodes, and each of them rounds to the tensor's dtype like any other node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..core.errors import DTypeError, ShapeError, UnsupportedError
from . import ops as O
from . import shapes as S
from .tensor import Tensor

__all__ = ["softmax", "layer_norm", "rms_norm", "gelu", "silu", "rope"]

_SQRT1_2 = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654
_GELU_CUBIC = 0.044715


def _named(t: Tensor, name: str) -> Tensor:
    return Tensor(dataclasses.replace(t.node, name=name)) if name else t


def _float_input(op: str, x: object) -> Tensor:
    t = O._tensor(op, "x", x)
    S.require_float(op, O._d(t), t.dtype)
    return t


def _eps(op: str, eps: object) -> float:
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise DTypeError(f"{op}: eps must be a real number (e.g. 1e-5), got {eps!r}")
    if not eps >= 0:
        raise UnsupportedError(f"{op}: eps={eps!r} must be >= 0 (it keeps the rsqrt finite)")
    return float(eps)


def _affine(op: str, what: str, p: object, x: Tensor) -> Tensor | None:
    """gamma/beta: a Tensor that broadcasts against x without changing x's shape."""
    if p is None:
        return None
    t = O._tensor(op, what, p)
    S.require_float(op, S.Label(lambda: f"{what} {t.describe()}"), t.dtype)
    try:
        shape = S.broadcast_shapes(op, [(O._d(x), x.shape), (O._d(t), t.shape)])
    except ShapeError:
        shape = None
    if shape != x.shape:
        raise ShapeError(
            f"{op}: {what} {t.describe()} does not broadcast to {x.describe()}; "
            f"{what} must broadcast to x's shape (typically x.shape[axis:])"
        )
    return t


def softmax(x: Tensor, axis: int = -1, name: str | None = None) -> Tensor:
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    nm = O.check_name("softmax", name)
    t = _float_input("softmax", x)
    ax = S.normalize_axis("softmax", axis, t.ndim, O._d(t))
    with O.composite_scope("softmax"):
        m = O.reduce_max(t, ax, keepdims=True)
        e = O.exp(O.sub(t, m))
        s = O.reduce_sum(e, ax, keepdims=True)
        return O.div(e, s, name=nm or None)


def layer_norm(x: Tensor, gamma: Tensor | None = None, beta: Tensor | None = None,
               axis: int | Sequence[int] = -1, eps: float = 1e-5, name: str | None = None) -> Tensor:
    """(x - mean) * rsqrt(var + eps) [* gamma] [+ beta], statistics over `axis`."""
    nm = O.check_name("layer_norm", name)
    t = _float_input("layer_norm", x)
    axes = S.normalize_axes("layer_norm", axis, t.ndim, O._d(t))
    e = _eps("layer_norm", eps)
    g = _affine("layer_norm", "gamma", gamma, t)
    b = _affine("layer_norm", "beta", beta, t)
    with O.composite_scope("layer_norm"):
        mean = O.reduce_mean(t, axes, keepdims=True)
        d = O.sub(t, mean)
        var = O.reduce_mean(O.square(d), axes, keepdims=True)
        y = O.mul(d, O.rsqrt(O.add(var, e)))
        if g is not None:
            y = O.mul(y, g)
        if b is not None:
            y = O.add(y, b)
        return _named(y, nm)


def rms_norm(x: Tensor, gamma: Tensor | None = None, axis: int | Sequence[int] = -1, eps: float = 1e-6,
             name: str | None = None) -> Tensor:
    """x * rsqrt(mean(x^2) + eps) [* gamma], statistics over `axis`."""
    nm = O.check_name("rms_norm", name)
    t = _float_input("rms_norm", x)
    axes = S.normalize_axes("rms_norm", axis, t.ndim, O._d(t))
    e = _eps("rms_norm", eps)
    g = _affine("rms_norm", "gamma", gamma, t)
    with O.composite_scope("rms_norm"):
        ms = O.reduce_mean(O.square(t), axes, keepdims=True)
        y = O.mul(t, O.rsqrt(O.add(ms, e)))
        if g is not None:
            y = O.mul(y, g)
        return _named(y, nm)


def gelu(x: Tensor, approximate: str = "none", name: str | None = None) -> Tensor:
    """GELU: exact ``x*0.5*(1+erf(x/sqrt(2)))`` or ``approximate="tanh"``
    ``0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))``."""
    nm = O.check_name("gelu", name)
    if not isinstance(approximate, str) or approximate not in ("none", "tanh"):
        raise UnsupportedError(f"gelu: approximate={approximate!r} is not one of 'none', 'tanh'")
    t = _float_input("gelu", x)
    with O.composite_scope("gelu"):
        if approximate == "none":
            half_x = O.mul(t, 0.5)
            y = O.mul(half_x, O.add(O.erf(O.mul(t, _SQRT1_2)), 1.0))
        else:
            cube = O.mul(O.square(t), t)
            inner = O.mul(O.add(t, O.mul(cube, _GELU_CUBIC)), _SQRT_2_OVER_PI)
            y = O.mul(O.mul(t, 0.5), O.add(O.tanh(inner), 1.0))
        return _named(y, nm)


def silu(x: Tensor, name: str | None = None) -> Tensor:
    """x * sigmoid(x)."""
    nm = O.check_name("silu", name)
    t = _float_input("silu", x)
    with O.composite_scope("silu"):
        return O.mul(t, O.sigmoid(t), name=nm or None)


_ROPE_LAYOUTS = ("half", "interleave")


def rope(x: Tensor, sin: Tensor, cos: Tensor, layout: str = "half", name: str | None = None) -> Tensor:
    """Rotary position embedding of the last axis of `x` (width D, even), with `sin` and `cos` of the full
    rotary width D (CANN's ropeSin / ropeCos of MlaProlog: (T, Dr); they broadcast against x, e.g. (T, D)
    for x of (T, D) or (T, 1, D) for x of (T, heads, D)).

    layout="half" (GPT-NeoX / Llama, CANN's rotate_half mode):
        out = x * cos + rotate_half(x) * sin,  rotate_half(x) = concat([-x[..., D/2:], x[..., :D/2]])
    built from split / neg / concat and elementwise ops.

    layout="interleave" (pairs (2i, 2i+1), the RoFormer form):
        out[2i]   = x[2i]   * cos[2i]   - x[2i+1] * sin[2i]
        out[2i+1] = x[2i+1] * cos[2i+1] + x[2i]   * sin[2i+1]
    built by viewing the last axis as D/2 pairs (reshape to [..., D/2, 2]) and splitting the pairs into
    their even and odd elements: correct, but each element moves in a burst of its own (the simulator
    charges it), so prefer "half" with a weight permutation where the model allows it.
    """
    nm = O.check_name("rope", name)
    t = _float_input("rope", x)
    if not isinstance(layout, str) or layout not in _ROPE_LAYOUTS:
        raise UnsupportedError(f"rope: layout={layout!r} is not one of 'half', 'interleave'")
    if t.ndim < 1 or t.shape[-1] % 2:
        raise ShapeError(f"rope: the last axis of {t.describe()} must have an even width D (pairs rotate); "
                         "pad or split the head so D is even")
    d = t.shape[-1]
    tabs = []
    for what, v in (("sin", sin), ("cos", cos)):
        tab = O._tensor("rope", what, v)
        S.require_float("rope", S.Label(lambda tab=tab, what=what: f"{what} {tab.describe()}"), tab.dtype)
        if tab.ndim < 1 or tab.shape[-1] != d:
            raise ShapeError(
                f"rope: {what} {tab.describe()} must have the full rotary width {d} of x {t.describe()} in its "
                f"last axis (CANN's ropeSin/ropeCos are (T, Dr)); for a table of D/2 = {d // 2} angles, "
                f"concat([{what}, {what}], axis=-1) for layout='half'")
        try:
            shape = S.broadcast_shapes("rope", [(O._d(t), t.shape), (O._d(tab), tab.shape)])
        except ShapeError:
            shape = None
        if shape != t.shape:
            raise ShapeError(f"rope: {what} {tab.describe()} does not broadcast to x {t.describe()}; reshape it "
                             f"to x's shape or one that broadcasts to it (e.g. (T, 1, {d}) for x (T, heads, {d}))")
        tabs.append(tab)
    s_, c_ = tabs
    with O.composite_scope("rope"):
        if layout == "half":
            x1, x2 = O.split(t, 2, axis=-1)
            rot = O.concat([O.neg(x2), x1], axis=-1)
            return _named(O.add(O.mul(t, c_), O.mul(rot, s_)), nm)
        lead = t.shape[:-1]
        pairs = lead + (d // 2, 2)

        def halves(v: Tensor) -> tuple[Tensor, Tensor]:
            full = O.broadcast_to(v, t.shape) if v.shape != t.shape else v
            ev, od = O.split(O.reshape(full, pairs), 2, axis=-1)
            return ev, od

        xe, xo = halves(t)
        se, so = halves(s_)
        ce, co = halves(c_)
        oe = O.sub(O.mul(xe, ce), O.mul(xo, se))
        oo = O.add(O.mul(xo, co), O.mul(xe, so))
        return _named(O.reshape(O.concat([oe, oo], axis=-1), t.shape), nm)
