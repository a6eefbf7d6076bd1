"""The README's measured-vs-predicted table is what `bench/bench_measured.py --markdown` prints, and the
summary holds what the README claims of it."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_measured", ROOT / "bench" / "bench_measured.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_readme_table_is_the_benchmark_output():
    bench = _bench()
    rows = bench.rows()
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- measured-table[^\n]*-->\n```text\n(.*?)\n```\n<!-- /measured-table -->", text, re.S)
    assert block, "README has no measured-table block"
    assert block.group(1) == bench.table(rows) + "\n\n" + bench.summary(rows)


def test_every_point_names_its_source_protocol_and_timing():
    bench = _bench()
    for p in bench.POINTS:
        assert p.source and p.protocol in ("cold", "warm", "both") and p.timing in ("wall", "device")
    rows = bench.rows()
    assert len(rows) == sum(2 if p.protocol == "both" else 1 for p in bench.POINTS)
    assert all(r.predicted_us > 0 and r.bound for r in rows)
