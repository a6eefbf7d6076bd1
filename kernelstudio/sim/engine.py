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

Steady-state shortcut (steady.py): at the end of an iteration of an eligible loop with enough
trips, the core's state is compared with that of the previous iterations; when it repeats, the
iterations that follow with the same cost key are copied instead of walked.
"""

from __future__ import annotations

import numpy as np

from . import memo as _memo
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
    zero_load,
)
from .steady import MIN_OPS, MIN_TRIPS, run_ends, snapshot, try_jump

__all__ = ["EventLog", "Runner", "run_block", "EVENT_COLUMNS", "WHY_FLAG", "WHY_ISSUE", "WHY_NONE", "why_code"]

_NPIPE = len(PIPES)
_FLOW = PIPES.index("FLOW")


# `why` codes: what an instruction's start waited on (the cause of the idle gap before it, if any)
WHY_NONE = -1.0  # its pipe was busy until it started (no gap)
WHY_ISSUE = -2.0  # the scalar had not issued it yet
WHY_FLAG = 1e6  # + sid of the wait instruction: a set/wait flag or a cross-core flag


def why_code(buf: int, enque: bool) -> float:
    """Code for "waited for a free slot of queue buffer `buf`" or "waited for its EnQue"."""
    return 2.0 * buf + (1.0 if enque else 0.0)


class Frame:
    """One loop being walked (an entry of the core's loop stack)."""

    __slots__ = (
        "lid",  # loop id (index into CoreProgram.loops)
        "var",  # loop variable
        "v",  # its current value
        "stop", "step",
        "body",  # pc of the body's first op
        "i",  # iterations completed
        "n",  # trip count
        "run_end",  # steady.run_ends: per iteration, the end of its run of equal cost keys (None: one run)
        "prev",  # steady.snapshot of the last iterations (compared to find a repeat)
        "jump_s",  # the scalar time after the last jump
        "watch",  # the steady-state shortcut watches this loop (eligible, enough trips)
        "memo",  # the iteration memo keys this loop's iterations (memo.py)
        "rec",  # memo.begin's record of the iteration being walked, else None
        "last",  # pc of the loop's K_END (where a replayed iteration resumes)
    )


class Runner:
    """One core running one program (one side of one block)."""

    def __init__(self, prog: CoreProgram, env: dict, pricer, issue_cycles: float, shortcuts: bool,
                 loop_outer_ids: np.ndarray, loop_inner_ids: np.ndarray) -> None:
        self.prog = prog
        self.env = env
        self.pricer = pricer
        self.issue_cycles = float(issue_cycles)  # the scalar's cost of issuing one op
        self.shortcuts = shortcuts
        self.sid_outer = loop_outer_ids
        self.sid_inner = loop_inner_ids
        self.t = 0.0  # the scalar's time: when it issues the next op
        self.pc = 0  # the next op (index into prog.ops)
        self.span = 0.0  # start of the scalar's current issue span (recorded as an event at each stall)
        # how many starts and flag fires waited for the scalar to issue them (the scalar was their last
        # constraint); a steady-state jump needs this unchanged over an iteration unless the scalar's own
        # advance sets the period
        self.issue_bound = 0
        self.pipe_free = [0.0] * _NPIPE  # when each pipe is free: its last instruction's end, or a wait_flag
        nb = len(prog.queue_bufs)
        d = prog.depths
        # per queue buffer, per slot:
        self.gate = [[0.0] * d[b] for b in range(nb)]  # when the slot opens to instructions (Free, EnQue)
        self.gate_why = [[WHY_NONE] * d[b] for b in range(nb)]  # why each slot's gate is where it is
        self.write_end = [[0.0] * d[b] for b in range(nb)]  # latest end of an instruction writing it
        self.use_end = [[0.0] * d[b] for b in range(nb)]  # latest end of an instruction reading or writing it
        self.enque_at = [[0.0] * d[b] for b in range(nb)]  # when its last EnQue fired
        self.free_at = [[0.0] * d[b] for b in range(nb)]  # when its last Free fired
        self.isfree = [[True] * d[b] for b in range(nb)]
        self.pipe_why = [WHY_NONE] * _NPIPE  # a pipe held back by a wait_flag
        self.scalar_why = WHY_ISSUE  # why the scalar is late (the last stall it took)
        self.bound = [0] * nb  # the slot each queue buffer is bound to (by its last Alloc or DeQue)
        self.ptr = [0] * nb  # where the next Alloc starts looking for a free slot (round robin)
        self.fifo: list[list[int]] = [[] for _ in range(nb)]  # enqueued slots, oldest first
        self.stack: list[Frame] = []
        self.events = EventLog()
        self.sets: dict[int, list[float]] = {}  # cross-core set fire times per flag (read by the partners)
        self.flags: dict[tuple, list[float]] = {}  # intra-core set_flag fire times, oldest first
        self.waited: dict[int, int] = {}  # cross-core sets consumed per flag
        self.partners: list[Runner] = []
        self.memo: dict[int, dict] = {}  # per loop id: recorded iterations by key (memo.py)
        self.memo_kept: dict[int, int] = {}  # per loop id: how many iterations its memo holds
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
        return max(self.t, max(self.pipe_free))

    def _err(self, msg: str) -> SimulationError:
        return SimulationError(f"{self.name}: {msg}")

    # --- the walk -----------------------------------------------------------------------------
    def run(self) -> bool:
        """Walk until done (True) or blocked on a cross-core wait (False)."""
        ops = self.prog.ops
        nops = len(ops)
        env = self.env
        pipe_free = self.pipe_free
        gate, write_end, use_end, bound = self.gate, self.write_end, self.use_end, self.bound
        gate_why, pipe_why = self.gate_why, self.pipe_why
        scalar_why = self.scalar_why
        tables = self.pricer.tables
        price = self.pricer.price
        append = self.events.raw.append
        stack = self.stack
        issue_cycles = self.issue_cycles
        shortcuts = self.shortcuts
        loops = self.prog.loops
        t, pc, issue_bound, count = self.t, self.pc, self.issue_bound, self.simulated
        scalar_sid = self.prog.scalar_sid
        # in the branches below: `b` is a queue buffer id, `slot` one of its slots, `fr` the innermost loop's Frame
        while pc < nops:
            op = ops[pc]
            kind = op[0]
            if kind == K_WORK:
                _, pipe, sid, sizes, reads, writes, outer_var, inner_var = op
                if len(sizes) == 2:
                    key = (sizes[0](env), sizes[1](env))
                else:
                    key = tuple([f(env) for f in sizes])
                cost = tables[sid].get(key)  # (cycles, bytes, flops)
                if cost is None:
                    cost = price(sid, key)
                issue = t
                t += issue_cycles
                start = pipe_free[pipe]
                why = pipe_why[pipe]
                for b in reads:
                    opens = gate[b][bound[b]]
                    if opens > start:
                        start = opens
                        why = gate_why[b][bound[b]]
                for b in writes:
                    opens = gate[b][bound[b]]
                    if opens > start:
                        start = opens
                        why = gate_why[b][bound[b]]
                if issue > start:
                    start = issue
                    issue_bound += 1
                    why = scalar_why
                else:
                    scalar_why = WHY_ISSUE
                end = start + cost[0]
                pipe_free[pipe] = end
                pipe_why[pipe] = WHY_NONE
                for b in reads:
                    used = use_end[b]
                    slot = bound[b]
                    if used[slot] < end:
                        used[slot] = end
                for b in writes:
                    slot = bound[b]
                    written = write_end[b]
                    if written[slot] < end:
                        written[slot] = end
                    used = use_end[b]
                    if used[slot] < end:
                        used[slot] = end
                slot = bound[writes[0]] if writes else (bound[reads[0]] if reads else -1)
                append((start, end, pipe, sid, env[outer_var] if outer_var else -1,
                        env[inner_var] if inner_var else -1, cost[1], cost[2], slot, why))
                count += 1
                pc += 1
            elif kind == K_END:
                fr = stack[-1]
                if fr.rec is not None:  # the iteration the memo recorded ends here
                    self.issue_bound, self.simulated, self.scalar_why = issue_bound, count, scalar_why
                    _memo.finish(self, fr, t)
                fr.i += 1
                v = fr.v + fr.step
                if v < fr.stop:
                    if fr.watch:  # the shortcut watches this loop (eligible, enough trips)
                        self.issue_bound = issue_bound
                        self.simulated = count
                        r = try_jump(self, fr, t)
                        if r:
                            t = fr.jump_s
                            fr.i += r
                            v += r * fr.step
                        if v >= fr.stop:
                            stack.pop()
                            env[fr.var] = v - fr.step
                            t += issue_cycles
                            pc += 1
                            continue
                    fr.v = v
                    env[fr.var] = v
                    t += issue_cycles
                    pc = fr.body
                    if fr.memo:
                        self.issue_bound, self.simulated, self.scalar_why = issue_bound, count, scalar_why
                        after = _memo.begin(self, fr, t)
                        if after is not None:  # replayed: the iteration ends at its K_END
                            t, pc = after, fr.last
                            issue_bound, scalar_why = self.issue_bound, self.scalar_why
                else:
                    stack.pop()
                    t += issue_cycles
                    pc += 1
            elif kind == K_LOOP:
                _, var, start_fn, stop_fn, step_fn, endpc, lid = op
                first, stop, step = start_fn(env), stop_fn(env), step_fn(env)
                t += issue_cycles
                if step <= 0:
                    raise self._err(f"loop {var} has step {step}; steps must be positive")
                if first >= stop:
                    pc = endpc
                    continue
                fr = Frame()
                fr.lid, fr.var, fr.v, fr.stop, fr.step, fr.body, fr.i = lid, var, first, stop, step, pc + 1, 0
                fr.n = (stop - first + step - 1) // step
                fr.prev = []
                fr.watch = (shortcuts and loops[lid].eligible and fr.n > MIN_TRIPS
                            and fr.n * (endpc - pc - 1) > MIN_OPS)
                if fr.watch:
                    fr.run_end = run_ends(self, fr)
                    self.issue_bound, self.simulated = issue_bound, count
                    fr.prev.append(snapshot(self, fr, t - issue_cycles, count + self.copied))
                else:
                    fr.run_end = None
                stack.append(fr)
                env[var] = first
                pc += 1
                fr.rec, fr.last = None, endpc - 1
                fr.memo = shortcuts and _memo.ENABLED and loops[lid].memo is not None
                if fr.memo:
                    self.issue_bound, self.simulated, self.scalar_why = issue_bound, count, scalar_why
                    after = _memo.begin(self, fr, t)
                    if after is not None:
                        t, pc = after, fr.last
                        issue_bound, scalar_why = self.issue_bound, self.scalar_why
            elif kind == K_LET:
                if op[3]:  # reads a buffer (ordered by an explicit WaitFlag(..., S) before it)
                    env[op[1]] = op[2](env, self.prog.load or zero_load)
                else:
                    env[op[1]] = op[2](env)
                t += issue_cycles
                pc += 1
            elif kind == K_IF:
                if op[3]:  # a branch of the kernel (not a replayed trace's dispatch, which costs nothing)
                    t += issue_cycles
                pc = pc + 1 if op[1](env) else op[2]
            elif kind == K_ALLOC:
                b = op[1]
                free = self.isfree[b]
                depth = len(free)
                slot = self.ptr[b]
                for _ in range(depth):
                    if free[slot]:
                        break
                    slot = (slot + 1) % depth
                else:
                    raise self._err(
                        f"Alloc({self.prog.queue_bufs[b]}) with all {depth} slot(s) in use: the program "
                        "would hang; every Alloc needs a Free before the slot is reused")
                free[slot] = False
                bound[b] = slot
                self.ptr[b] = (slot + 1) % depth
                gate[b][slot] = self.free_at[b][slot]
                gate_why[b][slot] = 2.0 * b
                write_end[b][slot] = 0.0
                use_end[b][slot] = 0.0
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_ENQUE:
                b = op[1]
                slot = bound[b]
                fire = write_end[b][slot]
                if t > fire:
                    fire = t
                    issue_bound += 1
                self.enque_at[b][slot] = fire
                self.fifo[b].append(slot)
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_DEQUE:
                b = op[1]
                queued = self.fifo[b]
                if not queued:
                    raise self._err(f"DeQue({self.prog.queue_bufs[b]}) of an empty queue: the program "
                                    "would hang; EnQue the buffer first")
                slot = queued.pop(0)
                bound[b] = slot
                fire = self.enque_at[b][slot]
                if gate[b][slot] < fire:
                    gate[b][slot] = fire
                    gate_why[b][slot] = 2.0 * b + 1.0
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_FREE:
                b = op[1]
                slot = bound[b]
                if self.isfree[b][slot]:
                    raise self._err(f"Free({self.prog.queue_bufs[b]}) of a slot that is not allocated")
                fire = use_end[b][slot]
                if t > fire:
                    fire = t
                    issue_bound += 1
                self.free_at[b][slot] = fire
                self.isfree[b][slot] = True
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_CSET:
                fire = pipe_free[op[2]]
                if t > fire:
                    fire = t
                    issue_bound += 1
                self.sets.setdefault(op[1], []).append(fire)
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_CWAIT:
                flag = op[1]
                n = self.waited.get(flag, 0)
                if not self.partners:
                    raise self._err(f"CrossWait(flag={flag}) but no core of the other side in this block")
                ready = 0.0
                for other in self.partners:
                    lst = other.sets.get(flag)
                    if lst is None or len(lst) <= n:
                        self.t, self.pc, self.issue_bound, self.simulated = t, pc, issue_bound, count
                        self.scalar_why = scalar_why
                        return False
                    if lst[n] > ready:
                        ready = lst[n]
                self.waited[flag] = n + 1
                if ready > t:
                    self._stall(t, ready, scalar_sid, op[2])
                    t = ready
                    self.span = t
                    scalar_why = WHY_FLAG + op[2]
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_SYNC:  # the all-core barrier: wait with drained pipes until every core has arrived
                if self.release is None:
                    self.arrival = max(t, max(pipe_free))
                    self.parked = True
                    self.t, self.pc, self.issue_bound, self.simulated = t, pc, issue_bound, count
                    self.scalar_why = scalar_why
                    return False
                ready, self.release, self.parked = self.release, None, False
                if ready > t:
                    self._stall(t, ready, scalar_sid, op[1])
                    t = ready
                    self.span = t
                    scalar_why = WHY_FLAG + op[1]
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_FSET:  # fires when the source pipe has finished its earlier work
                fire = pipe_free[op[2]]
                if t > fire:
                    fire = t
                self.flags.setdefault(op[1], []).append(fire)
                t += issue_cycles
                count += 1
                pc += 1
            elif kind == K_FWAIT:  # the destination pipe (or the scalar) waits for the oldest set
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
                        scalar_why = WHY_FLAG + op[3]
                elif pipe_free[op[2]] < fire:
                    pipe_free[op[2]] = fire
                    pipe_why[op[2]] = WHY_FLAG + op[3]
                t += issue_cycles
                count += 1
                pc += 1
            else:  # pragma: no cover - compile_side emits only the kinds above
                raise self._err(f"unknown op {op!r}")
        self.t, self.pc, self.issue_bound, self.simulated = t, pc, issue_bound, count
        self.scalar_why = scalar_why
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
