"""Why a unit idles: every gap on a working pipe, what it waited on, and which instruction released it.

The simulator records for each instruction what held its start back (`why`: a queue slot not yet
freed, a DeQue whose EnQue had not fired, a set/wait or cross-core flag, the scalar issuing late).
A gap before an instruction on its pipe is charged to that cause; the instruction that released it
is the one that ended exactly when the gap ended (on the same AI core: its cube core or vector cores).

`idle_gaps` lists the gaps, `idle_breakdown` totals them per (core, pipe) and cause. The Studio's
"why units idle" table (notebook/views/idle.py) and the advisor (plan/advise.py) read them from here.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from .program import SYNC_WAIT
from .results import LANES

__all__ = ["TAIL", "core_number", "idle_breakdown", "idle_gaps"]

_WORK = ("MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP")
TAIL = "no work left (the pipe is done)"
_TAIL = TAIL
_TOL = 1e-9
_FLAG = "(its set had not arrived)"  # how the simulator words flag waits
_PIPE_FLAG = re.compile(r"wait_flag (\w+)->")  # a wait on a flag set by another pipe of the same core
_CORE_RE = re.compile(r"core(\d+)\.(cube|vec)core(\d+)")


@functools.lru_cache(maxsize=4096)
def core_number(label: str) -> int:
    """The AI core a lane label belongs to ("core3.veccore1" -> 3); -1 for the host and other lanes."""
    m = _CORE_RE.fullmatch(label)
    return int(m.group(1)) if m else -1


_core_number = core_number


def idle_gaps(sim: Any, *, cores: int | None = 2, min_us: float = 1e-6) -> list[dict[str, Any]]:
    """Every idle gap of the working pipes of the first `cores` AI cores (None: all), inside each kernel."""
    ev = sim.events
    c = ev.columns
    if not len(ev):
        return []
    labels = ev.core_labels
    pipes = [LANES.get(p, p) for p in ev.pipes]
    numbers = sorted({_core_number(x) for x in labels} - {-1})
    shown = set(numbers if cores is None else numbers[:cores])
    why_text = ev.why_text
    gaps: list[dict[str, Any]] = []
    asks: list[tuple[int, float, bool, str]] = []  # per gap: (core, time, cross-core flag wait, set pipe)
    asked: list[int] = []  # the gap of each ask
    sync_asks: list[tuple[dict[str, Any], int, float]] = []  # gaps that waited at a SyncAll
    flow = pipes.index("FLOWCTRL") if "FLOWCTRL" in pipes else -1
    kern, core, pipe, start, end = c["kernel"], c["core"], c["pipe"], c["start_us"], c["end_us"]
    cores_shown = [ci for ci, label in enumerate(labels) if _core_number(label) in shown]
    work = [pi for pi, p in enumerate(pipes) if p in _WORK]
    idx = np.flatnonzero(np.isin(core, cores_shown) & np.isin(pipe, work))
    # one group per (kernel, core, pipe), in that order, each by start time (stable)
    idx = idx[np.lexsort((start[idx], pipe[idx], core[idx], kern[idx]))]
    keys = np.stack((kern[idx], core[idx], pipe[idx]))
    cuts = np.flatnonzero((np.diff(keys, axis=1) != 0).any(axis=0)) + 1
    whys = c["why"] if "why" in c else None
    st, en = start[idx], end[idx]
    heads = np.concatenate(([0], cuts)) if len(idx) else cuts[:0]
    prev_end, last_end = _running_ends(en, heads, np.array([k["start_us"] for k in sim.kernels])[kern[idx[heads]]])
    gap_at = np.flatnonzero(st - prev_end > min_us)
    bounds = np.searchsorted(gap_at, np.concatenate((heads, [len(idx)]))).tolist()
    # the gaps' numbers as plain Python values at once (numpy scalars one by one are slow)
    at = idx[gap_at]
    gap_why = whys[at].tolist() if whys is not None else [-1] * len(at)
    gap_end, gap_start = st[gap_at].tolist(), prev_end[gap_at].tolist()
    gap_next = [ev.instr_text[i] for i in c["instr"][at].tolist()]
    nwhy = len(why_text)
    kinds: dict[str, tuple[bool, bool, str]] = {}  # cause -> (a SyncAll wait, a cross-core flag wait, set pipe)
    head_rows = idx[heads]
    for g, (kk, ci, pi) in enumerate(zip(kern[head_rows].tolist(), core[head_rows].tolist(),
                                         pipe[head_rows].tolist(), strict=True)):
        k, pname = sim.kernels[kk], pipes[pi]
        label = labels[ci]
        for j in range(bounds[g], bounds[g + 1]):
            w = gap_why[j]
            cause = why_text[w] if 0 <= w < nwhy else "its pipe's earlier work"
            t = gap_end[j]
            gap = {"kernel": k["name"], "core": label, "pipe": pname, "start": gap_start[j],
                   "end": t, "cause": cause, "released_by": "", "next": gap_next[j]}
            kind = kinds.get(cause)
            if kind is None:
                same = _PIPE_FLAG.match(cause)  # a pipe flag: set by a pipe of this core
                kind = kinds[cause] = (cause.endswith(SYNC_WAIT), cause.endswith(_FLAG) and not same,
                                       LANES.get(same.group(1), "") if same else "")
            if kind[0]:
                sync_asks.append((gap, kk, t))
                gaps.append(gap)
                continue
            asks.append((ci, t, kind[1], kind[2]))
            asked.append(len(gaps))
            gaps.append(gap)
        last = float(last_end[g])
        if k["end_us"] - last > min_us:
            gaps.append({"kernel": k["name"], "core": label, "pipe": pname, "start": last,
                         "end": k["end_us"], "cause": _TAIL, "released_by": "", "next": ""})
    for gi, who in zip(asked, _releasers(c, labels, pipes, ev.instr_text, flow, asks, ev.instr_stage), strict=True):
        gaps[gi]["released_by"] = who
    _last_arrivals(c, labels, pipes, ev.instr_text, sync_asks)
    return gaps


def _running_ends(en: np.ndarray, heads: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows in groups that begin at `heads`: the latest end of the rows before each one in its group (the
    group's `starts` entry for its first row), and each group's latest end. One running maximum over the whole
    array, exact: the ends are replaced by their ranks, offset by group so that no group reaches into the next."""
    if not len(en):
        return en, en
    values, rank = np.unique(en, return_inverse=True)
    group = np.zeros(len(en), dtype=np.int64)
    group[heads[1:]] = 1
    group = np.cumsum(group) * len(values)
    run = values[np.maximum.accumulate(rank.reshape(-1) + group) - group]
    prev = np.empty_like(en)
    prev[1:] = run[:-1]
    prev[heads] = starts
    tails = np.concatenate((heads[1:], [len(en)])) - 1
    return prev, run[tails]


