"""Metric cards and the "what changed" strip: plain numbers from a design (and the one before it)."""

from __future__ import annotations

import difflib
from typing import Any

from ...sim.results import LANES, busiest_pipe

__all__ = ["bottleneck", "code_diff_lines", "metric_cards", "what_changed"]

def bottleneck(metrics: dict[str, Any]) -> str:
    """The msprof lane name of the busiest working pipe (highest utilisation of its cores)."""
    return LANES[busiest_pipe(metrics)[0] or "MTE1"]


def metric_cards(design: Any) -> dict[str, Any]:
    """Predicted time, TFLOPS, GB/s (% of HBM), GM bytes, speedup vs unfused, roofline bound and
    efficiency, bottleneck; `speedup` is None when the design has no unfused comparison."""
    sim = design.sim
    m = sim.metrics
    un = design.unfused_sim
    cards = {
        "design": design.name, "target": sim.target, "kernels": [k["name"] for k in sim.kernels],
        "families": [k["family"] for k in sim.kernels], "kernel_types": [k["kernel_type"] for k in sim.kernels],
        "time_us": sim.time_us, "tflops": m["tflops"], "gm_gbps": m["gm_gbps"],
        "bandwidth_pct": m["bandwidth_pct"], "gm_bytes": m["gm_bytes"], "hbm_bytes": m["hbm_bytes"],
        "roofline_bound_us": m["roofline_bound_us"], "efficiency": m["efficiency"],
        "launch_overhead_us": m["launch_overhead_us"], "bottleneck": bottleneck(m),
        "l2_start": m.get("l2_start", "cold"),
        "speedup": None, "unfused_time_us": None, "unfused_gm_bytes": None,
    }
    # the cost-aware fusion choice of each matmul/conv and its epilogue, with both times (at auto tiles, not
    # at the knobs: the header says so beside the cards' time)
    choices = getattr(design.schedule, "choices", ())
    cards["fusion"] = [c.note() for c in choices]
    cards["fusion_kernels"] = [_kernel_of(design.schedule, c.root) for c in choices]
    for key in ("traffic_amplification", "l2_hit_ratio", "hbm_gbps", "roofline_limiter", "compulsory_bytes"):
        if key in m:
            cards[key] = m[key]
    if un is not None:
        cards.update(speedup=un.time_us / sim.time_us if sim.time_us else None,
                     unfused_time_us=un.time_us, unfused_gm_bytes=un.metrics["gm_bytes"])
    return cards


def _kernel_of(schedule: Any, root: Any) -> str | None:
    """The name of the kernel of `schedule` whose ops hold the node `root` (None: not found)."""
    for k in getattr(schedule, "kernels", ()):
        if any(n is root for n, _ in getattr(k, "reasons", ())):
            return k.name
    return None


def code_diff_lines(old: dict[str, str], new: dict[str, str]) -> tuple[int, int]:
    """(lines added, lines removed) over all generated files, old -> new."""
    added = removed = 0
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path, "").splitlines(), new.get(path, "").splitlines()
        if a == b:
            continue
        # the lines both keep at the top and the bottom are unchanged: diff only what lies between
        head = 0
        while head < min(len(a), len(b)) and a[head] == b[head]:
            head += 1
        tail = 0
        while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
            tail += 1
        a, b = a[head:len(a) - tail], b[head:len(b) - tail]
        if not a or not b:  # only lines added, or only removed: nothing to match
            added, removed = added + len(b), removed + len(a)
            continue
        # the lines a unified diff marks + and -: those of the matcher's non-equal runs (no diff text built)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
            if tag != "equal":
                added += j2 - j1
                removed += i2 - i1
    return added, removed


def what_changed(prev: Any | None, cur: Any, prev_files: dict[str, str] | None = None,
                 cur_files: dict[str, str] | None = None) -> dict[str, Any] | None:
    """Knob moves, delta time, delta GM bytes, bottleneck before -> after, code lines changed;
    None for the first design."""
    if prev is None:
        return None
    knobs = {k: (prev.knobs.get(k), v) for k, v in cur.knobs.items() if prev.knobs.get(k) != v}
    if prev.target != cur.target:
        knobs["target"] = (prev.target, cur.target)
    added, removed = code_diff_lines(prev_files or {}, cur_files or {})
    return {
        "knobs": knobs,
        "hardware": _hardware_changed(prev, cur),
        "schedule": _schedule_changed(prev, cur) if not knobs else ([], []),
        "d_time_us": cur.sim.time_us - prev.sim.time_us,
        "d_gm_bytes": cur.sim.metrics["gm_bytes"] - prev.sim.metrics["gm_bytes"],
        "bottleneck": (bottleneck(prev.sim.metrics), bottleneck(cur.sim.metrics)),
        "code_lines": (added, removed),
    }


def _hardware_changed(prev: Any, cur: Any) -> dict[str, tuple[Any, Any]]:
    """Profile fields that differ between the two designs' programs on the same chip (a what-if moved)."""
    from ...hw.profile import SPEC_FIELDS

    a, b = getattr(prev.program, "profile", None), getattr(cur.program, "profile", None)
    if a is None or b is None or a.name != b.name or a == b:
        return {}
    return {f: (getattr(a, f), getattr(b, f)) for f in SPEC_FIELDS if getattr(a, f) != getattr(b, f)}


def _schedule_changed(prev: Any, cur: Any) -> tuple[list[str], list[str]]:
    """Directives added and removed with no knob moved (advice applied or cleared), as Stage calls."""
    from ...plan.advise_rules import move_text

    was, now = list(prev.schedule.directives), list(cur.schedule.directives)
    out_was, out_now = ({s.graph.names[n] for n in getattr(s, "keep_out", ())} for s in (prev.schedule, cur.schedule))
    return ([move_text((), (n,)) for n in sorted(out_now - out_was)] + [move_text((d,)) for d in now if d not in was],
            [move_text((), (n,)) for n in sorted(out_was - out_now)] + [move_text((d,)) for d in was if d not in now])
