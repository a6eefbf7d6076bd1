"""`simulate(prog)`: run the engine over a program and turn cycles into a SimResult.

Kernels run one after another; each is preceded by the profile's `launch_overhead_us`, shown as a
LAUNCH event on the "host" lane, so unfused plans show their gaps."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.errors import TargetError
from ..tileir.program import Program
from .l2 import check_override, check_protocol
from .multicore import ProgramRun, core_label, kernel_cycles, run_program
from .program import PIPES, SYNC_TEXT, SYNC_WAIT
from .results import EventTable, SimResult
from .roofline import compulsory_bytes, kernel_roofline

__all__ = ["simulate", "simulate_time", "resolve_profile"]

_AIC_PIPES = {"S", "MTE1", "MTE2", "M", "FIX", "FLOW"}
_AIV_PIPES = {"S", "MTE2", "MTE3", "V", "FLOW"}


def resolve_profile(prog: Program, profile: Any = None):
    """The HardwareProfile to use: `profile` itself, a profile name, or the program's target."""
    from .. import hw

    if profile is None:
        profile = prog.profile if getattr(prog, "profile", None) is not None else prog.target
    if isinstance(profile, str):
        return hw.get(profile)
    if not hasattr(profile, "costs"):
        raise TargetError(f"profile must be a HardwareProfile or a profile name, not {type(profile).__name__}")
    return profile


def simulate(prog: Program, *, profile: Any = None, exact: bool = False,
             l2_hit_ratio: float | None = None, l2: str = "cold") -> SimResult:
    """Simulate `prog` on `profile` (default: the program's target).

    exact=True turns the shortcuts off (identical blocks simulated once, steady-state loops
    extrapolated); results agree within 1% either way, the shortcuts are just faster.
    l2_hit_ratio (0..1) replaces the L2 model for every GM read but the workspaces' (which stay in
    L2), for side-by-side comparison with tools that take a fixed cache-hit ratio.
    l2 is the measurement protocol: "cold" (default) starts with nothing in L2, "warm" with L2 as the
    previous run of the same program left it — what a benchmark loop that reuses its inputs measures
    (sim/l2.py). The result's metrics["l2_start"] says which one its times assume."""
    prog, profile, exact, l2_hit_ratio, l2 = _checked(prog, profile, exact, l2_hit_ratio, l2, "simulate")
    run = run_program(prog, profile, exact=exact, l2_hit_ratio=l2_hit_ratio, l2=l2)
    res = _result(prog, profile, run)
    res.metrics["l2_start"] = l2
    return res


def simulate_time(prog: Program, *, profile: Any = None, exact: bool = False,
                  l2_hit_ratio: float | None = None, l2: str = "cold") -> float:
    """`simulate(prog, ...).time_us`, the same float, without building the rest of the result (events, metrics,
    traffic): what a search that compares many programs by their time needs."""
    prog, profile, exact, l2_hit_ratio, l2 = _checked(prog, profile, exact, l2_hit_ratio, l2, "simulate_time")
    cycles = kernel_cycles(prog, profile, exact=exact, l2_hit_ratio=l2_hit_ratio, l2=l2)
    t = 0.0
    for c in cycles:  # as _result adds them up
        t += profile.launch_overhead_us
        t += c / profile.clock_mhz
    return t


def _checked(prog: Any, profile: Any, exact: Any, l2_hit_ratio: Any, l2: Any, caller: str) -> tuple:
    from ..core.checks import need

    prog = need(prog, Program, caller)
    if not isinstance(exact, (bool, np.bool_)):
        from ..core.errors import InputError

        raise InputError(f"{caller}: exact must be True or False, got {exact!r}")
    return prog, resolve_profile(prog, profile), exact, check_override(l2_hit_ratio), check_protocol(l2)


