"""Benchmark: ks.tune on three designs, default vs tuned predicted time. Prints numbers.

    .venv/bin/python bench/bench_tune.py [budget]

For MlaProlog-lite (64x256x512), Conv+Bias+ReLU ([1,64,112,112], 3x3, 64 -> 64) and matmul + rms_norm
(256x2048x1024, M x N x K) on ascend910b2: the default configuration's time, the evolutionary search's
best (budget configurations, seed 0, the local process pool), the true optimum from a full grid, the
configurations evaluated and pruned (by reason), the wall time of the search, and of the same search
again (every result a cache hit from the design database). A fresh temporary database is used, so
every number is from a cold run.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from tests import reference_kernels as reference  # noqa: E402

TARGET = "ascend910b2"


def mla_prolog_lite():
    out = reference.mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 16, [16, 32, 64]))
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def conv_bias_relu():
    out = reference.conv_bias_relu(n=1, cin=64, hw=112, cout=64)
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 64, [16, 32, 64]))
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512, 1024]))
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def matmul_rms_norm():
    x = ks.placeholder((256, 1024), "float16", name="x")
    w = ks.placeholder((2048, 1024), "float16", name="w")
    y = ks.matmul(x, w, transpose_b=True)
    out = ks.rms_norm(y, axis=-1, name="out")
    s = ks.create_schedule(out, fuse=ks.knob("fuse", None, [None, True, False]))  # None: the simulator picks
    st = s[y]  # the kernel that computes the matmul, fused or not
    st.split("m", ks.knob("tile_m", 64, [16, 32, 64, 128]))
    st.split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    st.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
    st.double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


DESIGNS = [("MlaProlog-lite", mla_prolog_lite), ("Conv+Bias+ReLU", conv_bias_relu),
           ("matmul+rms_norm 256x2048x1024", matmul_rms_norm)]


def main() -> None:
    budget = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    print(f"{TARGET}; evolutionary search, budget {budget}, seed 0, local process pool; grid = every configuration")
    print(f"{'design':30} {'space':>5} {'default us':>10} {'tuned us':>9} {'speedup':>7} {'grid best':>9} "
          f"{'tried':>5} {'pruned':>6} {'wall s':>6} {'cached s':>8}  pruned by reason")
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "designs.sqlite"
        for label, fn in DESIGNS:
            t0 = time.perf_counter()
            r = ks.tune(fn, TARGET, budget=budget, strategy="evolutionary", seed=0, db=db, progress=False)
            wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = ks.tune(fn, TARGET, budget=budget, strategy="evolutionary", seed=0, db=db, progress=False)
            cached = time.perf_counter() - t0
            assert again.cache_hits == len(again.history) and again.best_time_us == r.best_time_us
            grid = ks.tune(fn, TARGET, budget=r.space_size, strategy="grid", db=db, progress=False)
            reasons = ", ".join(f"{k} x{v}" for k, v in r.pruned.items()) or "-"
            d = r.default
            print(f"{label:30} {r.space_size:5d} {d.time_us:10.2f} {r.best_time_us:9.2f} {r.speedup():6.2f}x "
                  f"{grid.best_time_us:9.2f} {len(r.history):5d} {sum(r.pruned.values()):6d} {wall:6.2f} "
                  f"{cached:8.3f}  {reasons}")
            print(f"{'':30} best: {r.best.config}")


if __name__ == "__main__":
    main()
