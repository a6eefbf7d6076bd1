"""Generated vector code as an engineer writes it, from the TileIR (so the simulator prices what the code does).

- A tile that is one contiguous run (a 1-D tensor, or whole rows of a contiguous one) is one count-form call per op.
- The last op of a tile computes straight into the output queue's tensor when nothing later reads its value and
  its dtype is the output's (no scratch tile and copy).
- Aligned contiguous GM <-> UB moves are plain `DataCopy` (`DataCopyPad` only for tails and strided rows).

The reference is the official Add sample's structure (tests/twin/kernels/add_custom: CopyIn / Compute / CopyOut
over two-slot queues, one `Add(z, x, y, len)` into the output queue's tensor, `DataCopy` both ways), run with the
sample's numbers: 8 x 2048 half on 8 cores, 16 tiles of 128 per core; and with the 1024-element tiles of a
larger split. Per tile, the generated kernel's twin call log holds the same calls, and the trace of each simulates
to within 1 % of the other and of the TileIR's own simulation."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.ascendc.timeline import simulate_log
from kernelstudio.codegen import codegen, names_of
from kernelstudio.codegen.kernel import kernel_params
from kernelstudio.tileir.expr import Const
from kernelstudio.tileir.program import Alloc, EnQue, Kernel, Let, VecOp, walk
from kernelstudio.tileir.vec_calls import expand

from ..ascendc.conftest import TWIN_KERNELS

TOTAL, CORES = 8 * 2048, 8  # the official Add sample: 8 * 2048 elements on 8 cores
SETUP = ("InitBuffer",)


def add_program(tile: int, *, total: int = TOTAL, cores: int = CORES, double_buffer: bool = True):
    x = ks.placeholder((total,), "float16", name="x")
    y = ks.placeholder((total,), "float16", name="y")
    z = x + y
    s = ks.create_schedule(z)
    s[z].split(0, tile).double_buffer(double_buffer)
    if total > tile:
        s[z].parallel(0, cores=cores)
    return z, ks.lower(s, target="ascend910b2")


def _aiv(prog) -> Kernel:
    (k,) = prog.kernels
    return k


def _kernel_text(prog) -> str:
    return next(t for f, t in codegen(prog).files.items() if f.endswith("_kernel.cpp") or "op_kernel" in f)


# ---- the TileIR: one op into the output queue, no scratch -----------------------------------------------
@pytest.mark.parametrize("tile", [128, 1024])
def test_one_dimensional_add_is_one_op_into_the_output_queue(tile):
    k = _aiv(add_program(tile)[1])
    ops = [s for s in walk(k.aiv) if isinstance(s, VecOp)]
    assert [(s.op, s.dst.buf) for s in ops] == [("add", "out_add")]
    # rows a constant 1: the tile is one run
    assert ops[0].dst.rows == Const(1) and all(r.rows == Const(1) for r in ops[0].srcs)
    assert [b.name for b in k.buffers] == ["in_x", "in_y", "out_add"]  # no scratch tile
    assert expand(ops[0], {b.name: b for b in k.buffers}, dict(k.tiling)) is None  # one count-form call
    # the output queue's slot is taken just before the op that writes it, and handed on right after
    body = [s for s in walk(k.aiv)
            if isinstance(s, (Alloc, EnQue, VecOp)) and getattr(s, "buf", "out_add") == "out_add"]
    assert [type(s).__name__ for s in body] == ["Alloc", "VecOp", "EnQue"]
    assert not any(isinstance(s, Let) and s.var in ("r0", "rlen") for s in walk(k.aiv))


def test_the_code_is_the_samples_calls():
    text = _kernel_text(add_program(128)[1])
    assert "AscendC::Add(addLocal, xLocal, yLocal, clen);" in text
    assert text.count("AscendC::DataCopy(") == 3 and "DataCopyPad" not in text
    assert "Adds(" not in text and "BinaryRepeatParams" not in text and "TBuf" not in text


def test_a_tail_that_is_not_whole_blocks_keeps_data_copy_pad():
    text = _kernel_text(add_program(1024, total=16384 + 100)[1])  # the last tile holds 100 halves: 200 B
    assert "DataCopyPad" in text and "BinaryRepeatParams" not in text


def test_the_simulated_vector_pipe_is_one_call_per_tile():
    """The V pipe's busy time is that of 16 one-call tiles: the same as 16 adds of the tile priced alone."""
    one = ks.simulate(add_program(1024, total=1024, cores=1)[1])
    all_tiles = ks.simulate(add_program(1024)[1])
    assert all_tiles.metrics["pipes"]["V"]["busy_us"] == pytest.approx(16 * one.metrics["pipes"]["V"]["busy_us"],
                                                                      rel=1e-6)


