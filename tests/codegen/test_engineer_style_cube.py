"""Generated cube code next to what an engineer writes: the Mmad-shaped sample (tests/twin/kernels/mmad_custom,
the cube basic API) against the generated matmul, and the MatmulLeakyRelu-shaped sample
(tests/twin/kernels/matmul_leakyrelu, the Matmul API driven from the vector cores) against the generated
matmul + bias + leaky_relu, both at the samples' shapes and tiles, compared per C tile on the twin's call log
and on the trace-based simulation (the vector half, the Add sample, is test_engineer_style.py).

Mmad: one 32 x 32 C tile of K = 64 on one core. The generated kernel issues the Matmul API, whose logged inner
calls are the sample's: one ND -> NZ `DataCopy` GM -> L1 per operand, `LoadData` L1 -> L0A / L0B, one `Mmad`,
one `Fixpipe` L0C -> GM. One difference, kept: the sample loads L0A and L0B one 16-row fractal row per
`LoadData` (M / 16 + K / 16 = 6 calls), the API one call per operand (2 calls) over the same bytes; the trace
prices each call's issue, so MTE1 is busier in the sample, by less than the 1 % the kernels' times agree within.

MatmulLeakyRelu: 128 x 96 x 64 in 32 x 16 x 32 base tiles over 2 AI Cores. Per C tile the cube work is the same
(A's k slabs to L1, a `LoadData` per operand and k tile, a `Mmad` per k tile, one `Fixpipe`), and the vector
work applies one LeakyReLU per element; three differences, kept, and why:

- the sample drives a Matmul object from each of its 4 vector cores (each AIV's own 64 x 48 block; the cube
  core serves its two AIVs' requests in turn, and each object loads B per k tile); the generated kernel drives
  the Matmul API from the cube core over every C tile and hands each tile to both AIVs (16 rows each) through a
  GM workspace with cross-core flags, and loads B's two k tiles as one slab (step_kb = 2): it keeps the cube
  busy without the AIVs' requests between tiles;
- the sample adds the bias in the cube (`SetBias`); the generated kernel adds it on V (an `Add` from a GM
  bias row), as its epilogue fuses any elementwise op after the matmul;
- the sample takes the C tile with `GetTensorC` into a VECIN tensor (on this separated chip, L0C -> GM -> UB)
  and writes 32 rows with `DataCopy`; the generated kernel FixPipes it to the workspace and moves 16-row halves
  with `DataCopyPad` (its tiles may have tails).

So the two times are not within 1 %: the generated kernel is faster (its cube core runs the C tiles back to
back); the test pins the per-tile cube work, the vector work per element, and that the generated kernel's trace
equals its TileIR's simulation within 1 % and is not slower than the sample."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.ascendc.timeline import simulate_log
from kernelstudio.codegen import codegen, names_of
from kernelstudio.codegen.kernel import kernel_params

from ..ascendc.conftest import TWIN_KERNELS

TARGET = "ascend910b2"
CUBE = ("DataCopy", "LoadData", "Mmad", "Fixpipe")


def _gm_bytes(c) -> int:
    ref = dict(c.refs).get("gm", "+0")
    return int(ref.rpartition("+")[2])


def _written(c) -> int:
    return sum(int(ref.rpartition("+")[2]) for rw, ref in c.refs if rw == "w")


def _traced(prog, log):
    (k,) = prog.kernels
    params = {names_of(prog, k).snake: [prog.tensor(p) for p in kernel_params(prog, k)] + [None, None]}
    return simulate_log(log, params, target=TARGET)


def _tiles(calls) -> list[list]:
    """A core's cube calls cut into C tiles: each tile ends with its Fixpipe."""
    tiles, cur = [], []
    for c in calls:
        if c.api in CUBE and (c.api != "DataCopy" or c.args.get("src") == "GM" and c.args.get("dst") in ("A1", "B1")):
            cur.append(c)
            if c.api == "Fixpipe":
                tiles.append(cur)
                cur = []
    assert not cur
    return tiles


def _work(tile) -> dict[str, int]:
    """What one C tile moves and computes: GM -> L1 bytes per operand, L1 -> L0 bytes per operand, Mmad count and
    m x n x k, Fixpipe count."""
    out: Counter = Counter()
    for c in tile:
        if c.api == "DataCopy":
            out[f"GM->{c.args['dst']} bytes"] += _gm_bytes(c)
        elif c.api == "LoadData":
            out[f"{c.args['dst']} bytes"] += _written(c)
        elif c.api == "Mmad":
            out["Mmad"] += 1
            out["Mmad mnk"] += c.args["m"] * c.args["n"] * c.args["k"]
        else:
            out["Fixpipe"] += 1
    return dict(out)


