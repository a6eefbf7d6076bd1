"""GM races between cores: a write to global memory on one core and a read of overlapping bytes on another
core that nothing orders (the sync checker's cross-core half; sync.py holds the per-core half).

The twin runs each core on its own thread, so a kernel whose vector cores read what the cube core writes
without waiting for it may still compute the right numbers there; on the chip the cores run independently.
Ordering between cores comes only from CrossCoreSetFlag -> CrossCoreWaitFlag (within one block: mode 2 from
the AIC to each of its AIVs and from each AIV to the AIC, mode 1 between the two AIVs) and from SyncAll (every
core of the launch, or every AIV with isAIVOnly). This module replays those calls over all cores of a launch
with vector clocks and reports each GM write / read pair of one kernel parameter on two cores whose bytes
overlap and neither of which happens before the other (RAW or WAR). A call's GM bytes are the twin's
`gm=<parameter>:<offset>+<bytes>` ref, row by row when it logs `gmrows=<rows>x<row bytes>/<pitch>`.
Not modelled: the pipe a CrossCoreSetFlag names (a core's calls count as done when it sets the flag), two
writes of the same bytes (atomic accumulation writes them on purpose), GM hazards between the pipes of one
core, and accesses outside every kernel parameter (`gm=?`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..twin.calllog import Call

__all__ = ["gm_races"]

Core = tuple[int, str]  # (block, core name)
# Beyond this many rows a strided access is treated as the contiguous range that holds all its rows.
MAX_ROWS = 4096


@dataclass(frozen=True)
class GmAccess:
    """One call's GM side: which core, its index in that core's calls, `w` or `r`, the kernel parameter, its
    byte rows (first byte, bytes, pitch, rows) and the vector clock it ran under."""

    core: Core
    index: int
    rw: str
    param: int
    start: int
    row: int
    pitch: int
    rows: int
    clock: Mapping[Core, int]

    @property
    def end(self) -> int:
        return self.start + (self.rows - 1) * self.pitch + self.row

    def intervals(self) -> list[tuple[int, int]]:
        if self.rows <= 1 or self.rows > MAX_ROWS or self.pitch <= self.row:
            return [(self.start, self.end)]
        return [(self.start + i * self.pitch, self.start + i * self.pitch + self.row) for i in range(self.rows)]


def gm_direction(call: Call) -> str | None:
    """`w` for a call that writes its GM side, `r` for one that reads it, None for a call with none."""
    refs = dict(call.refs)
    if "gm" not in refs:
        return None
    if call.api == "Fixpipe" or call.args.get("dst") == "GM":
        return "w"
    return "r"


def _gm_side(call: Call) -> tuple[int, int, int, int, int] | None:
    """(parameter, first byte, row bytes, pitch, rows) of a call's GM ref, None outside the parameters."""
    refs = dict(call.refs)
    where, _, size = refs["gm"].partition("+")
    param, _, off = where.partition(":")
    if not param.isdigit() or not size.isdigit():
        return None
    start = int(off) if off.lstrip("-").isdigit() else 0
    nbytes = int(size)
    rows = refs.get("gmrows")
    if rows:
        count, _, rest = rows.partition("x")
        row, _, pitch = rest.partition("/")
        if count.isdigit() and row.isdigit() and pitch.isdigit():
            return int(param), start, int(row), int(pitch), int(count)
    return int(param), start, nbytes, nbytes, 1


def _targets(call: Call, core: str, aivs: Sequence[str]) -> list[str]:
    if call.args.get("mode") == 1:
        return [x for x in aivs if x != core]
    return list(aivs) if core == "AIC" else ["AIC"]


