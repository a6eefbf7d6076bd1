"""Passes: the IR after each named pass, and a line diff against the pass before it."""

from __future__ import annotations

import difflib
from typing import Any

__all__ = ["pass_diff", "passes_data"]


def pass_diff(before: str, after: str) -> list[tuple[str, str]]:
    """(kind, line) for every line of `after` and every removed line of `before`: kind is ' ', '+' or '-'."""
    out: list[tuple[str, str]] = []
    sm = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    a, b = sm.a, sm.b
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.extend((" ", line) for line in b[j1:j2])
            continue
        out.extend(("-", line) for line in a[i1:i2])
        out.extend(("+", line) for line in b[j1:j2])
    return out


def passes_data(program: Any) -> list[dict[str, Any]]:
    """One entry per pass: name, IR text, lines added and removed against the previous pass."""
    out = []
    prev = ""
    for name, text in program.passes:
        diff = pass_diff(prev, text)
        out.append({"name": name, "text": text, "diff": diff,
                    "added": sum(1 for k, _ in diff if k == "+"), "removed": sum(1 for k, _ in diff if k == "-")})
        prev = text
    return out
