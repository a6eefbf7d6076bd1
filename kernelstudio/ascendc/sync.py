"""The static sync checker: what a kernel's synchronisation gets wrong, read from the twin's call log.

The twin runs each core's instructions in program order, so a kernel with a missing flag still computes
the right numbers there; on the chip its pipes (MTE2, V, MTE3, MTE1, M, FIX, the scalar unit S) run
concurrently and only SetFlag/WaitFlag, PipeBarrier and the queues' EnQue/DeQue order them. This module
replays each core's logged calls against that model:

- **race** — two calls on different pipes touch overlapping bytes of one on-chip buffer, at least one writes
  (RAW, WAR or WAW), and nothing orders them;
- **lost-signal** — a SetFlag while the same event id is still set by an earlier SetFlag no WaitFlag consumed;
- **hang** — a WaitFlag (or CrossCoreWaitFlag) that no SetFlag ever satisfies;
- **deadlock** — cores of one block each waiting on a cross-core flag another of them would set after its
  own wait (the cycle is named);
- **redundant-barrier** — a PipeBarrier<PIPE_ALL> whose removal leaves every hazard still ordered;
- **queue** — DeQue of an empty queue, a tensor freed twice or freed while queued, more tensors live than the
  queue's buffers, more EnQue'd than its depth.

Each finding names the kernel, block and core, the calls (with the user's `file:line`, which the twin
records) and what to do. The model of ordering: a pipe executes its own calls in order; the scalar unit
issues in program order, so a scalar access is ordered before every later call; SetFlag<A_B>(id) publishes
everything issued to pipe A so far (and what A has waited for), the WaitFlag<A_B>(id) that consumes it makes
pipe B wait for that; PipeBarrier<PIPE_ALL> waits for everything issued; a queue hand-off (EnQue -> DeQue,
FreeTensor -> AllocTensor of the same buffer) orders everything issued before it before everything after it.
Between cores (sync_gm.py): a GM write on one core and a read of overlapping bytes of the same kernel
parameter on another that no CrossCoreSetFlag -> CrossCoreWaitFlag chain or SyncAll orders is a **race**
naming both cores. Not modelled: GM hazards between the pipes of one core, bit-level masks and repeat strides
(an operand's span is what it covers).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..core.errors import InputError
from ..twin.calllog import Call, CallLog
from .sync_gm import gm_races

__all__ = ["KINDS", "PIPES", "CallSite", "Finding", "check_sync", "format_findings"]

KINDS = ("race", "lost-signal", "hang", "deadlock", "redundant-barrier", "queue")
PIPES = ("S", "MTE1", "MTE2", "MTE3", "V", "M", "FIX")
# The on-chip memory of each TPosition (operands of one memory can overlap).
MEMORY = {"VECIN": "UB", "VECOUT": "UB", "VECCALC": "UB", "CO2": "UB", "A1": "L1", "B1": "L1", "C1": "L1",
          "TSCM": "L1", "A2": "L0A", "B2": "L0B", "CO1": "L0C"}
QUEUE_APIS = frozenset({"AllocTensor", "EnQue", "DeQue", "FreeTensor"})
# How many instances of one barrier line are tried without it before it is called redundant.
BARRIER_TRIES = 3


@dataclass(frozen=True)
class CallSite:
    """One call a finding names: what it was, the user's `file:line` (None in logs that do not record it)
    and its position in its core's call sequence."""

    what: str
    site: str | None
    index: int
    on: str | None = None  # the core, in a finding that spans cores ("AIV0 of block 0")

    def __str__(self) -> str:
        whose = f"{self.on}'s" if self.on else "the core's"
        return f"{self.what} at {self.site or 'an unrecorded line'} ({whose} call #{self.index + 1})"


@dataclass(frozen=True)
class Finding:
    """One sync problem: its kind (see KINDS), where (kernel, block, core), the calls and what happens."""

    kind: str
    kernel: str
    block: int
    core: str
    calls: tuple[CallSite, ...]
    message: str
    occurrences: int = 1  # the same problem at the same lines, counted over loop iterations and cores

    @property
    def lines(self) -> tuple[str | None, ...]:
        """The `file:line` of each call, in the finding's order."""
        return tuple(c.site for c in self.calls)

    def __str__(self) -> str:
        times = f" ({self.occurrences} times)" if self.occurrences > 1 else ""
        head = f"[{self.kind}] kernel {self.kernel!r}, {self.core} of block {self.block}{times}: {self.message}"
        return head + "".join(f"\n    {c}" for c in self.calls)


