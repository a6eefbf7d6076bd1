"""The README's MoE section: its example prints what it shows, and its table is what bench/bench_moe.py prints."""

from __future__ import annotations

from .readme import bench as load_bench
from .readme import example, rebinds, section

HEADING = "## The MoE block: `ks.ops.moe`"


def test_readme_moe_example_prints_what_it_shows() -> None:
    code, printed, shown = example(HEADING)
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled|q|w")


def test_readme_moe_table_is_what_the_benchmark_prints() -> None:
    mod = load_bench("bench_moe")
    table = mod.table(mod.measure(**mod.SMALL))
    assert table in section(HEADING)
    assert table.count("\n") == 4  # header, rule and the three imbalances