def _last_arrivals(c: dict, labels: tuple, pipes: list, texts: tuple,
                   asks: list[tuple[dict[str, Any], int, float]]) -> None:
    """A SyncAll releases every core together once the last one has arrived: for each (gap, kernel, release
    time) the work that ended last by then on any core of the kernel (the first such event of the log on a
    tie), found by one sorted search per kernel."""
    skip = [i for i, p in enumerate(pipes) if p in ("SCALAR", "LAUNCH", "FLOWCTRL")]
    by_kernel: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for gap, kidx, t in asks:
        if kidx not in by_kernel:
            busy = np.flatnonzero((c["kernel"] == kidx) & ~np.isin(c["pipe"], skip))
            busy = busy[np.argsort(c["end_us"][busy], kind="stable")]
            by_kernel[kidx] = (c["end_us"][busy], busy)
        ends, busy = by_kernel[kidx]
        p = int(np.searchsorted(ends, t + _TOL, side="right"))
        if p == 0:
            continue
        i = int(busy[int(np.searchsorted(ends, ends[p - 1], side="left"))])
        gap["released_by"] = (f"the last core to arrive, {labels[int(c['core'][i])]} {pipes[int(c['pipe'][i])]}: "
                              f"{texts[int(c['instr'][i])]} (then the barrier itself)")


