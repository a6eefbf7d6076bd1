"""A plain-text table as the benchmarks print it (and the README quotes it): a header, a rule of dashes,
columns two spaces apart, numbers right-aligned."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def columns(head: Sequence[str], body: Sequence[Sequence[str]], right: Collection[int]) -> str:
    """`head` and `body` as aligned columns; the columns whose index is in `right` are right-aligned."""
    widths = [max(len(r[i]) for r in (head, *body)) for i in range(len(head))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(x.rjust(w) if i in right else x.ljust(w)
                         for i, (x, w) in enumerate(zip(r, widths, strict=True))).rstrip()

    return "\n".join([line(head), "  ".join("-" * w for w in widths), *(line(r) for r in body)])
