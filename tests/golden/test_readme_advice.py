"""The README's advice example prints what its ```text block shows (the section's python block, run as written),
and its table of the greedy rounds against ks.tune is what `bench/bench_advise.py --markdown` prints."""

from __future__ import annotations

from .readme import ROOT, example, generated_block, rebinds
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
    block = generated_block("advice-table")
    rows = bench.greedy_rows(bench.README_SETTINGS)
    assert block == bench.table(rows)
    # the goal: every design within 5 % of ks.tune's best with at most 1/5 of its evaluations, both settings
    assert all(r[s]["ratio"] <= 1.05 and r[s]["evals"] * 5 <= r["tune_evals"] for r in rows for s in ("2x1", "2x2"))
    # the FlashAttention section quotes the attention rows
    fa = {r["design"]: r for r in rows if r["design"].startswith("FlashAttention")}
    small, large = fa["FlashAttention S=512 D=128"], fa["FlashAttention S=2048 D=128"]
    prose = " ".join(text.split())
    assert (f"({small['2x1']['time']:.2f} us in {small['2x1']['evals']} evaluations, "
            f"{100 * (small['2x1']['ratio'] - 1):.1f} % above the tuner's {small['tune']:.2f} us from the whole space "
            f"of {small['tune_evals']})") in prose
    assert small["2x1"]["moves"] == ("attention_out.s1 128 -> 64; attention_out.s2 512 -> 256; "
                                     "attention_out.s2 256 -> 128")
    assert large["2x1"]["moves"] == "attention_out.slots 3 -> 4" and large["2x1"]["ratio"] == 1.0
    assert f"(the tuner's best, in {large['2x1']['evals']} evaluations;" in prose
