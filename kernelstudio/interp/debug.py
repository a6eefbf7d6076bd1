"""Per-tile numerical debugging: the interpreter with checkpoints against a golden model (`ks.debug`).

Every tile a kernel stores to GM is compared with the golden value of that region; the tiles are the store
regions, gridded per tensor (the tensor viewed as rows of the stores' stride; tile size the largest store).
Elements no instruction wrote count as off (error inf). The first tile is the bad tile whose first store ran
first. Its instruction is found in the tile's dataflow cone (the instances whose values reached its store),
earliest first:

1. an instruction that read stale data: an on-chip slot element written before the slot's last Alloc (a
   ping/pong slot read from the wrong buffer) or never written, or a GM element nobody wrote;
2. else, a vector instruction whose comment names the graph node it computes (`name = op`) and whose values,
   on the store's rows and columns, are off that node's golden value (a second run copies them: "where
   cheap" means vector results shaped like the stored tile, or one column of it for row reductions);
3. else the store itself (a wrong bound leaves part of the tile unwritten: the store of that tile is named).

The golden values come from the caller (the plan-aware golden model: `ks.debug` in plan/debug.py); this stage
reads only the TileIR.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.dtypes import round_to
from ..tileir.program import Program, Reduce, VecOp
from .checkpoints import UNWRITTEN, CheckedMachine, InstrKey, Store, cone, run_checked

__all__ = ["InstrRef", "NodeGolden", "TileReport", "TensorErrors", "DebugReport", "check_program"]


@dataclass(frozen=True)
class InstrRef:
    """A TileIR instruction: kernel, side, `index` among that side's instructions as the TileIR text prints them,
    its text, and `sids`, the simulator's static instruction ids (`SimResult.events.instr_text[sid]`)."""

    kernel: str
    side: str
    index: int
    text: str
    sids: tuple[int, ...] = ()

    def __str__(self) -> str:
        return f"{self.kernel} {self.side} #{self.index}: {self.text}"


@dataclass(frozen=True, eq=False)
class NodeGolden:
    """A graph node's golden value, its dtype and whether its kernel stores it (rounded on the way to GM)."""

    value: np.ndarray
    dtype: str
    stored: bool = False


@dataclass(frozen=True)
class TileReport:
    """One tile of a stored tensor: where it is, who stored it and how far off it is."""

    tensor: str
    kernel: str
    tile: tuple[int, int]  # coordinates in the tensor's tile grid
    rows: tuple[int, int]  # element rows [start, stop) in the tensor viewed as rows of `width` elements
    cols: tuple[int, int]
    width: int
    block: int
    core: str  # "aic", "aiv0", "aiv1"
    loops: tuple[tuple[str, int], ...]  # the store's enclosing loop variables and their values
    max_abs: float
    max_rel: float
    bad: int  # elements over tolerance (never-written ones included)
    unwritten: int
    elements: int
    store: InstrRef | None  # None: no instruction stored into this tile
    writers: tuple[InstrRef, ...]  # the instructions whose values reached the tile, in program order


@dataclass(frozen=True, eq=False)
class TensorErrors:
    """Max abs / rel error and bad-element count per tile of one stored tensor (the heatmap data)."""

    tensor: str
    width: int  # elements per row of the view the tiles grid
    tile_shape: tuple[int, int]
    max_abs: np.ndarray  # (tile rows, tile cols)
    max_rel: np.ndarray
    bad: np.ndarray


