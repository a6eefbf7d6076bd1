"""Benchmark: what a simulated search of the fused attention kernel's s1 block and slots would cost inside
`ks.create_schedule`, and what it would gain. Prints numbers.

    .venv/bin/python bench/bench_attention_search.py

For FlashAttention at S = 1024, 2048 and 4096 (B = N = 1, D = 128, float16, the fused kernel) on ascend910b2: the
wall time of one lower + simulate at the default blocks (128 x 512, 3 slots), and of the smallest search worth
running when the kernel is formed, the s1 stops (64, 128, 256) times 3 or 4 slots with s2 at 512 (6 points, the
default among them); the default's predicted time and the search's best. The budget for such a search inside
`create_schedule` is 0.3 s on a 2-core machine at S = 4096.

    .venv/bin/python bench/bench_attention_search.py --markdown

prints the README's table instead (the predicted times only: deterministic numbers, no timings).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402

TARGET = "ascend910b2"
SIZES = (1024, 2048, 4096)
POINTS = [(s1, slots) for s1 in (64, 128, 256) for slots in (3, 4)]  # s2 at its default 512
BUDGET_S = 0.3


def _simulate(out, s1: int, slots: int) -> float:
    s = ks.create_schedule([out], fuse=True)
    s[out].split("s1", s1).slots(slots)
    return ks.simulate(ks.lower(s, TARGET)).time_us


def search(size: int) -> dict:
    """The default's time and the six points' best (config, time), with the wall seconds of one simulation and of
    the six."""
    q, k, v = (ks.placeholder((1, 1, size, 128), "float16", name=n) for n in ("query", "key", "value"))
    out = ks.ops.flash_attention(q, k, v)
    t0 = time.perf_counter()
    default = _simulate(out, 128, 3)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    times = {p: _simulate(out, *p) for p in POINTS}
    six = time.perf_counter() - t0
    best = min(times, key=lambda p: (times[p], p))
    return {"S": size, "default": default, "best": best, "best_us": times[best], "one_s": one, "six_s": six}


def table(rows: list[dict]) -> str:
    out = ["| S | default 128 x 512, 3 slots (us) | best of the 6 points (us) | its s1, slots | gain |",
           "|---:|---:|---:|---|---:|"]
    for r in rows:
        out.append(f"| {r['S']} | {r['default']:.2f} | {r['best_us']:.2f} | {r['best'][0]}, {r['best'][1]} | "
                   f"{100 * (1 - r['best_us'] / r['default']):.1f} % |")
    return "\n".join(out)


def main() -> None:
    rows = [search(s) for s in SIZES]
    if "--markdown" in sys.argv:
        print(table(rows))
        return
    print(f"{TARGET}; FlashAttention B = N = 1, D = 128, float16, fused; search: s1 in (64, 128, 256) x slots in "
          f"(3, 4), s2 512; budget {BUDGET_S} s at S = 4096")
    print(f"{'S':>6} {'default us':>10} {'best us':>8} {'s1, slots':>10} {'one sim s':>9} {'6-point s':>9}")
    for r in rows:
        print(f"{r['S']:6d} {r['default']:10.2f} {r['best_us']:8.2f} {str(r['best']):>10} {r['one_s']:9.3f} "
              f"{r['six_s']:9.3f}")
    big = rows[-1]
    print(f"at S = {big['S']}: the 6-point search takes {big['six_s']:.2f} s, {big['six_s'] / BUDGET_S:.1f}x the "
          f"{BUDGET_S} s budget; one simulation alone {big['one_s']:.2f} s")


if __name__ == "__main__":
    main()
