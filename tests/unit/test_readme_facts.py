"""Facts the README states that the code owns: checked against the code, not retyped."""

from __future__ import annotations

import re
from pathlib import Path

import kernelstudio as ks

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_lists_every_pass_in_order():
    m = re.search(r"`ks\.PASSES`: ([a-z_, ]+)\)", README)
    assert m, "the README's lowering row must list the passes as `ks.PASSES`: a, b, ...)"
    listed = [p.strip() for p in m.group(1).split(",")]
    assert listed == [name for name, _ in ks.PASSES]


def test_readme_lists_every_analysis_in_order():
    m = re.search(r"`ks\.ANALYSES`: ([a-z_, ]+)\)", README)
    assert m, "the README's lowering row must list the analyses as `ks.ANALYSES`: a, b, ...)"
    assert [p.strip() for p in m.group(1).split(",")] == [name for name, _, _ in ks.ANALYSES]


def test_readme_names_every_stage_folder():
    pkg = Path(ks.__file__).parent
    folders = sorted(p.name for p in pkg.iterdir() if (p / "__init__.py").exists() and p.name != "labextension")
    missing = [f for f in folders if f"`kernelstudio/{f}/`" not in README]
    assert not missing, f"the README's 'What is here' table has no row for {missing}"
