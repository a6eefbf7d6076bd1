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
def _opcodes(before: str, after: str) -> tuple[list[str], list[str], tuple[tuple[str, int, int, int, int], ...]]:
    """The line lists of `before` and `after` and the matcher's opcodes, kept by text: a knob move changes
    the IR of a few passes, the others diff as before."""
    if before == after:  # a pass that changed nothing: one equal run (what the matcher finds, without its index)
        lines = after.splitlines()
        return lines, lines, (("equal", 0, len(lines), 0, len(lines)),) if lines else ()
    sm = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False)
    return sm.a, sm.b, tuple(sm.get_opcodes())


def _counts(before: str, after: str) -> tuple[int, int]:
    """(lines added, lines removed) of `pass_diff(before, after)`, without building it."""
    _, _, ops = _opcodes(before, after)
    return (sum(j2 - j1 for tag, _, _, j1, j2 in ops if tag != "equal"),
            sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag != "equal"))


@functools.lru_cache(maxsize=256)
def _diff(before: str, after: str) -> tuple[tuple[str, str], ...]:
    """`pass_diff`, kept by text."""
    out: list[tuple[str, str]] = []
    a, b, ops = _opcodes(before, after)
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            out.extend((" ", line) for line in b[j1:j2])
            continue
        out.extend(("-", line) for line in a[i1:i2])
        out.extend(("+", line) for line in b[j1:j2])
    return tuple(out)


class _Pass(dict):
    """A pass entry of `passes_data` whose "diff" is built when first read (the Passes picker lists the
    passes with their line counts; only the one picked shows its diff)."""

    def __init__(self, before: str, **fields: Any) -> None:
        super().__init__(fields)
        self._before = before

    def __missing__(self, key: str) -> Any:
        if key != "diff":
            raise KeyError(key)
        self["diff"] = pass_diff(self._before, self["text"])
        return self["diff"]


class _Analysis(dict):
    """An analysis entry of `passes_data` whose "text" and "diff" are printed when first read (the Passes
    picker lists analyses by name; only the one picked is shown). They read the program alone, which does
    not change, so printing later gives what printing at once would."""

    def __init__(self, program: Any, fn: Any, **fields: Any) -> None:
        super().__init__(fields)
        self._program, self._fn = program, fn

    def __missing__(self, key: str) -> Any:
        if key not in ("text", "diff"):
            raise KeyError(key)
        text = f"# {self['name']}: {self['what']}\n" + self._fn(self._program)  # the picker shows the name alone
        self.update(text=text, diff=[(" ", line) for line in text.splitlines()])
        return self[key]


def passes_data(program: Any) -> list[dict[str, Any]]:
    """One entry per pass (kind "pass": name, IR text, lines added and removed against the previous pass),
    then one per analysis of the final program (kind "analysis": its printed decisions, nothing diffed; its
    "text" and "diff" are printed when first read: `entry["text"]`). A pass's "diff" is built when first
    read (`entry["diff"]`)."""
    out = []
    prev = ""
    for name, text in program.passes:
        added, removed = _counts(prev, text)
        out.append(_Pass(prev, name=name, kind="pass", text=text, added=added, removed=removed))
        prev = text
    for name, what, fn in ANALYSES:
        out.append(_Analysis(program, fn, name=name, kind="analysis", what=what, added=0, removed=0))
    return out
