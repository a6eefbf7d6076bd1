"""Benchmark: whole kernels measured on real Ascend A2 chips next to what the simulator predicts (prints one table).

    .venv/bin/python bench/bench_measured.py [--markdown]

Each point is a published measurement (its source and how it was timed are in `POINTS`). The design is written
with the DSL and simulated with the auto schedule, or with the tiles the source states; nothing is fitted to
these points. Columns: measured and predicted time, how much shorter the prediction is (negative: longer),
their ratio (predicted / measured), the L2 protocol the prediction assumes (`cold`: nothing resident; `warm`:
the inputs left in L2 by the previous iteration of a benchmark loop; both when the source does not say), whether
the source timed the kernel on the device (msprof, a probe's bandwidth: the predicted time leaves the launch out)
or wall time around the call (the launch in), and what bounds the prediction. `--markdown` prints the table
the README holds."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402

CATLASS = "hicann/catlass docs/catlass_optimize_guidance.md"
TUNER = "hicann/catlass tools/tuner/README.md (msTuner_CATLASS, basic_matmul, rated 1800 MHz)"
TORCH = "zzc0721/torch-performance-test-data issue 109 (torch.matmul on 910B2)"
RMSNORM = "tile-ai/tilelang-mlir-ascend pull 140 (torch_npu add + rms_norm)"
PROBES = "tile-ai/tilelang-mlir-ascend pattern-library/constants.md (910B2C probes)"


@dataclass(frozen=True)
class Point:
    """One published measurement and the design that reproduces it."""

    name: str
    measured_us: float
    target: str
    build: Callable[[], ks.Program]
    source: str
    protocol: str  # the L2 protocol the source's timing implies: "cold", "warm" or "both" (not stated)
    timing: str  # "wall": the launch is in the measured time; "device": the kernel's own time on the chip
    note: str = ""


def matmul(m: int, n: int, k: int, dtype: str = "float16", *, transpose_b: bool = False,
           target: str = "ascend910b2", tiles: tuple[int, int, int, int] | None = None,
           swizzle: tuple[int, int] | None = None) -> Callable[[], ks.Program]:
    """A matmul design; `tiles` = (L1 m, L1 n, L1 k, L0 k) as CATLASS states them (L1TileShape, L0TileShape),
    `swizzle` = CATLASS's GemmIdentityBlockSwizzle<offset, direction> (direction 0: along m, 1: along n)."""
    def build() -> ks.Program:
        a = ks.placeholder((m, k), dtype, name="a")
        b = ks.placeholder((n, k) if transpose_b else (k, n), dtype, name="b")
        s = ks.create_schedule(ks.matmul(a, b, transpose_b=transpose_b), target=target)
        if tiles is not None:
            tm, tn, l1k, l0k = tiles
            s[s.kernels[0].name].split("m", tm).split("n", tn).split("k", l0k).l1_k_steps(l1k // l0k)
        if swizzle is not None:
            s[s.kernels[0].name].swizzle(swizzle[0], "mn"[swizzle[1]])
        return ks.lower(s, target)
    return build


def add_rms_norm(rows: int, cols: int, dtype: str, target: str = "ascend910b2") -> Callable[[], ks.Program]:
    """torch_npu's fused add + rms_norm: two outputs, the sum and the normalised rows."""
    def build() -> ks.Program:
        x = ks.placeholder((rows, cols), dtype, name="x")
        r = ks.placeholder((rows, cols), dtype, name="residual")
        g = ks.placeholder((cols,), dtype, name="gamma")
        total = ks.add(x, r, name="sum")
        return ks.lower(ks.create_schedule([total, ks.rms_norm(total, g, name="y")], target=target), target)
    return build


def stream(elems: int, target: str = "ascend910b2") -> Callable[[], ks.Program]:
    """The probe's streaming kernel: three fp16 loads, two adds, one store (a 3:1 read/write stream)."""
    def build() -> ks.Program:
        a, b, c = (ks.placeholder((elems // 4096, 4096), "float16", name=n) for n in "abc")
        return ks.lower(ks.create_schedule(ks.add(ks.add(a, b), c, name="out"), target=target), target)
    return build


def stream_us(elems: int, gbps_per_core: float, cores: int = 48) -> float:
    """The time a probe's per-core read bandwidth implies: three fp16 inputs read at that rate by every core."""
    return 3 * 2 * elems / (gbps_per_core * 1e9 * cores) * 1e6


def tflops_us(flops: float, tflops: float) -> float:
    return flops / (tflops * 1e12) * 1e6


B3 = "ascend910b3"  # CATLASS's "20 AIC" Atlas A2: the 910B3 has 20 cube cores (assumed: the page names no chip)
POINTS: tuple[Point, ...] = (
    Point("GEMM 1024x576x6144 fp16, L1 128x256x256", 72.5, B3,
          matmul(1024, 576, 6144, transpose_b=True, target=B3, tiles=(128, 256, 256, 64)), CATLASS, "both", "device",
          "B column-major; 24 C tiles on 20 cores"),
    Point("GEMM 1024x576x6144 fp16, L1 256x128x256", 48.6, B3,
          matmul(1024, 576, 6144, transpose_b=True, target=B3, tiles=(256, 128, 256, 64)), CATLASS, "both", "device",
          "20 C tiles on 20 cores"),
    Point("GEMM 20x6144x16384 fp16 B row-major, L1 128x256x256", 238.8, B3,
          matmul(20, 6144, 16384, target=B3, tiles=(128, 256, 256, 64)), CATLASS, "both", "device"),
    Point("GEMM 20x6144x16384 fp16 B row-major, L1 32x320x128", 252.4, B3,
          matmul(20, 6144, 16384, target=B3, tiles=(32, 320, 128, 32)), CATLASS, "both", "device"),
    Point("GEMM 1x768x5120 fp32, L1 128x128x256", 36.3, "ascend910b2",
          matmul(1, 768, 5120, "float32", transpose_b=True, tiles=(128, 128, 256, 64)), CATLASS, "both", "device",
          "24 AIC; 6 of them work"),
    Point("GEMM 1x768x5120 fp32, L1 16x32x1024", 15.5, "ascend910b2",
          matmul(1, 768, 5120, "float32", transpose_b=True, tiles=(16, 32, 1024, 256)), CATLASS, "both", "device"),
    # msTuner_CATLASS warms the chip up and times each kernel on the device; the page names no chip (1800 MHz rated:
    # 910B2 assumed) and reuses one set of inputs: warm.
    Point("GEMM 256x512x1024 fp16 row-major, L1 32x128x128, swizzle 3,0", 19.38, "ascend910b2",
          matmul(256, 512, 1024, tiles=(32, 128, 128, 32), swizzle=(3, 0)), TUNER, "warm", "device",
          "the tuner's first case"),
    Point("GEMM 256x512x1024 fp16 row-major, L1 64x128x128, swizzle 3,1", 12.74, "ascend910b2",
          matmul(256, 512, 1024, tiles=(64, 128, 128, 64), swizzle=(3, 1)), TUNER, "warm", "device",
          "the tuner's best of 1701"),
    Point("torch.matmul 1024^3 fp16", tflops_us(2 * 1024 ** 3, 98.1), "ascend910b2", matmul(1024, 1024, 1024),
          TORCH, "warm", "wall", "98.1 TFLOPS"),
    Point("torch.matmul 2048^3 fp16", tflops_us(2 * 2048 ** 3, 251.0), "ascend910b2", matmul(2048, 2048, 2048),
          TORCH, "warm", "wall", "251.0 TFLOPS"),
    Point("torch.matmul 8192^3 fp16", tflops_us(2 * 8192 ** 3, 305.5), "ascend910b2", matmul(8192, 8192, 8192),
          TORCH, "warm", "wall", "305.5 TFLOPS"),
    Point("torch.matmul 4096^3 bf16", tflops_us(2 * 4096 ** 3, 315.4), "ascend910b2",
          matmul(4096, 4096, 4096, "bfloat16"), TORCH, "warm", "wall", "315.4 TFLOPS"),
    Point("torch.matmul 4096^3 fp32", tflops_us(2 * 4096 ** 3, 84.5), "ascend910b2",
          matmul(4096, 4096, 4096, "float32"), TORCH, "warm", "wall", "84.5 TFLOPS"),
    Point("add + rms_norm 32x4096 bf16", 6.20, "ascend910b2", add_rms_norm(32, 4096, "bfloat16"), RMSNORM, "warm",
          "wall", "chip not stated (910B2C assumed)"),
    Point("add + rms_norm 2048x8192 bf16", 100.3, "ascend910b2", add_rms_norm(2048, 8192, "bfloat16"), RMSNORM,
          "warm", "wall"),
    Point("add + rms_norm 8192x32768 fp16", 2575.0, "ascend910b2", add_rms_norm(8192, 32768, "float16"), RMSNORM,
          "warm", "wall"),
    # The probe rotates over 4 sets of buffers: a set's data comes back after the other three passed through L2.
    # At 1M elements the 4 sets (32 MB) stay in L2: warm. From 16M (4 x 128 MB) LRU has evicted it: cold.
    Point("stream 3 loads + 1 store, 1M fp16", stream_us(2 ** 20, 33.9), "ascend910b2", stream(2 ** 20), PROBES,
          "warm", "device", "33.9 GB/s per core read, 48 cores; 4 sets fit in L2"),
    Point("stream 3 loads + 1 store, 16M fp16", stream_us(2 ** 24, 30.2), "ascend910b2", stream(2 ** 24), PROBES,
          "cold", "device", "30.2 GB/s per core; 4 sets x 128 MB rotate through L2"),
    Point("stream 3 loads + 1 store, 64M fp16", stream_us(2 ** 26, 20.9), "ascend910b2", stream(2 ** 26), PROBES,
          "cold", "device", "20.9 GB/s per core"),
    Point("stream 3 loads + 1 store, 256M fp16", stream_us(2 ** 28, 18.4), "ascend910b2", stream(2 ** 28), PROBES,
          "cold", "device", "18.4 GB/s per core (the chip's mixed-stream floor)"),
)


@dataclass(frozen=True)
class Row:
    point: Point
    protocol: str
    predicted_us: float
    bound: str

    @property
    def ratio(self) -> float:
        return self.predicted_us / self.point.measured_us


def bound_of(res: ks.SimResult, timing: str) -> str:
    """What the prediction is bound by: the launch when it is most of a wall time, else the roofline's limiter
    and the busiest pipe."""
    m = res.metrics
    if timing == "wall" and m["launch_overhead_us"] >= 0.5 * res.time_us:
        return "launch"
    pipes = {p: v["utilisation"] for p, v in m["pipes"].items() if p not in ("FLOW", "S")}
    busiest = max(pipes, key=pipes.get)
    memory = "L2" if m["l2_hit_ratio"] >= 0.5 else "HBM"
    return f"{m['roofline_limiter'] if m['roofline_limiter'] != 'memory' else memory}, {busiest} {pipes[busiest]:.0%}"


def rows() -> list[Row]:
    out = []
    for p in POINTS:
        prog = p.build()
        for protocol in (("cold", "warm") if p.protocol == "both" else (p.protocol,)):
            res = ks.simulate(prog, l2=protocol)
            launch = res.metrics["launch_overhead_us"] if p.timing == "device" else 0.0
            out.append(Row(p, protocol, res.time_us - launch, bound_of(res, p.timing)))
    return out


def table(rs: list[Row]) -> str:
    head = ("kernel", "chip", "timed", "measured (us)", "predicted (us)", "short by (us)", "ratio", "L2", "bound")
    cells = [(r.point.name, r.point.target.removeprefix("ascend"), r.point.timing, f"{r.point.measured_us:,.1f}",
              f"{r.predicted_us:,.1f}", f"{r.point.measured_us - r.predicted_us:,.1f}", f"{r.ratio:.2f}",
              r.protocol, r.bound) for r in rs]
    widths = [max(len(c[i]) for c in (head, *cells)) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(x.ljust(w) for x, w in zip(c, widths, strict=True)) + " |" for c in cells]
    return "\n".join(lines)


def summary(rs: list[Row]) -> str:
    """Median and worst ratio over the points, each point once (at the protocol its source used; `both`: the
    one nearer the measurement is not chosen, the mean of the two is)."""
    per_point: dict[str, list[float]] = {}
    for r in rs:
        per_point.setdefault(r.point.name, []).append(r.ratio)
    ratios = [statistics.fmean(v) for v in per_point.values()]
    worst = max(ratios, key=lambda x: max(x, 1 / x))
    return (f"{len(ratios)} points: median ratio {statistics.median(ratios):.2f}, worst {worst:.2f}, "
            f"{sum(1 for x in ratios if 1 / 1.5 <= x <= 1.5)} within 1.5x")


def main() -> None:
    rs = rows()
    print(table(rs))
    print()
    print(summary(rs))
    if "--markdown" not in sys.argv:
        print()
        for src in dict.fromkeys(p.source for p in POINTS):
            print(f"source: {src}")


if __name__ == "__main__":
    main()
