"""The auto-schedule's capacity probes emit a cube kernel's parts alone (`aic_only`, `aiv_only`); what
they count must be what the whole kernel holds, or the auto-schedule would pick tiles that do not fit
(or refuse tiles that do)."""

from __future__ import annotations

import importlib
import itertools

import pytest

import kernelstudio as ks
from kernelstudio.lower.config import KernelConfig
from kernelstudio.lower.cube.kernel import lower_cube_kernel
from kernelstudio.lower.pipeline import _Ctx
from kernelstudio.lower.tiling import _epilogue_probe, deeper_usage
from kernelstudio.tileir.capacity import usage


def _mixed_designs():
    x = ks.placeholder((100, 256), "float16", name="x")
    w = ks.placeholder((256, 384), "float16", name="w")
    b = ks.placeholder((384,), "float16", name="b")
    yield "gelu", ks.gelu(ks.matmul(x, w) + b)
    yield "layer_norm", ks.layer_norm(ks.matmul(x, w), axis=-1)
    yield "softmax", ks.softmax(ks.matmul(x, w), axis=-1)
    g = ks.placeholder((384,), "float16", name="g")
    yield "rms_norm", ks.rms_norm(ks.matmul(x, w), g)
    img = ks.placeholder((2, 16, 12, 12), "float16", name="img")
    wt = ks.placeholder((32, 16, 3, 3), "float16", name="wt")
    cb = ks.placeholder((32, 1, 1), "float16", name="cb")
    yield "conv", ks.relu(ks.conv2d(img, wt, stride=1, padding=1) + cb)


DESIGNS = dict(_mixed_designs())
CONFIGS = [dict(tile_m=tm, tile_rows=vr, tile_cols=vc, depth=d, depth_ub=dub, compute_dtype=cd)
           for tm, vr, vc, d, dub, cd in itertools.product((16, 64), (1, 8, 32), (64, 1024), (1, 2), (0, 1),
                                                           ("", "float16"))
           if not (d == 1 and dub)]


def _kernel(name: str):
    sched = ks.create_schedule(DESIGNS[name], fuse=True)
    ctx = _Ctx(sched, ks.hw.get("ascend910b2"), name)
    (fk,) = [k for k in ctx.kernels.values() if k.family == "cube_vector"]
    return fk, ctx.names


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_the_parts_hold_what_the_whole_kernel_holds(name: str) -> None:
    fk, names = _kernel(name)
    for c in CONFIGS:
        cfg = KernelConfig(tile_n=128, tile_k=64, cores=24, aligned=True, inline_scalars=True,
                           order=("m", "n"), **c)
        whole = usage(lower_cube_kernel(fk, names, cfg)[0])
        aic = usage(lower_cube_kernel(fk, names, cfg.with_(aic_only=True))[0])
        aiv = usage(lower_cube_kernel(fk, names, cfg.with_(aiv_only=True))[0])
        assert set(aic) <= {("aic", t) for t in ("L1", "L0A", "L0B", "L0C")}, (name, c, aic)
        assert set(aiv) == {("aiv", "UB")}, (name, c, aiv)
        assert {**aic, **aiv} == whole, (name, c)


def test_an_aiv_probe_counts_the_scratch_of_its_reductions() -> None:
    fk, names = _kernel("layer_norm")
    cfg = KernelConfig(tile_m=64, tile_n=128, tile_k=64, tile_rows=8, tile_cols=1024, cores=24, depth=2,
                       aligned=True, inline_scalars=True)
    probe = lower_cube_kernel(fk, names, cfg.with_(aiv_only=True))[0]
    named = sum(b.nbytes for b in probe.buffers)
    assert usage(probe)[("aiv", "UB")] > named  # the reduce work area is counted beside the queues


@pytest.mark.parametrize("conv", [False, True])
def test_a_cube_kernels_probe_holds_all_its_buffers(conv: bool) -> None:
    if conv:
        out = ks.conv2d(ks.placeholder((2, 16, 12, 12), "float16", name="img"),
                        ks.placeholder((32, 16, 3, 3), "float16", name="wt"), stride=1, padding=1)
    else:
        x, w = ks.placeholder((100, 256), "float16", name="x"), ks.placeholder((256, 384), "float16", name="w")
        out = ks.matmul(x, w)
    ctx = _Ctx(ks.create_schedule(out, fuse=True), ks.hw.get("ascend910b2"), "k")
    (fk,) = ctx.kernels.values()
    for tm, sa, sb, gm, gn, d in itertools.product((16, 64), (1, 2), (1, 4), (1, 2), (1, 3), (1, 2)):
        cfg = KernelConfig(tile_m=tm, tile_n=64, tile_k=32, cores=24, depth=d, aligned=True, step_ka=sa, step_kb=sb,
                           step_m=gm, step_n=gn)
        whole = usage(lower_cube_kernel(fk, ctx.names, cfg)[0])
        assert usage(lower_cube_kernel(fk, ctx.names, cfg.with_(aic_only=True))[0]) == whole, cfg


