"""The README's FlashAttention example prints what it shows, and its table is what
`bench/bench_flash_attention.py --markdown` prints, with the ratios and bytes its prose quotes."""

from __future__ import annotations

from .readme import ROOT, example, generated_block, rebinds, section
from .readme import bench as load_bench

HEADING = "## FlashAttention: `ks.ops.flash_attention`"


def test_readme_flash_attention_example_prints_what_it_shows():
    code, printed, shown = example(HEADING)
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled|q|k|v")  # README blocks share one namespace


def test_readme_flash_attention_table_is_the_benchmark_output():
    bench = load_bench("bench_flash_attention")
    text = (ROOT / "README.md").read_text()
    block = generated_block("flash-attention-table")
    rs = bench.rows()
    assert block == bench.table(rs)
    assert bench.MEASURED_US == {1024: 58.461, 2048: 70.801, 4096: 118.302, 8192: 353.147, 16384: 1118.462,
                                 32768: 3646.173}
    prose = " ".join(text.split())
    ratio = {s: t / bench.MEASURED_US[s] for s, _, t, *_ in rs}
    assert f"(ratio {ratio[1024]:.2f} at S = 1024)" in prose
    assert f"({ratio[32768]:.2f} at S = 32768)" in prose
    assert all(ratio[s] < 1 for s in (1024, 2048))
    assert all(r[1] == 1 and r[4] == 5 for r in rs)  # one fused kernel, one assumed 5 us launch gap
    assert all(r[5].startswith("MTE2") for r in rs if r[0] >= 8192)
    tf = {s: bench.flops(s) / t / 1e6 for s, _, t, *_ in rs}
    assert list(tf.values()) == sorted(tf.values())  # the predicted TFLOPS climb with S
    assert f"({tf[32768]:.1f} against 150.8 at S = 32768)" in prose
    big = rs[-1]
    assert f"({big[3] / 1e6:,.1f} MB at S = 32768)" in prose
    assert abs(big[3] - 3 * 2 * 32768 * 128) < 0.05 * big[3]  # Q, K and V read once: S and P never reach HBM


def test_readme_flash_attention_layouts_example_prints_what_it_shows():
    code, printed, shown = example("### Layouts and GQA: read in place")
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled|q|k|v")
    lines = shown.splitlines()
    assert len(lines) == 4 and all(" 1 kernel " in ln for ln in lines)  # no layout copy kernels
    assert len({ln.split("kernel")[1].split("us")[0] for ln in lines}) == 1  # every layout costs what BNSD costs


def test_readme_flash_attention_tuning_example_prints_what_it_shows():
    code, printed, shown = example("### Tuning the blocks and slots")
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled|q|k|v")
    assert "default 17.06 us, best 11.74 us" in shown  # the prose: 4 tasks of 128 rows, one S2 block


def test_readme_attention_search_table_is_the_benchmark_output():
    bench = load_bench("bench_attention_search")
    text = (ROOT / "README.md").read_text()
    block = generated_block("attention-search-table")
    rows = [bench.search(s) for s in bench.SIZES]
    assert block == bench.table(rows)
    gain = {r["S"]: 100 * (1 - r["best_us"] / r["default"]) for r in rows}
    prose = " ".join(text.split())
    assert f"(up to {gain[1024]:.0f} % at S = 1024 and {gain[4096]:.0f} % at S = 4096, table below)" in prose
    assert max(gain.values()) == gain[1024] and all(g > 0 for g in gain.values())


DECODE = "### Decode: the split of S_kv (FlashDecode)"


def test_readme_decode_example_prints_what_it_shows():
    code, printed, shown = example(DECODE)
    assert printed == shown
    assert not rebinds(code, "x|y|d|out|twin|result|tiled|q|k|v")
    assert "{'tiles': 24, 'kv_splits': 3} 24" in shown  # 8 heads x 3 parts on the 24 cores


def test_readme_decode_table_is_the_benchmark_output_and_the_prose_holds():
    bench = load_bench("bench_flash_attention")
    text = (ROOT / "README.md").read_text()
    block = generated_block("flash-decode-table")
    rs = bench.decode_rows()
    assert block == bench.decode_table(rs)
    by = {(n, skv): r for n, skv, *r in rs}
    assert all(t_one > t for _, t, t_one, *_ in by.values())  # the split pays against one part per head
    for skv in bench.DECODE_SKV:  # most at 8 heads
        assert by[8, skv][2] / by[8, skv][1] > by[32, skv][2] / by[32, skv][1]
    fused = sorted((n, skv) for (n, skv), r in by.items() if r[4] == "fused")
    assert fused == [(8, 4096), (8, 8192), (8, 16384)]
    assert all(r[4] == "fused" or r[3] <= r[1] for r in by.values())  # the planner takes the faster plan
    assert {by[32, skv][0] for skv in bench.DECODE_SKV} == {2, 3}
    assert ks_profile_hbm() == 1.26e12 and "modelled 1,260 GB/s of HBM" in " ".join(text.split())
    assert all(mb * 1e3 / t < 1260 for _, t, _, _, _, mb in by.values())


def test_readme_decode_tuning_numbers_are_what_the_tuner_finds():
    import kernelstudio as ks

    def build():
        q = ks.placeholder((1, 32, 1, 128), "float16", name="query")
        k, v = (ks.placeholder((1, 32, 4096, 128), "float16", name=n) for n in ("key", "value"))
        return ks.create_schedule([ks.ops.flash_attention(q, k, v)], fuse=True)
    r = ks.tune(build, "ascend910b2", budget=24, executor="inline", db=False, progress=False)
    cfg, auto = r.best.config, r.default.config
    prose = " ".join(section(DECODE).split())
    assert (f"the tuner (budget 24) finds {cfg['attention_out.kv']} parts with {cfg['attention_out.s2']}-column "
            f"blocks at {r.best_time_us:.2f} us against the auto schedule's {auto['attention_out.kv']} parts at "
            f"{r.default.time_us:.2f} us") in prose


def ks_profile_hbm() -> float:
    import kernelstudio as ks

    return ks.hw.get("ascend910b2").hbm_bytes_per_s