@dataclass(frozen=True, eq=False)
class DebugReport:
    """What `ks.debug` found: `ok`, the first tile and instruction off the golden model, errors per tile."""

    program: str
    atol: float
    rtol: float
    ok: bool
    first_tile: TileReport | None
    first_instruction: InstrRef | None
    why: str  # why that instruction is named
    tensors: tuple[TensorErrors, ...]
    tiles: int  # tiles checked
    reference: str = "the golden model"  # what the values were compared with, as the summary names it

    def errors(self, tensor: str | None = None, kind: str = "abs") -> np.ndarray:
        """The per-tile max error grid of `tensor` (default: the first tile's tensor, else the first one)."""
        t = self.tensor_errors(tensor)
        return {"abs": t.max_abs, "rel": t.max_rel, "bad": t.bad}[kind]

    def tensor_errors(self, name: str | None = None) -> TensorErrors:
        """The per-tile errors of stored tensor `name` (default: the first tile's tensor, else the first one)."""
        from ..core.errors import InputError

        if name is None:
            name = self.first_tile.tensor if self.first_tile else self.tensors[0].tensor
        for t in self.tensors:
            if t.tensor == name:
                return t
        raise InputError(f"debug report of {self.program}: no stored tensor {name!r}; tensors: "
                         f"{', '.join(t.tensor for t in self.tensors)}")

    def summary(self) -> str:
        """A few lines: the verdict, the first tile and instruction, the worst error per tensor."""
        tol = f"atol {_num(self.atol)}, rtol {_num(self.rtol)}"
        if self.ok:
            lines = [f"debug {self.program}: all {self.tiles} tiles within {tol} of {self.reference}"]
        else:
            nbad = sum(int(np.count_nonzero(t.bad)) for t in self.tensors)
            lines = [f"debug {self.program}: {nbad} of {self.tiles} tiles off {self.reference} ({tol})"]
        if (ft := self.first_tile) is not None:
            loops = ", ".join(f"{k}={v}" for k, v in ft.loops)
            lines += [f"first tile: {ft.tensor} tile {ft.tile}, rows {ft.rows[0]}:{ft.rows[1]}, cols "
                      f"{ft.cols[0]}:{ft.cols[1]} (rows of {ft.width}); kernel {ft.kernel}, block {ft.block} "
                      f"{ft.core}" + (f", {loops}" if loops else ""),
                      f"  max abs error {_num(ft.max_abs)}, max rel error {_num(ft.max_rel)}; {ft.bad} of "
                      f"{ft.elements} elements off" + (f", {ft.unwritten} never written" if ft.unwritten else "")]
        if self.first_instruction is not None:
            lines += [f"first instruction: {self.first_instruction}", f"  {self.why}"]
        for t in self.tensors:
            g = t.max_abs
            lines.append(f"{t.tensor}: {g.shape[0]}x{g.shape[1]} tiles of {t.tile_shape[0]}x{t.tile_shape[1]}, "
                         f"{int(np.count_nonzero(t.bad))} off, max abs error {_num(float(g.max(initial=0.0)))}")
        return "\n".join(lines)

    def on_timeline(self, sim: Any) -> Any:
        """The simulated events of the first instruction (every core and repeat that ran it) in `sim`, the
        simulation of the same program (`ks.simulate(prog)`, a Design's `.sim`): where the timeline draws it."""
        from ..core.errors import InputError

        ev = sim.events
        ref = self.first_instruction
        if ref is None:
            return ev.select(np.zeros(len(ev), dtype=bool))
        if not ref.sids or max(ref.sids) >= len(ev.instr_text):
            raise InputError(f"debug report of {self.program}: its instruction ids are not those of this simulation "
                             f"(program {getattr(sim, 'program', '?')!r}); pass the simulation of the program debugged")
        return ev.select(np.isin(ev.columns["instr"], ref.sids))

    def heatmap(self, tensor: str | None = None) -> Any:
        """The per-tile max abs error of `tensor` as a plotly heatmap, the first bad tile outlined."""
        from .debug_figure import debug_heatmap  # a plain plotly Figure: no widget, so it lives with the report

        return debug_heatmap(self, tensor)


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


# ---- comparing ---------------------------------------------------------------------------------------------

