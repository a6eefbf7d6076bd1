"""The engine's iteration memo: an iteration of a loop that starts from a state seen before runs as before.

The steady-state shortcut (steady.py) copies the iterations of one loop that follow a repeat. A grouped
matmul defeats it: each group's tile loop runs one or two iterations per core (its tiles are dealt across the
cores), and the group loop reads the group sizes from GM. Yet most of its tiles are alike: the same sizes, on
a core in the same state. So, for a loop whose iterations carry nothing to the next (`memo_vars`), the engine
keys each iteration at its start by

- the values of the variables its cost depends on that come from outside the iteration (sizes, trip counts,
  conditions: the expressions of `loop_keys.cost_exprs` anywhere in the body, through the body's own lets),
- the core's state relative to R = max(scalar time, the loop's pipes): the loop's pipes and queue slots
  (times at or after the scalar's, the rest "past"), the slots' bindings and queues, the `why` codes, and the
  scalar's offset from R.

An iteration that starts with a key seen before is not walked: its recorded events are copied shifted by the
change in R (their loop columns set to the current values), and the state it ended in is set shifted the same
way. Its timing is the recorded one exactly: every start, end and fire in the engine is a max of times the key
holds and sums of prices the sizes fix, and times before the scalar's never win such a max. Loops with a
cross-core set, a wait, a flag, a scalar read of a buffer, or a variable carried from one iteration to the next
(read before the iteration sets it) are never memoised.
"""

from __future__ import annotations

import numpy as np

from ..tileir.expr import free_vars
from ..tileir.program import If, Let, Loop, Stmt
from .loop_keys import cost_exprs
from .program import zero_load

__all__ = ["memo_vars", "begin", "finish", "MAX_ENTRIES", "ENABLED", "MEMO_MIN_OPS"]

MAX_ENTRIES = 256  # recorded iterations kept per loop and core (a tile's events: ~100 KB)
ENABLED = True  # off: every iteration walked (the tests compare both)
MEMO_MIN_OPS = 24  # loops whose body compiles to fewer ops are walked: keying costs more than it saves


def memo_vars(loop: Loop) -> tuple[str, ...] | None:
    """The variables from outside an iteration that its cost reads (body lets included by value), or None
    when an iteration may read what an earlier one left (a variable read before the iteration binds it, a
    body-level variable bound twice)."""
    top = [s.var for s in loop.body if type(s) is Let]
    if len(set(top)) != len(top):
        return None
    inner: set[str] = set()

    def bind(stmts: tuple[Stmt, ...]) -> None:
        for s in stmts:
            if type(s) is Let:
                inner.add(s.var)
            elif type(s) is Loop:
                inner.add(s.var)
                bind(s.body)
            elif type(s) is If:
                bind(s.body)

    for s in loop.body:
        if type(s) is Loop:
            inner.add(s.var)
            bind(s.body)
        elif type(s) is If:
            bind(s.body)
    if inner & set(top):
        return None
    bound = inner | set(top) | {loop.var}
    keys: set[str] = set()

    def visit(stmts: tuple[Stmt, ...], assigned: set[str], top_level: bool) -> bool:
        for s in stmts:
            t = type(s)
            reads: set[str] = set()
            for e in cost_exprs(s):
                reads |= free_vars(e)
            if t is Let and top_level:
                reads = free_vars(s.value)  # a body-level let: its value is keyed, not what it reads
            if (reads & bound) - assigned:
                return False  # read before this iteration binds it: carried from the last one
            if not (t is Let and top_level):
                keys.update(v for v in reads if v not in inner)
            if t is Let:
                assigned.add(s.var)
            elif t is Loop:
                if not visit(s.body, assigned | {s.var}, False):
                    return False
                assigned.add(s.var)
            elif t is If and not visit(s.body, set(assigned), False):
                return False
        return True

    if not visit(loop.body, {loop.var}, True):
        return None
    return tuple(sorted(keys))


def _state(core, info, t: float) -> tuple[float, tuple]:
    """(R, the state key): the loop's pipes and queue slots relative to R, past times as None (the scalar's
    offset from R and its why code are matched apart: `begin`)."""
    pf = core.pipe_free
    times = [pf[p] for p in info.pipes]
    r = max(t, *times) if times else t
    struct = []
    for b in info.bufs:
        times += core.gate[b]
        times += core.write_end[b]
        times += core.use_end[b]
        times += core.enque_at[b]
        times += core.free_at[b]
        struct.append((core.bound[b], core.ptr[b], tuple(core.fifo[b]), tuple(core.isfree[b]),
                       tuple(core.gate_why[b])))
    # round() is slow and the times repeat (a slot's gate, write and use ends often agree): each once
    rounded = {r: 0.0}  # round(0.0, 6)
    rel = []
    for x in times:
        if x < t:
            rel.append(None)
        else:
            v = rounded.get(x)
            if v is None:
                v = rounded[x] = round(x - r, 6)
            rel.append(v)
    return r, (tuple(rel), tuple(struct), tuple(core.pipe_why[p] for p in info.pipes))


