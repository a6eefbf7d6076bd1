"""The engine's steady-state shortcut: copy the repeating iterations of a loop instead of walking them.

At the end of an iteration of an eligible loop (loop_keys.py) the core's state (pipe and slot times,
queue contents) is compared with the previous iteration's, relative to the latest time
R = max(scalar, pipes) with times at or below the scalar time treated as "past". If equal, the next
iterations with the same cost key are exact copies shifted by delta = R_i - R_{i-1}, provided delta
equals the scalar's own advance per iteration or the scalar bound no instruction's start in that
iteration (it is running ahead and will stay ahead). The engine then copies the iteration's events
and cross-core sets instead of simulating them. With queue depths above one the state may repeat
only every p iterations (p up to the lcm of the depths the loop touches, `LoopInfo.period`): whole
periods are copied then.

Loops of at most MIN_TRIPS iterations (the k tiles of one L1 slab) are simply walked: comparing
their states costs more than the rare jump saves, and walking is always exact.

Every function takes the core it works on (`core`, an `engine.Runner`) and the loop's frame on the
core's loop stack (`fr`, an `engine.Frame`); the engine calls them only for watched loops.
"""

from __future__ import annotations

import numpy as np

from .program import zero_load

__all__ = ["MIN_TRIPS", "MIN_OPS", "run_ends", "snapshot", "try_jump"]

PAST = -1e300  # a time at or before the scalar's: it can no longer delay anything
MIN_TRIPS = 4  # loops of this many trips or fewer are walked: too short for a jump to pay
MIN_OPS = 32  # nor loops that run fewer instructions than this in all (a few column groups of a row)
TOL = 1e-6  # cycles


def _queue_times(core, b: int) -> tuple[list[float], ...]:
    """The per-slot times of queue buffer `b` that a jump compares and shifts."""
    return core.gate[b], core.write_end[b], core.use_end[b], core.enque_at[b], core.free_at[b]


def _norm(core, s: float, pipes: tuple[int, ...], bufs: tuple[int, ...]) -> tuple[float, list, tuple]:
    """(R, times relative to R with past times as PAST, queue structure) over what a loop touches."""
    pipe_free = core.pipe_free
    r = s
    for p in pipes:
        if pipe_free[p] > r:
            r = pipe_free[p]
    vals = [pipe_free[p] - r if pipe_free[p] > s else PAST for p in pipes]
    struct = []
    for b in bufs:
        for arr in _queue_times(core, b):
            for x in arr:
                vals.append(x - r if x > s else PAST)
        struct.append((core.bound[b], core.ptr[b], tuple(core.fifo[b]), tuple(core.isfree[b])))
    return r, vals, tuple(struct)


def _shift(core, s: float, by: float, pipes: tuple[int, ...], bufs: tuple[int, ...]) -> None:
    """Move every time later than the scalar time `s` by `by` (pipes and buffers of a loop)."""
    pipe_free = core.pipe_free
    for p in pipes:
        if pipe_free[p] > s:
            pipe_free[p] += by
    for b in bufs:
        for arr in _queue_times(core, b):
            for i, x in enumerate(arr):
                if x > s:
                    arr[i] = x + by


def run_ends(core, fr) -> list[int] | None:
    """For each iteration of the loop, the index one past the last iteration of its run of equal cost
    keys (a jump never crosses a run's end); None when every iteration has the same cost."""
    info = core.prog.loops[fr.lid]
    if not info.key_fns:
        return None  # every iteration has the same cost
    env = dict(core.env)
    keys = []
    v = fr.v
    for _ in range(fr.n):
        env[fr.var] = v
        for name, f in info.lets:
            env[name] = f(env, zero_load)
        keys.append(tuple(f(env) for f in info.key_fns))
        v += fr.step
    ends = [0] * fr.n
    end = fr.n
    for i in range(fr.n - 1, -1, -1):
        if i < fr.n - 1 and keys[i] != keys[i + 1]:
            end = i + 1
        ends[i] = end
    return ends


def snapshot(core, fr, s: float, count: int) -> tuple:
    """The core's state at scalar time `s` after `count` instructions: (R, s, relative times, queue
    structure, issue-bound count, events so far, cross-core sets so far per flag, count)."""
    info = core.prog.loops[fr.lid]
    r_now, vals, struct = _norm(core, s, info.pipes, info.bufs)
    return (r_now, s, vals, struct, core.issue_bound, core.events.total(),
            {f: len(lst) for f, lst in core.sets.items()}, count)


def try_jump(core, fr, s: float) -> int:
    """After iteration fr.i - 1 completed at scalar time s: if the last p iterations repeat
    (p up to the lcm of the loop's queue depths), copy whole periods of the identical
    iterations that follow; return how many iterations were copied."""
    info = core.prog.loops[fr.lid]
    now = snapshot(core, fr, s, core.simulated + core.copied)
    hist = fr.prev
    hist.append(now)
    if len(hist) > info.period + 1:
        del hist[0]
    i = fr.i - 1  # the iteration just completed
    run_end = fr.run_end[i] if fr.run_end is not None else fr.n
    rem = run_end - (i + 1)
    for p in range(1, min(info.period, len(hist) - 1) + 1):
        if rem < p:
            break
        old = hist[-1 - p]
        if fr.run_end is not None and i - p + 1 >= 0 and fr.run_end[i - p + 1] != run_end:
            break
        if old[3] != now[3] or len(old[2]) != len(now[2]):
            continue
        if any(abs(a - b) > TOL for a, b in zip(old[2], now[2], strict=True)):
            continue
        delta = now[0] - old[0]
        c = s - old[1]
        if abs(delta - c) > TOL and not (delta > c and now[4] == old[4]):
            continue
        q = rem // p
        seg = core.events.since(old[5])
        sids = seg[:, 3].astype(np.int64)
        step = float(fr.step)
        # copy j of the p-iteration block: loop columns advance by j*p*step
        tile_step = np.where(core.sid_outer[sids] == fr.lid, step * p, 0.0)
        inner_step = np.where(core.sid_inner[sids] == fr.lid, step * p, 0.0)
        core.events.add_copies(seg, q, delta, tile_step, inner_step)
        for flag, lst in core.sets.items():
            new = lst[old[6].get(flag, 0):]
            if new:
                lst.extend([x + j * delta for j in range(1, q + 1) for x in new])
        _shift(core, s, q * delta, info.pipes, info.bufs)
        core.copied += q * (now[7] - old[7])
        hist.clear()
        fr.jump_s = s + q * c
        return q * p
    return 0