def _result(prog: Program, profile, run: ProgramRun) -> SimResult:
    mhz = profile.clock_mhz
    launch = profile.launch_overhead_us
    ncores = profile.aic_cores + profile.aiv_cores
    labels = tuple(core_label(profile, c) for c in range(ncores)) + ("host",)
    pipes = PIPES + ("LAUNCH",)
    texts = tuple(s.text for s in run.statics) + tuple(f"launch {k.name}" for k in prog.kernels)
    nstat = len(run.statics)
    kind = np.array([s.kind for s in run.statics] + [""], dtype=object)[:max(nstat, 1)]
    hit = np.zeros(max(nstat, 1))
    gm = np.zeros(max(nstat, 1), dtype=bool)
    reads = np.zeros(max(nstat, 1), dtype=bool)
    for sid, h in run.hits.items():
        hit[sid] = h
        gm[sid] = True
        reads[sid] = not run.statics[sid].gm_write
    pipe_of = np.array([s.pipe for s in run.statics] + [0], dtype=np.int64)[:max(nstat, 1)]
    dtypes = [s.dtype for s in run.statics]
    compulsory = compulsory_bytes(prog)
    kernels = []
    starts = []
    t = 0.0
    bound_us = 0.0
    per_sid = np.zeros((max(nstat, 1), 3))
    totals = {"hbm": 0.0, "l2": 0.0, "cube": 0.0, "flops": 0.0, "compulsory": 0.0, "read": 0.0,
              "l2_read": 0.0, "hbm_read": 0.0}
    used: set[int] = set()
    for kidx, kr in enumerate(run.kernels):
        t += launch
        starts.append(t)
        ps = kr.per_sid
        per_sid += ps
        dur = kr.cycles / mhz
        hbm = float((ps[gm, 0] * (1.0 - hit[gm])).sum())
        l2 = float((ps[gm, 0] * hit[gm]).sum())
        read = float(ps[reads, 0].sum())
        l2_read = float((ps[reads, 0] * hit[reads]).sum())
        hbm_read = read - l2_read
        cube_flops = float(ps[kind == "mmad", 1].sum())
        roof = kernel_roofline(profile, ps, kind, dtypes, compulsory[kidx], hbm)
        k_bound = roof.bound_us
        bound_us += k_bound
        totals["compulsory"] += roof.compulsory_bytes
        totals["hbm"] += hbm
        totals["l2"] += l2
        totals["read"] += read
        totals["l2_read"] += l2_read
        totals["hbm_read"] += hbm_read
        totals["cube"] += cube_flops
        totals["flops"] += float(ps[:, 1].sum())
        used.update(kr.cores_used)
        k = prog.kernels[kidx]
        kernels.append({"name": kr.name, "family": k.family, "kernel_type": k.kernel_type,
                        "start_us": t, "end_us": t + dur, "time_us": dur, "blocks": k.block_dim,
                        "cores": len(kr.cores_used), "roofline_bound_us": k_bound,
                        "roofline_limiter": roof.limiter, "compulsory_bytes": roof.compulsory_bytes,
                        "efficiency": k_bound / dur if dur else 0.0,
                        "traffic_amplification": (hbm + l2) / roof.compulsory_bytes if roof.compulsory_bytes
                        else 0.0,
                        "hbm_bytes": int(hbm), "l2_bytes": int(l2), "hbm_read_bytes": int(hbm_read),
                        "hbm_write_bytes": int(hbm - hbm_read), "l2_hit_ratio": l2_read / read if read else 0.0,
                        "cube_flops": int(cube_flops)})
        t += dur

    why_text: list[str] = []
    why_index: dict[str, int] = {}

    def intern(text: str) -> int:
        if text not in why_index:
            why_index[text] = len(why_text)
            why_text.append(text)
        return why_index[text]

    def build() -> dict[str, np.ndarray]:
        cols: dict[str, list[np.ndarray]] = {c: [] for c in (
            "start_us", "end_us", "core", "pipe", "instr", "kernel", "tile", "inner", "bytes", "flops", "slot",
            "why")}
        for kidx, kr in enumerate(run.kernels):
            t0 = starts[kidx]
            _add(cols, [t0 - launch], [t0], [ncores], [len(PIPES)], [nstat + kidx], [kidx], [-1], [-1],
                 [0], [0], [-1], [-1])
            rows, core = kr.rows(profile, run.outer_ids, intern)
            why = rows[:, 9].copy()
            for code in np.unique(why[why <= -2]):
                text = texts[int(-2 - code)]
                why[why == code] = intern(f"{text} {SYNC_WAIT if text == SYNC_TEXT else '(its set had not arrived)'}")
            _add(cols, rows[:, 0] / mhz + t0, rows[:, 1] / mhz + t0, core, rows[:, 2], rows[:, 3],
                 np.full(len(rows), kidx), rows[:, 4], rows[:, 5], rows[:, 6], rows[:, 7], rows[:, 8], why)
        columns = {k: (np.concatenate(v) if v else np.empty(0)) for k, v in cols.items()}
        for k in ("core", "pipe", "instr", "kernel", "tile", "inner", "bytes", "flops", "slot", "why"):
            columns[k] = columns[k].astype(np.int64)
        return columns

    stages = tuple(s.stage for s in run.statics) + ("",) * len(prog.kernels)
    events = EventTable(None, labels, pipes, texts, tuple(k.name for k in prog.kernels), build=build,
                        why_text=why_text, instr_stage=stages if any(stages) else ())
    traffic: dict[str, int] = {}
    for s in run.statics:
        if s.edge and per_sid[s.sid, 0]:
            traffic[s.edge] = traffic.get(s.edge, 0) + int(per_sid[s.sid, 0])
    if totals["hbm_read"] >= 0.5:
        traffic["HBM->L2"] = int(round(totals["hbm_read"]))
    if totals["hbm"] - totals["hbm_read"] >= 0.5:
        traffic["L2->HBM"] = int(round(totals["hbm"] - totals["hbm_read"]))
    busy = np.bincount(pipe_of, weights=per_sid[:, 2], minlength=len(PIPES)) / mhz
    metrics = _metrics(profile, busy, used, t, bound_us, totals, len(prog.kernels))
    metrics["roofline_limiter"] = max(kernels, key=lambda k: k["roofline_bound_us"])["roofline_limiter"] \
        if kernels else ""
    stats = {"passes": run.passes, "instructions_simulated": sum(k.simulated for k in run.kernels),
             "instructions_represented": sum(k.represented for k in run.kernels),
             "block_classes": [k.classes for k in run.kernels],
             "memory_shares": {run.statics[s].text: round(v, 3) for s, v in sorted(run.shares.items())}}
    return SimResult(prog.name, profile.name, t, events, metrics, dict(sorted(traffic.items())),
                     tuple(kernels), stats)


