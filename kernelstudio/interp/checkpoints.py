"""The interpreter with checkpoints: `run_tiled`'s machine recording who wrote what, for `ks.debug`.

`_Machine` is untouched (run_tiled pays nothing); `CheckedMachine` overrides its `instr`, `read` and `write`
to record, per executed instruction (an *instance*, numbered in execution order):

- which instances wrote the elements it read (the dataflow between instances, across cores, kernels and GM);
- how many of the elements it read were stale: an on-chip slot element written before the slot's last
  `Alloc` (the queue handed the slot out: its old contents are garbage) or never written, or a GM element of
  an output, intermediate or workspace no instruction wrote;
- every write to a GM tensor (a *store*): tensor, region, block, core, loop indices;
- when asked, a copy of the values chosen instances wrote (the second pass of `ks.debug`).

Writer ids live beside each buffer slot and GM tensor as int64 arrays: -1 never written, -2 a kernel input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..tileir.expr import compile_expr
from ..tileir.printer import instr_text
from ..tileir.program import (
    Alloc,
    Copy,
    GateTopK,
    If,
    Img2Col,
    Let,
    Loop,
    Mmad,
    MrgSort,
    Program,
    Reduce,
    Region,
    Stmt,
    TopK,
    VecOp,
    walk,
)
from .run import _Core, _Machine, _run_kernel, load_gm

__all__ = ["InstrKey", "Store", "CheckedMachine", "instruction_table", "run_checked"]

UNWRITTEN, INPUT = -1, -2
_DATA = (Copy, VecOp, Reduce, Mmad, Img2Col, TopK, MrgSort, GateTopK)  # the instructions that move or compute values


@dataclass(frozen=True, slots=True)
class InstrKey:
    """A TileIR instruction: kernel index, side ("aic" / "aiv") and its position among that side's
    instructions in the order the TileIR text prints them (loops, lets and ifs not counted)."""

    kernel: int
    side: str
    index: int


@dataclass(frozen=True, slots=True)
class Store:
    """One executed write of a GM tensor: its instance, the region evaluated, where it ran."""

    seq: int
    key: InstrKey
    tensor: str
    offset: int
    rows: int
    cols: int
    stride: int
    block: int
    core: str  # "aic", "aiv0", "aiv1"
    loops: tuple[tuple[str, int], ...]  # the enclosing loops' variables and their values


def _is_instr(s: Stmt) -> bool:
    return not isinstance(s, (Let, Loop, If))


def instruction_table(prog: Program) -> tuple[dict[int, InstrKey], dict[InstrKey, tuple[Stmt, str]],
                                                dict[tuple[int, str], tuple[str, ...]]]:
    """(id(statement) -> key, key -> (statement, text), (kernel, side) -> its loop variables, outermost first)."""
    by_id: dict[int, InstrKey] = {}
    stmts: dict[InstrKey, tuple[Stmt, str]] = {}
    loops: dict[tuple[int, str], tuple[str, ...]] = {}
    for kidx, k in enumerate(prog.kernels):
        tiers = {b.name: b.tier for b in k.buffers}
        for side, body in (("aic", k.aic), ("aiv", k.aiv)):
            n = 0
            for s in walk(body):
                if isinstance(s, Loop):
                    loops[(kidx, side)] = (*loops.get((kidx, side), ()), s.var)
                if not _is_instr(s):
                    continue
                key = InstrKey(kidx, side, n)
                by_id.setdefault(id(s), key)
                stmts[key] = (s, instr_text(s, tiers).strip())
                n += 1
    return by_id, stmts, loops


class CheckedMachine(_Machine):
    """`_Machine` recording instances, their sources, stale reads and stores (see the module doc)."""

    def __init__(self, prog: Program, gm: dict[str, np.ndarray], snap: frozenset[int] = frozenset()) -> None:
        super().__init__(prog, gm)
        self.by_id, self.stmts, self.loop_vars = instruction_table(prog)
        self.gm_writers = {t.name: np.full(t.size, INPUT if t.role == "input" else UNWRITTEN, dtype=np.int64)
                           for t in prog.tensors}
        self.keys: list[InstrKey] = []  # per instance
        self.sources: list[list[np.ndarray]] = []
        self.stale: list[int] = []  # stale or never-written elements each instance read
        self.stale_in: list[str] = []  # the first buffer or tensor it read them from
        self.stores: list[Store] = []
        self.snap = snap
        self.snaps: dict[int, tuple[np.ndarray, Region]] = {}
        self.kidx = 0
        self._seq = -1
        self._img2col_src: Region | None = None

    # ---- per-core bookkeeping (kept on the core object: it lives as long as its block) ---------------
    @staticmethod
    def _slot_writers(core: _Core, buf: str) -> np.ndarray:
        w = core.__dict__.setdefault("writers", {})
        slot = core.bound[buf]
        arr = w.get((buf, slot))
        if arr is None:
            arr = w[(buf, slot)] = np.full(core.slots[buf][slot].size, UNWRITTEN, dtype=np.int64)
        return arr

    @staticmethod
    def _alloc_seq(core: _Core, buf: str) -> int:
        return core.__dict__.setdefault("alloc_seq", {}).get((buf, core.bound[buf]), UNWRITTEN)

    def _writers(self, r: Region, core: _Core) -> np.ndarray:
        return self.gm_writers[r.buf] if r.gm else self._slot_writers(core, r.buf)

    # ---- hooks ------------------------------------------------------------------------------------------
    def instr(self, s: Stmt, env: dict[str, int], core: _Core) -> None:
        key = self.by_id.get(id(s))
        if key is None or not isinstance(s, _DATA):
            super().instr(s, env, core)
            if isinstance(s, Alloc):
                core.__dict__.setdefault("alloc_seq", {})[(s.buf, core.bound[s.buf])] = len(self.keys)
            return
        self._seq = len(self.keys)
        self.keys.append(key)
        self.sources.append([])
        self.stale.append(0)
        self.stale_in.append("")
        if isinstance(s, Img2Col):  # it reads its source slot directly, not through `read`
            w = self._slot_writers(core, s.src.buf)
            self.sources[-1].append(np.unique(w[w >= 0]))
        super().instr(s, env, core)
        self._seq = -1

    def read(self, r: Region, env: dict[str, int], core: _Core) -> tuple[np.ndarray, str]:
        out = super().read(r, env, core)
        if self._seq >= 0:
            idx = self._idx(r, env, core)
            w = self._writers(r, core)[idx]
            self.sources[self._seq].append(np.unique(w[w >= 0]))
            floor = UNWRITTEN if r.gm else self._alloc_seq(core, r.buf)
            stale = int(np.count_nonzero((w == UNWRITTEN) | ((w >= 0) & (w < floor))))
            if stale:
                self.stale[self._seq] += stale
                self.stale_in[self._seq] = self.stale_in[self._seq] or (f"gm.{r.buf}" if r.gm else r.buf)
        return out

    def write(self, r: Region, values: np.ndarray, env: dict[str, int], core: _Core) -> None:
        super().write(r, values, env, core)
        seq = self._seq
        if seq < 0:
            return
        idx = self._idx(r, env, core)
        if idx.size:
            self._writers(r, core)[idx] = seq
        if seq in self.snap:
            arr, _ = self._arr(r, core)
            self.snaps[seq] = (arr[idx].copy(), r)
        if r.gm:
            load = self._loader(core)
            vals = [compile_expr(e)(env, load) for e in (r.offset, r.rows, r.cols, r.stride)]
            key = self.keys[seq]
            names = self.loop_vars.get((key.kernel, key.side), ())
            where = "aic" if core.side == "aic" else f"aiv{env.get('sub', 0)}"
            self.stores.append(Store(seq, key, r.buf, vals[0], max(vals[1], 0), max(vals[2], 0), vals[3],
                                     env.get("blk", 0), where, tuple((v, env[v]) for v in names if v in env)))


def run_checked(prog: Program, inputs: Mapping[str, Any], what: str,
                snap: frozenset[int] = frozenset()) -> CheckedMachine:
    """Run `prog` on `inputs` with checkpoints; the machine holds GM, instances, stores and snapshots."""
    m = CheckedMachine(prog, load_gm(prog, inputs, what), snap)
    for kidx, k in enumerate(prog.kernels):
        m.kidx = kidx
        _run_kernel(m, k)
    return m


def cone(m: CheckedMachine, start: int) -> list[int]:
    """The instances whose values reached instance `start` (itself included), in execution order."""
    seen = {start}
    todo = [start]
    while todo:
        i = todo.pop()
        for arr in m.sources[i]:
            for j in arr.tolist():
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
    return sorted(seen)

