"""The README's per-head matmul example prints what its ```text block shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADING = "### Per-head matmul: `ks.matmul(q, w, batch_axis=1)`"


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    assert HEADING in text, f"README.md has no {HEADING!r} section"
    return re.split(r"\n##+ ", text.split(HEADING, 1)[1], maxsplit=1)[0]


def test_readme_per_head_example_prints_what_it_shows() -> None:
    m = re.search(r"```python\n(.*?)```\n```text\n(.*?)```\n", _section(), flags=re.S)
    assert m, "the section has a python block followed by the text it prints"
    code, shown = m.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue() == shown


def test_readme_per_head_example_names_no_name_a_later_block_reads() -> None:
    """README blocks run in one namespace (test_readme_runs): the example leaves x, y, d and out alone."""
    m = re.search(r"```python\n(.*?)```", _section(), flags=re.S)
    assert not re.search(r"^(x|y|d|out|twin|result|tiled|q|w) = ", m.group(1), flags=re.M)