def _add(cols: dict, *vals) -> None:
    for key, v in zip(cols, vals, strict=True):
        cols[key].append(np.asarray(v, dtype=np.float64))


def _metrics(profile, busy: np.ndarray, used: set[int], time_us: float, bound_us: float, totals: dict,
             nkernels: int) -> dict[str, Any]:
    used_c = sum(1 for x in used if x < profile.aic_cores)
    used_v = len(used) - used_c
    pipes: dict[str, dict[str, float]] = {}
    for i, p in enumerate(PIPES):
        n = (used_c if p in _AIC_PIPES else 0) + (used_v if p in _AIV_PIPES else 0)
        b = float(busy[i])
        pipes[p] = {"busy_us": b, "utilisation": b / (n * time_us) if n and time_us else 0.0}
    gm_bytes = totals["hbm"] + totals["l2"]
    secs = time_us * 1e-6
    return {
        "time_us": time_us,
        "pipes": pipes,
        "cube_flops": int(totals["cube"]),
        "flops": int(totals["flops"]),
        "tflops": totals["cube"] / secs / 1e12 if secs else 0.0,
        "gm_bytes": int(gm_bytes),
        "hbm_bytes": int(totals["hbm"]),
        "l2_bytes": int(totals["l2"]),
        "hbm_read_bytes": int(round(totals["hbm_read"])),
        "hbm_write_bytes": int(round(totals["hbm"] - totals["hbm_read"])),
        "l2_read_bytes": int(round(totals["l2_read"])),
        "l2_hit_ratio": totals["l2_read"] / totals["read"] if totals["read"] else 0.0,
        "hbm_gbps": totals["hbm"] / secs / 1e9 if secs else 0.0,
        "gm_gbps": gm_bytes / secs / 1e9 if secs else 0.0,
        # HBM is the chip's bandwidth ceiling: L2 hits move beside it, so they do not count against it
        "bandwidth_pct": 100.0 * totals["hbm"] / secs / profile.hbm_bytes_per_s if secs else 0.0,
        "roofline_bound_us": bound_us,
        "efficiency": bound_us / time_us if time_us else 0.0,
        "compulsory_bytes": int(totals["compulsory"]),
        "traffic_amplification": gm_bytes / totals["compulsory"] if totals["compulsory"] else 0.0,
        "launch_overhead_us": nkernels * profile.launch_overhead_us,
        "cores_used": len(used),
    }
