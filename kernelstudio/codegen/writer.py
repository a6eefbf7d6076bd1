"""A tiny indenting line writer and the C++ spellings of TileIR names, types and constants."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager

from ..core.errors import UnsupportedError

__all__ = ["Writer", "ctype", "camel", "pascal", "c_float", "C_TYPES"]

INDENT = "    "

C_TYPES = {"float16": "half", "bfloat16": "bfloat16_t", "float32": "float", "int8": "int8_t",
           "int32": "int32_t", "int64": "int64_t"}


def ctype(dtype: str) -> str:
    """The Ascend C element type of a kernelstudio dtype."""
    try:
        return C_TYPES[dtype]
    except KeyError:
        raise UnsupportedError(f"dtype {dtype!r} has no Ascend C spelling; use one of "
                               f"{', '.join(C_TYPES)}") from None


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[^0-9A-Za-z]+", name) if w]


@functools.lru_cache(maxsize=4096)
def camel(name: str) -> str:
    """`tile_rows` -> `tileRows` (member and field names)."""
    words = _words(name) or ["v"]
    if len(words) == 1 and words[0].isupper():
        return words[0]  # M, N, K stay as the math names them
    out = words[0][0].lower() + words[0][1:] + "".join(w[0].upper() + w[1:] for w in words[1:])
    return out if not out[0].isdigit() else "v" + out


def pascal(name: str) -> str:
    """`mla_prolog_lite` -> `MlaPrologLite` (class and struct names)."""
    c = camel(name)
    return c[0].upper() + c[1:]


def c_float(value: float, dtype: str) -> str:
    """A scalar literal of the element type of `dtype` (exact for float32 values)."""
    if math.isnan(value):
        lit = "NAN"
    elif math.isinf(value):
        lit = "INFINITY" if value > 0 else "-INFINITY"
    elif dtype in ("int8", "int32", "int64"):
        return str(int(value))
    else:
        lit = repr(float(value))
        if "e" not in lit and "." not in lit:
            lit += ".0"
        lit += "f"
    t = ctype(dtype)
    return lit if t == "float" else f"static_cast<{t}>({lit})"


class Writer:
    """Lines of C++ with the current indentation; `block()` opens and closes braces."""

    def __init__(self, level: int = 0) -> None:
        self.lines: list[str] = []
        self.level = level

    def __call__(self, *lines: str) -> None:
        pad = INDENT * self.level
        add = self.lines.append
        for line in lines:
            add(f"{pad}{line}" if line else "")

    @contextmanager
    def block(self, head: str, tail: str = "}") -> Iterator[None]:
        self(head + " {")
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1
            self(tail)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1

    def extend(self, other: Writer) -> None:
        """Append `other`'s lines (written at level 0) at the current indentation."""
        pad = INDENT * self.level
        self.lines.extend(pad + line if line else "" for line in other.lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
