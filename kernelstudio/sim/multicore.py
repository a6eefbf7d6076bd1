"""Blocks on cores, kernels one after another, and the chip-wide memory shares.

Placement. A kernel runs `block_dim` blocks. A vector kernel's block b runs on AIV b % aiv_cores, a
cube kernel's on AIC b % aic_cores, a mixed kernel's on AIC g = b % aic_cores together with AIVs
g*aiv_per_aic + sub. Blocks placed on the same core(s) run one after another (waves); a block
starts when its cores finished the previous block. Each block is simulated from idle cores, so
its timeline relative to its start does not depend on the wave it runs in.

Memory sharing, per wave. A GM move's duration is max(single-core curve,
bytes * share / chip bytes per cycle) on its memory (HBM, or L2 for L2-resident data; costs.py).
Block b runs in wave b // (core groups). `share` of a static move instruction in a wave is the
time-averaged number of moves on that memory in flight (all cores and waves, itself included)
during its executions in that wave: sum over those executions of the integral of the in-flight
count, divided by their total duration. So a sparsely populated last wave sees its own
concurrency, not the crowded first wave's. Shares are found by fixed-point iteration: simulate
with share 1, measure, simulate again with the measured shares, until no share changes by more
than 1% (at most MAX_PASSES simulations). With n identical cores streaming together this gives
each exactly 1/n of the chip bandwidth.

Waves make time not monotone in the core count: blocks that do not fill the last wave run at
the single-core curve while the chip's bandwidth idles, so 49 one-tile blocks take a crowded
48-block wave plus a latency-bound 1-block wave on 48 cores but two half-full, bandwidth-bound
waves on 26 cores (faster). What does hold: k times the cores is never slower (each of its waves
does the work of k waves of the smaller chip, and a move's time is subadditive in the number of
moves sharing the memory), and neither is a chip that runs every block in one wave.

Shortcuts (off with exact=True). Blocks whose fingerprints (fingerprint.fingerprint: sizes, trip
counts, branches) are equal and whose waves have equal shares are simulated once and their events
copied to the other blocks' cores and start times; steady-state loops are extrapolated inside the
engine. Both are exact when their preconditions hold; tests compare them with the full simulation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..tileir.program import Kernel, Program
from . import kernel_cache, memo
from .costs import Pricer, memory_kind
from .engine import EVENT_COLUMNS, WHY_FLAG, Runner, run_block
from .errors import SimulationError
from .fingerprint import fingerprinter, top_loop_bounds
from .l2 import initial_hits, model_hits
from .program import K_SYNC, CoreProgram, StaticInstr
from .shares import MEMORY_CODES, kernel_shares

__all__ = ["MAX_PASSES", "KernelRun", "ProgramRun", "run_program", "kernel_cycles", "core_label"]

MAX_PASSES = 4
SHARE_TOLERANCE = 0.01


@dataclass
class KernelRun:
    """One kernel's simulated block classes and where every block ran; events built on demand."""

    name: str
    cycles: float
    sim: object  # _KernelSim
    simulated: int  # instructions walked one by one
    represented: int  # instructions the events stand for (simulated + copied)
    classes: int  # distinct blocks simulated
    cores_used: tuple[int, ...]
    per_sid: np.ndarray  # (nstatics, 3): summed bytes, flops, busy cycles over all blocks
    _rows: tuple[np.ndarray, np.ndarray] | None = None

    def rows(self, profile, outer_ids: np.ndarray,
             why_text: Callable[[str], int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(event rows with kernel-relative cycle times, core id per row) of every block.

        With `why_text` (text -> global index), the why column holds that index (-1: no wait) and
        flag waits hold -2 - sid of the wait instruction."""
        if self._rows is None:
            self._rows = _materialize(self.sim, profile, outer_ids, why_text)
        return self._rows


@dataclass
class ProgramRun:
    statics: list[StaticInstr]
    kernels: list[KernelRun]
    passes: int
    shares: dict[int, float]  # sid -> share averaged over all its executions (measured last)
    wave_shares: dict[tuple[int, int], float]  # (sid, wave) -> share the final pass priced with
    memory: dict[int, str]  # sid -> "hbm" | "l2" | "l2w" for GM moves (the memory each contends on)
    outer_ids: np.ndarray
    hits: dict[int, float]  # sid -> share of a GM move's bytes served by L2 (l2.py)


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


def _block_keys(kernel: Kernel, sides: dict[str, CoreProgram], profile, shortcuts: bool) -> list:
    """Per block: the first block with its fingerprint over all its cores, or a key unique to it (no shortcut)."""
    _, cores_of = _placement(kernel, profile)
    layout = cores_of(0)
    keys: list = []
    first: dict[tuple, int] = {}
    walks = [(fingerprinter(sides[side]), sub) for side, sub, _ in layout] \
        if shortcuts and kernel.block_dim > 1 else []
    env = _env(kernel, 0, 0)  # each walk copies it
    for b in range(kernel.block_dim):
        key: object = ("u", b)
        if walks:  # one block has no other to share its simulation with
            env["blk"] = b
            prints = []
            for walk, sub in walks:
                env["sub"] = sub
                prints.append(walk(env))
            fps = tuple(prints)
            if all(f is not None for f in fps):
                key = first.setdefault(fps, b)
        keys.append(key)
    return keys


def _classes(keys: list[tuple], waves: list[int], wave_key: dict[int, tuple]) -> list[int]:
    """For each block, the block simulated in its place (itself, or an earlier block with the same
    fingerprint whose wave has the same memory shares)."""
    classes: dict = {}
    return [classes.setdefault((key, wave_key.get(w, ())), b)
            for b, (key, w) in enumerate(zip(keys, waves, strict=True))]


@dataclass
class _KernelSim:
    kernel: Kernel
    sides: dict[str, CoreProgram]
    rep_of: list[int]
    sim: dict[int, tuple[float, list[np.ndarray], int, int]]  # rep -> (cycles, rows per core, ...)
    starts: list[float]
    cycles: float
    waves: list[int]  # per block: its wave (how many blocks ran on its cores before it)


def _simulate_kernel(kernel: Kernel, sides: dict[str, CoreProgram], rep_of: list[int],
                     pricer_of: Callable[[int], Pricer], profile, shortcuts: bool, outer_ids: np.ndarray,
                     inner_ids: np.ndarray) -> _KernelSim:
    """Simulate each block class once (block `rep` priced by `pricer_of(rep)`) and place every block."""
    groups, cores_of = _placement(kernel, profile)
    layout = cores_of(0)
    sim: dict[int, tuple[float, list[np.ndarray], int, int]] = {}
    blocks: dict[int, list[Runner]] = {}
    for rep in sorted(set(rep_of)):
        runners = []
        for side, sub, _ in layout:
            r = Runner(sides[side], _env(kernel, rep, sub), pricer_of(rep), profile.scalar_issue_cycles,
                       shortcuts, outer_ids, inner_ids)
            r.name = f"kernel {kernel.name} block {rep} {side}{sub if side == 'aiv' else ''}"
            runners.append(r)
        cube = [r for r, (side, _, _) in zip(runners, layout, strict=True) if side == "aic"]
        vec = [r for r, (side, _, _) in zip(runners, layout, strict=True) if side == "aiv"]
        for r in cube:
            r.partners = vec
        for r in vec:
            r.partners = cube
        blocks[rep] = runners
    if any(op[0] == K_SYNC for cp in sides.values() for op in cp.ops):
        _run_synced(kernel, blocks, groups, profile)  # every block to each barrier in turn
    else:
        for rep, runners in blocks.items():
            run_block(runners, f"kernel {kernel.name} block {rep}")
    for rep, runners in blocks.items():
        sim[rep] = (max(r.end_time() for r in runners), [r.events.array() for r in runners],
                    sum(r.simulated for r in runners), sum(r.simulated + r.copied for r in runners))
    free_at = [0.0] * groups
    starts = []
    for b in range(kernel.block_dim):
        g = b % groups
        starts.append(free_at[g])
        free_at[g] += sim[rep_of[b]][0]
    waves = [b // groups for b in range(kernel.block_dim)]
    return _KernelSim(kernel, sides, rep_of, sim, starts, max(free_at) if free_at else 0.0, waves)


def _run_synced(kernel: Kernel, blocks: dict[int, list[Runner]], groups: int, profile) -> None:
    """Run a kernel with SyncAll barriers: every block (one representative per class: blocks of a class
    arrive together) runs to the barrier; all cores leave it `sync_all_us` after the last one arrived.
    All blocks start at once: a SyncAll launch may not have more blocks than the chip has cores."""
    if kernel.block_dim > groups:
        raise SimulationError(f"kernel {kernel.name}: SyncAll with block_dim {kernel.block_dim} on a chip of {groups} "
                              "AI cores: blocks of the second round could never reach the barrier the first round "
                              f"waits at (a hang on the device); launch at most {groups} blocks")
    latency = profile.sync_all_us * profile.clock_mhz  # cycles
    rounds = 0
    while True:
        for rep, runners in blocks.items():
            run_block(runners, f"kernel {kernel.name} block {rep}")
        every = [r for runners in blocks.values() for r in runners]
        parked = [r for r in every if r.parked]
        if not parked:
            if not all(r.done for r in every):  # pragma: no cover - run_block raises first
                raise SimulationError(f"kernel {kernel.name}: cores wait for flags nobody sets")
            return
        missing = [r.name for r in every if not r.parked]
        if missing:
            raise SimulationError(f"kernel {kernel.name}: SyncAll {rounds + 1} is never reached by "
                                  f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''} (finished or "
                                  "waiting for a flag); every core of the launch must call it, or the others "
                                  "wait forever")
        release = max(r.arrival for r in parked) + latency
        for r in parked:
            r.release = release
        rounds += 1


def _why_lut(side: CoreProgram, why_text: Callable[[str], int]) -> np.ndarray:
    """Local why-codes of one side -> global text index: 2*b a free slot of queue buffer b, 2*b+1 its
    EnQue; the last entry is the scalar issuing late."""
    lut = []
    for name in side.queue_bufs:
        lut += [why_text(f"a free slot of {name} (its Free)"), why_text(f"{name} filled (its EnQue)")]
    lut.append(why_text("the scalar to issue it"))
    return np.array(lut, dtype=np.float64)


def _globalize_why(a: np.ndarray, lut: np.ndarray) -> None:
    """Rewrite the why column: global text index, -1 for no wait, -2 - sid for a flag wait."""
    w = a[:, 9]
    flag = w >= WHY_FLAG
    local = (w >= 0) & ~flag
    out = np.full(len(w), -1.0)
    out[local] = lut[w[local].astype(np.int64)]
    out[flag] = -2.0 - (w[flag] - WHY_FLAG)
    out[w == -2.0] = lut[-1]
    a[:, 9] = out


def _materialize(ks: _KernelSim, profile, outer_ids: np.ndarray,
                 why_text: Callable[[str], int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every block's events at its start time on its cores."""
    kernel = ks.kernel
    groups, cores_of = _placement(kernel, profile)
    rows, cores = [], []
    luts: dict[str, np.ndarray] = {}
    bounds_cache: dict[tuple[str, int, int], dict] = {}

    def bounds(side: str, b: int, sub: int) -> dict:
        k = (side, b, sub)
        if k not in bounds_cache:
            bounds_cache[k] = top_loop_bounds(ks.sides[side], _env(kernel, b, sub))
        return bounds_cache[k]

    globalized: dict[tuple[int, int], np.ndarray] = {}  # (rep, core of the block): its rows, why codes global

    for b in range(kernel.block_dim):
        rep = ks.rep_of[b]
        start = ks.starts[b]
        for j, ((side, sub, core), arr) in enumerate(zip(cores_of(b % groups), ks.sim[rep][1], strict=True)):
            if not len(arr):
                continue
            if why_text is not None:  # the why column is the same in every block a class's rows are copied to
                g = globalized.get((rep, j))
                if g is None:
                    if side not in luts:
                        luts[side] = _why_lut(ks.sides[side], why_text)
                    g = globalized[(rep, j)] = arr.copy()
                    _globalize_why(g, luts[side])
                a = g.copy()
            else:
                a = arr.copy()
            a[:, 0] += start
            a[:, 1] += start
            if rep != b:
                _remap_tiles(a, bounds(side, rep, sub), bounds(side, b, sub), outer_ids)
            rows.append(a)
            cores.append(np.full(len(a), core, dtype=np.int64))
    all_rows = np.concatenate(rows) if rows else np.empty((0, len(EVENT_COLUMNS)))
    all_cores = np.concatenate(cores) if cores else np.empty(0, dtype=np.int64)
    return all_rows, all_cores


def _own_per_sid(ks: _KernelSim, n: int) -> np.ndarray:
    """(n, 3): summed bytes, flops and busy cycles of each of a kernel's own instructions over all its blocks."""
    mult: dict[int, int] = {}
    for rep in ks.rep_of:
        mult[rep] = mult.get(rep, 0) + 1
    per_sid = np.zeros((max(n, 1), 3))
    for rep, (_, arrays, _, _) in ks.sim.items():
        for a in arrays:
            if len(a):
                sids = a[:, 3].astype(np.int64)
                for col, w in ((0, a[:, 6]), (1, a[:, 7]), (2, a[:, 1] - a[:, 0])):
                    per_sid[:, col] += mult[rep] * np.bincount(sids, weights=w, minlength=len(per_sid))
    return per_sid


def _kernel_run(own: _Own, base: int, profile, nstatics: int) -> KernelRun:
    ks = own.placed(base)
    groups, cores_of = _placement(ks.kernel, profile)
    mult: dict[int, int] = {}
    used: set[int] = set()
    for b, rep in enumerate(ks.rep_of):
        mult[rep] = mult.get(rep, 0) + 1
        used.update(core for _, _, core in cores_of(b % groups))
    simulated = represented = 0
    for rep, (_, _, n_sim, n_rep) in ks.sim.items():
        simulated += n_sim
        represented += n_rep * mult[rep]
    return KernelRun(ks.kernel.name, ks.cycles, ks, simulated, represented, len(ks.sim),
                     tuple(sorted(used)), own.program_per_sid(base, nstatics))


def _remap_tiles(a: np.ndarray, rep_bounds: dict, own_bounds: dict, outer_ids: np.ndarray) -> None:
    """Tile column of a copied block: same iteration number, this block's loop start and step."""
    lids = outer_ids[a[:, 3].astype(np.int64)]
    for lid, (s0, st0) in rep_bounds.items():
        s1, st1 = own_bounds.get(lid, (s0, st0))
        if (s0, st0) == (s1, st1) or st0 == 0:
            continue
        m = lids == lid
        a[m, 4] = s1 + (a[m, 4] - s0) / st0 * st1


@dataclass
class _Own:
    """One kernel's run in its own numbering (sids from 0), with what each program derives from it."""

    ks: _KernelSim
    n: int  # the kernel's static instructions
    per_sid: np.ndarray  # _own_per_sid
    shares: dict[tuple, tuple[dict, dict]] = field(default_factory=dict)  # its GM moves' memories -> kernel_shares
    _placed: dict[int, _KernelSim] = field(default_factory=dict)

    def placed(self, base: int) -> _KernelSim:
        """The run at the sids of a program whose earlier kernels hold `base` static instructions."""
        if base not in self._placed:
            ks = self.ks
            sim = {rep: (cyc, [kernel_cache.relocate(a, base) for a in arrays], n_sim, n_rep)
                   for rep, (cyc, arrays, n_sim, n_rep) in ks.sim.items()}
            self._placed[base] = _KernelSim(ks.kernel, ks.sides, ks.rep_of, sim, ks.starts, ks.cycles, ks.waves)
        return self._placed[base]

    def program_per_sid(self, base: int, nstatics: int) -> np.ndarray:
        out = np.zeros((max(nstatics, 1), 3))
        out[base:base + self.n] = self.per_sid[:self.n]
        return out


def _own_run(c: kernel_cache.Compiled, base: int, kernel: Kernel, rep_of: list[int], wave_key: dict[int, tuple],
             waves: list[int], hits: dict[int, float], profile, shortcuts: bool) -> _Own:
    """The kernel's run with these block classes, hit ratios and wave shares (program sids from `base`): from its
    cache when it ran with the same ones before (kernel_cache.py)."""
    own_hits = tuple(hits.get(base + j, 0.0) for j in c.moves)
    own_waves = tuple(sorted((w, tuple((sid - base, v) for sid, v in d)) for w, d in wave_key.items()))

    def run() -> _Own:
        pricers = _Pricers(profile, c.statics, dict(zip(c.moves, own_hits, strict=True)), c.fixed_prices(profile))
        wk = dict(own_waves)
        ks = _simulate_kernel(kernel, c.sides, rep_of, lambda b: pricers.get(wk.get(waves[b], ())), profile,
                              shortcuts, c.outer_ids, c.inner_ids)
        return _Own(ks, len(c.statics), _own_per_sid(ks, len(c.statics)))

    return c.run((profile, shortcuts, memo.ENABLED, tuple(rep_of), own_hits, own_waves), run)


def _shares(sims: list[_Own], own: list[tuple[kernel_cache.Compiled, int]], memory: dict[int, str]
            ) -> tuple[dict[tuple[int, int], float], dict[int, float]]:
    """Per (static instruction, wave) and per static instruction: the memory shares (shares.py) of every kernel,
    each computed once per run and memories of its GM moves."""
    per_wave: dict[tuple[int, int], float] = {}
    overall: dict[int, float] = {}
    if not memory:
        return per_wave, overall
    for run, (c, base) in zip(sims, own, strict=True):
        kinds = tuple(memory.get(base + j, "") for j in c.moves)
        if kinds not in run.shares:
            lut = np.zeros(max(run.n, 1), dtype=np.int64)
            for j, kind in zip(c.moves, kinds, strict=True):
                if kind:
                    lut[j] = MEMORY_CODES[kind]
            run.shares[kinds] = kernel_shares(run.ks, lut)
        waves, sids = run.shares[kinds]
        per_wave.update({(sid + base, w): v for (sid, w), v in waves.items()})
        overall.update({sid + base: v for sid, v in sids.items()})
    return per_wave, overall


class _Pricers:
    """One Pricer per distinct set of shares (blocks of waves with equal shares reuse its tables); the prices of
    the instructions that are not GM moves (`fixed`: sid -> table) are shared by every Pricer of the kernel."""

    def __init__(self, profile, statics: list[StaticInstr], hits: dict[int, float],
                 fixed: dict[int, dict]) -> None:
        self.args = (profile, statics, hits)
        self.fixed = fixed
        self.made: dict[tuple, Pricer] = {}

    def get(self, shares: tuple[tuple[int, float], ...]) -> Pricer:
        if shares not in self.made:
            p = self.made[shares] = Pricer(*self.args, dict(shares))
            tables = p.tables
            for sid, table in self.fixed.items():
                tables[sid] = table
        return self.made[shares]


def run_program(prog: Program, profile, *, exact: bool = False,
                l2_hit_ratio: float | None = None, l2: str = "cold") -> ProgramRun:
    """Simulate every kernel of `prog`, iterating the memory shares to their fixed point.

    The first pass prices GM reads with the L2 hits known without byte counts (workspaces,
    cross-kernel reuse); its byte counts then give the re-read hits (l2.py), fixed for later passes.
    Each kernel is compiled, fingerprinted and simulated through kernel_cache.py: a kernel that ran before
    with the same prices is not run again."""
    statics, own, sims, passes, overall, shares, memory, hits = _converge(prog, profile, exact, l2_hit_ratio, l2)
    outer_ids = np.array([s.outer_loop for s in statics], dtype=np.int64)
    runs = [_kernel_run(run, base, profile, len(statics)) for run, (_, base) in zip(sims, own, strict=True)]
    return ProgramRun(statics, runs, passes, overall, shares, memory, outer_ids, hits)


def kernel_cycles(prog: Program, profile, *, exact: bool = False, l2_hit_ratio: float | None = None,
                  l2: str = "cold") -> list[float]:
    """Each kernel's cycles as `run_program` finds them, without the per-instruction sums its result holds."""
    sims = _converge(prog, profile, exact, l2_hit_ratio, l2)[2]
    return [run.ks.cycles for run in sims]


def _converge(prog: Program, profile, exact: bool, l2_hit_ratio: float | None, l2: str) -> tuple:
    """The memory shares' fixed point (run_program's doc): (statics, per kernel (Compiled, first sid), per
    kernel its _Own run of the last pass, passes, shares per sid, shares per (sid, wave), memories, hits)."""
    statics: list[StaticInstr] = []
    own: list[tuple[kernel_cache.Compiled, int]] = []  # per kernel: compiled on its own, and its first sid
    for kidx, k in enumerate(prog.kernels):
        c = kernel_cache.compiled(prog, k)
        own.append((c, len(statics)))
        statics += c.placed(len(statics), kidx)
    hits = initial_hits(prog, statics, profile.l2_bytes, l2_hit_ratio, l2)
    memory = {s.sid: memory_kind(s, hits) for s in statics if memory_kind(s, hits)}
    shortcuts = not exact
    placement = (profile.aic_cores, profile.aiv_cores, profile.aiv_per_aic, shortcuts)
    keys = [c.block_classes(placement, lambda k=k, c=c: _block_keys(k, c.sides, profile, shortcuts))
            for k, (c, _) in zip(prog.kernels, own, strict=True)]
    waves = []
    for k in prog.kernels:
        groups, _ = _placement(k, profile)
        waves.append([b // groups for b in range(k.block_dim)])
    shares: dict[tuple[int, int], float] = {}
    overall: dict[int, float] = {}
    passes = 0
    while True:
        by_wave: dict[tuple[int, int], dict[int, float]] = {}
        for (sid, w), v in shares.items():
            by_wave.setdefault((statics[sid].kernel, w), {})[sid] = v
        sims = []
        for i, k in enumerate(prog.kernels):
            wave_key = {w: tuple(sorted(d.items())) for (kk, w), d in by_wave.items() if kk == i}
            rep_of = _classes(keys[i], waves[i], wave_key)
            sims.append(_own_run(*own[i], k, rep_of, wave_key, waves[i], hits, profile, shortcuts))
        passes += 1
        if passes >= MAX_PASSES:
            break
        new, overall = _shares(sims, own, memory)
        changed = any(abs(new.get(s, 1.0) - shares.get(s, 1.0)) > SHARE_TOLERANCE * shares.get(s, 1.0)
                      for s in set(new) | set(shares))
        if passes == 1 and memory and l2_hit_ratio is None:
            moved = np.zeros(max(len(statics), 1))
            for run, (_, base) in zip(sims, own, strict=True):
                moved[base:base + run.n] = run.per_sid[:run.n, 0]
            new_hits = model_hits(prog, statics, profile.l2_bytes, None, moved, l2)
            if any(abs(new_hits[s] - hits[s]) > 1e-9 for s in hits):
                hits = new_hits
                memory = {s.sid: memory_kind(s, hits) for s in statics if memory_kind(s, hits)}
                changed = True
        if not changed:
            break
        shares = new
    return statics, own, sims, passes, overall, shares, memory, hits
