"""Benchmark: does the plan kernelstudio picks pay? Fused, unfused and default plans side by side.

    .venv/bin/python bench/bench_plans.py [target]

For matmul + layer_norm and matmul + bias + gelu at four sizes (M x N x K), Conv+Bias+ReLU and
MlaProlog-lite (ascend910b2 unless `target`): simulated time of the fused plan (`fuse=True`: a
row-reduction epilogue in row blocks), the same kernel with `sync_all(True)` (C tiles over every core,
one all-core barrier, rows over every vector core; "-" where it does not apply), the unfused plan
(`fuse=False`) and the default plan (`create_schedule(out)`: fused or split per matmul by simulated
cost, a row reduction in row blocks or sync_all), each with the profile's (assumed) launch gaps and
with them taken out (device time); cores used by the busiest kernel; GM bytes moved. The last
columns say whether the default plan is within 5 % of the best of the fused plans and the unfused
one (with launch gaps and without). Goal: "yes" in every row."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernelstudio as ks  # noqa: E402
from tests import reference_kernels as reference  # noqa: E402

SIZES = [(64, 256, 512), (64, 1024, 1024), (256, 2048, 4096), (64, 8192, 8192)]


def matmul_layer_norm(m: int, n: int, k: int):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    return ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)


def matmul_bias_gelu(m: int, n: int, k: int):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    b = ks.placeholder((n,), "float16", name="bias")
    return ks.gelu(ks.matmul(x, w, transpose_b=True) + b)


def designs():
    for m, n, k in SIZES:
        yield f"matmul+layer_norm {m}x{n}x{k}", lambda m=m, n=n, k=k: matmul_layer_norm(m, n, k)
    for m, n, k in SIZES:
        yield f"matmul+bias+gelu {m}x{n}x{k}", lambda m=m, n=n, k=k: matmul_bias_gelu(m, n, k)
    yield "Conv+Bias+ReLU [1,64,112,112]", lambda: reference.conv_bias_relu(n=1, cin=64, hw=112, cout=64)
    yield "MlaProlog-lite", reference.mla_prolog_lite


def plan(schedule, target: str) -> dict:
    prog = ks.lower(schedule, target)
    res = ks.simulate(prog)
    m = res.metrics
    return {"us": res.time_us, "dev": res.time_us - m["launch_overhead_us"], "kernels": len(prog.kernels),
            "cores": max(k.block_dim for k in prog.kernels), "gm": m["gm_bytes"]}


def sync_all_plan(out) -> ks.Schedule | None:
    """The fused plan with sync_all(True) on its row-reduction kernel(s); None where none can take it."""
    s = ks.create_schedule(out, fuse=True)
    kernels = [k for k in s.kernels if k.can_sync_all]
    for k in kernels:
        s[k.name].sync_all(True)
    return s if kernels else None


def main() -> None:
    target = sys.argv[1] if len(sys.argv) > 1 else "ascend910b2"
    head = (f"{'design':34} {'fused us':>9} {'dev':>8} {'cores':>5} {'GM MB':>8}  {'sync_all':>9} {'dev':>8} "
            f"{'cores':>5}  {'unfused us':>10} {'dev':>8} {'cores':>5} {'GM MB':>8}  {'default us':>10} {'dev':>8}  "
            "within 5%: launch / device")
    profile = ks.hw.get(target)
    print(f"{target}; dev = device time, launch gaps ({profile.launch_overhead_us:g} us each, "
          f"{profile.source('launch_overhead_us')}) aside; SyncAll {profile.sync_all_us:g} us "
          f"({profile.source('sync_all_us')})")
    print(head)
    misses = [0, 0]
    for name, build in designs():
        out = build()
        f = plan(ks.create_schedule(out, fuse=True), target)
        y_sched = sync_all_plan(out)
        y = plan(y_sched, target) if y_sched is not None else None
        u = plan(ks.create_schedule(out, fuse=False), target)
        d = plan(ks.create_schedule(out, target=target), target)
        ok = [d[key] <= 1.05 * min(f[key], u[key], y[key] if y else float("inf")) for key in ("us", "dev")]
        misses = [m + (not o) for m, o in zip(misses, ok, strict=True)]
        sync = f"{y['us']:9.1f} {y['dev']:8.1f} {y['cores']:5d}" if y else f"{'-':>9} {'-':>8} {'-':>5}"
        print(f"{name:34} {f['us']:9.1f} {f['dev']:8.1f} {f['cores']:5d} {f['gm'] / 1e6:8.2f}  {sync}  "
              f"{u['us']:10.1f} {u['dev']:8.1f} {u['cores']:5d} {u['gm'] / 1e6:8.2f}  {d['us']:10.1f} {d['dev']:8.1f}  "
              f"{'yes' if ok[0] else 'NO'} / {'yes' if ok[1] else 'NO'}")
    total = len(SIZES) * 2 + 2
    print(f"default plan within 5% of the better plan: {total - misses[0]} of {total} designs with launch gaps, "
          f"{total - misses[1]} of {total} in device time")


if __name__ == "__main__":
    main()
