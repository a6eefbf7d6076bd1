"""The profiler-style timeline: one lane per core x pipe, grouped per core as msprof/Insight show it.

`timeline_data(sim)` turns a simulation's events into bars (lane, start, end, colour, hover text),
cross-core flag arrows, idle gaps, a legend, the default x ranges and, when asked, the unfused plan's
kernels and launch gaps on lanes of their own (one per kernel, on their own time axis).

Cores that do the same work are folded into one lane group (`core_groups`): the same kernels, the same
pipes with the same number of instructions, and every instruction's start and duration within `tol_us`
of the group's first core. A core that differs (a tail core with less work) is a group of its own. A
folded group draws its first core's lanes; `expand` lists the groups drawn core by core.

A SyncAll wait is drawn from the core's arrival (the end of its last work before the release), not from
the moment its scalar reached the barrier (the pipes were still working then). Past `max_per_lane`
events a lane's adjacent events are merged into spans (level of detail); the merged counts are reported
and the full detail stays in the Chrome trace.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ...sim.program import SYNC_TEXT
from ...sim.results import LANES
from .lanes import ALIKE, MAX_GROUPS, alike_groups, rank_groups
from .stages import stage_data
from .style import FAMILY_COLORS, IDLE, LANE_COLORS, LANE_ORDER, LAUNCH_GAP, PONG, shade

__all__ = ["PLAN_LANES", "TOL_US", "core_groups", "core_sort_key", "timeline_data"]

TOL_US = 1e-3  # two cores are the same when every instruction's start and duration agree to 1 ns
_CORE_RE = re.compile(r"core(\d+)\.(cube|vec)core(\d+)")
_NOT_WORK = ("SCALAR", "FLOWCTRL", "LAUNCH")  # a core's arrival at a barrier is the end of its last real work


@functools.lru_cache(maxsize=4096)
def core_sort_key(label: str) -> tuple:
    """core0.cubecore0 < core0.veccore0 < core0.veccore1 < core1.cubecore0 ...; host first."""
    m = _CORE_RE.fullmatch(label)
    if not m:
        return (-1, 0, 0, label)
    return (int(m.group(1)), 0 if m.group(2) == "cube" else 1, int(m.group(3)), label)


@functools.lru_cache(maxsize=4096)
def _core_number(label: str) -> int:
    m = _CORE_RE.fullmatch(label)
    return int(m.group(1)) if m else -1


def _kind(label: str) -> str:
    m = _CORE_RE.fullmatch(label)
    return f"{m.group(2)}core" if m else label


def _ranges(nums: list[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5"."""
    parts: list[str] = []
    i = 0
    while i < len(nums):
        j = i
        while j + 1 < len(nums) and nums[j + 1] == nums[j] + 1:
            j += 1
        parts.append(str(nums[i]) if i == j else f"{nums[i]}-{nums[j]}")
        i = j + 1
    return ",".join(parts)


def group_label(members: list[str]) -> str:
    """An exact name for a set of cores of one kind: the AI cores holding each set of sub-cores, then the
    count ("core0-15 cubecore0 x16", "core0,2-3 cubecore0 x3", "core21 veccore1, core22-23 veccore0-1 x5")."""
    if len(members) == 1:
        return members[0]
    kind = _kind(members[0])
    subs: dict[int, list[int]] = {}
    for m in members:
        key = core_sort_key(m)
        subs.setdefault(key[0], []).append(key[2])
    by_subs: dict[tuple[int, ...], list[int]] = {}  # in order of their first AI core
    for num in sorted(subs):
        by_subs.setdefault(tuple(sorted(subs[num])), []).append(num)
    return ", ".join(f"core{_ranges(nums)} {kind}{_ranges(list(s))}" for s, nums in by_subs.items()) \
        + f" x{len(members)}"