def format_findings(findings: Sequence[Finding]) -> str:
    """The findings one after another, or a line saying there are none."""
    if not findings:
        return "sync check: no findings"
    return f"sync check: {len(findings)} finding(s)\n" + "\n".join(str(f) for f in findings)


def check_sync(log: CallLog | Iterable[Call], *, kernel: str | None = None) -> list[Finding]:
    """Every sync finding in a twin call log (`ks.twin.run(..., log_calls=True)`, a loaded kernel's `.log`,
    or the calls a failed run's TwinError carries), merged where the same lines repeat. `kernel` limits the
    check to one kernel entry of the log."""
    if kernel is not None and not isinstance(kernel, str):
        raise InputError(f"check_sync: kernel must be a kernel entry name (str), got {type(kernel).__name__}")
    if isinstance(log, CallLog):
        calls = log.select(kernel=kernel) if kernel is not None else list(log.calls)
    else:
        try:
            calls = list(log) if not isinstance(log, (str, bytes)) else None
        except TypeError:
            calls = None
        if calls is None or not all(isinstance(c, Call) for c in calls):
            raise InputError(f"check_sync takes a twin CallLog (ks.twin.run(..., log_calls=True), a loaded kernel's "
                             f".log, a TwinError's .calls), got {type(log).__name__}")
        calls = [c for c in calls if kernel is None or c.kernel == kernel]
    cores: dict[tuple[str, int, int, str], list[Call]] = defaultdict(list)
    for c in calls:
        if c.core != "host":
            cores[(c.kernel, c.launch, c.block, c.core)].append(c)
    found: list[Finding] = []
    tried_barriers: set[tuple[str, str | None]] = set()
    for (name, _launch, block, core), seq in cores.items():
        base = _CorePass(name, block, core, seq)
        base.run()
        found += base.findings
        found += _redundant_barriers(name, block, core, seq, base, tried_barriers)
    blocks: dict[tuple[str, int, int], dict[str, list[Call]]] = defaultdict(dict)
    for (name, launch, block, core), seq in cores.items():
        blocks[(name, launch, block)][core] = seq
    for (name, _launch, block), per_core in blocks.items():
        found += _cross_core(name, block, per_core)
    launches: dict[tuple[str, int], dict[tuple[int, str], list[Call]]] = defaultdict(dict)
    for (name, launch, block, core), seq in cores.items():
        launches[(name, launch)][(block, core)] = seq
    for (name, _launch), per_core in launches.items():
        found += _gm_findings(name, per_core)
    return _merge(found)


def _gm_findings(kernel: str, per_core: dict[tuple[int, str], list[Call]]) -> list[Finding]:
    """The launch's unordered GM write / read pairs between cores, as race findings naming both cores."""
    out = []
    for w, r, (lo, hi) in gm_races(per_core):
        sites = tuple(CallSite(_describe(per_core[a.core][a.index]), per_core[a.core][a.index].site, a.index,
                               f"{a.core[1]} of block {a.core[0]}") for a in (w, r))
        fix = ("CrossCoreSetFlag on the writing core after the write and CrossCoreWaitFlag on the reading core "
               "before the read" if w.core[0] == r.core[0] else "a SyncAll between them")
        out.append(Finding("race", kernel, w.core[0], w.core[1], sites,
                           f"GM race between cores: {sites[0].on} writes bytes [{lo}, {hi}) of kernel parameter "
                           f"{w.param} (counting from 0) with {sites[0].what} and {sites[1].on} reads them with "
                           f"{sites[1].what}, with nothing ordering the two cores; on the chip they run "
                           f"independently, so the read may see the old or a half-written value. Add {fix}"))
    return out


# ---- one core: ordering, flags, queues ---------------------------------------------------------------
def pipe_of(call: Call) -> str | None:
    """The pipe that executes a data call (None for calls that move or compute nothing on chip)."""
    api = call.api
    if api in ("DataCopy", "DataCopyPad"):
        dst, src = str(call.args.get("dst", "")), str(call.args.get("src", ""))
        if src == "GM":
            return "MTE2"
        if dst == "GM":
            return "FIX" if src == "CO1" else "MTE3"
        if MEMORY.get(dst) in ("L0A", "L0B"):
            return "MTE1"
        if MEMORY.get(dst) == "L1":
            return "MTE3"
        return "V"
    if api == "LoadData":
        return "MTE1"
    if api == "Mmad":
        return "M"
    if api == "Fixpipe":
        return "FIX"
    if api in ("LocalTensor::GetValue", "LocalTensor::SetValue"):
        return "S"
    if any(k in ("r", "w") for k, _ in call.refs):
        return "V"
    return None


