"""Benchmark: the C tile order of a matmul whose B does not fit L2 (prints one table; not a test).

    .venv/bin/python bench/bench_swizzle.py [M N K] [target]

Auto tiles on ascend910b2 (l2_bytes 192 MB) for the 16384^3 fp16 matmul (A and B are 512 MB
each): in row-major order, in the order the auto-schedule picks (auto_swizzle) and per swizzle
group. Columns: simulated time, HBM bytes read, the share of GM reads L2 serves, and the HBM reads
of A and B over their size (1.00x: each read from HBM once)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.sim.multicore import run_program  # noqa: E402


def _hbm_by_tensor(prog) -> dict[str, float]:
    """HBM bytes read per input tensor (the misses of the L2 model)."""
    run = run_program(prog, prog.profile)
    moved = sum(k.per_sid[:, 0] for k in run.kernels)
    out: dict[str, float] = {}
    for s in run.statics:
        if s.kind == "copy" and s.tensor and not s.gm_write:
            out[s.tensor] = out.get(s.tensor, 0.0) + float(moved[s.sid]) * (1.0 - run.hits[s.sid])
    return out


def main() -> None:
    args = [a for a in sys.argv[1:] if a.isdigit()]
    target = next((a for a in sys.argv[1:] if not a.isdigit()), "ascend910b2")
    m, n, k = (int(a) for a in args) if len(args) == 3 else (16384, 16384, 16384)
    a = ks.placeholder((m, k), "float16", name="a")
    b = ks.placeholder((k, n), "float16", name="b")
    out = ks.matmul(a, b)
    prof = ks.hw.get(target)
    print(f"matmul {m}x{n}x{k} fp16 on {target}: A {m * k * 2 / 2**20:,.0f} MiB, B {k * n * 2 / 2**20:,.0f} MiB, "
          f"L2 {prof.l2_bytes / 2**20:,.0f} MiB")
    head = ("order", "time (us)", "TFLOPS", "HBM read (GB)", "L2 hit", "A from HBM", "B from HBM", "lower (s)",
            "sim (s)")
    rows = []
    for label, sw in [("row-major: reorder('m', 'n')", "rows"), ("auto schedule", None),
                      ("swizzle(4, 'm')", (4, "m")), ("swizzle(8, 'm')", (8, "m")), ("swizzle(16, 'm')", (16, "m")),
                      ("swizzle(8, 'n')", (8, "n"))]:
        t0 = time.perf_counter()
        s = ks.create_schedule(out)
        if sw == "rows":
            s[s.kernels[0].name].reorder("m", "n")
        elif sw:
            s[s.kernels[0].name].swizzle(*sw)
        prog = ks.lower(s, target)
        lowering = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = ks.simulate(prog)
        secs = time.perf_counter() - t0
        hbm = _hbm_by_tensor(prog)
        mt = res.metrics
        if sw is None:
            note = next((n for n in prog.kernels[0].notes if n.startswith("auto swizzle(")), "")
            label += f": {note[5:note.index(')') + 1] if note else 'row-major'}"
        rows.append((label, f"{res.time_us:,.1f}", f"{mt['tflops']:.1f}", f"{mt['hbm_read_bytes'] / 1e9:.2f}",
                     f"{100 * mt['l2_hit_ratio']:.1f}%", f"{hbm.get('a', 0) / (m * k * 2):.2f}x",
                     f"{hbm.get('b', 0) / (k * n * 2):.2f}x", f"{lowering:.2f}", f"{secs:.2f}"))
    tiling = dict(prog.kernels[0].tiling)
    print(f"tiles {tiling['tile_m']}x{tiling['tile_n']}x{tiling['tile_k']}, {tiling['m_tiles']}x{tiling['n_tiles']} "
          f"C tiles on {tiling['block_dim']} cores; 'A/B from HBM' = HBM bytes read / the tensor's bytes")
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)) + " |")


if __name__ == "__main__":
    main()
