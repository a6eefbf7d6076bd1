"""Benchmark: ks.tune on four designs, default vs tuned predicted time. Prints numbers.

    .venv/bin/python bench/bench_tune.py [fraction]

For MlaProlog-lite (64x256x512), Conv+Bias+ReLU ([1,64,112,112], 3x3, 64 -> 64) and matmul + rms_norm
at 256x2048x1024 and 4096x7168x1536 (M x N x K) on ascend910b2: the default configuration's time, the
evolutionary search's best with a budget of `fraction` (default 10 %) of the space (seed 0, the local
process pool), the true optimum from a full grid, whether the search came within 2 % of it, the
configurations evaluated and pruned (by reason), evaluations per second of the cold search and the
speed-up of the same search again (every result a cache hit from the design database). Last, the
throughput of the local pool against a Dask LocalCluster (2 worker processes) on one grid. A fresh
temporary database is used, so every cold number is cold. Goal: within 2 % using <= 10 % of the
evaluations on every design.
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
    st = s[out]
    st.split("m", ks.knob("tile_m", 16, [16, 32, 64]))
    st.split("n", ks.knob("tile_n", 256, [64, 128, 256, 512]))
    st.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
    st.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
    st.double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def conv_bias_relu():
    out = reference.conv_bias_relu(n=1, cin=64, hw=112, cout=64)
    s = ks.create_schedule(out)
    st = s[out]
    st.split("m", ks.knob("tile_m", 64, [16, 32, 64]))
    st.split("n", ks.knob("tile_n", 256, [128, 256, 512, 1024]))
    st.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
    st.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
    st.double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def _matmul_rms_norm(m: int, n: int, k: int):
    def build():
        x = ks.placeholder((m, k), "float16", name="x")
        w = ks.placeholder((n, k), "float16", name="w")
        y = ks.matmul(x, w, transpose_b=True)
        out = ks.rms_norm(y, axis=-1, name="out")
        s = ks.create_schedule(out, fuse=ks.knob("fuse", None, [None, True, False]))  # None: the simulator picks
        st = s[y]  # the kernel that computes the matmul, fused or not
        st.split("m", ks.knob("tile_m", 64, [16, 32, 64, 128]))
        st.split("n", ks.knob("tile_n", 256, [128, 256, 512]))
        st.split("k", ks.knob("tile_k", 64, [32, 64, 128, 256]))
        st.l1_k_steps(ks.knob("l1_k_steps", 1, [1, 2, 4]))
        st.double_buffer(ks.knob("double_buffer", True, [False, True]))
        return s
    build.__name__ = f"matmul_rms_norm_{m}x{n}x{k}"
    return build


DESIGNS = [("MlaProlog-lite", mla_prolog_lite), ("Conv+Bias+ReLU", conv_bias_relu),
           ("matmul+rms_norm 256x2048x1024", _matmul_rms_norm(256, 2048, 1024)),
           ("matmul+rms_norm 4096x7168x1536", _matmul_rms_norm(4096, 7168, 1536))]


def _dask_vs_local(db_dir: Path) -> str:
    """Evaluations per second of one cold grid on the local pool and on a Dask LocalCluster."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        return "Dask: not installed (pip install -e '.[dask]')"
    rates = {}
    for label in ("local pool", "Dask LocalCluster(2)"):
        db = db_dir / f"{label.split()[0]}.sqlite"  # cold for each executor
        if label == "local pool":
            t0 = time.perf_counter()
            r = ks.tune(mla_prolog_lite, TARGET, budget=10**6, strategy="grid", db=db, progress=False)
        else:
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, Client(cluster) as c:
                t0 = time.perf_counter()
                r = ks.tune(mla_prolog_lite, TARGET, budget=10**6, strategy="grid", executor=c, db=db,
                            progress=False)
        rates[label] = len(r.history) / (time.perf_counter() - t0)
    return "MlaProlog-lite full grid, evaluations/s: " + ", ".join(f"{k} {v:.1f}" for k, v in rates.items())


def main() -> None:
    fraction = float(sys.argv[1]) if len(sys.argv) > 1 else 0.10
    print(f"{TARGET}; evolutionary search, budget {fraction:.0%} of the space, seed 0, local process pool; "
          "grid = every configuration")
    print(f"{'design':31} {'space':>5} {'default us':>10} {'tuned us':>9} {'speedup':>7} {'grid best':>9} "
          f"{'<=2%':>4} {'tried':>5} {'pruned':>6} {'eval/s':>6} {'cache x':>7}  pruned by reason")
    hits = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "designs.sqlite"
        for label, fn in DESIGNS:
            size = ks.tune(fn, TARGET, budget=1, strategy="grid", db=False, progress=False).space_size
            budget = max(1, int(size * fraction))
            t0 = time.perf_counter()
            r = ks.tune(fn, TARGET, budget=budget, strategy="evolutionary", seed=0, db=db, progress=False)
            wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = ks.tune(fn, TARGET, budget=budget, strategy="evolutionary", seed=0, db=db, progress=False)
            cached = time.perf_counter() - t0
            assert again.cache_hits == len(again.history) and again.best_time_us == r.best_time_us
            grid = ks.tune(fn, TARGET, budget=r.space_size, strategy="grid", db=db, progress=False)
            ok = r.best_time_us <= grid.best_time_us * 1.02
            hits += ok
            reasons = ", ".join(f"{k} x{v}" for k, v in r.pruned.items()) or "-"
            d = r.default
            print(f"{label:31} {r.space_size:5d} {d.time_us:10.2f} {r.best_time_us:9.2f} {r.speedup():6.2f}x "
                  f"{grid.best_time_us:9.2f} {'yes' if ok else 'NO':>4} {len(r.history):5d} "
                  f"{sum(r.pruned.values()):6d} {len(r.history) / wall:6.1f} {wall / cached:6.0f}x  {reasons}")
            print(f"{'':31} best: {r.best.config}")
        print(f"within 2 % of the grid optimum with {fraction:.0%} of the evaluations: {hits} of {len(DESIGNS)}")
        print(_dask_vs_local(Path(tmp)))


if __name__ == "__main__":
    main()
