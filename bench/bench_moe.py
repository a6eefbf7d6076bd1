"""Benchmark: the DeepSeek-V3 MoE block (ks.ops.moe) at its real size, per stage and under token imbalance.

    .venv/bin/python bench/bench_moe.py [tokens | small] [target]

T = 4096 tokens (unless `tokens`), 256 routed experts + 1 shared, top-8 over 8 groups / 4 kept, sigmoid
scoring, route scale 2.5, hidden 7168, moe_intermediate 2048 (DeepSeek-V3 config_671B.json), bfloat16, on
ascend910b2 unless `target`. For each imbalance (uniform, Zipf s=1.2, one hot expert) the block is lowered
with the default plan and simulated: the time per stage (kernel spans, launch gaps included), the grouped
matmuls' per-core load (busy cube us, the last core's finish, the share of core time idle waiting for it)
and the imbalance cost (time / the uniform block's). Also printed: the seconds spent lowering and
simulating each block. No public figure exists for this block's time on a 910B2: the numbers are the
simulator's, not a measurement.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.ops.moe_report import format_moe_report, moe_report  # noqa: E402

DSV3 = dict(hidden=7168, intermediate=2048, experts=256, top_k=8, groups=8, topk_groups=4, shared_experts=1,
            route_scale=2.5, dtype="bfloat16")
IMBALANCES = ("uniform", "zipf", "one_hot")
# a reduced block the README's table and its test run in seconds: 256 tokens, 16 experts, top-2
SMALL = dict(tokens=256, hidden=1024, intermediate=256, experts=16, top_k=2, groups=1, topk_groups=1,
             shared_experts=1, route_scale=2.5, dtype="bfloat16")


def measure(tokens: int = 4096, target: str = "ascend910b2", imbalances: tuple[str, ...] = IMBALANCES,
            **overrides) -> dict[str, dict]:
    """Per imbalance: the report, the seconds to lower and to simulate, and the lowered program (DeepSeek-V3's
    block unless `overrides` change its arguments)."""
    args = {**DSV3, **overrides}
    tokens = args.pop("tokens", tokens)
    out: dict[str, dict] = {}
    for imb in imbalances:
        t0 = time.perf_counter()
        block = ks.ops.moe(tokens=tokens, imbalance=imb, **args)
        prog = ks.lower(ks.create_schedule(block, target=target), target)
        t1 = time.perf_counter()
        sim = ks.simulate(prog)
        t2 = time.perf_counter()
        out[imb] = {"program": prog, "sim": sim, "lower_s": t1 - t0, "sim_s": t2 - t1}
    base = out.get("uniform")
    for r in out.values():
        r["report"] = moe_report(r["program"], r["sim"], base["sim"] if base else None)
    return out


def table(results: dict[str, dict]) -> str:
    """The README's table: per imbalance, us per stage, total, imbalance cost, idle share of the grouped matmuls."""
    stages = list(dict.fromkeys(st for r in results.values() for st in r["report"].per_stage()))
    head = "| imbalance | " + " | ".join(stages) + " | launch gaps | total us | vs uniform | gate_up idle | down idle |"
    rows = [head, "|" + "---|" * (len(stages) + 6)]
    for imb, r in results.items():
        rep = r["report"]
        per = rep.per_stage()
        idle = {ld.stage: ld.idle_pct for ld in rep.loads}
        cells = [f"{per.get(st, 0.0):,.1f}" for st in stages]
        cost = f"{rep.imbalance_cost:.2f}x" if rep.imbalance_cost is not None else "-"
        gaps = rep.time_us - sum(us for _, _, us in rep.stages)
        rows.append(f"| {imb} | " + " | ".join(cells) + f" | {gaps:,.1f} | {rep.time_us:,.1f} | {cost} | "
                    f"{_idle(idle, 'gate_up')} | {_idle(idle, 'down')} |")
    return "\n".join(rows)


def _idle(idle: dict[str, float], stage: str) -> str:
    hits = [v for k, v in idle.items() if stage in k.split("+")]
    return f"{hits[0]:.0f} %" if hits else "-"


def main(argv: list[str]) -> None:
    target = argv[2] if len(argv) > 2 else "ascend910b2"
    if len(argv) > 1 and argv[1] == "small":
        results = measure(target=target, **SMALL)
    else:
        tokens = int(argv[1]) if len(argv) > 1 else 4096
        try:
            results = measure(tokens, target)
        except ks.KernelStudioError as e:
            print(f"DeepSeek-V3 block at T = {tokens}: {type(e).__name__}: {e}")
            return
    for imb, r in results.items():
        print(f"== {imb}: lowered in {r['lower_s']:.1f} s, simulated in {r['sim_s']:.1f} s")
        print(format_moe_report(r["report"]))
    print()
    print(table(results))


if __name__ == "__main__":
    main(sys.argv)
