"""Benchmark: the four reference designs against their true roofline (prints one table; not a test).

    .venv/bin/python bench/bench_roofline.py [target]

Auto schedule on ascend910b2 (or `target`). Columns: simulated time, cube TFLOPS, % of the roofline
bound (max of flops / unit peak and compulsory bytes / HBM bandwidth), traffic amplification
(GM bytes moved / compulsory bytes), share of GM reads served by L2, the busiest pipe and what
bounds the roofline. Goals: the 4096^3 matmul >= 80 % of the cube peak; matmul +
rms_norm >= 75 % of its roofline bound."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.sim.results import LANES  # noqa: E402
from tests import reference_kernels as reference  # noqa: E402


def matmul_4096():
    a = ks.placeholder((4096, 4096), "float16", name="a")
    b = ks.placeholder((4096, 4096), "float16", name="b")
    return ks.matmul(a, b)


def matmul_rms_norm():
    x = ks.placeholder((16384, 1536), "float16", name="x")
    w = ks.placeholder((1536, 7168), "float16", name="w")
    return ks.rms_norm(ks.matmul(x, w))


def conv_bias_relu():
    return reference.conv_bias_relu(n=1, cin=64, hw=112, cout=64)  # the article's [1,64,112,112], 3x3


DESIGNS = [("matmul 4096^3", matmul_4096), ("matmul 16384x7168x1536 + rms_norm", matmul_rms_norm),
           ("Conv+Bias+ReLU [1,64,112,112]", conv_bias_relu), ("MlaProlog-lite", reference.mla_prolog_lite)]


def busiest(metrics: dict) -> str:
    """The pipe with the highest utilisation (waits on flags and scalar issue left out)."""
    pipes = {p: v["utilisation"] for p, v in metrics["pipes"].items() if p not in ("FLOW", "S")}
    p = max(pipes, key=pipes.get)
    return f"{LANES.get(p, p)} {pipes[p]:.0%}"


def row(name: str, out, target: str) -> dict:
    res = ks.simulate(ks.lower(ks.create_schedule(out), target))
    m = res.metrics
    return {"design": name, "time_us": res.time_us, "tflops": m["tflops"], "roofline_pct": 100 * m["efficiency"],
            "amplification": m["traffic_amplification"], "l2_hit": 100 * m["l2_hit_ratio"],
            "pipe": busiest(m), "bound": m["roofline_limiter"]}


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else "ascend910b2"
    peak = ks.hw.get(target).peak_flops("float16") / 1e12
    rows = [row(n, f(), target) for n, f in DESIGNS]
    head = ("design", "time (us)", "TFLOPS", "% of roofline", "traffic ampl.", "L2 hit", "busiest pipe", "bound")
    cells = [(r["design"], f"{r['time_us']:,.1f}", f"{r['tflops']:.1f}", f"{r['roofline_pct']:.1f}%",
              f"{r['amplification']:.2f}x", f"{r['l2_hit']:.1f}%", r["pipe"], r["bound"]) for r in rows]
    widths = [max(len(c[i]) for c in (head, *cells)) for i in range(len(head))]
    print(f"auto schedule on {target} (fp16 cube peak {peak:.1f} TFLOPS)")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for c in cells:
        print("| " + " | ".join(x.ljust(w) for x, w in zip(c, widths, strict=True)) + " |")
    mm, fused = rows[0], rows[1]
    goals = [(f"4096^3 matmul at {100 * mm['tflops'] / peak:.1f}% of the cube peak (goal >= 80%)",
              mm["tflops"] / peak >= 0.80),
             (f"matmul + rms_norm at {fused['roofline_pct']:.1f}% of its roofline (goal >= 75%)",
              fused["roofline_pct"] >= 75.0)]
    for text, ok in goals:
        print(f"{'met' if ok else 'MISSED'}: {text}")


if __name__ == "__main__":
    main()
