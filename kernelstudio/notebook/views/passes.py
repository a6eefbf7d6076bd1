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
    """The line lists of `before` and `after` and difflib's opcodes for them (`SequenceMatcher(autojunk=False)`),
    kept by text: a knob move changes the IR of a few passes, the others diff as before."""
    a, b = before.splitlines(), after.splitlines()
    if before == after:  # a pass that changed nothing: one equal run (what the matcher finds, without its index)
        return a, b, (("equal", 0, len(b), 0, len(b)),) if b else ()
    runs = _runs(a, b)
    if runs is None:  # lines repeated so often that difflib's own search is as quick
        return a, b, tuple(difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes())
    return a, b, _opcodes_of(_matching_blocks(runs, len(a), len(b)))


def _runs(a: list[str], b: list[str]) -> list[tuple[int, int, int]] | None:
    """Every maximal run of equal lines along a diagonal, as (length, i, j): a[i:i+length] == b[j:j+length],
    longest first; None when the lines are so repetitive that there are more than a few pairs of equal lines
    per line (difflib then does no more work than this)."""
    where: dict[str, list[int]] = {}
    for j, line in enumerate(b):
        js = where.get(line)
        if js is None:
            where[line] = [j]
        else:
            js.append(j)
    la, lb = len(a), len(b)
    budget = 8 * (la + lb)
    runs = []
    for i, line in enumerate(a):
        js = where.get(line)
        if js is None:
            continue
        budget -= len(js)
        if budget < 0:
            return None
        for j in js:
            if i and j and a[i - 1] == b[j - 1]:  # inside a run that starts earlier
                continue
            k = 1
            while i + k < la and j + k < lb and a[i + k] == b[j + k]:
                k += 1
            runs.append((-k, i, j))
    runs.sort()
    return [(-k, i, j) for k, i, j in runs]


def _longest(runs: list[tuple[int, int, int]], alo: int, ahi: int, blo: int, bhi: int) -> tuple[int, int, int]:
    """`SequenceMatcher.find_longest_match(alo, ahi, blo, bhi)` without junk: the longest block of equal lines
    inside the ranges (a run clipped to them), the earliest in a, then in b, of the longest; (alo, blo, 0) if
    none."""
    bi, bj, bk = alo, blo, 0
    for k, i, j in runs:  # longest first: one shorter than the best so far cannot match or beat it
        if k < bk:
            break
        t0 = max(0, alo - i, blo - j)
        size = min(k, ahi - i, bhi - j) - t0
        if size <= 0 or size < bk:
            continue
        if size > bk or i + t0 < bi or (i + t0 == bi and j + t0 < bj):
            bi, bj, bk = i + t0, j + t0, size
    return bi, bj, bk


def _matching_blocks(runs: list[tuple[int, int, int]], la: int, lb: int) -> list[tuple[int, int, int]]:
    """`SequenceMatcher.get_matching_blocks()`: the longest block, then the same left and right of it,
    adjacent blocks joined, ended by (la, lb, 0)."""
    queue = [(0, la, 0, lb)]
    found = []
    while queue:
        alo, ahi, blo, bhi = queue.pop()
        i, j, k = x = _longest(runs, alo, ahi, blo, bhi)
        if k:
            found.append(x)
            if alo < i and blo < j:
                queue.append((alo, i, blo, j))
            if i + k < ahi and j + k < bhi:
                queue.append((i + k, ahi, j + k, bhi))
    found.sort()
    i1 = j1 = k1 = 0
    out = []
    for i2, j2, k2 in found:
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                out.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        out.append((i1, j1, k1))
    out.append((la, lb, 0))
    return out


def _opcodes_of(blocks: list[tuple[int, int, int]]) -> tuple[tuple[str, int, int, int, int], ...]:
    """`SequenceMatcher.get_opcodes()` from its matching blocks."""
    i = j = 0
    out = []
    for ai, bj, size in blocks:
        tag = "replace" if i < ai and j < bj else "delete" if i < ai else "insert" if j < bj else ""
        if tag:
            out.append((tag, i, ai, j, bj))
        i, j = ai + size, bj + size
        if size:
            out.append(("equal", ai, i, bj, j))
    return tuple(out)


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
