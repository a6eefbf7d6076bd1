"""The README's advice example prints what its ```text block shows (the section's python block, run as written)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Advice: which move helps, simulated"


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    if HEADING not in text:
        pytest.skip(f"README.md has no {HEADING!r} section")
    body = text.split(HEADING, 1)[1]
    return body.split("\n## ", 1)[0]


def test_readme_advice_example_prints_what_it_shows():
    m = re.search(r"```python\n(.*?)```\n```text\n(.*?)```\n", _section(), flags=re.S)
    assert m, "the advice section has a python block followed by the text it prints"
    code, shown = m.groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own documentation
    assert out.getvalue() == shown


def test_readme_advice_names_no_name_a_later_block_reads():
    """README blocks run in one namespace (test_readme_runs): the example leaves x and y to the others."""
    m = re.search(r"```python\n(.*?)```", _section(), flags=re.S)
    assert not re.search(r"^(x|y|d|out) = ", m.group(1), flags=re.M)
