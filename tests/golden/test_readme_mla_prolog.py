"""The README's MlaProlog example prints what it shows, and its table is what `bench/bench_mla_prolog.py
--markdown` prints."""

from __future__ import annotations

import kernelstudio as ks

from .readme import ROOT, example, generated_block, rebinds
from .readme import bench as load_bench

HEADING = "### MlaProlog as one call: `ks.ops.mla_prolog`"


def test_readme_mla_prolog_example_prints_what_it_shows():
    code, printed, shown = example(HEADING)
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled")  # README blocks share one namespace


def test_readme_mla_prolog_table_is_the_benchmark_output():
    bench = load_bench("bench_mla_prolog")
    text = (ROOT / "README.md").read_text()
    block = generated_block("mla-prolog-table")
    reps = bench.rows()
    assert block == bench.table(reps)
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


def test_readme_quant_table_is_the_benchmark_output_and_the_prose_its_numbers():
    bench = load_bench("bench_mla_prolog")
    text = (ROOT / "README.md").read_text()
    block = generated_block("mla-prolog-quant-table")
    qrows = bench.quant_rows()
    assert block == bench.quant_table(qrows)
    by = {(t, q): (us, hbm, w) for t, q, _, us, hbm, w, _, _ in qrows}
    uqqr = 1536 * 128 * 192  # weight_uq_qr elements: 2 bytes in bfloat16, 1 in int8
    prose = " ".join(text.split())
    assert f"halves that weight's bytes ({2 * uqqr / 1e6:.1f} -> {uqqr / 1e6:.1f} MB)" in prose
    w_bf16, w_int8 = by[1, "None"][2], by[1, "partial"][2]
    assert w_bf16 - w_int8 == uqqr
    assert f"from {w_bf16 / 1e6:.1f} to {w_int8 / 1e6:.1f} MB, not half" in prose
    drops = [by[t, "None"][0] - by[t, "partial"][0] for t in bench.QUANT_TOKENS]
    assert f"the time by {min(drops):.0f} to {max(drops):.0f} us" in prose
    saved = [(by[t, "None"][1] - by[t, "partial"][1]) / 1e6 for t in bench.QUANT_TOKENS]
    assert f"the HBM bytes fall by {saved[0]:.1f} MB at T=1 and {saved[1]:.1f} MB at T=128" in prose
    assert min(saved) >= uqqr / 1e6 - 0.2  # the int8 weight's saving, less the (1, N*(D+Dr)) scales read
    for t in bench.QUANT_TOKENS:
        assert abs(by[t, "partial_kv_cache"][1] - by[t, "partial"][1]) < 0.05e6  # int8 caches: too few bytes to show
