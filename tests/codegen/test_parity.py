"""The simulator prices what the generated code does: for every reference kernel, the vector calls and pipe
flags each core of the generated Ascend C issues on the twin (its API-call log) equal what the TileIR issues
for the same tiles, walked as the simulator walks it (`kernelstudio.sim.calls.issued`).

Mapping (lower/vec_calls.py): a row reduction, a per-row broadcast and a row-looped op are listed as the
calls the code writes, so the counts are equal call for call; every other vector instruction is one call.
Scalar reads of on-chip memory (GetValue / SetValue on a LocalTensor) are counted on both sides."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, names_of
from kernelstudio.sim.calls import issued
from kernelstudio.twin.calllog import CallLog

from .. import reference_kernels as rk
from . import reference

# every vector-pipe API the generated code calls (DataCopy between two local tensors is counted apart)
VECTOR_APIS = frozenset({
    "Add", "Sub", "Mul", "Div", "Max", "Min", "Adds", "Muls", "Maxs", "Mins", "LeakyRelu", "Exp", "Ln", "Sqrt",
    "Rsqrt", "Reciprocal", "Relu", "Abs", "Duplicate", "Cast", "ReduceSum", "ReduceMax", "ReduceMin",
    "WholeReduceSum", "WholeReduceMax", "Brcb", "Compare", "CompareScalar", "Select", "Erf", "Tanh", "Sigmoid",
    "Gelu", "FasterGelu", "Transpose", "ArithProgression", "TopK",
})
SCALAR_APIS = ("LocalTensor::GetValue", "LocalTensor::SetValue")


def rms_norm(rows: int = 40, cols: int = 300):
    x = ks.placeholder((rows, cols), "float16", name="x")
    g = ks.placeholder((cols,), "float16", name="g")
    return ks.rms_norm(x, g)


def matmul_layer_norm(m: int = 48, n: int = 320, k: int = 64):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    return ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)


def matmul_bias_gelu(m: int = 50, n: int = 300, k: int = 200):
    x = ks.placeholder((m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    b = ks.placeholder((n,), "float16", name="bias")
    return ks.gelu(ks.matmul(x, w, transpose_b=True) + b)


# tails: column tails of C tiles (a run-time row length: one call when it is the stride, else per row)
KERNELS = {**rk.REFERENCE, "rms_norm": rms_norm, "matmul_layer_norm": matmul_layer_norm,
           "softmax_wide": lambda: rk.softmax(rows=24, cols=1000, dtype="float32"),
           "layer_norm_4096": lambda: rk.layer_norm(rows=32, cols=4096),  # 64 partials per row: one level's widest
           "layer_norm_12000": lambda: rk.layer_norm(rows=4, cols=12000),
           "mla_prolog_lite_tails": lambda: rk.mla_prolog_lite(50, 200, 300),
           "matmul_bias_gelu_tails": matmul_bias_gelu}


def twin_side(log: CallLog, entry: str, block: int, core: str) -> Counter:
    out: Counter = Counter()
    for c in log.select(kernel=entry, block=block):
        if c.core != core:
            continue
        local_copy = c.api == "DataCopy" and c.args.get("dst") != "GM" and c.args.get("src") != "GM"
        if c.api in VECTOR_APIS or local_copy:
            out["vector"] += 1
            if c.api in ("WholeReduceSum", "WholeReduceMax", "Brcb") or "mask" in c.args:
                out[("vector", c.api)] += 1
        elif c.api in ("SetFlag", "WaitFlag"):
            out[(c.api, c.event)] += 1
        elif c.api in ("PipeBarrier", "pipe_barrier"):
            out["PipeBarrier"] += 1
        elif c.api in SCALAR_APIS:
            out["scalar_read"] += 1
    return out


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_vector_calls_and_flags_match_the_tileir(name: str, twin_cache) -> None:
    out = KERNELS[name]()
    prog = ks.lower(ks.create_schedule(out), target="ascend910b2")
    inputs = ks.random_inputs(out, seed=0)
    got, log = twin.run(codegen(prog), inputs, cache_dir=twin_cache, log_calls=True)
    golden = reference.outputs(prog, ks.evaluate(out, inputs))
    mine = reference.outputs(prog, got)
    for o in prog.outputs:
        rtol, atol = reference.TOL[prog.tensor(o).dtype]
        np.testing.assert_allclose(np.asarray(mine[o], np.float32), golden[o], rtol=rtol, atol=atol, err_msg=o)
    checked = 0
    for ki, k in enumerate(prog.kernels):
        if not k.aiv:
            continue
        entry = names_of(prog, k).snake
        cores = ["AIV"] if k.kernel_type == "AIV_ONLY" else [f"AIV{s}" for s in range(k.vec_per_block)]
        for blk in range(k.block_dim):
            for sub, core in enumerate(cores):
                want = issued(prog, ki, "aiv", blk, sub)
                have = twin_side(log, entry, blk, core)
                assert have == want, (f"{k.name} block {blk} {core}: code issued {dict(have - want)} more and "
                                      f"{dict(want - have)} fewer than the TileIR")
                checked += want["vector"]
    assert checked > 0
