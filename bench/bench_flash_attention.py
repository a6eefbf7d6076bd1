"""Benchmark: attention (ks.ops.flash_attention) simulated at the six published 910B2 points, side by side.

    .venv/bin/python bench/bench_flash_attention.py [--markdown] [--decode]

D = 128, B = N = 1, S_q = S_kv = S, float16, no mask, on ascend910b2 with the fused attention kernel (one
cube-vector-cube kernel with the online softmax, lower/attention.py; the plan `ks.create_schedule` chooses at these
sizes, and `create_schedule(..., fuse=True)` here so the unfused plan is not simulated too). FLOPs 4 S^2 D.
Measured: torch_npu's fused attention on 910B2, from hw-native-sys/pto-isa
kernels/manual/common/flash_atten/README.md ("910B2 Multi-Core Comparison", torch_npu time). Nothing in the
simulator is calibrated on these points. `--markdown` prints the
table alone (the README's block).

`--decode`: attention at decode (B = 1, S_q = 1, N in DECODE_HEADS, S_kv in DECODE_SKV, D = 128, float16), simulated
three ways: the fused kernel with the auto split of S_kv (FlashDecode, lower/attention_split.py), the fused kernel
with one part per head (`split('kv', 1)`), and the two-kernel plan (`keep_out_of_fusion` of the P V matmul); with
the plan `ks.create_schedule` picks. No measured decode times are set beside them."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from bench.text_table import columns  # noqa: E402
from kernelstudio.sim.results import busiest_pipe  # noqa: E402

TARGET = "ascend910b2"
PIPES = {"M": "cube", "V": "vector", "FIX": "fixpipe"}
D = 128
# S -> torch_npu time (us) on 910B2, the source in the module doc
MEASURED_US = {1024: 58.461, 2048: 70.801, 4096: 118.302, 8192: 353.147, 16384: 1118.462, 32768: 3646.173}


def flops(s: int) -> float:
    return 4.0 * s * s * D


def simulate(s: int) -> tuple[int, float, float, float, str]:
    """(kernels, simulated time in us, HBM bytes, launch gaps in us, busiest pipe) of the default plan at
    sequence length s."""
    q, k, v = (ks.placeholder((1, 1, s, D), "float16", name=n) for n in ("query", "key", "value"))
    prog = ks.lower(ks.create_schedule([ks.ops.flash_attention(q, k, v)], fuse=True), target=TARGET)
    r = ks.simulate(prog)
    m = r.metrics
    pipe, use = busiest_pipe(m)
    return len(prog.kernels), r.time_us, m["hbm_bytes"], m["launch_overhead_us"], f"{PIPES.get(pipe, pipe)} {use:.0%}"


Row = tuple[int, int, float, float, float, str]


def rows() -> list[Row]:
    return [(s, *simulate(s)) for s in MEASURED_US]


def table(rs: list[Row]) -> str:
    head = ("S", "kernels", "predicted (us)", "measured (us)", "predicted TFLOPS", "measured TFLOPS",
            "predicted / measured", "HBM (MB)", "launch (us)", "busiest pipe")
    body = [(f"{s}", f"{n}", f"{t:,.1f}", f"{MEASURED_US[s]:,.1f}", f"{flops(s) / t / 1e6:.1f}",
             f"{flops(s) / MEASURED_US[s] / 1e6:.1f}", f"{t / MEASURED_US[s]:.2f}", f"{b / 1e6:,.1f}",
             f"{lu:.0f}", pipe)
            for s, n, t, b, lu, pipe in rs]
    return columns(head, body, right=range(len(head) - 1))


DECODE_HEADS = (8, 32)
DECODE_SKV = (4096, 8192, 16384, 32768)
DecodeRow = tuple[int, int, int, float, float, float, str, float]


def decode(n: int, skv: int) -> DecodeRow:
    """(N, S_kv, parts, split us, one part per head us, two kernels us, the planner's plan, HBM MB of the split
    kernel) at B = 1, S_q = 1."""
    q = ks.placeholder((1, n, 1, D), "float16", name="query")
    k, v = (ks.placeholder((1, n, skv, D), "float16", name=nm) for nm in ("key", "value"))
    out = ks.ops.flash_attention(q, k, v)
    split = ks.lower(ks.create_schedule([out], fuse=True), target=TARGET)
    one = ks.create_schedule([out], fuse=True)
    one[one.kernels[0].name].split("kv", 1)
    two = ks.create_schedule([out], fuse=True)
    two.keep_out_of_fusion(two.kernels[0].root)
    r = ks.simulate(split)
    t_one, t_two = (ks.simulate(ks.lower(x, target=TARGET)).time_us for x in (one, two))
    plan = "fused" if ks.create_schedule([out], target=TARGET).choices[0].fused else "two kernels"
    parts = dict(split.kernels[0].tiling).get("kv_splits", 1)
    return n, skv, parts, r.time_us, t_one, t_two, plan, r.metrics["hbm_bytes"] / 1e6


def decode_rows() -> list[DecodeRow]:
    return [decode(n, skv) for n in DECODE_HEADS for skv in DECODE_SKV]


def decode_table(rs: list[DecodeRow]) -> str:
    head = ("N", "S_kv", "parts", "split (us)", "one part (us)", "two kernels (us)", "one part / split",
            "split GB/s", "plan")
    body = [(f"{n}", f"{skv}", f"{p}", f"{t:,.1f}", f"{t1:,.1f}", f"{t2:,.1f}", f"{t1 / t:.2f}",
             f"{mb * 1e3 / t:,.0f}", plan) for n, skv, p, t, t1, t2, plan, mb in rs]
    return columns(head, body, right=range(len(head) - 1))


def main() -> None:
    if "--decode" in sys.argv:
        t0 = time.perf_counter()
        rs = decode_rows()
        if "--markdown" not in sys.argv:
            print(f"attention at decode on {TARGET}: B=1, S_q=1, D={D}, float16 (simulated; {len(rs)} points in "
                  f"{time.perf_counter() - t0:.1f} s)")
        print(decode_table(rs))
        return
    if "--markdown" in sys.argv:
        print(table(rows()))
        return
    rs = []
    for s in MEASURED_US:
        t0 = time.perf_counter()
        rs.append((s, *simulate(s)))
        print(f"S={s}: built, lowered and simulated in {time.perf_counter() - t0:.1f} s", flush=True)
    print(f"\nattention on {TARGET}, D={D}, B=N=1, float16, fused attention kernel (simulated) vs torch_npu "
          "(measured)")
    print(table(rs))


if __name__ == "__main__":
    main()
