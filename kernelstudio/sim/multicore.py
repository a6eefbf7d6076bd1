"""Blocks on cores, kernels one after another, and the chip-wide memory shares.

Placement. A kernel runs `block_dim` blocks. A vector kernel's block b runs on AIV b % aiv_cores, a
cube kernel's on AIC b % aic_cores, a mixed kernel's on AIC g = b % aic_cores together with AIVs
g*aiv_per_aic + sub. Blocks placed on the same core(s) run one after another (waves); a block
starts when its cores finished the previous block. Each block is simulated from idle cores, so
its timeline relative to its start does not depend on the wave it runs in.

Memory sharing (exact and simple). A GM move's duration is max(single-core curve,
bytes * share / chip bytes per cycle) on its memory (HBM, or L2 for L2-resident data; costs.py).
`share` of a static move instruction is the time-averaged number of moves on that memory in
flight (all cores, itself included) during its executions: sum over its executions of the
integral of the in-flight count, divided by their total duration. It is found by fixed-point
iteration: simulate with share 1, measure, simulate again with the measured shares, until the
shares change by less than 1% (at most MAX_PASSES simulations). With n identical cores streaming
together this gives each exactly 1/n of the chip bandwidth.

Shortcuts (off with exact=True). Blocks whose fingerprints (program.fingerprint: sizes, trip
counts, branches) are equal are simulated once and their events copied to the other blocks'
cores and start times; steady-state loops are extrapolated inside the engine. Both are exact
when their preconditions hold; tests compare them with the full simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..lower.tileir import Kernel, Program
from .costs import Pricer, l2_resident_tensors
from .engine import Runner, run_block
from .errors import SimulationError
from .program import CoreProgram, StaticInstr, compile_side, fingerprint, top_loop_bounds

__all__ = ["MAX_PASSES", "KernelRun", "ProgramRun", "run_program", "core_label"]

MAX_PASSES = 4
SHARE_TOLERANCE = 0.01


@dataclass
class KernelRun:
    """One kernel's simulated blocks: events with kernel-relative cycle times."""

    name: str
    cycles: float
    rows: np.ndarray  # (n, 8) engine event rows, times relative to kernel start
    core: np.ndarray  # (n,) core id of each row
    simulated: int  # instructions walked one by one
    represented: int  # instructions the events stand for (simulated + copied)
    classes: int  # distinct blocks simulated
    cores_used: tuple[int, ...]


@dataclass
class ProgramRun:
    statics: list[StaticInstr]
    kernels: list[KernelRun]
    passes: int
    shares: dict[int, float]
    memory: dict[int, str]  # sid -> "hbm" | "l2" for GM moves
    pricer: Pricer


def core_label(profile, core: int) -> str:
    """msprof-style name of core id `core` (AICs first, then AIVs)."""
    if core < profile.aic_cores:
        return f"core{core}.cubecore0"
    j = core - profile.aic_cores
    per = max(profile.aiv_per_aic, 1)
    return f"core{j // per}.veccore{j % per}"


