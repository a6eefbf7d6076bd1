"""The README's advice example prints what its ```text block shows (the section's python block, run as written),
and its table of the greedy rounds against ks.tune is what `bench/bench_advise.py --markdown` prints."""

from __future__ import annotations

import re

from .readme import ROOT, example, rebinds
from .readme import bench as load_bench

HEADING = "## Advice: which move helps, simulated"


def test_readme_advice_example_prints_what_it_shows():
    _, printed, shown = example(HEADING)
    assert printed == shown


def test_readme_advice_names_no_name_a_later_block_reads():
    """README blocks run in one namespace (test_readme_runs): the example leaves x and y to the others."""
    code, _, _ = example(HEADING)
    assert not rebinds(code, "x|y|d|out")


def test_readme_advice_table_is_the_benchmark_output():
    bench = load_bench("bench_advise")
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- advice-table[^\n]*-->\n```text\n(.*?)\n```\n<!-- /advice-table -->", text, re.S)
    assert block, "README has no advice-table block"
    rows = bench.greedy_rows(bench.README_SETTINGS)
    assert block.group(1) == bench.table(rows)
    # the goal: every design within 5 % of ks.tune's best with at most 1/5 of its evaluations, both settings
    assert all(r[s]["ratio"] <= 1.05 and r[s]["evals"] * 5 <= r["tune_evals"] for r in rows for s in ("2x1", "2x2"))
