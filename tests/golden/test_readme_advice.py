"""The README's advice example prints what its ```text block shows (the section's python block, run as written)."""

from __future__ import annotations

from .readme import example, rebinds

HEADING = "## Advice: which move helps, simulated"


def test_readme_advice_example_prints_what_it_shows():
    _, printed, shown = example(HEADING)
    assert printed == shown


def test_readme_advice_names_no_name_a_later_block_reads():
    """README blocks run in one namespace (test_readme_runs): the example leaves x and y to the others."""
    code, _, _ = example(HEADING)
    assert not rebinds(code, "x|y|d|out")