def _describe(call: Call) -> str:
    a = call.args
    if call.api in ("SetFlag", "WaitFlag"):
        return f"{call.api}<{a.get('event')}>({a.get('id')})"
    if call.api in ("PipeBarrier", "pipe_barrier"):
        return f"{call.api}<{a.get('pipe')}>()"
    if call.api == "CrossCoreSetFlag":
        return f"CrossCoreSetFlag<{a.get('mode')}, {a.get('pipe')}>({a.get('id')})"
    if call.api == "CrossCoreWaitFlag":
        return f"CrossCoreWaitFlag({a.get('id')})"
    refs = dict(call.refs)
    if call.api in QUEUE_APIS or call.api == "InitBuffer":
        return f"{call.api} on the {a.get('que', a.get('buf', '?'))} queue at {refs.get('q', '?')}"
    if call.api in ("DataCopy", "DataCopyPad"):
        return f"{call.api}({a.get('dst')} <- {a.get('src')})"
    return call.api


def _span(ref: str) -> tuple[str, str, int, int] | None:
    """`VECIN:0+1024` as (memory, position, first byte, end byte), None when unreadable."""
    pos, _, rest = ref.partition(":")
    off, _, size = rest.partition("+")
    if pos not in MEMORY or not off.isdigit() or not size.isdigit():
        return None
    return MEMORY[pos], pos, int(off), int(off) + int(size)


@dataclass
class _Access:
    pipe: str
    seq: int
    rw: str
    start: int
    end: int
    index: int


@dataclass
class _Queue:
    init: int | None  # index of its InitBuffer call
    num: int
    depth: int
    state: dict[str, str] = field(default_factory=dict)  # buffer -> "alloc" | "queued" | "free"
    last: dict[str, int] = field(default_factory=dict)  # buffer -> index of the last call on it
    allocated: dict[str, int] = field(default_factory=dict)  # buffer -> index of the AllocTensor that took it
    fifo: list[str] = field(default_factory=list)


