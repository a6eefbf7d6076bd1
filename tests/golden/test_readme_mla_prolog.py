"""The README's MlaProlog example prints what it shows, and its table is what `bench/bench_mla_prolog.py
--markdown` prints."""

from __future__ import annotations

import re

import kernelstudio as ks

from .readme import ROOT, example, rebinds
from .readme import bench as load_bench

HEADING = "### MlaProlog as one call: `ks.ops.mla_prolog`"


def test_readme_mla_prolog_example_prints_what_it_shows():
    code, printed, shown = example(HEADING)
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled")  # README blocks share one namespace


def test_readme_mla_prolog_table_is_the_benchmark_output():
    bench = load_bench("bench_mla_prolog")
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- mla-prolog-table[^\n]*-->\n```text\n(.*?)\n```\n<!-- /mla-prolog-table -->", text, re.S)
    assert block, "README has no mla-prolog-table block"
    reps = bench.rows()
    assert block.group(1) == bench.table(reps)
    for _, rep in reps:  # what the prose says of it
        assert (rep.fused.kernels, rep.unfused.kernels) == (21, 25)
        assert rep.fused.time_us < rep.unfused.time_us
    decode = reps[0][1].fused
    weights = 2 * (7168 * 1536 + 1536 * 128 * 192 + 128 * 128 * 512 + 7168 * 576)  # bfloat16 weights, bytes
    assert abs(decode.hbm_bytes - weights) < 0.01 * weights  # T=1 reads the weights and little else
    prose = " ".join(text.split())
    assert f"the weights' {decode.hbm_bytes / 1e6:.1f} MB read from HBM ({decode.roofline_pct:.0f} % of the" in prose
    gaps = f"{decode.kernels} launch gaps of an assumed {decode.launch_us / decode.kernels:g} us each are " \
           f"{decode.launch_us:.0f} us of its {decode.time_us:.0f} us"
    assert gaps in prose, gaps


def test_readme_nz_before_after_is_what_the_simulator_gives():
    """The prose's ND (before NZ weights) vs NZ times of the fused plan at T = 1 and 128."""
    prose = " ".join((ROOT / "README.md").read_text().split())
    rep = {(t, f): ks.compare_plans(ks.ops.mla_prolog(T=t, N=128, block_size=128, weight_format=f), "ascend910b2",
                                    name=f"mla_prolog_t{t}").fused
           for t in (1, 128) for f in ("ND", "NZ")}
    said = (f"fused plan takes {rep[1, 'ND'].time_us:.1f} us at T=1 and {rep[128, 'ND'].time_us:.1f} us at T=128, "
            f"against {rep[1, 'NZ'].time_us:.1f} and {rep[128, 'NZ'].time_us:.1f} us with NZ weights, with the "
            "same HBM bytes")
    assert said in prose, said
    for t in (1, 128):
        assert rep[t, "ND"].hbm_bytes == rep[t, "NZ"].hbm_bytes
        assert abs(rep[t, "ND"].time_us - rep[t, "NZ"].time_us) < 1.0
