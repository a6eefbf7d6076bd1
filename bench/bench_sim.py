"""Benchmark: simulator speed (prints numbers; not a test).

- MlaProlog-lite (lowered), goal <= 10 ms per simulate();
- a large MIX kernel (M=16384, N=7168, K=1536 matmul + rms-norm epilogue), goal <= 200 ms with
  shortcuts and >= 200k instructions/s with exact=True: once as lowered by ks.lower with the
  auto-schedule, once as a hand-built program with 86,016 k-iterations (tests/sim/programs.py)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "sim"))

import programs  # noqa: E402

import kernelstudio as ks  # noqa: E402
from kernelstudio.sim import simulate  # noqa: E402
from tests.reference_kernels import mla_prolog_lite  # noqa: E402


def _times(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def main() -> None:
    prog = ks.lower(ks.create_schedule(mla_prolog_lite()), "ascend910b2")
    simulate(prog)  # load calibration tables
    t = _times(lambda: simulate(prog), 20)
    print(f"MlaProlog-lite simulate: median {statistics.median(t):.2f} ms (min {min(t):.2f}; goal <= 10 ms)")
    x = ks.placeholder((16384, 1536), "float16", name="x")
    w = ks.placeholder((1536, 7168), "float16", name="w")
    lowered = ks.lower(ks.create_schedule(ks.rms_norm(ks.matmul(x, w))), "ascend910b2")
    t = _times(lambda: simulate(lowered), 3)
    res = simulate(lowered)
    print(f"large kernel (lowered), shortcuts: median {statistics.median(t):.1f} ms (goal <= 200 ms); "
          f"{res.stats['instructions_simulated']:,} simulated for {res.stats['instructions_represented']:,} "
          f"instructions; simulated time {res.time_us:,.1f} us")
    t0 = time.perf_counter()
    full = simulate(lowered, exact=True)
    secs = time.perf_counter() - t0
    n = full.stats["instructions_simulated"]
    print(f"large kernel (lowered), exact: {secs:.2f} s, {n * full.stats['passes'] / secs:,.0f} instructions/s "
          f"(goal >= 200k/s); {abs(full.time_us / res.time_us - 1):.3%} from the shortcut result")
    big = programs.big_program()
    t = _times(lambda: simulate(big), 3)
    res = simulate(big)
    print(f"large kernel, shortcuts: median {statistics.median(t):.1f} ms (goal <= 200 ms); "
          f"{res.stats['instructions_simulated']:,} simulated for {res.stats['instructions_represented']:,} "
          f"instructions, {res.stats['passes']} passes; simulated time {res.time_us:,.1f} us")
    t0 = time.perf_counter()
    full = simulate(big, exact=True)
    secs = time.perf_counter() - t0
    n = full.stats["instructions_simulated"]
    print(f"large kernel, exact: {secs:.2f} s, {n:,} instructions x {full.stats['passes']} passes = "
          f"{n * full.stats['passes'] / secs:,.0f} instructions/s (goal >= 200k/s); "
          f"time {full.time_us:,.1f} us vs shortcuts {res.time_us:,.1f} us "
          f"({abs(full.time_us / res.time_us - 1):.3%} apart)")


if __name__ == "__main__":
    main()
