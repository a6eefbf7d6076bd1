"""Benchmark of code generation: codegen time for MlaProlog-lite (goal <= 5 ms), twin compile time
cold (empty cache) and cached.

    .venv/bin/python bench/bench_codegen.py [--repeat 50]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen

GOAL_MS = 5.0


def mla_prolog_lite() -> ks.Tensor:
    x = ks.placeholder((1, 64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    return ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True)) + b)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args(argv)
    out = mla_prolog_lite()
    for fuse in (True, False):
        prog = ks.lower(ks.create_schedule(out, fuse=fuse), target="ascend910b2")
        codegen(prog)  # warm imports
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            code = codegen(prog)
            times.append((time.perf_counter() - t0) * 1e3)
        med = statistics.median(times)
        label = "fused" if fuse else "unfused"
        print(f"codegen mla_prolog_lite ({label}, {len(prog.kernels)} kernel(s)): median {med:.2f} ms, "
              f"min {min(times):.2f} ms over {args.repeat} runs (goal <= {GOAL_MS:g} ms: "
              f"{'met' if med <= GOAL_MS else 'missed'})")
        with tempfile.TemporaryDirectory() as cache:
            cold = twin.compile_bundle(code, cache_dir=cache)
            warm = twin.compile_bundle(code, cache_dir=cache)
        print(f"twin compile ({label}): cold {cold.seconds:.2f} s, cached {warm.seconds * 1e3:.1f} ms "
              f"(cache hit: {warm.cache_hit})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
