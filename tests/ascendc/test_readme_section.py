"""The README's "Your own Ascend C" section: its examples, run in order, print exactly what the README shows
(the sync checker's findings and the simulated timeline of the same kernel)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
pytestmark = pytest.mark.twin  # the examples compile their kernels on the twin


def test_the_examples_print_what_the_readme_shows():
    m = re.search(r"## Your own Ascend C \(`ks\.ascendc`\)\n(.*?)\n## ", README, flags=re.S)
    assert m, "README: the section '## Your own Ascend C (`ks.ascendc`)' is missing"
    blocks = re.findall(r"```python\n(.*?)```\n```text\n(.*?)```\n", m.group(1), flags=re.S)
    assert len(blocks) == 5
    ns: dict = {}
    for code, shown in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
        assert out.getvalue() == shown, code
    sim = ns["sim"]
    assert sim.kernels[0]["name"] == "add"
    # what the prose says: each tile's copy waits for the previous tile's Add, so MTE2 never overlaps V
    mte2 = [(e.start_us, e.end_us) for e in sim.events.where(core="core0.veccore0", pipe="MTE2")]
    vec = [(e.start_us, e.end_us) for e in sim.events.where(core="core0.veccore0", pipe="V")]
    assert len(mte2) == 8 and len(vec) == 4
    assert all(min(a1, b1) <= max(a0, b0) for a0, a1 in mte2 for b0, b1 in vec)