class _CorePass:
    """One replay of one core's calls (optionally without the call at `skip`)."""

    def __init__(self, kernel: str, block: int, core: str, calls: Sequence[Call], skip: int | None = None):
        self.kernel, self.block, self.core, self.calls, self.skip = kernel, block, core, calls, skip
        self.count = dict.fromkeys(PIPES, 0)
        self.clock = {p: dict.fromkeys(PIPES, 0) for p in PIPES}
        self.pending: dict[tuple[object, object], list[tuple[dict[str, int], int]]] = defaultdict(list)
        self.waiting: dict[tuple[object, object], list[int]] = defaultdict(list)
        self.tracked: dict[str, dict[tuple[str, str, int, int], _Access]] = defaultdict(dict)
        self.tokens: dict[tuple[str, str], dict[str, int]] = {}
        self.queues: dict[str, _Queue] = {}
        self.races: set[tuple[int, int]] = set()
        self.findings: list[Finding] = []

    # -- helpers --
    def site(self, i: int) -> CallSite:
        return CallSite(_describe(self.calls[i]), self.calls[i].site, i)

    def report(self, kind: str, indices: Sequence[int], message: str) -> None:
        self.findings.append(Finding(kind, self.kernel, self.block, self.core,
                                     tuple(self.site(i) for i in indices), message))

    def acquire(self, pipes: Iterable[str], token: dict[str, int]) -> None:
        for p in pipes:
            clk = self.clock[p]
            for q, n in token.items():
                if n > clk[q]:
                    clk[q] = n

    def everything(self) -> dict[str, int]:
        return dict(self.count)

    # -- the replay --
    def run(self) -> None:
        for i, call in enumerate(self.calls):
            if i == self.skip:
                continue
            api = call.api
            if api == "SetFlag":
                self.set_flag(i, call)
            elif api == "WaitFlag":
                self.wait_flag(i, call)
            elif api in ("PipeBarrier", "pipe_barrier"):
                if call.args.get("pipe") == "PIPE_ALL":
                    self.acquire(PIPES, self.everything())
            elif api == "InitBuffer":
                self.init_buffer(i, call)
            elif api in QUEUE_APIS:
                self.queue_call(i, call)
            pipe = pipe_of(call)
            if pipe is not None:
                self.access(i, call, pipe)
        for (event, ident), waits in self.waiting.items():
            for w in waits:
                pipe = str(event).partition("_")[2] or "?"
                self.report("hang", [w], f"WaitFlag<{event}>({ident}) has no SetFlag<{event}>({ident}) on this core "
                            f"to consume: on the chip pipe {pipe} waits forever (the twin runs flags in program order, "
                            f"so its run finished); add the SetFlag on the producing pipe or remove this wait")

    def set_flag(self, i: int, call: Call) -> None:
        event, ident = call.args.get("event"), call.args.get("id")
        src = str(event).partition("_")[0]
        key = (event, ident)
        if self.waiting[key]:  # a wait issued earlier in program order takes this set
            self.waiting[key].pop(0)
            return
        token = dict(self.clock.get(src, {}))
        if src in self.count:
            token[src] = self.count[src]
        if self.pending[key]:
            first = self.pending[key][0][1]
            self.report("lost-signal", [first, i], f"SetFlag<{event}>({ident}) while event id {ident} is still set by "
                        f"an earlier SetFlag that no WaitFlag<{event}>({ident}) consumed: the second signal is lost "
                        f"and a later WaitFlag pairs with the wrong one; remove the extra SetFlag or add the "
                        f"WaitFlag between them")
            return  # the flag stays set once (the earliest publication)
        self.pending[key].append((token, i))

    def wait_flag(self, i: int, call: Call) -> None:
        event, ident = call.args.get("event"), call.args.get("id")
        dst = str(event).partition("_")[2]
        key = (event, ident)
        if self.pending[key]:
            token, _ = self.pending[key].pop(0)
            if dst in self.clock:
                self.acquire([dst], token)
        else:
            self.waiting[key].append(i)

    def access(self, i: int, call: Call, pipe: str) -> None:
        self.count[pipe] += 1
        seq = self.count[pipe]
        seen = self.clock[pipe]
        for rw, ref in call.refs:
            if rw not in ("r", "w"):
                continue
            span = _span(ref)
            if span is None:
                continue
            mem, _pos, start, end = span
            table = self.tracked[mem]
            for a in table.values():
                if a.pipe == pipe or a.end <= start or end <= a.start or (a.rw == "r" and rw == "r"):
                    continue
                if seen[a.pipe] >= a.seq or (a.index, i) in self.races:
                    continue
                self.races.add((a.index, i))
                kind = {"wr": "RAW", "rw": "WAR", "ww": "WAW"}[a.rw + rw]
                lo, hi = max(start, a.start), min(end, a.end)
                self.report("race", [a.index, i],
                            f"{kind} between pipes {a.pipe} and {pipe} on {mem} bytes [{lo}, {hi}): "
                            f"{_describe(self.calls[a.index])} {'writes' if a.rw == 'w' else 'reads'} them and "
                            f"{_describe(call)} then {'writes' if rw == 'w' else 'reads'} them with no "
                            f"SetFlag<{a.pipe}_{pipe}>/WaitFlag<{a.pipe}_{pipe}>, queue hand-off or "
                            f"PipeBarrier<PIPE_ALL> between them; on the chip the two pipes run concurrently")
            table[(pipe, rw, start, end)] = _Access(pipe, seq, rw, start, end, i)
        if pipe == "S":  # the scalar unit issues in order: what it did precedes everything issued after
            for p in PIPES:
                self.clock[p]["S"] = self.count["S"]

    # -- queues --
    def init_buffer(self, i: int, call: Call) -> None:
        q = dict(call.refs).get("q")
        if q is None:
            return
        num = call.args.get("num")
        depth = call.args.get("depth")
        self.queues[q] = _Queue(i, num if isinstance(num, int) else 1, depth if isinstance(depth, int) else 1)

    def queue_call(self, i: int, call: Call) -> None:
        refs = dict(call.refs)
        q, buf = refs.get("q"), refs.get("slot")
        if q is None:
            return
        queue = self.queues.setdefault(q, _Queue(None, 1 << 30, 1 << 30))
        where = f"the {call.args.get('que', '?')} queue at {q}"
        live = [b for b, s in queue.state.items() if s in ("alloc", "queued")]
        init = [queue.init] if queue.init is not None else []
        if call.api == "AllocTensor":
            if buf is None or len(live) >= queue.num:
                firsts = sorted(queue.allocated.get(b, queue.last[b]) for b in live)[:1]
                self.report("queue", [*init, *firsts, i],
                            f"AllocTensor on {where} with all {queue.num} of its buffers (InitBuffer num, depth "
                            f"{queue.depth}) in use: {len(live)} tensor(s) allocated and not freed; FreeTensor "
                            f"each one after its last use, or InitBuffer the queue with more buffers")
                return
            if (q, buf) in self.tokens:
                self.acquire(PIPES, self.tokens.pop((q, buf)))
            queue.state[buf], queue.last[buf], queue.allocated[buf] = "alloc", i, i
        elif call.api == "EnQue":
            if len(queue.fifo) >= queue.depth:
                self.report("queue", [*init, queue.last[queue.fifo[0]], i],
                            f"EnQue on {where} holding {len(queue.fifo)} tensor(s) already, its depth is "
                            f"{queue.depth}; DeQue before enqueuing more, or raise the TQue depth")
            if buf is not None:
                self.tokens[(q, "enque:" + buf)] = self.everything()
                queue.state[buf], queue.last[buf] = "queued", i
                queue.fifo.append(buf)
        elif call.api == "DeQue":
            if not queue.fifo:
                self.report("queue", [*init, i], f"DeQue on {where}, which holds no tensor: nothing was EnQue'd "
                            f"since the last DeQue (DeQue before EnQue); EnQue in the producing stage first")
                return
            got = queue.fifo.pop(0)
            self.acquire(PIPES, self.tokens.pop((q, "enque:" + got), {}))
            queue.state[got], queue.last[got] = "alloc", i
        elif call.api == "FreeTensor" and buf is not None:
            state = queue.state.get(buf, "free")
            if state == "free":
                prev = [queue.last[buf]] if buf in queue.last else []
                self.report("queue", [*prev, i], f"FreeTensor on {where} of a buffer that is already free "
                            f"({'freed at the first call' if prev else 'never allocated'}): a tensor freed twice; "
                            f"free each tensor once")
                return
            if state == "queued":
                self.report("queue", [queue.last[buf], i], f"FreeTensor on {where} of a tensor still queued "
                            f"(EnQue'd, not DeQue'd); DeQue it first")
                queue.fifo.remove(buf)
            self.tokens[(q, buf)] = self.everything()
            queue.state[buf], queue.last[buf] = "free", i


