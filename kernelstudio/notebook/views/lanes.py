"""Which lane groups a timeline draws: cores with alike work folded together, and the groups worth a look first.

A plan of many kernels deals each kernel's rows to the cores its own way, so hardly two vector cores run
exactly the same instructions (a tail row here, one more tile there): folding only identical cores leaves
one lane group per core. Two cores of one kind are *alike* when, in every kernel of the plan, each pipe's
busy time and the end of the core's last work differ by at most `ALIKE` of that kernel's span (its
start to its end). Alike groups are merged into one, drawn by its busiest core (the most busy time over
all pipes); its label counts its cores with "~" ("~x48").

`rank_groups` orders the groups for a view that draws only some: first the group holding each kernel's last
core to finish (longest kernel first: the lanes that set the time), then the busiest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["ALIKE", "MAX_GROUPS", "alike_groups", "rank_groups"]

ALIKE = 0.05  # alike: every per-kernel pipe busy time and finish within 5 % of the kernel's span
MAX_GROUPS = 8  # lane groups a timeline draws before "show more" (host launch lane not counted)
_NOT_WORK = ("SCALAR", "FLOWCTRL", "LAUNCH")


def _profiles(sim: Any, cores: list[int], of_core: dict[int, np.ndarray], pipe_names: list[str]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per core: (busy us per kernel x pipe, end of last work per kernel; both as shares of the kernel's
    span) as one flat row, its total busy us, and its end of last work per kernel (us)."""
    c = sim.events.columns
    names = list(sim.events.kernel_names)
    nk, npipe = max(len(names), 1), max(len(pipe_names), 1)
    span = np.ones(nk)
    start = np.zeros(nk)
    for k in sim.kernels:
        if k["name"] in names:
            i = names.index(k["name"])
            start[i], span[i] = k["start_us"], max(k["end_us"] - k["start_us"], 1e-9)
    work = np.array([p not in _NOT_WORK for p in pipe_names] or [True], dtype=bool)
    n = len(cores)
    if not n:
        return np.array([]), np.array([]), np.array([])
    # every core at once: its events in order (np.add.at adds in index order, as one core at a time did)
    parts = [of_core[ci] for ci in cores]
    sel = np.concatenate(parts)
    row = np.repeat(np.arange(n), [len(p) for p in parts])
    kern, pipe, ends_us = c["kernel"][sel], c["pipe"][sel], c["end_us"][sel]
    dur = ends_us - c["start_us"][sel]
    m = np.zeros((n, nk, npipe))
    np.add.at(m, (row, kern, pipe), dur)
    w = work[pipe]
    end = np.full((n, nk), -np.inf)
    np.maximum.at(end, (row[w], kern[w]), ends_us[w])
    fin = np.where(np.isfinite(end), end - start, 0.0)
    rows = np.concatenate(((m / span[:, None]).reshape(n, -1), fin / span), axis=1)
    cuts = np.cumsum([len(p) for p in parts])[:-1].tolist()
    busy = [float(d[ww].sum()) for d, ww in zip(np.split(dur, cuts), np.split(w, cuts), strict=True)]
    return rows, np.array(busy), end


def alike_groups(sim: Any, groups: list[dict[str, Any]], of_core: dict[int, np.ndarray], pipe_names: list[str],
                 sort_key: Callable[[str], Any], *, alike: float = ALIKE) -> list[dict[str, Any]]:
    """Merge `groups` (exact groups, `timeline.core_groups`, before their labels) of one kind whose cores are
    alike (module doc); each group gets `drawn` (its busiest core) and `exact` (its cores are identical).
    Members are in `sort_key` order; groups keep the display order of their first member; the host stays."""
    index = {label: i for i, label in enumerate(sim.events.core_labels)}
    reps = [g["members"][0] for g in groups]
    prof, busy, _ = _profiles(sim, [index[r] for r in reps], of_core, pipe_names)
    order = sorted(range(len(groups)), key=lambda i: -busy[i])  # the busiest group of a merge draws it
    merged: list[tuple[int, list[int]]] = []  # (the drawing group, the groups merged into it)
    for i in order:
        g = groups[i]
        for head, into in merged if g["kind"] != "host" else []:
            if groups[head]["kind"] == g["kind"] and float(np.max(np.abs(prof[i] - prof[head]), initial=0.0)) <= alike:
                into.append(i)
                break
        else:
            merged.append((i, [i]))
    out = []
    for head, into in sorted(merged, key=lambda m: min(m[1])):
        members = [m for i in sorted(into) for m in groups[i]["members"]]
        out.append({"kind": groups[head]["kind"], "members": sorted(members, key=sort_key),
                    "drawn": groups[head]["members"][0], "exact": len(into) == 1})
    return out


def rank_groups(sim: Any, groups: list[dict[str, Any]], of_core: dict[int, np.ndarray], pipe_names: list[str]
                ) -> list[int]:
    """Indices of the non-host `groups` in the order a view keeps them: each kernel's last core to finish
    (longest kernel first), then the busiest drawn cores (module doc)."""
    index = {label: i for i, label in enumerate(sim.events.core_labels)}
    idx = [i for i, g in enumerate(groups) if g["kind"] != "host"]
    if not idx:
        return []
    member_of = {m: i for i in idx for m in groups[i]["members"]}
    cores = [index[m] for m in member_of]
    _, busy, ends = _profiles(sim, cores, of_core, pipe_names)
    names = list(sim.events.kernel_names)
    out: list[int] = []
    for k in sorted(sim.kernels, key=lambda k: -(k["end_us"] - k["start_us"])):
        if k["name"] not in names or not len(cores):
            continue
        col = ends[:, names.index(k["name"])]
        if np.isfinite(col.max()):
            gi = member_of[sim.events.core_labels[cores[int(np.argmax(col))]]]
            if gi not in out:
                out.append(gi)
    busy_of = dict(zip(member_of, busy.tolist(), strict=True))
    out += sorted((i for i in idx if i not in out),
                  key=lambda i: -busy_of[groups[i].get("drawn", groups[i]["members"][0])])
    return out