def _per_core(sim: Any) -> tuple[list[int], dict[int, np.ndarray], list[str], np.ndarray]:
    """The cores with events (display order), each one's event indices by (pipe rank, start), the lane
    name of every pipe and the display rank of every pipe."""
    ev = sim.events
    c = ev.columns
    labels = ev.core_labels
    pipe_names = [LANES.get(p, p) for p in ev.pipes]
    by_name = {p: i for i, p in enumerate(LANE_ORDER)}
    named = sorted(set(pipe_names) - set(LANE_ORDER))
    pipe_rank = np.array([by_name[p] if p in by_name else len(LANE_ORDER) + named.index(p) for p in pipe_names]
                         or [0], dtype=np.int64)
    if not len(ev):
        return [], {}, pipe_names, pipe_rank
    idx = np.lexsort((c["start_us"], pipe_rank[c["pipe"]], c["core"]))
    cuts = np.flatnonzero(np.diff(c["core"][idx]) != 0) + 1
    of_core = {int(c["core"][sel[0]]): sel for sel in np.split(idx, cuts)}
    present = sorted(of_core, key=lambda i: core_sort_key(labels[i] if i < len(labels) else "host"))
    return present, of_core, pipe_names, pipe_rank


def core_groups(sim: Any, *, tol_us: float = TOL_US, cores: int | None = None,
                alike: float | None = None) -> list[dict[str, Any]]:
    """Cores folded by their work, in display order (host first): each group's `label`, `kind`, `members`
    (core labels), `drawn` (the member drawn when folded), `exact` (its members are identical) and `count`.
    `cores` keeps the first N AI cores (None: all); `alike` (a share, `lanes.ALIKE`) also folds cores whose
    work is alike (`lanes.alike_groups`), None only identical ones."""
    present, of_core, pipe_names, _ = _per_core(sim)
    c = sim.events.columns
    labels = sim.events.core_labels
    numbers = sorted({_core_number(labels[i]) for i in present} - {-1})
    keep = set(numbers if cores is None else numbers[:cores])
    groups: list[dict[str, Any]] = []
    buckets: dict[tuple, list[tuple[dict[str, Any], np.ndarray]]] = {}
    # structure of every core at once: the kernels it ran in, and (pipe, instruction count) per lane
    npipe = max(len(pipe_names), 1)
    nkern = max(len(sim.events.kernel_names), 1)
    ncore = max(len(labels), max(present, default=-1) + 1)
    per_pipe = np.bincount(c["core"] * npipe + c["pipe"], minlength=ncore * npipe).reshape(ncore, npipe) \
        if len(c["core"]) else np.zeros((ncore, npipe), dtype=np.int64)
    in_kernel = np.bincount(c["core"] * nkern + c["kernel"], minlength=ncore * nkern).reshape(ncore, nkern) > 0 \
        if len(c["core"]) else np.zeros((ncore, nkern), dtype=bool)
    for ci in present:
        label = labels[ci]
        if _core_number(label) not in keep and _core_number(label) >= 0:
            continue
        sel = of_core[ci]
        counts = per_pipe[ci]
        pipes = np.flatnonzero(counts)
        key = (_kind(label), tuple(np.flatnonzero(in_kernel[ci]).tolist()), tuple(pipes.tolist()),
               tuple(counts[pipes].tolist()))
        times = np.concatenate((c["start_us"][sel], c["end_us"][sel] - c["start_us"][sel]))
        for g, rep in buckets.get(key, []) if _core_number(label) >= 0 else []:
            if float(np.max(np.abs(times - rep), initial=0.0)) <= tol_us:
                g["members"].append(label)
                break
        else:
            g = {"kind": _kind(label), "members": [label]}
            groups.append(g)
            buckets.setdefault(key, []).append((g, times))
    if alike is not None:
        groups = alike_groups(sim, groups, of_core, pipe_names, core_sort_key, alike=alike)
    for g in groups:
        g.setdefault("drawn", g["members"][0])
        g.setdefault("exact", True)
        g["count"] = n = len(g["members"])
        g["label"] = group_label(g["members"])
        g["tick"] = g["label"]
        if not g["exact"]:  # "~x48": alike, not identical; the lanes' tick names the core drawn and the count
            g["label"] = g["label"][:-len(f"x{n}")] + f"~x{n}"
            g["tick"] = f"{g['drawn']} ~x{n}"
    return groups


