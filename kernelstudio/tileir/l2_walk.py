"""Reuse distances of a cube kernel's operand panels, from the order its tiles are dealt out.

The kernel's `TileWalk` (lower/tile_order.py) says which A row panel and B column panel each C tile
reads. Tile t runs in wave t // block_dim; the tiles of one wave run at the same time, side by side
through their `slices` GM loads (L1 slabs of k tiles), so a panel several of them read is fetched
once and the other cores re-read it a slice later: at a distance of the wave's distinct bytes /
slices. The waves are the clock of an LRU stack over panels: the reuse distance of a panel read
in wave r, last read in wave q < r, is the distinct bytes touched in waves q+1..r (r - q waves'
worth: the two reads sit anywhere in their waves, so that is the mean) — the distinct panels
(itself included) plus the kernel's other traffic (its output tiles, epilogue inputs: their
footprint spread evenly over the tiles). The first read of a panel in the kernel has no distance
(l2.py prices it by cross-kernel reuse).

Computed with NumPy at panel granularity: the distinct bytes of every window of waves come from
one cumulative table over (wave, wave of the panel's previous read). Beyond MAX_STEPS waves, runs of
consecutive waves share a step (reads of a panel inside one step count as one fetch). Results are
cached per (walk, block_dim, other bytes per tile); only the hit probabilities depend on l2_bytes.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .expr import Bin, Const, Expr, Var
from .hints import TileWalk

__all__ = ["MAX_STEPS", "panel_reads", "walk_hit_ratios", "walk_hbm_reads"]

MAX_STEPS = 512

_NP = {"+": np.add, "-": np.subtract, "*": np.multiply, "//": np.floor_divide, "%": np.mod,
       "min": np.minimum, "max": np.maximum}


def _eval(e: Expr, env: dict[str, np.ndarray]) -> np.ndarray | int:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Bin):
        return _NP[e.op](_eval(e.a, env), _eval(e.b, env))
    raise ValueError(f"a tile walk cannot read buffers: {e}")


@lru_cache(maxsize=256)
def panel_reads(walk: TileWalk, block_dim: int, other_per_tile: float) -> tuple[np.ndarray, ...]:
    """Per (step, panel) occurrence, sorted by step: (operand index, reuse distance in bytes (-1 at
    the panel's first read in the kernel), bytes of the one fetch, bytes of the step's other reads
    of it, their reuse distance)."""
    n = walk.tiles
    t = np.arange(n, dtype=np.int64)
    env: dict[str, np.ndarray] = {"t": t}
    for let in walk.lets:
        env[let.var] = np.broadcast_to(_eval(let.value, env), (n,))
    waves = t // max(1, block_dim)
    per = -(-(int(waves[-1]) + 1) // MAX_STEPS)
    step = waves // per
    nsteps = int(step[-1]) + 1
    nops = len(walk.panels)
    ops = np.repeat(np.arange(nops), n)
    keys = np.concatenate([np.broadcast_to(_eval(p.key, env), (n,)) for p in walk.panels]).astype(np.int64)
    size = np.concatenate([np.broadcast_to(_eval(p.nbytes, env), (n,)) for p in walk.panels]).astype(np.float64)
    reads = np.concatenate([np.broadcast_to(_eval(p.reads, env), (n,)) for p in walk.panels]).astype(np.float64)
    steps = np.tile(step, nops)
    _, item = np.unique(keys * nops + ops, return_inverse=True)
    nitems = int(item.max()) + 1
    occ, first, inv = np.unique(steps * nitems + item, return_index=True, return_inverse=True)
    occ_step, occ_item = occ // nitems, occ % nitems
    fetch = size[first]
    extra = np.bincount(inv.ravel(), weights=size * reads, minlength=len(occ)) - fetch
    # previous step the same panel was read (-1: never in this kernel)
    order = np.lexsort((occ_step, occ_item))
    prev = np.full(len(occ), -1, dtype=np.int64)
    same = occ_item[order][1:] == occ_item[order][:-1]
    prev[order[1:][same]] = occ_step[order][:-1][same]
    # table[r, c]: bytes of occurrences at steps <= r whose panel was last read before step c
    flat = np.bincount(occ_step * (nsteps + 1) + prev + 1, weights=fetch, minlength=nsteps * (nsteps + 1))
    table = flat.reshape(nsteps, nsteps + 1).cumsum(0).cumsum(1)
    tiles_upto = np.concatenate(([0], np.cumsum(np.bincount(step, minlength=nsteps))))
    dist = np.full(len(occ), -1.0)
    has = prev >= 0
    q, r = prev[has], occ_step[has]
    # distinct bytes of steps q+1..r: panels read there whose previous read was at step q or before
    dist[has] = table[r, q + 1] - table[q, q + 1] + other_per_tile * (tiles_upto[r + 1] - tiles_upto[q + 1])
    step_bytes = np.bincount(occ_step, weights=fetch, minlength=nsteps) + other_per_tile * np.diff(tiles_upto)
    co_dist = step_bytes[occ_step] / (walk.slices * per)
    return ops[first], dist, fetch, extra, co_dist


def walk_hit_ratios(walk: TileWalk, block_dim: int, other_per_tile: float, l2_bytes: float,
                    first: dict[str, float]) -> dict[str, float]:
    """Share of each panel tensor's reads (bytes) that L2 serves; `first[tensor]` prices a panel's
    first read in the kernel (cross-kernel reuse, 0 for a cold input)."""
    op, dist, fetch, extra, co_dist = panel_reads(walk, block_dim, float(other_per_tile))
    again, co = _hit_probability(dist, l2_bytes), _hit_probability(co_dist, l2_bytes)
    hits: dict[str, list[float]] = {}
    for i, p in enumerate(walk.panels):
        mine = op == i
        h = np.where(dist[mine] < 0, first.get(p.tensor, 0.0), again[mine])
        acc = hits.setdefault(p.tensor, [0.0, 0.0])
        acc[0] += float((fetch[mine] * h).sum() + (extra[mine] * co[mine]).sum())
        acc[1] += float(fetch[mine].sum() + extra[mine].sum())
    return {name: (hit / total if total else 1.0) for name, (hit, total) in hits.items()}


def walk_hbm_reads(walk: TileWalk, block_dim: int, other_per_tile: float, l2_bytes: float) -> float:
    """Bytes of the panel reads that miss L2 when every operand starts cold (first reads miss)."""
    _, dist, fetch, extra, co_dist = panel_reads(walk, block_dim, float(other_per_tile))
    again = np.where(dist < 0, 0.0, _hit_probability(dist, l2_bytes))
    return float((fetch * (1 - again)).sum() + (extra * (1 - _hit_probability(co_dist, l2_bytes))).sum())


def _hit_probability(distance: np.ndarray, l2_bytes: float) -> np.ndarray:
    """l2.hit_probability, per read."""
    d = np.maximum(distance, 1.0)
    return np.clip((l2_bytes - d / 2) / d, 0.0, 1.0)
