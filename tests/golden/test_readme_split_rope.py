"""The README's split / concat / rope example prints what its ```text block shows (skipped while README has
no such section)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Split, concat and rope"


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    if HEADING not in text:
        pytest.skip(f"README.md has no {HEADING!r} section")
    return text.split(HEADING, 1)[1].split("\n## ", 1)[0]


def test_readme_rope_example_prints_what_it_shows():
    m = re.search(r"```python\n(.*?)```\n```text\n(.*?)```\n", _section(), flags=re.S)
    assert m, "the section has a python block followed by the text it prints"
    code, shown = m.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue() == shown


def test_readme_rope_example_names_no_name_a_later_block_reads():
    """README blocks run in one namespace (test_readme_runs): the example leaves x, y, d and out alone."""
    m = re.search(r"```python\n(.*?)```", _section(), flags=re.S)
    assert not re.search(r"^(x|y|d|out|twin|result|tiled) = ", m.group(1), flags=re.M)
