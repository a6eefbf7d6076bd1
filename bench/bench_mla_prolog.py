"""Benchmark: MlaProlog (ks.ops.mla_prolog) at DeepSeek's sizes, the fused plan vs the unfused baseline.

    .venv/bin/python bench/bench_mla_prolog.py [--markdown]

He = 7168, Hcq = 1536, Hckv = 512, D = 128, Dr = 64, N = 128 heads, bfloat16, int64 cache_index, PA_BSND caches
of BlockSize 128 with the fewest blocks that hold T tokens, on ascend910b2 (cold L2). For T = 1 (decode) to
4096 (prefill): each plan's kernel count, simulated time, HBM bytes, % of its roofline bound and busiest pipe
and longest kernel (`ks.compare_plans`), then the wall time to build, lower and simulate both plans. These are simulated
numbers; no public figure of this plan on hardware exists to set beside them. `--markdown` prints the table
alone (the README's block). Then the quantized variants (`quant=None | "partial" | "partial_kv_cache"`, aclnnMlaProlog's
scenarios) at T = 1 and 128, fused plan: time, HBM bytes and the weights' bytes (int8 weight_uq_qr halves that
weight, the others stay bfloat16); `--markdown-quant` prints that table alone."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from bench.text_table import columns  # noqa: E402
from kernelstudio.core.dtypes import itemsize  # noqa: E402

TOKENS = (1, 128, 1024, 4096)
TARGET = "ascend910b2"
QUANT_TOKENS = (1, 128)
QUANTS = (None, "partial", "partial_kv_cache")


def report(t: int) -> ks.PlanReport:
    return ks.compare_plans(ks.ops.mla_prolog(T=t, N=128, block_size=128), TARGET, name=f"mla_prolog_t{t}")


def rows() -> list[tuple[int, ks.PlanReport]]:
    return [(t, report(t)) for t in TOKENS]


def table(reps: list[tuple[int, ks.PlanReport]]) -> str:
    head = ("T", "plan", "kernels", "time (us)", "HBM (MB)", "% of roofline", "busiest pipe", "longest kernel (us)")
    body = []
    for t, rep in reps:
        for r in rep.rows:
            body.append((str(t), r.plan, str(r.kernels), f"{r.time_us:,.1f}", f"{r.hbm_bytes / 1e6:,.1f}",
                         f"{r.roofline_pct:.1f}", f"{r.busiest_pipe} {r.busiest_pipe_pct:.0f}%",
                         f"{r.longest_kernel} {r.longest_kernel_us:,.1f}"))
    return columns(head, body, right=(0, 2, 3, 4, 5))


def quant_row(t: int, quant: str | None) -> tuple[int, str, int, float, int, int, str, float]:
    """(T, quant, kernels, time us, HBM bytes, weight bytes, longest kernel, its us) of the fused plan."""
    outs = ks.ops.mla_prolog(T=t, N=128, block_size=128, quant=quant)
    prog = ks.lower(ks.create_schedule(list(outs), target=TARGET), TARGET, name=f"mla_prolog_t{t}")
    r = ks.simulate(prog)
    weights = sum(math.prod(p.shape) * itemsize(p.dtype) for p in ks.ir.Graph([o.node for o in outs]).placeholders
                  if ks.Tensor(p).name.startswith("weight_"))
    top = max(r.kernels, key=lambda k: k["time_us"])
    return (t, str(quant), len(prog.kernels), r.time_us, int(r.metrics["hbm_bytes"]), weights, top["name"],
            top["time_us"])


def quant_rows() -> list[tuple[int, str, int, float, int, int, str, float]]:
    return [quant_row(t, q) for t in QUANT_TOKENS for q in QUANTS]


def quant_table(qrows: list[tuple[int, str, int, float, int, int, str, float]]) -> str:
    head = ("T", "quant", "kernels", "time (us)", "HBM (MB)", "weights (MB)", "longest kernel (us)")
    body = [(str(t), q, str(k), f"{us:,.1f}", f"{hbm / 1e6:,.1f}", f"{w / 1e6:,.1f}", f"{top} {top_us:,.1f}")
            for t, q, k, us, hbm, w, top, top_us in qrows]
    return columns(head, body, right=(0, 2, 3, 4, 5))


def main() -> None:
    if "--markdown" in sys.argv:
        print(table(rows()))
        return
    if "--markdown-quant" in sys.argv:
        print(quant_table(quant_rows()))
        return
    reps = []
    for t in TOKENS:
        t0 = time.perf_counter()
        reps.append((t, report(t)))
        print(f"T={t}: both plans built, lowered and simulated in {time.perf_counter() - t0:.1f} s", flush=True)
    print(f"\nMlaProlog on {TARGET}, N=128, He=7168, bfloat16, PA_BSND BlockSize 128 (simulated)")
    print(table(reps))
    for t in (1, 1024):
        rep = dict(reps)[t]
        print(f"\nT={t}: ops sharing a kernel in the fused plan\n{rep.sharing()}")
    print("\nQuantized variants (quant=), fused plan (simulated)")
    print(quant_table(quant_rows()))


if __name__ == "__main__":
    main()
