"""The per-core event engine: a scalar unit issuing in program order into in-order pipes.

Each core has pipes S, MTE1, MTE2, MTE3, M, V, FIX with a "free at" time each. The scalar walks the
flat program (loops, lets and ifs evaluated on the scalar) and pays `scalar_issue_cycles` per
instruction, queue operation, flag, let and loop step. An instruction starts when it is issued,
its pipe is free, and the slots it touches are released by their queue flags:

- `Alloc(buf)` binds the next free slot (round robin); writes to it wait for that slot's previous
  `Free` to fire. `Free(buf)` fires when every instruction that touched the bound slot finished.
- `EnQue(buf)` fires when the writers of the bound slot finished; `DeQue(buf)` binds the oldest
  enqueued slot, and instructions touching it wait for that EnQue (a wait_flag on the consumer
  pipe: the scalar runs on, so double buffering overlaps by itself as the queue depth allows).
- `SetFlag(src, dst, e)` fires when pipe `src` finished its earlier work; `WaitFlag(src, dst, e)`
  holds pipe `dst` (the scalar itself when `dst` is S) until the oldest matching set fired.
- `CrossSet(flag, pipe)` fires when all earlier work of `pipe` on the core is done;
  `CrossWait(flag)` stalls this core's scalar until the matching set arrived (counting
  semaphore; an AIC set wakes both AIVs; the AIC needs a set from each AIV). A `Let` that reads a
  buffer (`Load`) relies on the program's WaitFlag for its ordering; the value read is taken as 0
  (the simulator has no data), so it may steer offsets but should not steer sizes.

Steady-state shortcut: at the end of an iteration of an eligible loop (program.py) the core's
state (pipe and slot times, queue contents) is compared with the previous iteration's, relative
to the latest time R = max(scalar, pipes) with times at or below the scalar time treated as
"past". If equal, the next iterations with the same cost key are exact copies shifted by
delta = R_i - R_{i-1}, provided delta equals the scalar's own advance per iteration or the scalar
bound no instruction's start in that iteration (it is running ahead and will stay ahead). The
engine then copies the iteration's events and cross-core sets instead of simulating them.
Loops of at most _MIN_TRIPS iterations (the k tiles of one L1 slab) are simply walked: comparing
their states costs more than the rare jump saves, and walking is always exact.
"""

from __future__ import annotations

import numpy as np

from .errors import SimulationError
from .events import EVENT_COLUMNS, EventLog
from .program import (
    K_ALLOC,
    K_CSET,
    K_CWAIT,
    K_DEQUE,
    K_END,
    K_ENQUE,
    K_FREE,
    K_FSET,
    K_FWAIT,
    K_IF,
    K_LET,
    K_LOOP,
    K_SYNC,
    K_WORK,
    PIPES,
    CoreProgram,
)

__all__ = ["EventLog", "Runner", "run_block", "EVENT_COLUMNS", "WHY_FLAG", "WHY_ISSUE", "WHY_NONE", "why_code"]

_NPIPE = len(PIPES)
_FLOW = PIPES.index("FLOW")
_PAST = -1e300  # a time at or before the scalar's: it can no longer delay anything
_MIN_TRIPS = 4  # loops of this many trips or fewer are walked: too short for a jump to pay
_MIN_OPS = 32  # nor loops that run fewer instructions than this in all (a few column groups of a row)
_TOL = 1e-6  # cycles


# `why` codes: what an instruction's start waited on (the cause of the idle gap before it, if any)
WHY_NONE = -1.0  # its pipe was busy until it started (no gap)
WHY_ISSUE = -2.0  # the scalar had not issued it yet
WHY_FLAG = 1e6  # + sid of the wait instruction: a set/wait flag or a cross-core flag


def why_code(buf: int, enque: bool) -> float:
    """Code for "waited for a free slot of queue buffer `buf`" or "waited for its EnQue"."""
    return 2.0 * buf + (1.0 if enque else 0.0)


def _zero_load(buf: str, index: int) -> int:
    return 0


class _Frame:
    __slots__ = ("lid", "var", "v", "stop", "step", "body", "i", "n", "run_end", "prev", "jump_s", "watch")


