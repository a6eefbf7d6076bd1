"""The README's MoE section: its example prints what it shows, and its table is what bench/bench_moe.py prints."""

from __future__ import annotations

import json

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


def test_readme_moe_real_size_table_and_prose_are_the_saved_run() -> None:
    """The DeepSeek-V3-size run takes minutes: the README quotes the summary `bench/bench_moe.py` saves."""
    mod = load_bench("bench_moe")
    data = json.loads(mod.SAVED.read_text())
    assert data["config"] == {**mod.DSV3, "tokens": 4096, "target": "ascend910b2"}
    res = data["results"]
    assert list(res) == list(mod.IMBALANCES)
    text = section(HEADING)
    assert mod.table(res) in text
    prose = " ".join(text.split())
    u, z, o = res["uniform"], res["zipf"], res["one_hot"]
    gu, dn = u["kernels"]["gate_up"], u["kernels"]["expert_out"]
    grouped = u["per_stage"]["gate_up"] + u["per_stage"]["down"]
    weights = 2 * 256 * 7168 * 2048 * 3  # bfloat16 gate/up and down weights of 256 experts, bytes
    assert abs(gu["compulsory_bytes"] + dn["compulsory_bytes"] - weights) < 1e-6 * weights
    claims = [
        f"{100 * grouped / u['time_us']:.0f} % of the block",
        f"gate_up moves {gu['hbm_bytes'] / 1e9:.1f} GB through HBM ({gu['hbm_bytes'] / gu['compulsory_bytes']:.1f}x "
        f"its compulsory bytes) against a memory roofline of {gu['roofline_bound_us'] / 1e3:.1f} ms",
        f"busy {max(u['busy_us']['gate_up']) / 1e3:.1f} ms of its {u['per_stage']['gate_up'] / 1e3:.1f} ms",
        f"costs {z['imbalance_cost']:.2f}x (Zipf) and {o['imbalance_cost']:.2f}x (one hot expert)",
        f"one hot: {o['kernels']['gate_up']['hbm_bytes'] / 1e9:.1f} GB instead of {gu['hbm_bytes'] / 1e9:.1f}",
        f"the one-core histogram ({u['kernels']['routing_count']['time_us']:.0f} us",
        f"each sort of 32,768 pairs takes {u['kernels']['routing_sorted_row_idx']['time_us']:.0f} us",
    ]
    for claim in claims:
        assert claim in prose, claim
    assert gu["roofline_limiter"] == "memory" and dn["roofline_limiter"] == "memory"
    for r in res.values():  # the idle share the prose calls under 1 %
        assert max(r["idle_pct"].values()) < 1.0
    sims = [r["sim_s"] for r in res.values()]
    assert f"each simulation took {min(sims):.0f} to {max(sims):.0f} s" in prose
