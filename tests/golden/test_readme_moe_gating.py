"""The README's MoE gating example prints what its ```text block shows."""

from __future__ import annotations

from .readme import example, rebinds

HEADING = "## MoE gating and finalize"


def test_readme_moe_gating_example_prints_what_it_shows():
    _, printed, shown = example(HEADING)
    assert printed == shown


def test_readme_moe_gating_example_names_no_name_a_later_block_reads():
    """README blocks run in one namespace (test_readme_runs): the example leaves the shared names alone."""
    code, _, _ = example(HEADING)
    assert not rebinds(code, "x|y|d|out|twin|result|tiled|T")