class Runner:
    """One core running one program (one side of one block)."""

    def __init__(self, prog: CoreProgram, env: dict, pricer, issue_cycles: float, shortcuts: bool,
                 loop_outer_ids: np.ndarray, loop_inner_ids: np.ndarray) -> None:
        self.prog = prog
        self.env = env
        self.pricer = pricer
        self.ic = float(issue_cycles)
        self.shortcuts = shortcuts
        self.sid_outer = loop_outer_ids
        self.sid_inner = loop_inner_ids
        self.t = 0.0
        self.pc = 0
        self.span = 0.0
        self.nib = 0
        self.pf = [0.0] * _NPIPE
        nb = len(prog.queue_bufs)
        d = prog.depths
        self.gate = [[0.0] * d[b] for b in range(nb)]
        self.gwhy = [[WHY_NONE] * d[b] for b in range(nb)]  # why each slot's gate is where it is
        self.pwhy = [WHY_NONE] * _NPIPE  # a pipe held back by a wait_flag
        self.swhy = WHY_ISSUE  # why the scalar is late (the last stall it took)
        self.wend = [[0.0] * d[b] for b in range(nb)]
        self.rend = [[0.0] * d[b] for b in range(nb)]
        self.enq = [[0.0] * d[b] for b in range(nb)]
        self.freet = [[0.0] * d[b] for b in range(nb)]
        self.isfree = [[True] * d[b] for b in range(nb)]
        self.bound = [0] * nb
        self.ptr = [0] * nb
        self.fifo: list[list[int]] = [[] for _ in range(nb)]
        self.stack: list[_Frame] = []
        self.events = EventLog()
        self.sets: dict[int, list[float]] = {}
        self.flags: dict[tuple, list[float]] = {}  # intra-core set_flag fire times, oldest first
        self.waited: dict[int, int] = {}
        self.partners: list[Runner] = []
        self.simulated = 0  # instructions walked one by one
        self.copied = 0  # instructions reproduced by the steady-state shortcut
        self.done = False
        self.name = ""
        # SyncAll: `parked` once the core has reached it (its pipes drained at `arrival`); the kernel's
        # simulation then sets `release` (when the last core of the launch has arrived) and runs it on
        self.parked = False
        self.arrival = 0.0
        self.release: float | None = None

    # --- helpers ------------------------------------------------------------------------------
    def end_time(self) -> float:
        return max(self.t, max(self.pf))

    def _err(self, msg: str) -> SimulationError:
        return SimulationError(f"{self.name}: {msg}")

    def _norm(self, s: float, pipes: tuple[int, ...], bufs: tuple[int, ...]) -> tuple[float, list, tuple]:
        """(R, times relative to R with past times as _PAST, queue structure) over what a loop touches."""
        pf = self.pf
        r = s
        for p in pipes:
            if pf[p] > r:
                r = pf[p]
        vals = [pf[p] - r if pf[p] > s else _PAST for p in pipes]
        struct = []
        for b in bufs:
            for arr in (self.gate[b], self.wend[b], self.rend[b], self.enq[b], self.freet[b]):
                for x in arr:
                    vals.append(x - r if x > s else _PAST)
            struct.append((self.bound[b], self.ptr[b], tuple(self.fifo[b]), tuple(self.isfree[b])))
        return r, vals, tuple(struct)

    def _shift(self, s: float, by: float, pipes: tuple[int, ...], bufs: tuple[int, ...]) -> None:
        """Move every time later than the scalar time `s` by `by` (pipes and buffers of a loop)."""
        pf = self.pf
        for p in pipes:
            if pf[p] > s:
                pf[p] += by
        for b in bufs:
            for arr in (self.gate[b], self.wend[b], self.rend[b], self.enq[b], self.freet[b]):
                for i, x in enumerate(arr):
                    if x > s:
                        arr[i] = x + by

    def _run_ends(self, fr: _Frame) -> list[int] | None:
        info = self.prog.loops[fr.lid]
        if not info.key_fns:
            return None  # every iteration has the same cost
        env = dict(self.env)
        keys = []
        v = fr.v
        for _ in range(fr.n):
            env[fr.var] = v
            for name, f in info.lets:
                env[name] = f(env, _zero_load)
            keys.append(tuple(f(env) for f in info.key_fns))
            v += fr.step
        ends = [0] * fr.n
        end = fr.n
        for i in range(fr.n - 1, -1, -1):
            if i < fr.n - 1 and keys[i] != keys[i + 1]:
                end = i + 1
            ends[i] = end
        return ends

    def _snapshot(self, fr: _Frame, s: float, count: int) -> tuple:
        info = self.prog.loops[fr.lid]
        r_now, vals, struct = self._norm(s, info.pipes, info.bufs)
        return (r_now, s, vals, struct, self.nib, self.events.total(),
                {f: len(lst) for f, lst in self.sets.items()}, count)

    def _try_jump(self, fr: _Frame, s: float) -> int:
        """After iteration fr.i - 1 completed at scalar time s: if the last p iterations repeat
        (p up to the lcm of the loop's queue depths), copy whole periods of the identical
        iterations that follow; return how many iterations were copied."""
        info = self.prog.loops[fr.lid]
        now = self._snapshot(fr, s, self.simulated + self.copied)
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
            if any(abs(a - b) > _TOL for a, b in zip(old[2], now[2], strict=True)):
                continue
            delta = now[0] - old[0]
            c = s - old[1]
            if abs(delta - c) > _TOL and not (delta > c and now[4] == old[4]):
                continue
            q = rem // p
            seg = self.events.since(old[5])
            sids = seg[:, 3].astype(np.int64)
            step = float(fr.step)
            # copy j of the p-iteration block: loop columns advance by j*p*step
            tile_step = np.where(self.sid_outer[sids] == fr.lid, step * p, 0.0)
            inner_step = np.where(self.sid_inner[sids] == fr.lid, step * p, 0.0)
            self.events.add_copies(seg, q, delta, tile_step, inner_step)
            for flag, lst in self.sets.items():
                new = lst[old[6].get(flag, 0):]
                if new:
                    lst.extend([x + j * delta for j in range(1, q + 1) for x in new])
            self._shift(s, q * delta, info.pipes, info.bufs)
            self.copied += q * (now[7] - old[7])
            hist.clear()
            fr.jump_s = s + q * c
            return q * p
        return 0

    # --- the walk -----------------------------------------------------------------------------
    def run(self) -> bool:
        """Walk until done (True) or blocked on a cross-core wait (False)."""
        ops = self.prog.ops
        nops = len(ops)
        env = self.env
        pf = self.pf
        gate, wend, rend, bound = self.gate, self.wend, self.rend, self.bound
        gwhy, pwhy = self.gwhy, self.pwhy
        swhy = self.swhy
        tables = self.pricer.tables
        price = self.pricer.price
        append = self.events.raw.append
        stack = self.stack
        ic = self.ic
        shortcuts = self.shortcuts
        loops = self.prog.loops
        t, pc, nib, count = self.t, self.pc, self.nib, self.simulated
        scalar_sid = self.prog.scalar_sid
        while pc < nops:
            op = ops[pc]
            k = op[0]
            if k == K_WORK:
                _, p, sid, sizes, reads, writes, ov, iv = op
                if len(sizes) == 2:
                    key = (sizes[0](env), sizes[1](env))
                else:
                    key = tuple([f(env) for f in sizes])
                c = tables[sid].get(key)
                if c is None:
                    c = price(sid, key)
                issue = t
                t += ic
                o = pf[p]
                why = pwhy[p]
                for b in reads:
                    g = gate[b][bound[b]]
                    if g > o:
                        o = g
                        why = gwhy[b][bound[b]]
                for b in writes:
                    g = gate[b][bound[b]]
                    if g > o:
                        o = g
                        why = gwhy[b][bound[b]]
                if issue > o:
                    o = issue
                    nib += 1
                    why = swhy
                else:
                    swhy = WHY_ISSUE
                end = o + c[0]
                pf[p] = end
                pwhy[p] = WHY_NONE
                for b in reads:
                    rr = rend[b]
                    s = bound[b]
                    if rr[s] < end:
                        rr[s] = end
                for b in writes:
                    s = bound[b]
                    ww = wend[b]
                    if ww[s] < end:
                        ww[s] = end
                    rr = rend[b]
                    if rr[s] < end:
                        rr[s] = end
                slot = bound[writes[0]] if writes else (bound[reads[0]] if reads else -1)
                append((o, end, p, sid, env[ov] if ov else -1, env[iv] if iv else -1, c[1], c[2], slot, why))
                count += 1
                pc += 1
            elif k == K_END:
                fr = stack[-1]
                fr.i += 1
                v = fr.v + fr.step
                if v < fr.stop:
                    if fr.watch:  # the shortcut watches this loop (eligible, enough trips)
                        self.nib = nib
                        self.simulated = count
                        r = self._try_jump(fr, t)
                        if r:
                            t = fr.jump_s
                            fr.i += r
                            v += r * fr.step
                        if v >= fr.stop:
                            stack.pop()
                            env[fr.var] = v - fr.step
                            t += ic
                            pc += 1
                            continue
                    fr.v = v
                    env[fr.var] = v
                    t += ic
                    pc = fr.body
                else:
                    stack.pop()
                    t += ic
                    pc += 1
            elif k == K_LOOP:
                _, var, f0, f1, f2, endpc, lid = op
                a, b, st = f0(env), f1(env), f2(env)
                t += ic
                if st <= 0:
                    raise self._err(f"loop {var} has step {st}; steps must be positive")
                if a >= b:
                    pc = endpc
                    continue
                fr = _Frame()
                fr.lid, fr.var, fr.v, fr.stop, fr.step, fr.body, fr.i = lid, var, a, b, st, pc + 1, 0
                fr.n = (b - a + st - 1) // st
                fr.prev = []
                fr.watch = (shortcuts and loops[lid].eligible and fr.n > _MIN_TRIPS
                            and fr.n * (endpc - pc - 1) > _MIN_OPS)
                if fr.watch:
                    fr.run_end = self._run_ends(fr)
                    self.nib, self.simulated = nib, count
                    fr.prev.append(self._snapshot(fr, t - ic, count + self.copied))
                else:
                    fr.run_end = None
                stack.append(fr)
                env[var] = a
                pc += 1
            elif k == K_LET:
                if op[3]:  # reads a buffer (ordered by an explicit WaitFlag(..., S) before it)
                    env[op[1]] = op[2](env, _zero_load)
                else:
                    env[op[1]] = op[2](env)
                t += ic
                pc += 1
            elif k == K_IF:
                t += ic
                pc = pc + 1 if op[1](env) else op[2]
            elif k == K_ALLOC:
                b = op[1]
                free = self.isfree[b]
                d = len(free)
                s = self.ptr[b]
                for _ in range(d):
                    if free[s]:
                        break
                    s = (s + 1) % d
                else:
                    raise self._err(
                        f"Alloc({self.prog.queue_bufs[b]}) with all {d} slot(s) in use: the program "
                        "would hang; every Alloc needs a Free before the slot is reused")
                free[s] = False
                bound[b] = s
                self.ptr[b] = (s + 1) % d
                gate[b][s] = self.freet[b][s]
                gwhy[b][s] = 2.0 * b
                wend[b][s] = 0.0
                rend[b][s] = 0.0
                t += ic
                count += 1
                pc += 1
            elif k == K_ENQUE:
                b = op[1]
                s = bound[b]
                w = wend[b][s]
                if t > w:
                    w = t
                    nib += 1
                self.enq[b][s] = w
                self.fifo[b].append(s)
                t += ic
                count += 1
                pc += 1
            elif k == K_DEQUE:
                b = op[1]
                q = self.fifo[b]
                if not q:
                    raise self._err(f"DeQue({self.prog.queue_bufs[b]}) of an empty queue: the program "
                                    "would hang; EnQue the buffer first")
                s = q.pop(0)
                bound[b] = s
                e = self.enq[b][s]
                if gate[b][s] < e:
                    gate[b][s] = e
                    gwhy[b][s] = 2.0 * b + 1.0
                t += ic
                count += 1
                pc += 1
            elif k == K_FREE:
                b = op[1]
                s = bound[b]
                if self.isfree[b][s]:
                    raise self._err(f"Free({self.prog.queue_bufs[b]}) of a slot that is not allocated")
                f = rend[b][s]
                if t > f:
                    f = t
                    nib += 1
                self.freet[b][s] = f
                self.isfree[b][s] = True
                t += ic
                count += 1
                pc += 1
            elif k == K_CSET:
                fire = pf[op[2]]
                if t > fire:
                    fire = t
                    nib += 1
                self.sets.setdefault(op[1], []).append(fire)
                t += ic
                count += 1
                pc += 1
            elif k == K_CWAIT:
                flag = op[1]
                n = self.waited.get(flag, 0)
                if not self.partners:
                    raise self._err(f"CrossWait(flag={flag}) but no core of the other side in this block")
                ready = 0.0
                for other in self.partners:
                    lst = other.sets.get(flag)
                    if lst is None or len(lst) <= n:
                        self.t, self.pc, self.nib, self.simulated = t, pc, nib, count
                        self.swhy = swhy
                        return False
                    if lst[n] > ready:
                        ready = lst[n]
                self.waited[flag] = n + 1
                if ready > t:
                    self._stall(t, ready, scalar_sid, op[2])
                    t = ready
                    self.span = t
                    swhy = WHY_FLAG + op[2]
                t += ic
                count += 1
                pc += 1
            elif k == K_SYNC:  # the all-core barrier: wait with drained pipes until every core has arrived
                if self.release is None:
                    self.arrival = max(t, max(pf))
                    self.parked = True
                    self.t, self.pc, self.nib, self.simulated = t, pc, nib, count
                    self.swhy = swhy
                    return False
                ready, self.release, self.parked = self.release, None, False
                if ready > t:
                    self._stall(t, ready, scalar_sid, op[1])
                    t = ready
                    self.span = t
                    swhy = WHY_FLAG + op[1]
                t += ic
                count += 1
                pc += 1
            elif k == K_FSET:  # fires when the source pipe has finished its earlier work
                fire = pf[op[2]]
                if t > fire:
                    fire = t
                self.flags.setdefault(op[1], []).append(fire)
                t += ic
                count += 1
                pc += 1
            elif k == K_FWAIT:  # the destination pipe (or the scalar) waits for the oldest set
                pending = self.flags.get(op[1])
                if not pending:
                    raise self._err(f"wait_flag {op[1][0]}->{op[1][1]} event {op[1][2]} with no set_flag "
                                    "before it: the program would hang")
                fire = pending.pop(0)
                if op[2] == 0:  # S: the scalar itself stalls
                    if fire > t:
                        self._stall(t, fire, scalar_sid, op[3])
                        t = fire
                        self.span = t
                        swhy = WHY_FLAG + op[3]
                elif pf[op[2]] < fire:
                    pf[op[2]] = fire
                    pwhy[op[2]] = WHY_FLAG + op[3]
                t += ic
                count += 1
                pc += 1
            else:  # pragma: no cover - compile_side emits only the kinds above
                raise self._err(f"unknown op {op!r}")
        self.t, self.pc, self.nib, self.simulated = t, pc, nib, count
        self.swhy = swhy
        if t > self.span:
            self.events.raw.append((self.span, t, 0, scalar_sid, -1, -1, 0, 0, -1, WHY_NONE))
            self.span = t
        self.done = True
        return True

    def _stall(self, t: float, until: float, scalar_sid: int, wait_sid: int) -> None:
        raw = self.events.raw
        if t > self.span:
            raw.append((self.span, t, 0, scalar_sid, -1, -1, 0, 0, -1, WHY_NONE))
        if wait_sid >= 0:
            raw.append((t, until, _FLOW, wait_sid, -1, -1, 0, 0, -1, WHY_FLAG + wait_sid))


def run_block(runners: list[Runner], label: str) -> None:
    """Run the cores of one block until each has finished or reached a SyncAll (`parked`), interleaving at
    cross-core waits."""
    pending = [r for r in runners if not r.done]
    while pending:
        progressed = False
        still = []
        for r in pending:
            before = (r.pc, r.simulated)
            if r.run():
                progressed = True
                continue
            if r.parked:
                progressed = True
                continue
            still.append(r)
            if (r.pc, r.simulated) != before:
                progressed = True
        if still and not progressed:
            if any(r.parked for r in runners):  # the barrier's release may wake them: the kernel decides
                return
            waits = ", ".join(f"{r.name} at cross_wait(flag={r.prog.ops[r.pc][1]})" for r in still)
            raise SimulationError(f"{label}: deadlock, every remaining core waits for a flag "
                                  f"nobody sets: {waits}")
        pending = still