# ---- Mmad -----------------------------------------------------------------------------------------------
def test_generated_matmul_issues_the_mmad_samples_calls_and_times(twin_cache):
    m, n, k = 32, 32, 64
    a, b = ks.placeholder((m, k), "float16", name="a"), ks.placeholder((k, n), "float16", name="b")
    c = ks.matmul(a, b, out_dtype="float32")
    s = ks.create_schedule(c)
    s[c].split("m", m).split("n", n).split("k", k)
    prog = ks.lower(s, TARGET)
    assert prog.kernels[0].block_dim == 1 and dict(prog.kernels[0].tiling)["tiles"] == 1
    inputs = ks.random_inputs(c, seed=0)
    got, log = twin.run(codegen(prog), inputs, cache_dir=twin_cache, log_calls=True)
    sample = ks.ascendc.load(TWIN_KERNELS / "mmad_custom", kernel="mmad_custom",
                             args=[inputs["a"], inputs["b"], ks.ascendc.out((m, n), "float32")], cache_dir=twin_cache)
    np.testing.assert_array_equal(got, sample.outputs["c"])
    [mine], [theirs] = _tiles(log.calls), _tiles(sample.log.calls)
    assert _work(mine) == _work(theirs) == {"GM->A1 bytes": m * k * 2, "GM->B1 bytes": k * n * 2,
                                            "A2 bytes": m * k * 2, "B2 bytes": k * n * 2, "Mmad": 1,
                                            "Mmad mnk": m * n * k, "Fixpipe": 1}
    calls = [Counter((x.api, x.args.get("dst", "")) for x in t) for t in (mine, theirs)]
    assert calls[1] - calls[0] == Counter({("LoadData", "A2"): m // 16 - 1, ("LoadData", "B2"): k // 16 - 1})
    assert calls[0] - calls[1] == Counter()  # nothing the sample does not issue
    traced, designed = _traced(prog, log), ks.simulate(prog)
    for other in (traced, designed):
        assert other.time_us == pytest.approx(sample.sim.time_us, rel=0.01)
        for pipe in ("MTE2", "M", "FIX"):
            assert other.metrics["pipes"][pipe]["busy_us"] == pytest.approx(
                sample.sim.metrics["pipes"][pipe]["busy_us"], rel=0.01), pipe
    # the sample's six LoadData issue more than the API's two over the same bytes
    assert traced.metrics["pipes"]["MTE1"]["busy_us"] < sample.sim.metrics["pipes"]["MTE1"]["busy_us"]


# ---- MatmulLeakyRelu ------------------------------------------------------------------------------------
def test_generated_matmul_leaky_relu_does_the_samples_cube_work_per_tile(twin_cache):
    m, n, k, alpha = 128, 96, 64, 0.1
    a, b = ks.placeholder((m, k), "float16", name="a"), ks.placeholder((k, n), "float16", name="b")
    bias = ks.placeholder((n,), "float32", name="bias")
    out = ks.leaky_relu(ks.matmul(a, b, out_dtype="float32") + bias, alpha)
    s = ks.create_schedule(out, fuse=True)
    s[s.kernels[0].name].split("m", 32).split("n", 16).split("k", 32).parallel("m", cores=2)
    prog = ks.lower(s, TARGET)
    (kern,) = prog.kernels
    assert (kern.kernel_type, kern.block_dim) == ("MIX_AIC_1_2", 2)
    inputs = ks.random_inputs(out, seed=0)
    got, log = twin.run(codegen(prog), inputs, cache_dir=twin_cache, log_calls=True)
    cube = dict(usedCoreNum=4, M=m, N=n, Ka=k, Kb=k, singleCoreM=m // 2, singleCoreN=n // 2, singleCoreK=k,
                baseM=32, baseN=16, baseK=32, depthA1=2, depthB1=2, isBias=1)
    sample = ks.ascendc.load(TWIN_KERNELS / "matmul_leakyrelu", kernel="matmul_leakyrelu",
                             args=[inputs["a"], inputs["b"], inputs["bias"], ks.ascendc.out((m, n), "float32")],
                             tiling={"alpha": alpha, "cubeTilingData": cube}, block_dim=2, cache_dir=twin_cache)
    np.testing.assert_array_equal(got, sample.outputs["c"])
    # per C tile: the same bytes to L1 and L0, the same Mmads, one Fixpipe (the generated kernel on its AICs,
    # the sample on the AIV that drives each Matmul object)
    mine = [t for blk in range(2) for t in _tiles(log.select(block=blk, core="AIC"))]
    theirs = [t for blk in range(2) for t in _tiles(log_of(sample, blk))]
    assert len(mine) == len(theirs) == (m // 32) * (n // 16)
    per_tile = {"GM->A1 bytes": 32 * k * 2, "GM->B1 bytes": k * 16 * 2, "A2 bytes": 32 * k * 2, "B2 bytes": k * 16 * 2,
                "Mmad": k // 32, "Mmad mnk": 32 * 16 * k, "Fixpipe": 1}
    assert all(_work(t) == per_tile for t in mine + theirs)
    # B's two k tiles in one slab (step_kb = 2) where each of the sample's objects loads one per k tile
    b1 = [sum(x.args.get("dst") == "B1" for x in t) for t in (mine[0], theirs[0])]
    assert b1 == [1, 2]
    # the vector work: one LeakyReLU per element of C in both, the bias added on V only in the generated code
    def lrelu(calls):
        return sum(c.args.get("count", 0) for c in calls if c.api == "LeakyRelu")
    assert lrelu(log.calls) == lrelu(sample.log.calls) == m * n
    assert sum(c.api == "Add" for c in log.calls) > 0 and sum(c.api == "Add" for c in sample.log.calls) == 0
    assert sum(c.api == "Matmul::SetBias" for c in sample.log.calls) == 4
    # times: the generated trace is its TileIR's within 1 %, and the design it chose is not slower than the sample's
    traced, designed = _traced(prog, log), ks.simulate(prog)
    assert traced.time_us == pytest.approx(designed.time_us, rel=0.01)
    assert traced.time_us < sample.sim.time_us
    for pipe in ("MTE1", "M", "FIX"):  # the cube pipes do the same work
        assert traced.metrics["pipes"][pipe]["busy_us"] == pytest.approx(
            sample.sim.metrics["pipes"][pipe]["busy_us"], rel=0.01), pipe


def log_of(sample, block: int):
    """The sample's cube calls of one block: its two AIVs' Matmul objects, one after the other."""
    return [c for core in ("AIV0", "AIV1") for c in sample.log.select(block=block, core=core)]
