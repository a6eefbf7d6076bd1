"""sync_all kernels take their M at run time as the row-block plans do: the whole-C workspace holds the run's
rows (TilingFunc asks for them), the C tiles and the block dim follow M, and each vector core's share of the
rows is computed from M and the launch's cores. One generated kernel, compiled once, runs at the lowered M and
at others (tails, fewer rows than the cores' share, more tiles than cores) and matches the golden model."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, names_of
from kernelstudio.tileir.program import SyncAll, walk

from .reference import TOL
from .test_sync_all import _mm_norm, _sync


def _mla(m: int) -> ks.Tensor:
    """[1, M, K] rows: two leading dims."""
    x = ks.placeholder((1, m, 200), "float16", name="x")
    w = ks.placeholder((300, 200), "float16", name="w")
    b = ks.placeholder((300,), "float16", name="bias")
    return ks.rms_norm(ks.matmul(x, w, transpose_b=True) + b)


# (build at M, lowered M, schedule, other Ms)
CASES = {
    "rms_norm": (lambda m: _mm_norm(m, 256, 128, "rms_norm"), 40, {"double": False}, [1, 7, 100, 333]),
    "softmax": (lambda m: _mm_norm(m, 192, 64, "softmax"), 33, {}, [2, 65, 250]),
    "tails_3d": (_mla, 50, {"tiles": (32, 64, 48), "rows": 3}, [1, 31, 97, 800]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_sync_all_kernel_runs_at_other_m(name: str, twin_cache) -> None:
    build, lowered, sched, others = CASES[name]
    prog = _sync(build(lowered), **sched)
    (k,) = prog.kernels
    assert any(isinstance(s, SyncAll) for s in walk(k.aic)) and k.runtime_rows is not None
    ws = f"{k.name}_ws"
    assert ws in k.runtime_rows.tensors
    code = codegen(prog)
    host = code.files[names_of(prog, k).host_file]
    per_row = prog.tensor(ws).nbytes // lowered
    assert f"currentWorkspace[0] = ascendcPlatform.GetLibApiWorkSpaceSize() + (static_cast<size_t>(rows) * " \
           f"{per_row} + 511) / 512 * 512;" in host
    out_dtype = prog.tensor(prog.outputs[0]).dtype
    for m in [lowered, *others]:
        out = build(m)
        inputs = ks.random_inputs(out, seed=m)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        want = ks.evaluate(out, inputs)
        assert got.shape == want.shape
        rtol, atol = TOL[out_dtype]
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=rtol, atol=atol,
                                   err_msg=f"{name} at M={m}")


def test_the_lowered_shape_is_priced_and_interpreted_as_before() -> None:
    """Taking M at run time changes what the code reads, not the lowered kernel's numbers: interpreter equals
    golden at the lowered shape and each AIV's share is the lowered one there."""
    out = _mm_norm(40, 256, 128, "rms_norm")
    prog = _sync(out, double=False)
    inputs = ks.random_inputs(out, seed=1)
    np.testing.assert_allclose(np.asarray(ks.run_tiled(prog, inputs), np.float32),
                               np.asarray(ks.evaluate(out, inputs), np.float32), rtol=2e-2, atol=2e-2)
    (k,) = prog.kernels
    assert f"{-(-40 // (2 * k.block_dim))} rows each" in " ".join(k.notes)
    assert ks.simulate(prog).time_us > 0


def _mm_rms_sync(m: int, n: int, k: int):
    s = ks.create_schedule(_mm_norm(m, n, k, "rms_norm"), fuse=True)
    # single tile rows per unit (test_grouped_sync_all_kernel_runs_at_other_m: groups of several)
    s[s.kernels[0].name].sync_all(True).split("m", ks.knob("tile_m", 32, [16, 32, 64])).l1_c_steps(1, 1)
    return s


def test_a_dynamic_kernel_of_sync_all_buckets_runs_each_bucket(twin_cache) -> None:
    """One operator whose keys are sync_all kernels of two tile sizes: each key asks for its run's whole-C
    workspace and the binary runs M of both buckets."""
    dk = ks.DynamicKernel(_mm_rms_sync, [("small", lambda m, n, k: m <= 64), ("general", lambda m, n, k: True)],
                          name="mm_rms_sync")
    dk.configs = {"small": {"tile_m": 16}, "general": {"tile_m": 64}}
    code = dk.codegen(n=256, k=128, probe=2048)
    host = next(t for p, t in code.files.items() if p.startswith("op_host/") and p.endswith(".cpp"))
    assert host.count("wsBytes = (static_cast<size_t>(rows) * 512 + 511) / 512 * 512;") == 2  # 256 halves a row
    for m in (5, 64, 65, 301):  # small, its last row count, general, a tail of general's 64-row tiles
        out = _mm_norm(m, 256, 128, "rms_norm")
        inputs = ks.random_inputs(out, seed=m)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                                   rtol=2e-2, atol=2e-2, err_msg=f"M={m}")


def test_grouped_sync_all_kernel_runs_at_other_m(twin_cache) -> None:
    """l1_c_steps groups of 2 x 2 C tiles: the walk deals out group rows of 2 tile rows, counted from M at run
    time (m_groups of group_m rows), as single tile rows are; the tail group holds one tile row or part of one."""
    def build(m: int):
        return _mm_norm(m, 256, 128, "rms_norm")

    s = ks.create_schedule(build(40), fuse=True)
    s[s.kernels[0].name].sync_all(True).split("m", 16).split("n", 64).l1_c_steps(2, 2)
    prog = ks.lower(s, "ascend910b2")
    (k,) = prog.kernels
    tiling = dict(k.tiling)
    assert (k.runtime_rows.tile, k.runtime_rows.row_tiles, k.runtime_rows.per_row_tile) == ("group_m", "m_groups", 2)
    assert (tiling["group_m"], tiling["m_groups"], tiling["step_m"]) == (32, 2, 2)
    code = codegen(prog)
    host = code.files[names_of(prog, k).host_file]
    assert "rowTiles = static_cast<uint32_t>((rows + 31) / 32);  // group rows (l1_c_steps) of 32" in host
    assert "tiling.set_mGroups(rowTiles);" in host
    for m in (40, 1, 16, 33, 100, 333):  # the lowered M, one row, one tile row, a 1-row tail, 4 and 11 groups
        out = build(m)
        inputs = ks.random_inputs(out, seed=m)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        want = ks.evaluate(out, inputs)
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=2e-2, atol=2e-2,
                                   err_msg=f"M={m}")