@pytest.mark.parametrize("name", ["gelu", "layer_norm"])
def test_an_epilogue_probe_ignores_the_cubes_l1_and_l0_choices(name: str) -> None:
    # the auto-schedule resets them in its UB probes (tiling._epilogue_probe) so equal probes are emitted once
    fk, names = _kernel(name)
    base = KernelConfig(tile_m=64, tile_n=128, tile_k=64, tile_rows=16, tile_cols=1024, cores=24, depth=2,
                        aligned=True, inline_scalars=True)
    want = usage(lower_cube_kernel(fk, names, _epilogue_probe(base))[0])
    for sa, sb, gm, gn, da, dl0 in itertools.product((1, 4), (1, 2), (1, 2), (1, 3), (0, 1), (0, 1)):
        cfg = base.with_(step_ka=sa, step_kb=sb, step_m=gm, step_n=gn, depth_a1=da, depth_b1=da, depth_l0=dl0)
        assert usage(lower_cube_kernel(fk, names, cfg.with_(aiv_only=True))[0]) == want, cfg


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_an_epilogue_needs_no_less_ub_with_deeper_queues(name: str) -> None:
    # why the auto-schedule skips a double-buffered UB probe whose single-buffered twin overflowed
    fk, names = _kernel(name)
    for tm, vr, vc in itertools.product((16, 64), (1, 8, 32), (64, 1024)):
        cfg = KernelConfig(tile_m=tm, tile_n=128, tile_k=64, tile_rows=vr, tile_cols=vc, cores=24, aligned=True,
                           inline_scalars=True, aiv_only=True)
        one = usage(lower_cube_kernel(fk, names, cfg)[0])[("aiv", "UB")]
        two = usage(lower_cube_kernel(fk, names, cfg.with_(depth=2))[0])[("aiv", "UB")]
        assert two > one, (name, cfg)


def test_the_auto_schedule_emits_no_epilogue_probe_it_can_rule_out(monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = importlib.import_module("kernelstudio.lower.pipeline")  # ks.lower is the function
    probes: list[tuple[KernelConfig, int]] = []

    def logged(fk, names, cfg):
        k, ws = lower_cube_kernel(fk, names, cfg)
        if cfg.aiv_only:
            probes.append((cfg, usage(k)[("aiv", "UB")]))
        return k, ws

    monkeypatch.setattr(pipeline, "lower_cube_kernel", logged)
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="bias")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1) + b)  # MlaProlog-lite
    s = ks.create_schedule(out, fuse=True)
    s[out].split("m", 64)
    s[out].split("n", 256)
    s[out].split("k", 64)
    s[out].double_buffer(True)
    prog = pipeline.lower(s, "ascend910b2")
    ub = ks.hw.get("ascend910b2").capacity_bytes("UB")
    over = {c for c, need in probes if c.depth == 1 and need > ub}
    assert over, "the single-buffered search should have ruled out a chunk (the test's premise)"
    assert len({_epilogue_probe(c) for c, _ in probes}) == len(probes)  # every probe once
    assert not [c for c, _ in probes if c.depth == 2 and c.with_(depth=1) in over]
    (k,) = prog.kernels
    assert dict(k.tiling)["vec_rows"] < 32  # the chunk that fits twice


@pytest.mark.parametrize("name", ["layer_norm", "softmax", "rms_norm"])
def test_sync_all_parts_hold_what_the_whole_kernel_holds(name: str) -> None:
    # the epilogue's rows per vector core follow the block count, which the C-tile groups set: the probe
    # keeps the groups (a probe without them once chose chunks that overflowed UB in the final kernel)
    fk, names = _kernel(name)
    for tm, vr, gm, gn, d in itertools.product((16, 32), (4, 64), (1, 2), (1, 3), (1, 2)):
        cfg = KernelConfig(tile_m=tm, tile_n=64, tile_k=64, tile_rows=vr, tile_cols=1024, cores=24, depth=d,
                           aligned=True, inline_scalars=True, step_m=gm, step_n=gn, sync_all=True)
        whole = usage(lower_cube_kernel(fk, names, cfg)[0])
        aic = usage(lower_cube_kernel(fk, names, cfg.with_(aic_only=True))[0])
        aiv = usage(lower_cube_kernel(fk, names, _epilogue_probe(cfg))[0])
        assert {**aic, **aiv} == whole, (name, cfg)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_a_deeper_epilogue_probe_is_counted_from_its_single_slot_twin(name: str) -> None:
    # tiling._epilogue_fits counts a double-buffered UB probe from the single-buffered one instead of emitting it
    fk, names = _kernel(name)
    syncs = (False, True) if name in ("layer_norm", "softmax", "rms_norm") else (False,)
    for tm, vr, vc, gm, sync, cd in itertools.product((16, 64), (1, 8, 32), (64, 1024), (1, 2), syncs,
                                                      ("", "float16")):
        cfg = _epilogue_probe(KernelConfig(tile_m=tm, tile_n=128, tile_k=64, tile_rows=vr, tile_cols=vc, cores=24,
                                           depth=2, aligned=True, inline_scalars=True, step_m=gm, sync_all=sync,
                                           compute_dtype=cd))
        one = lower_cube_kernel(fk, names, cfg.with_(depth=1))[0]
        assert deeper_usage(one, 2) == usage(lower_cube_kernel(fk, names, cfg)[0]), (name, cfg)