def begin(core, fr, t: float) -> float | None:
    """At the start of an iteration of memoised loop `fr`: replay it and return the scalar's time after it,
    or start recording it and return None. The core's issue_bound, simulated count and scalar_why must be
    current."""
    info = core.prog.loops[fr.lid]
    env = dict(core.env)
    for name, f in info.lets:
        env[name] = f(env, zero_load)
    r, state = _state(core, info, t)
    key = (tuple(env.get(v) for v in info.memo), state)
    table = core.memo.setdefault(fr.lid, {})
    off = round(t - r, 6)
    hit = None
    for rec in table.get(key, ()):
        # the same scalar offset, or a scalar that bound nothing in the recorded iteration and is at least as
        # far ahead of the pipes now (its issue times still bind nothing)
        if (rec[0] == off and rec[1] == core.scalar_why) or (rec[2] == 0 and off <= rec[0]):
            hit = rec[3]
            break
    if hit is None:
        fr.rec = (key, off, core.scalar_why, t, r, core.events.total(), core.issue_bound,
                  core.simulated + core.copied)
        return None
    seg, (inner_mask, pins), adv, pipes_end, bufs_end, struct_end, whys_end, d_issue, d_count = hit
    rows = seg.copy()
    rows[:, 0] += r
    rows[:, 1] += r
    rows[:, 4] = core.env[info.outer_var] if info.outer_var else fr.v
    rows[inner_mask, 5] = fr.v
    for mask, var in pins:  # events of an enclosing stage loop's body: its block now
        rows[mask, 5] = core.env[var]
    core.events.flush()
    core.events._add(rows)
    pf = core.pipe_free
    for p, x in zip(info.pipes, pipes_end, strict=True):
        pf[p] = 0.0 if x is None else x + r
    for b, arrs in zip(info.bufs, bufs_end, strict=True):
        for dst, src in zip((core.gate[b], core.write_end[b], core.use_end[b], core.enque_at[b], core.free_at[b]),
                            arrs, strict=True):
            for i, x in enumerate(src):
                dst[i] = 0.0 if x is None else x + r
    for b, (bnd, ptr, fifo, isfree, gwhy) in zip(info.bufs, struct_end, strict=True):
        core.bound[b], core.ptr[b] = bnd, ptr
        core.fifo[b] = list(fifo)
        core.isfree[b] = list(isfree)
        core.gate_why[b] = list(gwhy)
    core.scalar_why = whys_end[0]
    for p, w in zip(info.pipes, whys_end[1], strict=True):
        core.pipe_why[p] = w
    core.issue_bound += d_issue
    core.copied += d_count
    return t + adv


def finish(core, fr, t: float) -> None:
    """At the end of a recorded iteration (scalar time t): keep its events and end state under its key."""
    key, off, why0, t0, r0, idx, issue0, count0 = fr.rec
    fr.rec = None
    info = core.prog.loops[fr.lid]
    table = core.memo[fr.lid]
    kept = core.memo_kept.get(fr.lid, 0)
    if kept >= MAX_ENTRIES:  # bounded memory: the first ones are kept
        return
    core.memo_kept[fr.lid] = kept + 1
    seg = core.events.since(idx).copy()
    seg[:, 0] -= r0
    seg[:, 1] -= r0
    lids = core.sid_inner[seg[:, 3].astype(np.int64)]
    inner_mask = lids == fr.lid
    loops = core.prog.loops
    pins = tuple((lids == lid, loops[lid].var) for lid in np.unique(lids[~inner_mask & (lids >= 0)]).tolist()
                 if loops[lid].stage) if any(lp.stage for lp in loops) else ()
    # (`inner` holds an enclosing stage loop's variable: compile.py)
    pf = core.pipe_free
    pipes_end = tuple([pf[p] - r0 if pf[p] >= t0 else None for p in info.pipes])
    bufs_end = tuple(tuple(tuple([x - r0 if x >= t0 else None for x in arr])
                           for arr in (core.gate[b], core.write_end[b], core.use_end[b], core.enque_at[b],
                                       core.free_at[b]))
                     for b in info.bufs)
    struct_end = tuple((core.bound[b], core.ptr[b], tuple(core.fifo[b]), tuple(core.isfree[b]),
                        tuple(core.gate_why[b])) for b in info.bufs)
    whys_end = (core.scalar_why, tuple(core.pipe_why[p] for p in info.pipes))
    d_issue = core.issue_bound - issue0
    table.setdefault(key, []).append((off, why0, d_issue, (seg, (inner_mask, pins), t - t0, pipes_end, bufs_end,
                                                           struct_end,
                                                           whys_end, d_issue, core.simulated + core.copied - count0)))