def _replay(per_core: Mapping[Core, Sequence[Call]]) -> list[GmAccess]:
    """Every GM access of one launch with the vector clock it ran under (cores stuck at a wait stop there)."""
    aivs: dict[int, list[str]] = defaultdict(list)
    for block, core in per_core:
        if core.startswith("AIV"):
            aivs[block].append(core)
    mode1 = {c.args.get("id") for seq in per_core.values() for c in seq
             if c.api == "CrossCoreSetFlag" and c.args.get("mode") == 1}
    pos = dict.fromkeys(per_core, 0)
    clock: dict[Core, dict[Core, int]] = {c: {} for c in per_core}
    tokens: dict[tuple[Core, object, Core], list[dict[Core, int]]] = defaultdict(list)
    at_barrier: dict[Core, int] = {}  # core -> index of the SyncAll it waits in
    out: list[GmAccess] = []

    def publish(core: Core, i: int) -> dict[Core, int]:
        clk = dict(clock[core])
        clk[core] = i + 1  # this core's calls up to and including call i
        clock[core] = clk
        return clk

    def merge(core: Core, other: Mapping[Core, int]) -> None:
        clk = dict(clock[core])
        for k, v in other.items():
            if v > clk.get(k, 0):
                clk[k] = v
        clock[core] = clk

    def release_barrier() -> bool:
        waiting = list(at_barrier)
        if not waiting:
            return False
        aiv_only = all(per_core[c][at_barrier[c]].args.get("isAIVOnly") != 0 for c in waiting)
        members = [c for c in per_core if not aiv_only or c[1].startswith("AIV")]
        if any(c not in at_barrier for c in members):
            return False
        joined: dict[Core, int] = {}
        for c in members:
            for k, v in publish(c, at_barrier[c]).items():
                joined[k] = max(joined.get(k, 0), v)
        for c in members:
            merge(c, joined)
            pos[c] = at_barrier.pop(c) + 1
        return True

    moved = True
    while moved:
        moved = False
        for core, seq in per_core.items():
            block, name = core
            while pos[core] < len(seq) and core not in at_barrier:
                i, c = pos[core], seq[pos[core]]
                if c.api == "CrossCoreSetFlag":
                    clk = publish(core, i)
                    for t in _targets(c, name, aivs[block]):
                        tokens[((block, t), c.args.get("id"), core)].append(clk)
                elif c.api == "CrossCoreWaitFlag":
                    ident = c.args.get("id")
                    froms = (aivs[block] if name == "AIC"
                             else [x for x in aivs[block] if x != name] if ident in mode1 else ["AIC"])
                    keys = [(core, ident, (block, f)) for f in froms]
                    if not froms or any(not tokens[k] for k in keys):
                        break
                    for k in keys:
                        merge(core, tokens[k].pop(0))
                elif c.api == "SyncAll":
                    at_barrier[core] = i
                    break
                else:
                    rw = gm_direction(c)
                    side = _gm_side(c) if rw else None
                    if side is not None:
                        param, start, row, pitch, rows = side
                        out.append(GmAccess(core, i, rw, param, start, row, pitch, rows, clock[core]))
                pos[core] += 1
                moved = True
        if release_barrier():
            moved = True
    return out


def _ordered(a: GmAccess, b: GmAccess) -> bool:
    return b.clock.get(a.core, 0) > a.index or a.clock.get(b.core, 0) > b.index


def _overlap(a: GmAccess, b: GmAccess) -> tuple[int, int] | None:
    """The first overlapping byte range of two accesses' rows, None when they share no byte."""
    xs, ys = a.intervals(), b.intervals()
    i = j = 0
    while i < len(xs) and j < len(ys):
        lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if lo < hi:
            return lo, hi
        if xs[i][1] <= ys[j][1]:
            i += 1
        else:
            j += 1
    return None


def gm_races(per_core: Mapping[Core, Sequence[Call]]) -> list[tuple[GmAccess, GmAccess, tuple[int, int]]]:
    """The unordered (write, read) GM pairs of one launch on two cores with overlapping bytes, each pair of
    call lines once per pair of cores, as (the earlier-logged access, the other, the shared byte range)."""
    by_param: dict[int, list[GmAccess]] = defaultdict(list)
    for acc in _replay(per_core):
        by_param[acc.param].append(acc)
    found = []
    for accesses in by_param.values():
        if not any(a.rw == "w" for a in accesses) or all(a.rw == "w" for a in accesses):
            continue
        accesses.sort(key=lambda a: (a.start, a.core, a.index))
        seen: set[tuple[object, ...]] = set()
        active: list[GmAccess] = []
        for b in accesses:
            active = [a for a in active if a.end > b.start]
            for a in active:
                if a.core == b.core or (a.rw == "r" and b.rw == "r") or (a.rw == "w" and b.rw == "w"):
                    continue
                w, r = (a, b) if a.rw == "w" else (b, a)
                key = (w.core, r.core, per_core[w.core][w.index].site or w.index,
                       per_core[r.core][r.index].site or r.index)
                if key in seen or _ordered(a, b):
                    continue
                span = _overlap(a, b)
                if span is None:
                    continue
                seen.add(key)
                found.append((w, r, span))
            active.append(b)
    return found