def _redundant_barriers(kernel: str, block: int, core: str, calls: Sequence[Call], base: _CorePass,
                        tried: set[tuple[str, str | None]]) -> list[Finding]:
    """PipeBarrier<PIPE_ALL> lines whose removal (tried on up to BARRIER_TRIES instances) orders no fewer
    hazards: each line is judged once per kernel, on the first core that runs it."""
    by_site: dict[str | None, list[int]] = defaultdict(list)
    for i, c in enumerate(calls):
        if c.api in ("PipeBarrier", "pipe_barrier") and c.args.get("pipe") == "PIPE_ALL":
            by_site[c.site].append(i)
    out = []
    for site, indices in by_site.items():
        if (kernel, site) in tried:
            continue
        tried.add((kernel, site))
        needed = False
        for i in indices[:BARRIER_TRIES]:
            without = _CorePass(kernel, block, core, calls, skip=i)
            without.run()
            if without.races - base.races:
                needed = True
                break
        if not needed:
            first = indices[0]
            out.append(Finding("redundant-barrier", kernel, block, core,
                               (CallSite(_describe(calls[first]), site, first),),
                               "PipeBarrier<PIPE_ALL> orders no hazard between pipes that the flags and queues do "
                               "not already order: it only stalls every pipe until all are idle; remove it",
                               occurrences=len(indices)))
    return out