# ---- where the output queue cannot be the destination ---------------------------------------------------
def test_an_output_read_by_a_later_op_keeps_its_own_tile():
    x = ks.placeholder((4096,), "float16", name="x")
    y = ks.placeholder((4096,), "float16", name="y")
    s_ = x + y
    out = s_ * s_
    sched = ks.create_schedule([s_, out])
    k = _aiv(ks.lower(sched, target="ascend910b2"))
    ops = [(s.op, s.dst.buf) for s in walk(k.aiv) if isinstance(s, VecOp)]
    written = dict((b, op) for op, b in ops)
    # the sum is read by the square: it is computed in a tile of its own and copied into its queue
    assert any(b.startswith("tmp") for _, b in ops)
    assert "out_add" in written and written["out_add"] == "copy"


def test_an_output_of_another_dtype_is_cast_into_its_queue():
    """Math in float32 for a float16 output: the add keeps a float32 tile, a Cast writes the queue."""
    x = ks.placeholder((4096,), "float16", name="x")
    y = ks.placeholder((4096,), "float16", name="y")
    out = x + y
    s = ks.create_schedule(out)
    s[out].compute_dtype("float32")
    k = _aiv(ks.lower(s, target="ascend910b2"))
    ops = [(s.op, s.dst.buf) for s in walk(k.aiv) if isinstance(s, VecOp)]
    assert ops[-2:] == [("add", ops[-2][1]), ("cast", "out_add")] and ops[-2][1].startswith("tmp")


def test_a_cast_to_the_compute_dtype_lets_its_input_write_the_queue():
    """float16 inputs summed into a float32 output: each input is cast on arrival, the add writes the queue."""
    x = ks.placeholder((4096,), "float16", name="x")
    y = ks.placeholder((4096,), "float16", name="y")
    out = ks.cast(x + y, "float32")
    k = _aiv(ks.lower(ks.create_schedule(out), target="ascend910b2"))
    ops = [(s.op, s.dst.buf) for s in walk(k.aiv) if isinstance(s, VecOp)]
    assert [op for op, _ in ops] == ["cast", "cast", "add"] and ops[-1][1] == "out_cast"
    assert sum(b.name.startswith("tmp") for b in k.buffers) == 2  # the two float32 inputs, no third tile


def test_a_two_dimensional_column_tile_keeps_its_row_form():
    """Tiles narrower than the rows are strided: still one repeat-form call per column group of every row."""
    x = ks.placeholder((32, 2048), "float16", name="x")
    y = ks.placeholder((32, 2048), "float16", name="y")
    z = x + y
    s = ks.create_schedule(z)
    s[z].split(0, 8).split(1, 512)
    text = _kernel_text(ks.lower(s, target="ascend910b2"))
    assert "BinaryRepeatParams" in text


# ---- against the official sample's structure on the twin ------------------------------------------------
def _key(c) -> tuple:
    a = c.args
    return (c.api, a.get("que", ""), a.get("dst", ""), a.get("src", ""), a.get("dtype", ""), a.get("count", 0),
            a.get("repeats", 0))


