"""Benchmark: create_schedule + lower for MlaProlog-lite (goal: median <= 10 ms). Prints numbers."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from tests.reference_kernels import mla_prolog_lite  # noqa: E402


def main(n: int = 30) -> None:
    out = mla_prolog_lite()
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        ks.lower(ks.create_schedule(out), "ascend910b2")
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"create_schedule + lower, MlaProlog-lite: median {statistics.median(times):.2f} ms "
          f"(min {min(times):.2f}, max {max(times):.2f}, n={n}; goal <= 10 ms)")
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        prog = ks.lower(ks.create_schedule(out), "ascend910b2")
        texts = [text for _, text in prog.passes]
        times.append((time.perf_counter() - t0) * 1e3)
    print(f"  ... and printing the IR after each of its {len(texts)} passes: median "
          f"{statistics.median(times):.2f} ms")


if __name__ == "__main__":
    main()
