"""Passes: the IR after each named pass, a line diff against the pass before it, then the analyses the
readers run on the final program (vector-call expansion, scratch sizing, operator naming), each printed."""

from __future__ import annotations

import difflib
import functools
from typing import Any

from ...codegen import ANALYSES

__all__ = ["pass_diff", "passes_data"]


def pass_diff(before: str, after: str) -> list[tuple[str, str]]:
    """(kind, line) for every line of `after` and every removed line of `before`: kind is ' ', '+' or '-'."""
    return list(_diff(before, after))


@functools.lru_cache(maxsize=256)
def _diff(before: str, after: str) -> tuple[tuple[str, str], ...]:
    """`pass_diff`, kept by text: a knob move changes the IR of a few passes, the others diff as before."""
    out: list[tuple[str, str]] = []
    sm = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    a, b = sm.a, sm.b
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            out.extend((" ", line) for line in b[j1:j2])
            continue
        out.extend(("-", line) for line in a[i1:i2])
        out.extend(("+", line) for line in b[j1:j2])
    return tuple(out)


def passes_data(program: Any) -> list[dict[str, Any]]:
    """One entry per pass (kind "pass": name, IR text, lines added and removed against the previous pass),
    then one per analysis of the final program (kind "analysis": its printed decisions, nothing diffed)."""
    out = []
    prev = ""
    for name, text in program.passes:
        diff = pass_diff(prev, text)
        out.append({"name": name, "kind": "pass", "text": text, "diff": diff,
                    "added": sum(1 for k, _ in diff if k == "+"), "removed": sum(1 for k, _ in diff if k == "-")})
        prev = text
    for name, what, fn in ANALYSES:
        text = f"# {name}: {what}\n" + fn(program)  # the picker shows the name alone
        out.append({"name": name, "kind": "analysis", "what": what, "text": text,
                    "diff": [(" ", line) for line in text.splitlines()], "added": 0, "removed": 0})
    return out