def _merge(start: np.ndarray, end: np.ndarray, nbytes: np.ndarray, cap: int) -> tuple[np.ndarray, ...]:
    """Merge sorted events into at most `cap` spans of adjacent events: (start, end, bytes, count)."""
    n = len(start)
    group = (np.arange(n) * cap) // n
    cuts = np.flatnonzero(np.diff(group)) + 1
    idx = np.concatenate(([0], cuts))
    return (np.minimum.reduceat(start, idx), np.maximum.reduceat(end, idx), np.add.reduceat(nbytes, idx),
            np.diff(np.concatenate((idx, [n]))))


def _arrivals(sim: Any, ci: int, sel: np.ndarray, pipe_names: list[str]) -> dict[int, float]:
    """For each SyncAll wait of core `ci` (event index -> drawn start): the end of the core's last work
    that ended by the release, when that is later than the moment its scalar reached the barrier."""
    ev = sim.events
    c = ev.columns
    pipe = c["pipe"][sel]
    work = np.array([p not in _NOT_WORK for p in pipe_names], dtype=bool)[pipe]
    ends = np.sort(c["end_us"][sel][work])
    out: dict[int, float] = {}
    flow = [i for i, p in enumerate(pipe_names) if p == "FLOWCTRL"]
    for i in sel[np.isin(pipe, flow)].tolist():
        if ev.instr_text[int(c["instr"][i])] != SYNC_TEXT:
            continue
        t = float(c["end_us"][i])
        p = int(np.searchsorted(ends, t + 1e-9, side="right"))
        if p and ends[p - 1] > c["start_us"][i]:
            out[i] = float(ends[p - 1])
    return out


def timeline_data(sim: Any, *, unfused: Any | None = None, cores: int | None = None, max_per_lane: int = 2000,
                  gaps: list[dict[str, Any]] | None = None, expand: Iterable[str] | bool = (),
                  tol_us: float = TOL_US, alike: float | None = ALIKE,
                  max_groups: int | None = MAX_GROUPS) -> dict[str, Any]:
    """Lane groups, lanes, bars, arrows, idle gaps, legend, x ranges and title of `sim` (the first `cores`
    AI cores; None = all), and the unfused plan's lanes when `unfused` is given.

    `expand` names the groups (by label) drawn core by core, True all of them; `gaps` (from
    `idle.idle_gaps`) become hoverable idle spans on their lanes. Cores alike within `alike` fold into one
    group (`lanes`; None: identical cores only); past `max_groups` groups (None: no limit) only the first
    `max_groups` of `lanes.rank_groups` are drawn, the others `hidden` (no lanes; "hidden" counts them)."""
    ev = sim.events
    c = ev.columns
    present, of_core, pipe_names, _ = _per_core(sim)
    groups = core_groups(sim, tol_us=tol_us, cores=cores, alike=alike)
    ranked = rank_groups(sim, groups, of_core, pipe_names)
    keep = set(ranked if max_groups is None else ranked[:max_groups])
    want = None if expand is True else set(expand or ())
    index = {label: i for i, label in enumerate(ev.core_labels)}
    lanes: list[dict[str, Any]] = []
    bars: dict[str, list] = {k: [] for k in ("lane", "start", "end", "color", "text", "pipe", "wait")}
    lod: dict[str, int] = {}
    lane_of: dict[tuple[int, int], int] = {}
    for gi, g in enumerate(groups):
        g["hidden"] = g["kind"] != "host" and gi not in keep
        g["expanded"] = g["count"] > 1 and (want is None or g["label"] in want) and not g["hidden"]
        g["lanes"] = []
        for core in [] if g["hidden"] else g["members"] if g["expanded"] else [g["drawn"]]:
            ci = index[core]
            sel = of_core[ci]
            arrive = _arrivals(sim, ci, sel, pipe_names)
            cuts = np.flatnonzero(np.diff(c["pipe"][sel]) != 0) + 1
            for k, part in enumerate(np.split(sel, cuts)):
                pi = int(c["pipe"][part[0]])
                pname = pipe_names[pi]
                li = len(lanes)
                lane_of[(ci, pi)] = li
                head = g["tick"] if not g["expanded"] else core
                lanes.append({"core": core, "pipe": pname, "label": f"{core} {pname}", "events": int(len(part)),
                              "group": gi, "host": g["kind"] == "host",
                              "tick": f"{head}  {pname}" if k == 0 else pname})
                g["lanes"].append(li)
                _lane_bars(bars, li, pname, part, c, ev, max_per_lane, lod, lanes[-1]["label"], arrive)
    arrows = _cross_arrows(c, ev.core_labels, pipe_names, lane_of)
    lane_index = {lane["label"]: i for i, lane in enumerate(lanes)}
    idle = [{"lane": lane_index[f"{g['core']} {g['pipe']}"], "start": g["start"], "end": g["end"],
             "text": f"idle {(g['end'] - g['start']) * 1000:.1f} ns, waiting for {g['cause']}"
                     + (f"<br>released by {g['released_by']}" if g["released_by"] else "")}
            for g in (gaps or []) if f"{g['core']} {g['pipe']}" in lane_index]
    numbers = sorted({_core_number(ev.core_labels[i]) for i in present} - {-1})
    k0 = min((k["start_us"] for k in sim.kernels), default=0.0)
    k1 = max((k["end_us"] for k in sim.kernels), default=sim.time_us)
    pad = 0.01 * max(k1 - k0, 1e-6)
    shown = [g for g in groups if g["kind"] != "host"]
    hidden = [g for g in shown if g["hidden"]]
    out: dict[str, Any] = {
        "groups": groups, "lanes": lanes, "bars": bars, "arrows": arrows, "lod": lod, "idle": idle,
        "time_us": sim.time_us, "kernel_us": k1 - k0, "launch_us": k0,
        "range": {"kernel": [k0 - pad, k1 + pad], "full": [0.0, sim.time_us + pad]},
        "cores_shown": numbers if cores is None else numbers[:cores], "cores_total": len(numbers),
        "legend": _legend(bars, bool(arrows), bool(idle)),
        "hidden": {"groups": len(hidden), "cores": sum(g["count"] for g in hidden)},
        "rank": [gi for gi in ranked if gi in keep],  # the groups drawn, the ones that set the time first
        "alike": alike if any(not g["exact"] for g in groups) else None,
        "title": _title(sim, shown, arrows, lod), "unfused": None,
        "stages": _stage_strip(sim, groups),
    }
    if unfused is not None:
        out["unfused"] = _plan_lanes(unfused)
    return out


