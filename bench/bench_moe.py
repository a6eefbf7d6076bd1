"""Benchmark: the DeepSeek-V3 MoE block (ks.ops.moe) at its real size, per stage and under token imbalance.

    .venv/bin/python bench/bench_moe.py [tokens | small] [target]

T = 4096 tokens (unless `tokens`), 256 routed experts + 1 shared, top-8 over 8 groups / 4 kept, sigmoid
scoring, route scale 2.5, hidden 7168, moe_intermediate 2048 (DeepSeek-V3 config_671B.json), bfloat16, on
ascend910b2 unless `target`. For each imbalance (uniform, Zipf s=1.2, one hot expert) the block is lowered
with the default plan and simulated: the time per stage (kernel spans, launch gaps included), the grouped
matmuls' per-core load (busy cube us, the last core's finish, the share of core time idle waiting for it)
and the imbalance cost (time / the uniform block's). Also printed: the seconds spent lowering and
simulating each block. The run at T = 4096 on ascend910b2 writes its summary to bench/results/moe_dsv3.json,
which the README's real-size table is tested against (the run takes minutes; the small table is re-run).
No public figure exists for this block's time on a 910B2: the numbers are the simulator's, not a
measurement.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.ops.moe_report import format_moe_report, moe_report  # noqa: E402

DSV3 = dict(hidden=7168, intermediate=2048, experts=256, top_k=8, groups=8, topk_groups=4, shared_experts=1,
            route_scale=2.5, dtype="bfloat16")
IMBALANCES = ("uniform", "zipf", "one_hot")
SAVED = Path(__file__).resolve().parent / "results" / "moe_dsv3.json"  # the real-size run, for the README
# per kernel, what the saved summary keeps of the simulation (the README's prose quotes them)
KERNEL_FIELDS = ("time_us", "hbm_bytes", "compulsory_bytes", "roofline_bound_us", "roofline_limiter", "l2_hit_ratio",
                 "cube_flops")
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


def summary(results: dict[str, dict]) -> dict[str, dict]:
    """Per imbalance, what the table and the prose quote (JSON-able): us per stage, launch gaps, total, the
    imbalance cost, the grouped matmuls' idle share and their busiest / least busy cube core, per kernel its time,
    HBM bytes, compulsory bytes and roofline bound, and the seconds spent lowering and simulating."""
    out: dict[str, dict] = {}
    for imb, r in results.items():
        rep = r["report"]
        out[imb] = {"per_stage": rep.per_stage(), "time_us": rep.time_us,
                    "gaps_us": rep.time_us - sum(us for _, _, us in rep.stages),
                    "imbalance_cost": rep.imbalance_cost,
                    "idle_pct": {ld.stage: ld.idle_pct for ld in rep.loads},
                    "busy_us": {ld.stage: [min(ld.busy_us), max(ld.busy_us)] for ld in rep.loads if ld.busy_us},
                    "kernels": {k["name"]: {f: k[f] for f in KERNEL_FIELDS} for k in r["sim"].kernels},
                    "lower_s": r["lower_s"], "sim_s": r["sim_s"]}
    return out


def table(results: dict[str, dict]) -> str:
    """The README's table: per imbalance, us per stage, total, imbalance cost, idle share of the grouped matmuls
    (`results` as `measure` returns them, or their `summary`)."""
    sums = summary(results) if any("report" in r for r in results.values()) else results
    stages = list(dict.fromkeys(st for r in sums.values() for st in r["per_stage"]))
    head = "| imbalance | " + " | ".join(stages) + " | launch gaps | total us | vs uniform | gate_up idle | down idle |"
    rows = [head, "|" + "---|" * (len(stages) + 6)]
    for imb, r in sums.items():
        per = r["per_stage"]
        cells = [f"{per.get(st, 0.0):,.1f}" for st in stages]
        cost = f"{r['imbalance_cost']:.2f}x" if r["imbalance_cost"] is not None else "-"
        rows.append(f"| {imb} | " + " | ".join(cells) + f" | {r['gaps_us']:,.1f} | {r['time_us']:,.1f} | {cost} | "
                    f"{_idle(r['idle_pct'], 'gate_up')} | {_idle(r['idle_pct'], 'down')} |")
    return "\n".join(rows)


def save(results: dict[str, dict], path: Path = SAVED, **config) -> dict:
    """Write the summary with the block's configuration to `path` (the README's real-size table is tested
    against it: the run takes minutes); returns what it wrote."""
    data = {"config": config, "results": summary(results)}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")  # in run order: the table keeps it
    return data


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
        if tokens == 4096 and target == "ascend910b2":
            save(results, tokens=tokens, target=target, **DSV3)
            print(f"(saved to {SAVED.relative_to(Path.cwd()) if SAVED.is_relative_to(Path.cwd()) else SAVED})")
    for imb, r in results.items():
        print(f"== {imb}: lowered in {r['lower_s']:.1f} s, simulated in {r['sim_s']:.1f} s")
        print(format_moe_report(r["report"]))
    print()
    print(table(results))


if __name__ == "__main__":
    main(sys.argv)