def _placement(kernel: Kernel, profile) -> tuple[int, callable]:
    """(groups, cores_of(group) -> [(side, sub, core id)])."""
    has_c, has_v = bool(kernel.aic), bool(kernel.aiv)
    na, nv, per = profile.aic_cores, profile.aiv_cores, max(profile.aiv_per_aic, 1)
    if has_c and has_v:
        if kernel.vec_per_block > per:
            raise SimulationError(
                f"kernel {kernel.name}: {kernel.vec_per_block} AIV programs per block but "
                f"{profile.name} pairs {per} AIV(s) with each AIC")
        return na, lambda g: [("aic", 0, g)] + [("aiv", s, na + g * per + s)
                                                 for s in range(kernel.vec_per_block)]
    if has_c:
        return na, lambda g: [("aic", 0, g)]
    groups = max(nv // max(kernel.vec_per_block, 1), 1)
    return groups, lambda g: [("aiv", s, na + g * kernel.vec_per_block + s)
                              for s in range(kernel.vec_per_block)]


def _env(kernel: Kernel, blk: int, sub: int) -> dict:
    env = dict(kernel.tiling)
    env["blk"] = blk
    env["sub"] = sub
    env["block_dim"] = kernel.block_dim
    return env


def _run_kernel(kidx: int, kernel: Kernel, sides: dict[str, CoreProgram], pricer: Pricer, profile,
                shortcuts: bool, outer_ids: np.ndarray, inner_ids: np.ndarray) -> KernelRun:
    groups, cores_of = _placement(kernel, profile)
    layout = cores_of(0)  # (side, sub, core) for group 0
    # 1. classes of identical blocks
    classes: dict = {}
    rep_of: list[int] = []
    for b in range(kernel.block_dim):
        if shortcuts:
            fps = tuple(fingerprint(sides[side], _env(kernel, b, sub)) for side, sub, _ in layout)
            key = ("u", b) if any(f is None for f in fps) else fps
        else:
            key = ("u", b)
        rep_of.append(classes.setdefault(key, b))
    # 2. simulate one block per class
    sim: dict[int, tuple[float, list[np.ndarray], int, int]] = {}
    for rep in sorted(set(rep_of)):
        runners = []
        for side, sub, _ in layout:
            r = Runner(sides[side], _env(kernel, rep, sub), pricer, profile.scalar_issue_cycles,
                       shortcuts, outer_ids, inner_ids)
            r.name = f"kernel {kernel.name} block {rep} {side}{sub if side == 'aiv' else ''}"
            runners.append(r)
        cube = [r for r, (side, _, _) in zip(runners, layout, strict=True) if side == "aic"]
        vec = [r for r, (side, _, _) in zip(runners, layout, strict=True) if side == "aiv"]
        for r in cube:
            r.partners = vec
        for r in vec:
            r.partners = cube
        run_block(runners, f"kernel {kernel.name} block {rep}")
        dur = max(r.end_time() for r in runners)
        sim[rep] = (dur, [r.events.array() for r in runners], sum(r.simulated for r in runners),
                    sum(r.simulated + r.copied for r in runners))
    # 3. place blocks on cores and shift their events
    free_at = [0.0] * groups
    rows, cores = [], []
    bounds_cache: dict[tuple[int, int, int], dict] = {}

    def bounds(side: str, b: int, sub: int) -> dict:
        k = (0 if side == "aic" else 1, b, sub)
        if k not in bounds_cache:
            bounds_cache[k] = top_loop_bounds(sides[side], _env(kernel, b, sub))
        return bounds_cache[k]

    simulated = represented = 0
    used: set[int] = set()
    for b in range(kernel.block_dim):
        g = b % groups
        rep = rep_of[b]
        dur, arrays, n_sim, n_rep = sim[rep]
        start = free_at[g]
        free_at[g] = start + dur
        represented += n_rep
        if rep == b:
            simulated += n_sim
        for (side, sub, core), arr in zip(cores_of(g), arrays, strict=True):
            used.add(core)
            if not len(arr):
                continue
            a = arr.copy() if (start or rep != b) else arr
            a[:, 0] += start
            a[:, 1] += start
            if rep != b:
                _remap_tiles(a, bounds(side, rep, sub), bounds(side, b, sub), outer_ids)
            rows.append(a)
            cores.append(np.full(len(a), core, dtype=np.int64))
    all_rows = np.concatenate(rows) if rows else np.empty((0, 8))
    all_cores = np.concatenate(cores) if cores else np.empty(0, dtype=np.int64)
    return KernelRun(kernel.name, max(free_at) if free_at else 0.0, all_rows, all_cores, simulated,
                     represented, len(sim), tuple(sorted(used)))


def _remap_tiles(a: np.ndarray, rep_bounds: dict, own_bounds: dict, outer_ids: np.ndarray) -> None:
    """Tile column of a copied block: same iteration number, this block's loop start and step."""
    lids = outer_ids[a[:, 3].astype(np.int64)]
    for lid, (s0, st0) in rep_bounds.items():
        s1, st1 = own_bounds.get(lid, (s0, st0))
        if (s0, st0) == (s1, st1) or st0 == 0:
            continue
        m = lids == lid
        a[m, 4] = s1 + (a[m, 4] - s0) / st0 * st1


def _shares(runs: list[KernelRun], memory: dict[int, str]) -> dict[int, float]:
    """Time-averaged number of same-memory moves in flight during each static move (see module doc)."""
    out: dict[int, float] = {}
    if not memory:
        return out
    mem_sids = np.array(sorted(memory), dtype=np.int64)
    for run in runs:
        if not len(run.rows):
            continue
        sids = run.rows[:, 3].astype(np.int64)
        for kind in ("hbm", "l2"):
            want = np.array([s for s in mem_sids if memory[s] == kind], dtype=np.int64)
            m = np.isin(sids, want)
            s, e = run.rows[m, 0], run.rows[m, 1]
            keep = e > s
            s, e, ids = s[keep], e[keep], sids[m][keep]
            if not len(s):
                continue
            b = np.concatenate([s, e])
            d = np.concatenate([np.ones(len(s)), -np.ones(len(e))])
            order = np.argsort(b, kind="stable")
            b, d = b[order], d[order]
            cover = np.cumsum(d)
            f = np.concatenate([[0.0], np.cumsum(cover[:-1] * np.diff(b))])
            integral = np.interp(e, b, f) - np.interp(s, b, f)
            num = np.bincount(ids, weights=integral)
            den = np.bincount(ids, weights=e - s)
            for sid in np.nonzero(den)[0]:
                out[int(sid)] = max(1.0, float(num[sid] / den[sid]))
    return out


def run_program(prog: Program, profile, *, exact: bool = False) -> ProgramRun:
    """Simulate every kernel of `prog`, iterating the memory shares to their fixed point."""
    statics: list[StaticInstr] = []
    sides_per_kernel = []
    for kidx, k in enumerate(prog.kernels):
        sides = {}
        if k.aic:
            sides["aic"] = compile_side(prog, k, kidx, "aic", statics)
        if k.aiv:
            sides["aiv"] = compile_side(prog, k, kidx, "aiv", statics)
        sides_per_kernel.append(sides)
    outer_ids = np.array([s.outer_loop for s in statics], dtype=np.int64)
    inner_ids = np.array([s.inner_loop for s in statics], dtype=np.int64)
    l2_sets = l2_resident_tensors(prog, profile.l2_bytes)
    shares: dict[int, float] = {}
    probe = Pricer(profile, statics, l2_sets)
    memory = {s.sid: probe.memory_of(s) for s in statics if probe.memory_of(s)}
    runs: list[KernelRun] = []
    passes = 0
    pricer = probe
    while True:
        pricer = Pricer(profile, statics, l2_sets, shares)
        runs = [_run_kernel(i, k, sides_per_kernel[i], pricer, profile, not exact, outer_ids, inner_ids)
                for i, k in enumerate(prog.kernels)]
        passes += 1
        new = _shares(runs, memory)
        changed = any(abs(new.get(s, 1.0) - shares.get(s, 1.0)) > SHARE_TOLERANCE * shares.get(s, 1.0)
                      for s in set(new) | set(shares))
        if not changed or passes >= MAX_PASSES:
            break
        shares = new
    return ProgramRun(statics, runs, passes, shares, memory, pricer)