# ---- one block: cross-core flags -------------------------------------------------------------------
def _cross_core(kernel: str, block: int, per_core: dict[str, list[Call]]) -> list[Finding]:
    """Replays the block's CrossCoreSetFlag/WaitFlag calls (mode 2: an AIC set wakes each AIV, an AIC wait
    needs a set from every AIV; mode 1: an AIV set wakes the other AIV) until no core can move; cores left
    waiting are a hang (the core they wait for finished) or a deadlock (they wait on each other)."""
    ops = {core: [(i, c) for i, c in enumerate(seq) if c.api in ("CrossCoreSetFlag", "CrossCoreWaitFlag")]
           for core, seq in per_core.items()}
    if not any(ops.values()):
        return []
    aivs = sorted(c for c in per_core if c.startswith("AIV"))
    mode1_ids = {c.args.get("id") for seq in per_core.values() for c in seq
                 if c.api == "CrossCoreSetFlag" and c.args.get("mode") == 1}
    counts: dict[tuple[str, object, str], int] = defaultdict(int)  # (waiting core, id, from core)
    pos = dict.fromkeys(ops, 0)

    def ready(core: str, ident: object) -> list[str]:
        if core == "AIC":
            return aivs
        return [c for c in aivs if c != core] if ident in mode1_ids else ["AIC"]

    moved = True
    while moved:
        moved = False
        for core, seq in ops.items():
            while pos[core] < len(seq):
                _, c = seq[pos[core]]
                ident = c.args.get("id")
                if c.api == "CrossCoreSetFlag":
                    targets = ([x for x in aivs if x != core] if c.args.get("mode") == 1
                               else aivs if core == "AIC" else ["AIC"])
                    for t in targets:
                        counts[(t, ident, core)] += 1
                else:
                    froms = ready(core, ident)
                    if not froms or any(counts[(core, ident, f)] == 0 for f in froms):
                        break
                    for f in froms:
                        counts[(core, ident, f)] -= 1
                pos[core] += 1
                moved = True
    stuck = {core: ops[core][pos[core]] for core in ops if pos[core] < len(ops[core])}
    out: list[Finding] = []
    reported: set[str] = set()
    for core, (i, c) in sorted(stuck.items()):
        if core in reported:
            continue
        ident = c.args.get("id")
        missing = [f for f in ready(core, ident) if counts[(core, ident, f)] == 0]
        cycle = _cycle(core, stuck, ready)
        if cycle:
            first = cycle.index(min(cycle))
            cycle = cycle[first:] + cycle[:first]  # one name for one cycle, whichever core it was found from
            reported.update(cycle)  # and the cores waiting on it are stuck behind the same cycle
            reported.update(x for x in stuck if set(ready(x, stuck[x][1].args.get("id"))) & set(cycle))
            names = " -> ".join([*cycle, cycle[0]])
            sites = tuple(CallSite(_describe(stuck[x][1]), stuck[x][1].site, stuck[x][0]) for x in cycle)
            out.append(Finding("deadlock", kernel, block, core, sites,
                               f"cross-core wait cycle {names}: each core waits for a flag the next sets only after "
                               f"its own wait; move one CrossCoreSetFlag before the wait it depends on"))
            continue
        reported.add(core)
        who = ", ".join(missing) or "no core"
        out.append(Finding("hang", kernel, block, core, (CallSite(_describe(c), c.site, i),),
                           f"CrossCoreWaitFlag({ident}) waits for a set from {who}, which finished without a "
                           f"CrossCoreSetFlag({ident}) for it; add the set on the producing core"))
    return out


def _cycle(start: str, stuck: dict[str, tuple[int, Call]], ready) -> list[str]:  # noqa: ANN001
    """The cores of a wait-for cycle through `start` (each waits on a flag the next would set), or []."""
    path = [start]
    while True:
        ident = stuck[path[-1]][1].args.get("id")
        nxt = next((x for x in ready(path[-1], ident) if x in stuck), None)
        if nxt is None:
            return []
        if nxt in path:
            return path[path.index(nxt):]
        path.append(nxt)


def _merge(findings: list[Finding]) -> list[Finding]:
    """One finding per (kind, kernel, lines), counting repeats; in first-seen order."""
    merged: dict[tuple[object, ...], Finding] = {}
    for f in findings:
        key = (f.kind, f.kernel, tuple((c.what, c.site) if c.site else (c.what, c.index) for c in f.calls))
        old = merged.get(key)
        if old is None:
            merged[key] = f
        else:
            merged[key] = Finding(old.kind, old.kernel, old.block, old.core, old.calls, old.message,
                                  old.occurrences + f.occurrences)
    return list(merged.values())