def _compare(got: np.ndarray, want: np.ndarray, atol: float, rtol: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(abs error, rel error, off) per element; NaN where the other is not NaN, or a wrong inf, is off by inf."""
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    with np.errstate(all="ignore"):
        d = np.abs(got - want)
        same = (np.isnan(got) & np.isnan(want)) | (got == want)
        d[same] = 0.0
        d[np.isnan(d)] = np.inf
        scale = np.abs(want)
        rel = np.where(d == 0, 0.0, np.where(scale > 0, d / scale, np.inf))
        rel[np.isnan(rel)] = np.inf
        off = (d > atol + rtol * np.where(np.isfinite(scale), scale, 0.0)) | np.isinf(d)
    return d, rel, off


def _width(shape: tuple[int, ...], stores: list[Store]) -> int:
    """Elements per row of the view a tensor's tiles grid: the stride most of its stores use, else its last dim."""
    size = math.prod(shape)
    last = shape[-1] if shape else 1
    strides = [s.stride for s in stores if s.rows > 1 and 0 < s.stride <= size and size % s.stride == 0]
    return max(set(strides), key=strides.count) if strides else max(last, 1)


def _grid(a: np.ndarray, rows: int, width: int, tr: int, tc: int, fill: float, how: Callable) -> np.ndarray:
    gr, gc = -(-rows // tr), -(-width // tc)
    pad = np.full((gr * tr, gc * tc), fill, dtype=a.dtype)
    pad[:rows, :width] = a.reshape(rows, width)
    return how(pad.reshape(gr, tr, gc, tc), axis=(1, 3))


def _region_idx(s: Store) -> np.ndarray:
    return (s.offset + np.arange(s.rows)[:, None] * s.stride + np.arange(s.cols)[None, :]).reshape(-1)


_NAMED = re.compile(r"^(\w+) = (\w+)")


def _node_of(stmt: Any, nodes: Mapping[str, NodeGolden]) -> str | None:
    """The graph node a vector instruction computes, when its comment names it and the op agrees."""
    if not isinstance(stmt, (VecOp, Reduce)) or (isinstance(stmt, Reduce) and stmt.accumulate):
        return None
    m = _NAMED.match(stmt.comment)
    if m is None or m.group(1) not in nodes:
        return None
    op = m.group(2)
    ok = (stmt.op in (op, op + "s") if isinstance(stmt, VecOp) else op == f"reduce_{stmt.op}")
    return m.group(1) if ok else None


def _snap_error(vals: np.ndarray, node: NodeGolden, store: Store, width: int, atol: float, rtol: float
                ) -> tuple[float, int] | None:
    """(max abs error, elements off) of an instance's values against its node on the store's rows and cols;
    None where its shape does not map onto the tile."""
    g = np.asarray(node.value).reshape(-1)
    if vals.ndim != 2 or vals.shape[0] != store.rows or vals.size == 0:
        return None
    r0, c0 = divmod(store.offset, width)
    rows, cols = vals.shape
    if cols == store.cols and g.size % width == 0:
        want = g.reshape(-1, width)[r0:r0 + rows, c0:c0 + cols]
    elif cols == 1 and node.value.shape[-1:] == (1,):
        want = g.reshape(-1, 1)[r0:r0 + rows]
    else:
        return None
    if want.shape != vals.shape:
        return None
    got = round_to(node.dtype, vals.astype(np.float64)) if node.stored else vals
    d, _, off = _compare(got, want, atol, rtol)
    return float(d.max()), int(np.count_nonzero(off))


# ---- the check ----------------------------------------------------------------------------------------------

def check_program(prog: Program, inputs: Mapping[str, Any], *, expected: Mapping[str, np.ndarray],
                  nodes: Mapping[str, NodeGolden], atol: float, rtol: float, what: str = "debug",
                  sids: Callable[[InstrKey], tuple[int, ...]] | None = None,
                  reference: str = "the golden model") -> DebugReport:
    """Run `prog` with checkpoints and compare every stored tile of the tensors in `expected` (name -> golden
    array of the tensor's shape); `nodes` (graph node name -> golden) lets vector instructions be checked."""
    m = run_checked(prog, inputs, what)

    def ref(key: InstrKey) -> InstrRef:
        _, text = m.stmts[key]
        return InstrRef(prog.kernels[key.kernel].name, key.side, key.index, text, sids(key) if sids else ())

    tensors: list[TensorErrors] = []
    candidates: list[tuple[float, int, int, int]] = []
    per: dict[str, tuple] = {}
    for ti, t in enumerate(t for t in prog.tensors if t.name in expected):
        stores = [s for s in m.stores if s.tensor == t.name]
        width = _width(t.shape, stores)
        rows = t.size // width
        tr = min(max([s.rows for s in stores] + [1]), rows)
        tc = min(max([s.cols for s in stores] + [1]), width)
        d, rel, off = _compare(m.gm[t.name], np.asarray(expected[t.name]).reshape(-1), atol, rtol)
        unw = m.gm_writers[t.name] == UNWRITTEN
        d[unw], rel[unw], off[unw] = np.inf, np.inf, True
        errs = TensorErrors(t.name, width, (tr, tc), _grid(d, rows, width, tr, tc, 0.0, np.max),
                            _grid(rel, rows, width, tr, tc, 0.0, np.max),
                            _grid(off.astype(np.int64), rows, width, tr, tc, 0, np.sum))
        tensors.append(errs)
        first: dict[tuple[int, int], int] = {}
        for s in stores:
            r0, c0 = divmod(s.offset, width)
            cell = (min(r0 // tr, errs.bad.shape[0] - 1), min(c0 // tc, errs.bad.shape[1] - 1))
            first.setdefault(cell, s.seq)
        for i, j in np.argwhere(errs.bad > 0).tolist():
            candidates.append((first.get((i, j), math.inf), ti, i, j))
        per[t.name] = (d, rel, off, unw, stores, width, rows)
    n_tiles = sum(int(t.bad.size) for t in tensors)
    if not candidates:
        return DebugReport(prog.name, atol, rtol, True, None, None, "", tuple(tensors), n_tiles, reference)

    _, ti, i, j = min(candidates)
    errs = tensors[ti]
    d, rel, off, unw, stores, width, rows = per[errs.tensor]
    tr, tc = errs.tile_shape
    box = (slice(i * tr, min((i + 1) * tr, rows)), slice(j * tc, min((j + 1) * tc, width)))
    flat = np.arange(rows * width).reshape(rows, width)[box].reshape(-1)
    mine = [s for s in stores if (min(s.offset // width // tr, errs.bad.shape[0] - 1),
                                  min(s.offset % width // tc, errs.bad.shape[1] - 1)) == (i, j)]
    store = next((s for s in mine if off[_region_idx(s)].any()), mine[-1] if mine else None)
    culprit, why, writers = _culprit(prog, inputs, m, store, nodes, width, atol, rtol, what, errs.tensor,
                                     (box[0].stop - box[0].start, box[1].stop - box[1].start))
    tile = TileReport(
        tensor=errs.tensor, kernel=prog.kernels[store.key.kernel].name if store else "",
        tile=(i, j), rows=(box[0].start, box[0].stop), cols=(box[1].start, box[1].stop), width=width,
        block=store.block if store else -1, core=store.core if store else "", loops=store.loops if store else (),
        max_abs=float(d[flat].max()), max_rel=float(rel[flat].max()), bad=int(np.count_nonzero(off[flat])),
        unwritten=int(np.count_nonzero(unw[flat])), elements=int(flat.size),
        store=ref(store.key) if store else None, writers=tuple(ref(k) for k in writers))
    return DebugReport(prog.name, atol, rtol, False, tile, ref(culprit) if culprit else None, why,
                       tuple(tensors), n_tiles, reference)


def _culprit(prog: Program, inputs: Mapping[str, Any], m: CheckedMachine, store: Store | None,
             nodes: Mapping[str, NodeGolden], width: int, atol: float, rtol: float, what: str, tensor: str,
             tile: tuple[int, int]) -> tuple[InstrKey | None, str, list[InstrKey]]:
    """(the first instruction off, why, the instructions that wrote the tile) for the first bad tile's store."""
    if store is None:
        return None, f"no instruction stored into this tile of {tensor}: a loop bound skips it", []
    instances = cone(m, store.seq)
    writers = sorted(set(m.keys[i] for i in instances), key=lambda k: (k.kernel, k.side, k.index))
    # an earlier kernel that went wrong stored a bad tile of its own first: look in the store's kernel only
    instances = [i for i in instances if m.keys[i].kernel == store.key.kernel]
    named = {i: n for i in instances if (n := _node_of(m.stmts[m.keys[i]][0], nodes)) is not None}
    snaps = run_checked(prog, inputs, what, frozenset(named)).snaps if named else {}
    for i in instances:
        key = m.keys[i]
        if m.stale[i]:
            return key, (f"it read {m.stale[i]} elements of {m.stale_in[i]} that no instruction wrote since the "
                         "slot was last allocated (a slot of the wrong buffer, or data never stored)"), writers
        if i in snaps:
            err = _snap_error(snaps[i][0], nodes[named[i]], store, width, atol, rtol)
            if err is not None and err[1]:
                return key, (f"its values of {named[i]} are off that node's golden value by up to "
                             f"{_num(err[0])} ({err[1]} elements off)"), writers
    dst = m.stmts[store.key][0].dst  # type: ignore[union-attr]
    return store.key, (f"the store of the tile: it wrote {store.rows}x{store.cols} elements ({dst.rows} x {dst.cols}) "
                       f"of the tile's {tile[0]}x{tile[1]}, and no instruction feeding it is off: check the bounds "
                       "of its rows and columns"), writers
