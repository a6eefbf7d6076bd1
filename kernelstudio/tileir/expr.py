"""Integer index expressions of the TileIR: loop variables, tiling constants, + - * // % min max.

Every back end reads them: `evaluate` for the interpreter and simulator, `compile_expr` for fast
repeated evaluation, `to_c` for the code generator. `Load` reads an element of an on-chip buffer
on the scalar unit (GetValue), for index-driven moves such as gather.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["Expr", "Var", "Const", "Bin", "Load", "E", "evaluate", "compile_expr", "to_c",
           "free_vars", "ceil_div", "emin", "emax", "as_expr", "simplify", "has_load", "static_value", "is_multiple"]


# Lowering makes thousands of expressions per kernel: each class sets its slots through the slots' own setters
# (a frozen dataclass's __init__ goes through object.__setattr__ field by field, a third slower).
@dataclass(frozen=True, slots=True)
class Var:
    name: str

    def __init__(self, name: str) -> None:
        _SET_VAR_NAME(self, name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Const:
    value: int

    def __init__(self, value: int) -> None:
        _SET_CONST_VALUE(self, value)

    def __str__(self) -> str:
        return str(self.value)


_SET_VAR_NAME = Var.__dict__["name"].__set__
_SET_CONST_VALUE = Const.__dict__["value"].__set__


@dataclass(frozen=True)
class Bin:
    __slots__ = ("op", "a", "b", "_hash")
    op: str  # one of + - * // % min max
    a: Expr
    b: Expr

    def __init__(self, op: str, a: Expr, b: Expr) -> None:
        _SET_BIN_OP(self, op)
        _SET_BIN_A(self, a)
        _SET_BIN_B(self, b)

    def __hash__(self) -> int:
        # the dataclass hash of (op, a, b), kept: a tree is hashed by every reader that keys a dict with it (the
        # simulator's compiled expressions, the code generator's names), which would walk it every time
        try:
            return self._hash
        except AttributeError:
            h = hash((self.op, self.a, self.b))
            object.__setattr__(self, "_hash", h)
            return h

    def __getstate__(self) -> tuple:
        return self.op, self.a, self.b

    def __setstate__(self, state: tuple) -> None:
        for name, v in zip(("op", "a", "b"), state, strict=True):
            object.__setattr__(self, name, v)

    def __str__(self) -> str:
        if self.op in ("min", "max"):
            return f"{self.op}({self.a}, {self.b})"
        return f"({self.a} {self.op} {self.b})"


@dataclass(frozen=True)
class Load:
    """The element at `index` of on-chip buffer `buf` (its active slot), read by the scalar unit."""

    __slots__ = ("buf", "index", "_hash")
    buf: str
    index: Expr

    def __init__(self, buf: str, index: Expr) -> None:
        _SET_LOAD_BUF(self, buf)
        _SET_LOAD_INDEX(self, index)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            h = hash((self.buf, self.index))
            object.__setattr__(self, "_hash", h)
            return h

    def __getstate__(self) -> tuple:
        return self.buf, self.index

    def __setstate__(self, state: tuple) -> None:
        for name, v in zip(("buf", "index"), state, strict=True):
            object.__setattr__(self, name, v)

    def __str__(self) -> str:
        return f"{self.buf}[{self.index}]"


_SET_BIN_OP, _SET_BIN_A, _SET_BIN_B = (Bin.__dict__[f].__set__ for f in ("op", "a", "b"))
_SET_LOAD_BUF, _SET_LOAD_INDEX = (Load.__dict__[f].__set__ for f in ("buf", "index"))

Expr = Var | Const | Bin | Load

_PY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
       "%": operator.mod, "min": min, "max": max}


def as_expr(x: Expr | int | str) -> Expr:
    t = type(x)
    if t is Const or t is Var or t is Bin or t is Load:
        return x  # type: ignore[return-value]
    if isinstance(x, bool):
        return Const(int(x))
    if isinstance(x, int):
        return Const(x)
    if isinstance(x, str):
        return Var(x)
    raise TypeError(f"not an index expression: {x!r}")


def _fold(op: str, a: Expr, b: Expr) -> Expr:
    ca = a.value if type(a) is Const else None
    cb = b.value if type(b) is Const else None
    if ca is not None and cb is not None:
        return Const(_PY[op](ca, cb))
    if op == "+":
        if ca == 0:
            return b
        if cb == 0:
            return a
    elif op == "-":
        if cb == 0:
            return a
    elif op == "*":
        if ca == 1:
            return b
        if cb == 1:
            return a
        if ca == 0 or cb == 0:
            return Const(0)
    elif op == "//":
        if cb == 1:
            return a
    elif op in ("min", "max") and (a is b or a == b):
        return a
    return Bin(op, a, b)


_EXPR = frozenset({Var, Const, Bin, Load})


# The builders below fold exactly as `_fold` does, each written out for its operator: lowering builds
# thousands of index expressions per kernel, and this is where they are made.
def _pair(a: Expr | int | str, b: Expr | int | str) -> tuple[Expr, Expr]:
    """Both operands as expressions (an int is a Const, without as_expr's checks)."""
    return (Const(a) if type(a) is int else a if type(a) in _EXPR else as_expr(a),
            Const(b) if type(b) is int else b if type(b) in _EXPR else as_expr(b))


def _add(a: Expr | int | str, b: Expr | int | str) -> Expr:
    a, b = _pair(a, b)
    if type(a) is Const:
        if type(b) is Const:
            return Const(a.value + b.value)
        if a.value == 0:
            return b
    elif type(b) is Const and b.value == 0:
        return a
    return Bin("+", a, b)


def _sub(a: Expr | int | str, b: Expr | int | str) -> Expr:
    a, b = _pair(a, b)
    if type(b) is Const:
        if type(a) is Const:
            return Const(a.value - b.value)
        if b.value == 0:
            return a
    return Bin("-", a, b)


def _mul(a: Expr | int | str, b: Expr | int | str) -> Expr:
    a, b = _pair(a, b)
    ca = type(a) is Const
    cb = type(b) is Const
    if ca and cb:
        return Const(a.value * b.value)
    if ca and a.value == 1:
        return b
    if cb and b.value == 1:
        return a
    if (ca and a.value == 0) or (cb and b.value == 0):
        return Const(0)
    return Bin("*", a, b)


def _div(a: Expr | int | str, b: Expr | int | str) -> Expr:
    a, b = _pair(a, b)
    if type(b) is Const:
        if type(a) is Const:
            return Const(a.value // b.value)
        if b.value == 1:
            return a
    return Bin("//", a, b)


def _mod(a: Expr | int | str, b: Expr | int | str) -> Expr:
    a, b = _pair(a, b)
    if type(a) is Const and type(b) is Const:
        return Const(a.value % b.value)
    return Bin("%", a, b)


def _min(a: Expr | int | str, b: Expr | int | str) -> Expr:
    return _extreme("min", min, a, b)


def _max(a: Expr | int | str, b: Expr | int | str) -> Expr:
    return _extreme("max", max, a, b)


def _extreme(op: str, fn: Callable[[int, int], int], a: Expr | int | str, b: Expr | int | str) -> Expr:
    a, b = _pair(a, b)
    if type(a) is Const and type(b) is Const:
        return Const(fn(a.value, b.value))
    if a is b or (type(a) is type(b) and a == b):  # expressions of two classes are never equal
        return a
    return Bin(op, a, b)


class E:
    """Builders that fold constants: E.add(a, b), E.mul(...), ..."""

    add = staticmethod(_add)
    sub = staticmethod(_sub)
    mul = staticmethod(_mul)
    div = staticmethod(_div)
    mod = staticmethod(_mod)
    min = staticmethod(_min)
    max = staticmethod(_max)


def ceil_div(a: Expr | int | str, b: Expr | int | str) -> Expr:
    return _div(_add(a, _sub(b, 1)), b)


emin, emax = _min, _max


def simplify(e: Expr) -> Expr:
    """Fold constants bottom-up."""
    t = type(e)
    if t is Bin:
        a, b = simplify(e.a), simplify(e.b)
        out = _fold(e.op, a, b)
        return e if type(out) is Bin and out.a is e.a and out.b is e.b else out
    if t is Load:
        return Load(e.buf, simplify(e.index))
    return e


def evaluate(e: Expr, env: Mapping[str, int], load: Callable[[str, int], int] | None = None) -> int:
    """Value of `e` with variables from `env`; `load(buf, index)` answers Load nodes."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Bin):
        return _PY[e.op](evaluate(e.a, env, load), evaluate(e.b, env, load))
    if load is None:
        raise ValueError(f"expression {e} reads a buffer but no loader was given")
    return load(e.buf, evaluate(e.index, env, load))


_COMPILED: dict[Expr, Callable[..., int]] = {}


def _py(e: Expr) -> str:
    if isinstance(e, Const):
        return repr(e.value)
    if isinstance(e, Var):
        return f"env[{e.name!r}]"
    if isinstance(e, Bin):
        if e.op in ("min", "max"):
            return f"{e.op}({_py(e.a)}, {_py(e.b)})"
        return f"({_py(e.a)} {e.op} {_py(e.b)})"
    return f"load({e.buf!r}, {_py(e.index)})"


def compile_expr(e: Expr) -> Callable[..., int]:
    """A Python function f(env, load=None) -> int equal to evaluate(e, env, load); cached."""
    f = _COMPILED.get(e)
    if f is None:
        f = eval(f"lambda env, load=None: {_py(e)}")  # noqa: S307 - our own expression text
        if len(_COMPILED) >= 8192:  # a long session meets many expressions: keep the cache bounded
            _COMPILED.clear()
        _COMPILED[e] = f
    return f


def free_vars(e: Expr) -> set[str]:
    out: set[str] = set()
    _free(e, out)
    return out


def _free(e: Expr, out: set[str]) -> None:
    t = type(e)
    if t is Var:
        out.add(e.name)
    elif t is Bin:
        _free(e.a, out)
        _free(e.b, out)
    elif t is Load:
        _free(e.index, out)


def to_c(e: Expr, name: Callable[[str], str] = lambda v: v,
         load: Callable[[str, str], str] = lambda b, i: f"{b}.GetValue({i})") -> str:
    """C++ text of `e`; `name` maps variable names, `load` renders buffer reads. Indices are >= 0
    wherever the TileIR divides, so C's truncating division equals floor division."""
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Var):
        return name(e.name)
    if isinstance(e, Bin):
        a, b = to_c(e.a, name, load), to_c(e.b, name, load)
        if e.op == "min":
            return f"KS_MIN({a}, {b})"
        if e.op == "max":
            return f"KS_MAX({a}, {b})"
        op = "/" if e.op == "//" else e.op
        return f"({a} {op} {b})"
    return load(e.buf, to_c(e.index, name, load))


def has_load(e: Expr) -> bool:
    """Whether `e` reads an on-chip buffer (a Load anywhere in it)."""
    t = type(e)
    if t is Load:
        return True
    return t is Bin and (has_load(e.a) or has_load(e.b))


def static_value(e: Expr, tiling: Mapping[str, int]) -> int | None:
    """The value of `e` if it depends on tiling constants only (no loop variable, no buffer read), else
    None."""
    if has_load(e) or any(v not in tiling for v in free_vars(e)):
        return None
    try:
        return evaluate(e, tiling)
    except ZeroDivisionError:
        return None


def is_multiple(e: Expr, n: int, tiling: Mapping[str, int]) -> bool:
    """Whether `e` is provably a multiple of `n` for every value of its loop variables."""
    v = static_value(e, tiling)
    if v is not None:
        return v % n == 0
    if type(e) is Bin:
        if e.op in ("+", "-", "min", "max"):
            return is_multiple(e.a, n, tiling) and is_multiple(e.b, n, tiling)
        if e.op == "*":
            return is_multiple(e.a, n, tiling) or is_multiple(e.b, n, tiling)
    return False
