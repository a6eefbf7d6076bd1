"""Why a unit idles: every gap on a working pipe, what it waited on, and which instruction released it.

The simulator records for each instruction what held its start back (`why`: a queue slot not yet
freed, a DeQue whose EnQue had not fired, a set/wait or cross-core flag, the scalar issuing late).
A gap before an instruction on its pipe is charged to that cause; the instruction that released it
is the one that ended exactly when the gap ended (on the same AI core: its cube core or vector cores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...sim.results import LANES
from .timeline import _core_number

__all__ = ["idle_breakdown", "idle_gaps"]

_WORK = ("MTE1", "MTE2", "MTE3", "CUBE", "VECTOR", "FIXP")
_TAIL = "nothing left to do (the pipe finished its work)"
_TOL = 1e-9
_FLAG = "(its set had not arrived)"  # how the simulator words flag waits


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
    ends_by_core: dict[int, tuple[np.ndarray, np.ndarray]] = {}
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
    for sel in np.split(idx, cuts) if len(idx) else []:
        i0 = sel[0]
        k, ci, pname = sim.kernels[int(kern[i0])], int(core[i0]), pipes[int(pipe[i0])]
        label = labels[ci]
        st, en = start[sel], end[sel]
        prev_end = np.concatenate(([k["start_us"]], np.maximum.accumulate(en)[:-1]))
        for j in np.flatnonzero(st - prev_end > min_us).tolist():
            i = sel[j]
            w = int(whys[i]) if whys is not None else -1
            cause = why_text[w] if 0 <= w < len(why_text) else "its pipe's earlier work"
            flag = cause.endswith(_FLAG)
            t = float(st[j])
            gaps.append({"kernel": k["name"], "core": label, "pipe": pname, "start": float(prev_end[j]),
                         "end": t, "cause": cause,
                         "released_by": _releaser(c, labels, pipes, ev.instr_text, flow, ci, t, flag, ends_by_core),
                         "next": ev.instr_text[int(c["instr"][i])]})
        last = float(en.max())
        if k["end_us"] - last > min_us:
            gaps.append({"kernel": k["name"], "core": label, "pipe": pname, "start": last,
                         "end": k["end_us"], "cause": _TAIL, "released_by": "", "next": ""})
    return gaps


def _releaser(c: dict, labels: tuple, pipes: list, texts: tuple, flow: int, ci: int, t: float,
              flag: bool, cache: dict) -> str:
    """The instruction that let the waiting one start at `t`: on the same core for a queue wait; for a
    flag wait, on the other cores of the AI core, at the end of this core's last flag wait."""
    num = _core_number(labels[ci])
    if flag and flow >= 0:
        w = np.flatnonzero((c["core"] == ci) & (c["pipe"] == flow) & (c["end_us"] <= t + _TOL))
        if not len(w):
            return ""
        t = float(c["end_us"][w].max())
        cores = [i for i, lab in enumerate(labels) if _core_number(lab) == num and i != ci]
    else:
        cores = [ci]
    for cj in cores:
        if cj not in cache:
            idx = np.flatnonzero((c["core"] == cj) & (c["pipe"] != flow))
            idx = idx[np.argsort(c["end_us"][idx], kind="stable")]
            cache[cj] = (c["end_us"][idx], idx)
        ends, idx = cache[cj]
        lo, hi = np.searchsorted(ends, t - _TOL), np.searchsorted(ends, t + _TOL)
        for i in idx[lo:hi][::-1]:
            p = pipes[int(c["pipe"][i])]
            if p not in ("SCALAR", "LAUNCH"):
                return f"{labels[cj]} {p}: {texts[int(c['instr'][i])]}"
    return ""


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
            causes.append({"cause": cause + (f" - released by {top}" if top else ""), "us": us,
                           "pct": 100.0 * us / r["span_us"] if r["span_us"] else 0.0})
        causes.sort(key=lambda x: -x["us"])
        out.append({"core": r["core"], "pipe": r["pipe"], "idle_us": r["idle_us"],
                    "idle_pct": 100.0 * r["idle_us"] / r["span_us"] if r["span_us"] else 0.0, "causes": causes})
    out.sort(key=lambda r: (r["core"], r["pipe"]))
    return out