def _tiles(log, kernel: str, block: int) -> list[Counter]:
    """A core's calls cut into tiles: each tile ends with the FreeTensor of the output queue's slot."""
    tiles: list[Counter] = []
    cur: Counter = Counter()
    for c in log.select(kernel=kernel, block=block):
        if c.api in SETUP:
            continue
        cur[_key(c)] += 1
        if c.api == "FreeTensor" and c.args.get("que") == "VECOUT":
            tiles.append(cur)
            cur = Counter()
    assert not cur, f"calls after the last tile of block {block}: {dict(cur)}"
    return tiles


def _pipe_work(log, kernel: str, block: int) -> list[tuple]:
    return [_key(c) for c in log.select(kernel=kernel, block=block) if c.api in ("DataCopy", "DataCopyPad", "Add")]


@pytest.mark.parametrize("tile", [128, 1024])
def test_generated_add_issues_the_official_samples_calls_and_times(tile, twin_cache):
    z, prog = add_program(tile)
    inputs = ks.random_inputs(z, seed=0)
    got, log = twin.run(codegen(prog), inputs, cache_dir=twin_cache, log_calls=True)
    np.testing.assert_array_equal(got, inputs["x"] + inputs["y"])
    sample = ks.ascendc.load(TWIN_KERNELS / "add_custom", kernel="add_custom",
                             args=[inputs["x"], inputs["y"], ks.ascendc.out((TOTAL,), "float16")],
                             tiling={"totalLength": TOTAL, "blockLength": TOTAL // CORES, "tileLength": tile},
                             block_dim=CORES, cache_dir=twin_cache, reference=lambda x, y: x + y)
    k = _aiv(prog)
    entry = names_of(prog, k).snake
    assert k.block_dim == CORES
    for blk in range(CORES):
        mine, theirs = _tiles(log, entry, blk), _tiles(sample.log, "add_custom", blk)
        assert len(mine) == len(theirs) == TOTAL // CORES // tile
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            assert a == b, f"block {blk} tile {i}: generated {dict(a - b)} more, {dict(b - a)} fewer"
        assert _pipe_work(log, entry, blk) == _pipe_work(sample.log, "add_custom", blk)  # in the same order
    # the same calls simulate alike: the generated code's trace, the sample's trace and the TileIR
    params = {entry: [prog.tensor(p) for p in kernel_params(prog, k)] + [None, None]}
    traced = simulate_log(log, params, target="ascend910b2")
    designed = ks.simulate(prog)
    for other in (traced, designed):
        assert other.time_us == pytest.approx(sample.sim.time_us, rel=0.01)
        for pipe in ("MTE2", "V", "MTE3"):
            assert other.metrics["pipes"][pipe]["busy_us"] == pytest.approx(
                sample.sim.metrics["pipes"][pipe]["busy_us"], rel=0.01), pipe


def _native():
    x = ks.placeholder((3000,), "float16", name="x")
    y = ks.placeholder((3000,), "float16", name="y")
    return ks.maximum(x * y, y)


def _to_float32():
    x = ks.placeholder((3000,), "float16", name="x")
    y = ks.placeholder((3000,), "float16", name="y")
    return ks.cast(x + y, "float32")


@pytest.mark.parametrize("build", [_native, _to_float32], ids=["native_float16", "cast_to_float32"])
def test_direct_output_kernels_compute_the_golden_numbers(build, twin_cache):
    """Kernels whose last op writes the output queue (a one-row tile with a tail of 952) run bit-exact."""
    out = build()
    s = ks.create_schedule(out)
    s[out].split(0, 1024).parallel(0, cores=2)
    prog = ks.lower(s, target="ascend910b2")
    assert [s.dst.buf for s in walk(_aiv(prog).aiv) if isinstance(s, VecOp)][-1].startswith("out_")
    inputs = ks.random_inputs(out, seed=1)
    got = np.asarray(twin.run(codegen(prog), inputs, cache_dir=twin_cache))
    golden = np.asarray(ks.evaluate(out, inputs, schedule=s))
    np.testing.assert_array_equal(got, golden)
    np.testing.assert_array_equal(np.asarray(ks.run_tiled(prog, inputs)), got)
