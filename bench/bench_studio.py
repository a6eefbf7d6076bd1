"""Benchmark: a Studio knob move on MlaProlog-lite -> every view's data rebuilt (goal: median <= 25 ms,
p95 <= 50 ms). Prints numbers.

A move re-runs the cell body with the new knob values, lowers, simulates, generates the Ascend C and
computes the data of every view (cards, what changed, capacity, DAG DOT, memory flow, timeline, idle
breakdown, roofline, code). The unfused baseline does not depend on the knobs and is built once; the
IR after each pass is printed only while the Passes tab is open (timed separately below).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelstudio.notebook import views  # noqa: E402
from kernelstudio.notebook.session import StudioSession  # noqa: E402
from tests.notebook.cells import MLA_CELL  # noqa: E402

MOVES = [{"tile_m": m, "double_buffer": db} for db in (True, False) for m in (16, 32, 64)]


def _percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def run(n: int = 36, passes: bool = False) -> list[float]:
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    prev = ses.rebuild()
    files = dict(prev.code.files)
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        d = ses.rebuild(MOVES[i % len(MOVES)])
        data = views.studio_data(d, prev, files, passes=passes)
        times.append((time.perf_counter() - t0) * 1e3)
        prev, files = d, data["files"]
    return times


def main() -> None:
    for passes, label in ((False, "every view's data"), (True, "... with the Passes tab open")):
        t = run(passes=passes)
        print(f"knob move -> {label}, MlaProlog-lite: median {statistics.median(t):.1f} ms, "
              f"p95 {_percentile(t, 0.95):.1f} ms (n={len(t)}; goal median <= 25 ms, p95 <= 50 ms)")


if __name__ == "__main__":
    main()