def _stage_strip(sim: Any, groups: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The stage strip (views/stages.py) of the first cube core and the first vector core drawn; None for
    kernels without stages."""
    if not sim.events.instr_stage:
        return None
    cores = [next((g["drawn"] for g in groups if g["kind"] == kind and not g["hidden"]), None)
             for kind in ("cubecore", "veccore")]
    return stage_data(sim, [c for c in cores if c is not None])


TITLE_NAMES = 3  # the fused title names at most this many kernels


def _title(sim: Any, groups: list[dict[str, Any]], arrows: list, lod: dict) -> str:
    """What the fused figure draws, in one line (arrows and merged spans only when there are some); a plan of
    more than TITLE_NAMES kernels is counted, not named (20 names do not fit a title; the lanes' hover and
    "zoom to kernel" name them)."""
    n = len(sim.kernels)
    names = (", ".join(k["name"] for k in sim.kernels) if n <= TITLE_NAMES else f"plan of {n} kernels")
    ncores = sum(g["count"] for g in groups)
    folded = [g for g in groups if g["count"] > 1 and not g["expanded"]]
    how = (" (alike folded)" if any(not g["exact"] for g in folded) else " (identical cores folded)"
           if folded else "")
    text = f"fused {names}: {ncores} cores in {len(groups)} lane group{'s' if len(groups) != 1 else ''}{how}"
    hidden = sum(g["hidden"] for g in groups)
    if hidden:
        text += f", {len(groups) - hidden} drawn"
    if arrows:
        text += f"; red arrows: {len(arrows)} cross-core flag{'s' if len(arrows) != 1 else ''}"
    if lod:
        text += f"; {len(lod)} lane(s) merged into spans (full detail in the trace)"
    return text


def _legend(bars: dict[str, list], arrows: bool, idle: bool) -> dict[str, Any]:
    """The pipes drawn (colour, and the pong shade where a pong slot is drawn) and the marks used."""
    pipes = set(bars["pipe"])
    pong = {p for p, col in zip(bars["pipe"], bars["color"], strict=True) if col != LANE_COLORS.get(p, col)}
    order = [p for p in LANE_ORDER if p in pipes] + sorted(pipes - set(LANE_ORDER))
    return {"pipes": [{"pipe": p, "color": LANE_COLORS.get(p, "#adb5bd"),
                       "pong": shade(LANE_COLORS.get(p, "#adb5bd"), PONG) if p in pong else None} for p in order],
            "waits": any(bars["wait"]), "arrows": arrows, "idle": IDLE if idle else None,
            "launch": LAUNCH_GAP if "LAUNCH" in pipes else None}


def _lane_bars(bars: dict, li: int, pname: str, sel: np.ndarray, c: dict, ev: Any, cap: int,
               lod: dict, lane_label: str, arrive: dict[int, float]) -> None:
    instr_text, why_text, stage = ev.instr_text, ev.why_text, ev.instr_stage
    color = LANE_COLORS.get(pname, "#adb5bd")
    wait = pname == "FLOWCTRL"
    start, end = c["start_us"][sel], c["end_us"][sel]
    if len(sel) > cap:
        s, e, b, n = _merge(start, end, c["bytes"][sel], cap)
        lod[lane_label] = int(len(sel))
        for i in range(len(s)):
            bars["lane"].append(li)
            bars["start"].append(float(s[i]))
            bars["end"].append(float(e[i]))
            bars["color"].append(color)
            bars["pipe"].append(pname)
            bars["wait"].append(wait)
            bars["text"].append(f"{n[i]} instructions merged (zoom in the Chrome trace for detail)<br>"
                                f"{s[i]:.3f} - {e[i]:.3f} us, {int(b[i]):,} B")
        return
    # plain Python values: indexing numpy arrays element by element is what makes a lane slow
    n = len(sel)
    col = lambda name, fill: c[name][sel].tolist() if name in c else [fill] * n  # noqa: E731
    starts, ends, slots = start.tolist(), end.tolist(), col("slot", -1)
    instrs, tiles, inners = col("instr", 0), col("tile", -1), col("inner", -1)
    nbytes, flops, whys = col("bytes", 0), col("flops", 0), col("why", -1)
    drawn = [arrive.get(i, st) for i, st in zip(sel.tolist(), starts, strict=True)]
    pong = shade(color, PONG)
    bars["lane"].extend([li] * n)
    bars["start"].extend(drawn)
    bars["end"].extend(ends)
    bars["pipe"].extend([pname] * n)
    bars["wait"].extend([wait] * n)
    bars["color"].extend([pong if slot == 1 else color for slot in slots])
    # the columns are integer arrays: tolist() gives Python ints, and the text is one string per bar
    nwhy = len(why_text)
    bars["text"].extend([
        (f"{instr_text[ins]}<br>arrived {dr:.3f} us (its last work ended), released {en:.3f} us: "
         f"waited {(en - dr) * 1000:.1f} ns<br>its scalar reached the barrier at {st:.3f} us"
         if dr != st else f"{instr_text[ins]}<br>{st:.3f} - {en:.3f} us ({(en - st) * 1000:.1f} ns)")
        + (f"<br>tile {tile}, " + (f"{stage[ins]} of block {inner}" if stage and stage[ins] else f"inner {inner}")
           + ("" if slot < 0 else ", slot pong" if slot == 1 else ", slot ping") if tile >= 0 else "")
        + (f"<br>{b:,} B" if b else "") + (f"<br>{fl:,} flops" if fl else "")
        + (f"<br>started after: {why_text[w]}" if 0 <= w < nwhy else "")
        for st, dr, en, slot, ins, tile, inner, b, fl, w in zip(starts, drawn, ends, slots, instrs, tiles, inners,
                                                                 nbytes, flops, whys, strict=True)])


def _cross_arrows(c: dict, core_labels: tuple, pipe_names: list, lane_of: dict) -> list[dict[str, Any]]:
    """An arrow for every cross-core wait that stalled: from the partner's instruction that ended at
    the release time (the set's pipe) to the waiting core's FLOWCTRL lane."""
    arrows: list[dict[str, Any]] = []
    if "FLOWCTRL" not in pipe_names:
        return arrows
    flow = pipe_names.index("FLOWCTRL")
    waits = np.flatnonzero(c["pipe"] == flow)
    for w in waits:
        ci = int(c["core"][w])
        if (ci, flow) not in lane_of:
            continue
        t = float(c["end_us"][w])
        num = _core_number(core_labels[ci])
        partners = [i for i, lab in enumerate(core_labels) if i != ci and _core_number(lab) == num
                    and ("cube" in lab) != ("cube" in core_labels[ci])]
        best = None
        for p in partners:
            hit = np.flatnonzero((c["core"] == p) & (np.abs(c["end_us"] - t) < 1e-9) & (c["pipe"] != flow))
            if len(hit):
                best = int(hit[-1])
                break
        if best is None:
            continue
        key = (int(c["core"][best]), int(c["pipe"][best]))
        if key not in lane_of:
            continue
        arrows.append({"t": t, "from_lane": lane_of[key], "to_lane": lane_of[(ci, flow)],
                       "text": f"cross-core flag: {core_labels[key[0]]} {pipe_names[key[1]]} -> "
                               f"{core_labels[ci]} at {t:.3f} us"})
    return arrows


PLAN_LANES = 8  # an unfused plan of more kernels draws them on one lane, one after another


def _plan_lanes(sim: Any) -> dict[str, Any]:
    """The unfused plan: one lane per kernel holding its launch gap (the host's, before it) and its span; a plan
    of more than PLAN_LANES kernels on one lane (they run one after another; the hover names each)."""
    c = sim.events.columns
    launches: list[tuple[float, float, str]] = []
    if "LAUNCH" in sim.events.pipes:
        li = sim.events.pipes.index("LAUNCH")
        launches = sorted((float(c["start_us"][i]), float(c["end_us"][i]), sim.events.instr_text[int(c["instr"][i])])
                          for i in np.flatnonzero(c["pipe"] == li))
    lanes, bars, gaps = [], [], []
    for i, k in enumerate(sim.kernels):
        label = f"k{i} {k['name']} ({k['family']}, {k['blocks']} blocks)"
        lanes.append({"label": label, "kernel": k["name"], "family": k["family"]})
        gap = next((g for g in launches if abs(g[1] - k["start_us"]) < 1e-9), None)
        if gap is not None:
            gaps.append({"start": gap[0], "end": gap[1], "name": gap[2]})
            bars.append({"lane": i, "start": gap[0], "end": gap[1], "color": LAUNCH_GAP, "kind": "launch",
                         "text": f"{gap[2]}: host launch gap (assumed) {gap[1] - gap[0]:.2f} us<br>"
                                 f"{gap[0]:.2f} - {gap[1]:.2f} us"})
        bars.append({"lane": i, "start": k["start_us"], "end": k["end_us"], "kind": "kernel",
                     "color": FAMILY_COLORS.get(k["family"], LANE_COLORS["SCALAR"]),
                     "text": f"unfused kernel {k['name']} ({k['family']}, {k['kernel_type']})<br>"
                             f"{k['start_us']:.2f} - {k['end_us']:.2f} us ({k['time_us']:.2f} us) on "
                             f"{k['cores']} cores"})
    launch_us = sum(g["end"] - g["start"] for g in gaps)
    n = len(sim.kernels)
    if n > PLAN_LANES:
        lanes = [{"label": f"k0-k{n - 1}, in launch order", "kernel": None, "family": None}]
        for b in bars:
            b["lane"] = 0
    title = (f"unfused plan: {n} kernel{'s' if n != 1 else ''}, {sim.time_us:.1f} us ({launch_us:.1f} us launch "
             "gaps), own time axis")
    kernels = [{"name": k["name"], "family": k["family"], "start": k["start_us"], "end": k["end_us"]}
               for k in sim.kernels]
    return {"lanes": lanes, "bars": bars, "kernels": kernels, "gaps": gaps, "time_us": sim.time_us,
            "range": [0.0, 1.01 * sim.time_us], "title": title}