def _releasers(c: dict, labels: tuple, pipes: list, texts: tuple, flow: int,
               asks: list[tuple[int, float, bool, str]], stages: tuple[str, ...] = ()) -> list[str]:
    """For each (core, time, cross-core flag wait, set pipe): the instruction that let the waiting one start
    then. A queue wait is released on the same core, a pipe flag wait by the work of its setting pipe there
    (the set fires when that pipe's earlier work ends); a cross-core flag wait by the other cores of the AI
    core, at the end of the core's last flag wait (those cores searched in turn). Each core's events are
    sorted by end time once, and all the asks that search a core search it together. An instruction of a kernel
    stage (`stages`, the events' `instr_stage`) is named with its stage: "copy b2 <- kv1 (bmm2)"."""
    out = [""] * len(asks)
    if not asks:
        return out
    core, pipe, end = c["core"], c["pipe"], c["end_us"]
    times = np.array([a[1] for a in asks])
    mine: dict[int, list[int]] = {}
    for a, (ci, *_) in enumerate(asks):
        mine.setdefault(ci, []).append(a)
    of_number: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        of_number.setdefault(_core_number(lab), []).append(i)
    todo: list[tuple[int, float, list[int]]] = []  # (ask, time, cores to search in turn)
    for ci, here in sorted(mine.items()):
        flags = [a for a in here if asks[a][2] and flow >= 0]
        todo += [(a, asks[a][1], [ci]) for a in here if not (asks[a][2] and flow >= 0)]
        if flags:  # each flag wait: the end of this core's last flag wait by then
            waits = np.sort(end[(core == ci) & (pipe == flow)])
            pos = np.searchsorted(waits, times[flags] + _TOL, side="right").tolist()
            partners = [i for i in of_number[_core_number(labels[ci])] if i != ci]
            todo += [(a, float(waits[p - 1]), partners) for a, p in zip(flags, pos, strict=True) if p]
    by_core: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for cj in sorted({cj for _, _, cores in todo for cj in cores}):
        idx = np.flatnonzero((core == cj) & (pipe != flow))
        idx = idx[np.argsort(end[idx], kind="stable")]
        by_core[cj] = (end[idx], idx)
    pending = todo
    for step in range(max((len(cores) for _, _, cores in todo), default=0)):
        on_core: dict[int, list[tuple[int, float]]] = {}  # the asks that search core cj at this step
        for a, t, cores in pending:
            if step < len(cores):
                on_core.setdefault(cores[step], []).append((a, t))
        done: set[int] = set()
        for cj, items in on_core.items():
            ends, idx = by_core[cj]
            ts = np.array([t for _, t in items])
            lo = np.searchsorted(ends, ts - _TOL).tolist()
            hi = np.searchsorted(ends, ts + _TOL).tolist()
            for (a, _), l_, h in zip(items, lo, hi, strict=True):
                setter = asks[a][3]
                for i in idx[l_:h][::-1].tolist():
                    p = pipes[int(pipe[i])]
                    if p == setter if setter else p not in ("SCALAR", "LAUNCH"):
                        ins = int(c["instr"][i])
                        base, sep, note = texts[ins].partition("  #")  # the stage before the comment
                        stage = f" ({stages[ins]})" if stages and stages[ins] else ""
                        out[a] = f"{labels[cj]} {p}: {base}{stage}{sep}{note}"
                        done.add(a)
                        break
        pending = [x for x in pending if x[0] not in done]
    return out


def idle_breakdown(sim: Any, *, cores: int | None = 2, gaps: list[dict[str, Any]] | None = None
                   ) -> list[dict[str, Any]]:
    """Per (core, pipe): idle share of the kernel's time and the causes, largest first (from `gaps`
    when given, else from `idle_gaps(sim, cores=cores)`).

    Causes name what the pipe waited on and which instruction released most of that wait."""
    gaps = idle_gaps(sim, cores=cores) if gaps is None else gaps
    span = {k["name"]: k["end_us"] - k["start_us"] for k in sim.kernels}
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for g in gaps:
        key = (g["core"], g["pipe"])
        r = rows.setdefault(key, {"core": g["core"], "pipe": g["pipe"], "idle_us": 0.0, "span_us": 0.0,
                                  "kernels": set(), "by": {}})
        if g["kernel"] not in r["kernels"]:
            r["kernels"].add(g["kernel"])
            r["span_us"] += span[g["kernel"]]
        d = g["end"] - g["start"]
        r["idle_us"] += d
        by = g["released_by"]
        r["by"].setdefault(g["cause"], {}).setdefault(by, 0.0)
        r["by"][g["cause"]][by] += d
    out = []
    for r in rows.values():
        causes = []
        for cause, who in r["by"].items():
            us = sum(who.values())
            top = max(who.items(), key=lambda kv: kv[1])[0]
            causes.append({"cause": cause + (f" - released by {top}" if top else ""), "what": cause,
                           "released_by": top, "us": us,
                           "pct": 100.0 * us / r["span_us"] if r["span_us"] else 0.0})
        causes.sort(key=lambda x: -x["us"])
        out.append({"core": r["core"], "pipe": r["pipe"], "idle_us": r["idle_us"],
                    "idle_pct": 100.0 * r["idle_us"] / r["span_us"] if r["span_us"] else 0.0, "causes": causes})
    out.sort(key=lambda r: (r["core"], r["pipe"]))
    return out
