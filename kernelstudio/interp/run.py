"""`run_tiled`: execute a TileIR Program instruction by instruction on NumPy arrays.

GM tensors and every buffer slot are flat NumPy arrays of their dtype's compute type (float32 holding
bfloat16 values; inputs and outputs are `ml_dtypes.bfloat16` arrays); an instruction
reads and writes 2-D strided regions of them, computing in the destination's dtype exactly as the
TileIR says. Within a block the AIC and AIV programs run as coroutines that switch at cross-core
waits, so workspace hand-off is exercised as the hardware orders it. Outputs start as NaN (floats)
so an element no instruction writes shows up in the comparison.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..core.dtypes import compute_dtype, numpy_dtype, round_to
from ..core.errors import InputError, KernelStudioError
from ..core.gating import gate_select
from ..core.merge import merge_runs
from ..tileir.capacity import profile_of
from ..tileir.expr import Const, compile_expr, has_load
from ..tileir.program import (
    Alloc,
    Copy,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    GateTopK,
    If,
    Img2Col,
    Kernel,
    Let,
    Loop,
    Mmad,
    MrgSort,
    Program,
    Reduce,
    Region,
    SetFlag,
    Stmt,
    SyncAll,
    TopK,
    VecOp,
    WaitFlag,
    walk,
)
from ..tileir.vector_ops import VectorOp, reduction, vector_op

__all__ = ["run_tiled"]


def _vec(row: VectorOp, srcs: list[np.ndarray], scalar: float | None, dt: np.dtype) -> np.ndarray:
    with np.errstate(all="ignore"):
        return row.numpy(srcs, dt.type(scalar) if scalar is not None else None, dt)


class _Core:
    """Buffers and queue state of one core of one block."""

    def __init__(self, kernel: Kernel, core: str):
        self.kernel, self.side = kernel, core
        self.slots: dict[str, list[np.ndarray]] = {}
        self.dtype: dict[str, str] = {}
        self.bound: dict[str, int] = {}
        self.next_alloc: dict[str, int] = {}
        self.fifo: dict[str, deque[int]] = {}
        for b in kernel.buffers:
            if b.core.value != core:
                continue
            self.slots[b.name] = [np.zeros(b.slot_elems, dtype=compute_dtype(b.dtype)) for _ in range(b.depth)]
            self.dtype[b.name] = b.dtype
            self.bound[b.name] = 0
            self.next_alloc[b.name] = 0
            self.fifo[b.name] = deque()


class _Machine:
    def __init__(self, prog: Program, gm: dict[str, np.ndarray]):
        self.prog, self.gm = prog, gm
        self.gm_dtype = {t.name: t.dtype for t in prog.tensors}
        self.barrier = _Barrier(0)  # the running kernel's SyncAll

    # ---- memory ----------------------------------------------------------------------------
    def _arr(self, r: Region, core: _Core) -> tuple[np.ndarray, str]:
        if r.gm:
            return self.gm[r.buf], self.gm_dtype[r.buf]
        return core.slots[r.buf][core.bound[r.buf]], core.dtype[r.buf]

    def _idx(self, r: Region, env: dict[str, int], core: _Core) -> np.ndarray:
        load = self._loader(core)
        off = compile_expr(r.offset)(env, load)
        rows = compile_expr(r.rows)(env, load)
        cols = compile_expr(r.cols)(env, load)
        stride = compile_expr(r.stride)(env, load)
        rows, cols = max(rows, 0), max(cols, 0)
        return off + np.arange(rows)[:, None] * stride + np.arange(cols)[None, :]

    def read(self, r: Region, env: dict[str, int], core: _Core) -> tuple[np.ndarray, str]:
        arr, dt = self._arr(r, core)
        idx = self._idx(r, env, core)
        if idx.size and (idx.min() < 0 or idx.max() >= arr.size):
            if r.gm and (has_load(r.offset) or self.prog.tensor(r.buf).role == "input"):  # data-dependent
                raise self._bad_gather(r, idx, core)
            raise KernelStudioError(f"run_tiled: region {r} reads [{idx.min()}, {idx.max()}] outside "
                                    f"{r.buf} of {arr.size} elements")
        return arr[idx], dt

    def write(self, r: Region, values: np.ndarray, env: dict[str, int], core: _Core) -> None:
        arr, dt = self._arr(r, core)
        idx = self._idx(r, env, core)
        if idx.size == 0:
            return
        if idx.min() < 0 or idx.max() >= arr.size:
            raise KernelStudioError(f"run_tiled: region {r} writes [{idx.min()}, {idx.max()}] outside "
                                    f"{r.buf} of {arr.size} elements")
        arr[idx] = round_to(dt, np.broadcast_to(values, idx.shape))

    def _bad_gather(self, r: Region, idx: np.ndarray, core: _Core) -> InputError:
        """An out-of-range gather index in the user's terms: the gather, the index input, the value."""
        t = self.prog.tensor(r.buf)
        rows = t.shape[0] if t.shape else 1
        per_row = max(t.size // max(rows, 1), 1)
        bad = idx[(idx < 0) | (idx >= t.size)]
        value = int(bad.flat[0]) // per_row if bad.size else -1
        k = core.kernel
        index_inputs = [p for p in k.params if p != r.buf and self.prog.tensor(p).role != "output"
                        and self.prog.tensor(p).dtype.startswith("int")]
        src = f" from {', '.join(index_inputs)}" if index_inputs else ""
        return InputError(f"run_tiled({self.prog.name}): gather in kernel {k.name}: index {value}{src} is out of "
                          f"range [0, {rows}) for axis 0 of the gathered tensor {t.name} {list(t.shape)}; "
                          f"pass indices in [0, {rows})")

    def _loader(self, core: _Core):
        gm = self.gm

        def load(buf: str, index: int) -> int:
            if buf in core.slots:
                return int(core.slots[buf][core.bound[buf]][index])
            return int(gm[buf][index])  # a scalar read of GM (a grouped matmul's group list)
        return load

    # ---- statements --------------------------------------------------------------------------
    def run(self, stmts: tuple[Stmt, ...], env: dict[str, int], core: _Core, flags: dict[Any, int],
            me: Any, peers: list[Any]) -> Generator[None, None, None]:
        for s in stmts:
            if isinstance(s, Loop):
                f = compile_expr
                start, stop, step = (f(s.start)(env), f(s.stop)(env), f(s.step)(env))
                for i in range(start, stop, step):
                    env[s.var] = i
                    yield from self.run(s.body, env, core, flags, me, peers)
            elif isinstance(s, Let):
                env[s.var] = compile_expr(s.value)(env, self._loader(core))
            elif isinstance(s, If):
                if compile_expr(s.cond)(env, self._loader(core)):
                    yield from self.run(s.body, env, core, flags, me, peers)
            elif isinstance(s, CrossWait):
                while flags.get((me, s.flag), 0) == 0:
                    yield
                flags[(me, s.flag)] -= 1
            elif isinstance(s, CrossSet):
                self._cross_set(s, flags, me, peers)
            elif isinstance(s, SyncAll):
                yield from self.barrier.wait()
            else:
                self.instr(s, env, core)

    @staticmethod
    def _cross_set(s: CrossSet, flags: dict[Any, int], me: Any, peers: list[Any]) -> None:
        if me[0] == "aic":
            for p in peers:
                flags[(p, s.flag)] = flags.get((p, s.flag), 0) + 1
        else:  # an AIV set counts half of the AIC's wait (mode 2: the AIC waits for both AIVs)
            key = (("aic",), s.flag)
            part = ("aiv_part", s.flag)
            flags[part] = flags.get(part, 0) + 1
            if flags[part] == len(peers_of_aic(peers)):
                flags[part] = 0
                flags[key] = flags.get(key, 0) + 1

    def instr(self, s: Stmt, env: dict[str, int], core: _Core) -> None:
        if isinstance(s, Alloc):
            n = len(core.slots[s.buf])
            core.bound[s.buf] = core.next_alloc[s.buf]
            core.next_alloc[s.buf] = (core.next_alloc[s.buf] + 1) % n
        elif isinstance(s, EnQue):
            core.fifo[s.buf].append(core.bound[s.buf])
        elif isinstance(s, DeQue):
            if not core.fifo[s.buf]:
                raise KernelStudioError(f"run_tiled: DeQue of empty queue {s.buf}")
            core.bound[s.buf] = core.fifo[s.buf].popleft()
        elif isinstance(s, (Free, SetFlag, WaitFlag)):
            pass  # ordering only: the interpreter runs instructions in program order
        elif isinstance(s, Copy):
            v = self.read(s.src, env, core)[0] if s.valid_cols is None else self._read_valid(s, env, core)
            self.write(s.dst, v.astype(np.float64) if v.dtype.kind == "f" else v, env, core)
        elif isinstance(s, VecOp):
            _, dt = self._arr(s.dst, core)
            npdt = compute_dtype(dt)
            srcs = [self.read(r, env, core)[0] for r in s.srcs]
            row = vector_op(s.op, "run_tiled")
            if row.form != "cast":  # a cast reads its sources in their own dtype
                srcs = [x.astype(npdt) for x in srcs]
            self.write(s.dst, _vec(row, srcs, s.scalar, npdt), env, core)
        elif isinstance(s, Reduce):
            x, _ = self.read(s.src, env, core)
            _, dt = self._arr(s.dst, core)
            x = x.astype(compute_dtype(dt))
            red = reduction(s.op, "run_tiled")
            r = red.numpy(x)
            if s.accumulate:
                prev, _ = self.read(s.dst, env, core)
                r = vector_op(red.combine).numpy([prev, r], None, compute_dtype(dt))
            self.write(s.dst, r, env, core)
        elif isinstance(s, Mmad):
            f = compile_expr
            m, k, n = f(s.m)(env), f(s.k)(env), f(s.n)(env)
            a, _ = self.read(s.a, env, core)
            b, _ = self.read(s.b, env, core)
            _, c_dt = self._arr(s.c, core)
            acc = np.int64 if c_dt.startswith("int") else np.float32  # int8 x int8: exact integer sums
            a = a.astype(acc)
            b = b.astype(acc)
            a = a.T if s.a_layout == "km" else a
            b = b.T if s.b_layout == "nk" else b
            prod = a[:m, :k] @ b[:k, :n]
            if not f(s.init)(env):
                c, _ = self.read(s.c, env, core)
                prod = c.astype(acc) + prod
            self.write(s.c, prod, env, core)
        elif isinstance(s, Img2Col):
            self._img2col(s, env, core)
        elif isinstance(s, GateTopK):
            scores, _ = self.read(s.scores, env, core)
            sel, _ = self.read(s.src, env, core)
            w, ids = gate_select(scores, sel, s.k, s.groups, s.topk_groups, s.group_select)
            self.write(s.values, w, env, core)
            self.write(s.indices, ids, env, core)
        elif isinstance(s, TopK):
            x, _ = self.read(s.src, env, core)
            keys = x.astype(np.float64)
            order = np.argsort(-keys if s.largest else keys, axis=1, kind="stable")[:, : s.k]
            self.write(s.values, np.take_along_axis(x, order, axis=1), env, core)
            self.write(s.indices, order + compile_expr(s.index_base)(env), env, core)
        elif isinstance(s, MrgSort):
            keys, _ = self.read(s.src_keys, env, core)
            idx, _ = self.read(s.src_indices, env, core)
            k, i = merge_runs(keys, idx, compile_expr(s.first)(env), s.largest)
            self.write(s.keys, k, env, core)
            self.write(s.indices, i, env, core)
        else:
            raise KernelStudioError(f"run_tiled: unknown instruction {type(s).__name__}")

    def _read_valid(self, s: Copy, env: dict[str, int], core: _Core) -> np.ndarray:
        """The src of a Copy with `valid_cols`: its first valid_cols columns from the tensor, zeros after
        (the layout transform's padding, which the logical tensor does not hold)."""
        load = self._loader(core)
        rows = max(compile_expr(s.src.rows)(env, load), 0)
        cols = max(compile_expr(s.src.cols)(env, load), 0)
        valid = min(max(compile_expr(s.valid_cols)(env, load), 0), cols)  # type: ignore[arg-type]
        v, _ = self.read(replace(s.src, cols=Const(valid)), env, core)
        out = np.zeros((rows, cols), dtype=v.dtype)
        out[:, :valid] = v
        return out

    def _img2col(self, s: Img2Col, env: dict[str, int], core: _Core) -> None:
        f = compile_expr
        p0, pixels, k0, klen, h0 = (f(x)(env) for x in (s.p0, s.pixels, s.k0, s.klen, s.h0))
        src, _ = self._arr(s.src, core)
        base = f(s.src.offset)(env)
        gp = p0 + np.arange(pixels)[:, None]
        k = k0 + np.arange(klen)[None, :]
        oh, ow = gp // s.out_w, gp % s.out_w
        c, i, j = k // (s.kh * s.kw), (k // s.kw) % s.kh, k % s.kw
        h = oh * s.stride[0] - s.pad[0] + i
        w = ow * s.stride[1] - s.pad[2] + j
        ok = (h >= 0) & (h < s.in_h) & (w >= 0) & (w < s.in_w) & (c < (s.cin_valid or s.cin))
        idx = base + c * s.slab_rows * s.in_w + (h - h0) * s.in_w + w
        vals = np.where(ok, src[np.where(ok, idx, 0)], 0)
        self.write(s.dst, vals, env, core)


def peers_of_aic(peers: list[Any]) -> list[Any]:
    return [p for p in peers if p[0] == "aiv"] or peers


class _Barrier:
    """SyncAll across every core of a launch: a core waits until all `cores` have arrived."""

    def __init__(self, cores: int) -> None:
        self.cores, self.arrived, self.round = cores, 0, 0

    def wait(self) -> Generator[None, None, None]:
        mine = self.round
        self.arrived += 1
        if self.arrived == self.cores:
            self.arrived, self.round = 0, self.round + 1
        while self.round == mine:
            yield

    def state(self) -> tuple[int, int]:
        return self.arrived, self.round


Task = tuple[Any, Generator[None, None, None], dict[Any, int]]


def _run_kernel(m: _Machine, k: Kernel) -> None:
    """Run every block: one at a time, each block's cores interleaved at their cross-core waits; a kernel with
    a SyncAll runs all its blocks' cores together (the barrier waits for every one of them)."""
    together = any(isinstance(s, SyncAll) for side in (k.aic, k.aiv) for s in walk(side))
    if together:
        profile = profile_of(m.prog)
        cores = profile.aic_cores if k.aic else profile.aiv_cores
        if k.block_dim > cores:
            raise KernelStudioError(f"run_tiled: kernel {k.name} has a SyncAll and block_dim {k.block_dim} on a "
                                    f"chip of {cores} AI cores: blocks of a later round could never reach the barrier "
                                    f"the first round waits at (a hang on the device); launch at most {cores} blocks")
    m.barrier = _Barrier((int(bool(k.aic)) + (k.vec_per_block if k.aiv else 0)) * k.block_dim)
    batches = [range(k.block_dim)] if together else [range(b, b + 1) for b in range(k.block_dim)]
    for blocks in batches:
        tasks = [t for blk in blocks for t in _block_tasks(m, k, blk)]
        _interleave(m, k, tasks, f"blocks 0..{k.block_dim - 1}" if together else f"block {blocks[0]}")


def _block_tasks(m: _Machine, k: Kernel, blk: int) -> list[Task]:
    """The cores of one block as generators (with the block's cross-core flags)."""
    flags: dict[Any, int] = {}
    tasks: list[Task] = []
    aiv_ids = [("aiv", sub) for sub in range(k.vec_per_block)] if k.aiv else []
    if k.aic:
        env = {**dict(k.tiling), "blk": blk}
        tasks.append((("aic",), m.run(k.aic, env, _Core(k, "aic"), flags, ("aic",), aiv_ids), flags))
    for sub in range(k.vec_per_block if k.aiv else 0):
        env = {**dict(k.tiling), "blk": blk, "sub": sub}
        me = ("aiv", sub)
        tasks.append((me, m.run(k.aiv, env, _Core(k, "aiv"), flags, me, aiv_ids), flags))
    return tasks


def _interleave(m: _Machine, k: Kernel, tasks: list[Task], where: str) -> None:
    """Step the cores round-robin until all finish; a full round with no flag or barrier change is a hang."""
    live = deque(tasks)
    stalled = 0
    while live:
        me, gen, flags = live.popleft()
        before = (dict(flags), m.barrier.state())
        try:
            next(gen)
        except StopIteration:
            stalled = 0
            continue
        live.append((me, gen, flags))
        stalled = stalled + 1 if (flags, m.barrier.state()) == before else 0
        if stalled > 2 * len(live) + 2:
            waiting = m.barrier.arrived
            extra = (f"; {waiting} of {m.barrier.cores} cores wait at SyncAll, which every core of the launch "
                     "must reach" if waiting else "")
            raise KernelStudioError(f"run_tiled: kernel {k.name} {where}: cross-core waits never "
                                    f"satisfied (flags {flags}){extra}")


def load_gm(prog: Program, inputs: Mapping[str, Any], what: str) -> dict[str, np.ndarray]:
    """GM of `prog` before its first kernel: the inputs checked and rounded to their dtypes, every other
    tensor NaN (floats) or 0, flat."""
    from ..core.checks import check_inputs

    specs = [(t.name, t.shape, t.dtype) for t in prog.tensors if t.role == "input"]
    arrays = check_inputs(f"{what}({prog.name})", specs, inputs)
    gm: dict[str, np.ndarray] = {}
    for t in prog.tensors:
        if t.role == "input":
            with np.errstate(all="ignore"):
                gm[t.name] = round_to(t.dtype, arrays[t.name]).astype(compute_dtype(t.dtype)).reshape(-1)
        else:
            dt = compute_dtype(t.dtype)
            fill = np.nan if dt.kind == "f" else 0
            gm[t.name] = np.full(t.size, fill, dtype=dt)
    return gm


def run_tiled(prog: Program, inputs: Mapping[str, Any]) -> np.ndarray | tuple[np.ndarray, ...]:
    """Execute `prog` on `inputs` (name -> array); returns the output (a tuple for several)."""
    from ..core.checks import need

    prog = need(prog, Program, "run_tiled")
    gm = load_gm(prog, inputs, "run_tiled")
    m = _Machine(prog, gm)
    for k in prog.kernels:
        _run_kernel(m, k)
    outs = tuple(gm[n].reshape(prog.tensor(n).shape).astype(numpy_dtype(prog.tensor(n).dtype), copy=False)
                 for n in prog.outputs)
    return outs[0] if len(outs) == 1 else outs
