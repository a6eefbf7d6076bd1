"""The README's measured-vs-predicted table is what `bench/bench_measured.py --markdown` prints, and the
summary holds what the README claims of it."""

from __future__ import annotations

from .readme import bench as load_bench
from .readme import generated_block


def test_readme_table_is_the_benchmark_output():
    bench = load_bench("bench_measured")
    rows = bench.rows()
    block = generated_block("measured-table")
    assert block == bench.table(rows) + "\n\n" + bench.summary(rows)


def test_every_point_names_its_source_protocol_and_timing():
    bench = load_bench("bench_measured")
    for p in bench.POINTS:
        assert p.source and p.protocol in ("cold", "warm", "both") and p.timing in ("wall", "device")
    rows = bench.rows()
    assert len(rows) == sum(2 if p.protocol == "both" else 1 for p in bench.POINTS)
    assert all(r.predicted_us > 0 and r.bound for r in rows)
