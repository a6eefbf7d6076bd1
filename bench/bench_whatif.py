"""Benchmark: a what-if sweep of 3 targets x 50 knob configurations on ks.tune's runners. Prints numbers.

    .venv/bin/python bench/bench_whatif.py [executor]      # executor: process (default) | inline | dask

The design is matmul + layer_norm + gelu at 1024x2048x1024 (M x N x K, fp16) with four knobs (tile_m, tile_n,
tile_k, double_buffer: 72 configurations, 50 of them spread over the grid); the targets are ascend910b2,
ascend910b4 and ascend950 (provisional). Every (target, configuration) is built, lowered and simulated on the
chosen runner; the wall time includes starting the local process pool (its workers import kernelstudio).
Then each target's fastest configuration is rebuilt for its full row, and the side-by-side headline printed.
Goal: under 10 s for the 150 builds on a 2-core machine.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from kernelstudio.tune.whatif import what_if_sweep  # noqa: E402

TARGETS = ("ascend910b2", "ascend910b4", "ascend950")
CONFIGS = 50


def mla_wide():
    """matmul + layer_norm + gelu, 1024x2048x1024 fp16, with its C tile and double buffering as knobs."""
    x = ks.placeholder((1024, 1024), "float16", name="x")
    w = ks.placeholder((2048, 1024), "float16", name="w")
    b = ks.placeholder((2048,), "float16", name="bias")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1) + b, name="out")
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 64, [16, 32, 64, 128]))
    s[out].split("n", ks.knob("tile_n", 256, [128, 256, 512]))
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def main(kind: str = "process") -> None:
    executor: object = None if kind == "process" else kind
    client = cluster = None
    if kind == "dask":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = executor = Client(cluster)
    try:
        t0 = time.perf_counter()
        sw = what_if_sweep(mla_wide, TARGETS, configs=CONFIGS, executor=executor)
        wall = time.perf_counter() - t0
    finally:
        if client is not None:
            client.close()
            cluster.close()
    builds = sw.evaluated
    worker_s = sum(o.seconds for outs in sw.outcomes.values() for o in outs)
    print(f"what-if sweep, {len(TARGETS)} targets x {len(sw.configs)} configurations = {builds} builds, "
          f"{os.cpu_count()} cores, runner: {sw.runner}")
    print(f"wall time {wall:.2f} s ({builds / wall:.1f} builds/s; {worker_s:.2f} s of build time on the workers, "
          f"{worker_s / builds * 1000:.1f} ms per build); goal < 10 s: {'met' if wall < 10 else 'NOT met'}")
    for note in sw.notes:
        print(f"note: {note}")
    print(sw.table())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "process")
