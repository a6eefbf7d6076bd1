"""Roofline: the plan(s) as points under the profile's compute roof and HBM bandwidth roof, with the roofs'
values, sources and the ridge point as on-figure labels and log ticks that carry their magnitude."""

from __future__ import annotations

import math
from typing import Any

from ...hw import get as get_profile

__all__ = ["log_ticks", "roofline_data", "run_roofline"]


def _point(label: str, flops: float, nbytes: float, time_us: float) -> dict[str, Any]:
    """x = flops per compulsory GM byte (the algorithm's intensity), y = achieved TFLOPS."""
    secs = time_us * 1e-6
    return {"label": label, "flops": flops, "bytes": nbytes, "time_us": time_us,
            "intensity": flops / nbytes if nbytes else 0.0,
            "tflops": flops / secs / 1e12 if secs else 0.0}


def _tick_text(v: float) -> str:
    """A decade as a reader writes it: 0.01, 0.1, 1, 10, 100, 1k, 10k, 1M."""
    for div, unit in ((1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{unit}"
    return f"{v:g}"


def log_ticks(lo: float, hi: float) -> dict[str, list]:
    """One tick per decade covering [lo, hi] (both > 0), labelled with its magnitude."""
    vals = [10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
    return {"vals": vals, "text": [_tick_text(v) for v in vals]}


def _source_word(source: str) -> str:
    """The kind of a profile source ("assumed", "derived", "ini", ...), as the figure's labels show it."""
    head = source.split(":", 1)[0].strip()
    return head.strip("[]") if head else "unknown"


def roofline_data(design: Any) -> dict[str, Any]:
    """Roofs (peak TFLOPS of the cube for the design's dtype, HBM GB/s) and one point per plan and kernel:
    x = flops per compulsory GM byte (each input read once, each output written once), y = achieved TFLOPS;
    `bound_us`/`limiter` are the simulator's true roofline. Also what the figure draws: the roof polyline,
    the axis ranges (log10) and ticks, and the labels of the peak, the bandwidth and the ridge."""
    prof = getattr(design.program, "profile", None) or get_profile(design.sim.target)  # a what-if's own profile
    return run_roofline(design.sim, prof, _cube_dtype(design), unfused=design.unfused_sim)


def run_roofline(sim: Any, prof: Any, dtype: str = "float16", *, unfused: Any = None) -> dict[str, Any]:
    """`roofline_data` of one simulation (and its unfused plan's) on `prof`, the cube roof for `dtype`: also
    for a run with no design, such as a user's own kernel traced on the twin."""
    m = sim.metrics
    points = [_point("fused plan", m["flops"], m.get("compulsory_bytes", m["gm_bytes"]), sim.time_us)]
    for k in sim.kernels:
        if len(sim.kernels) > 1:
            points.append(_point(f"kernel {k['name']}", k["cube_flops"],
                                 k.get("compulsory_bytes", k["hbm_bytes"] + k["l2_bytes"]), k["time_us"]))
    if unfused is not None:
        u = unfused
        points.append(_point("unfused plan", u.metrics["flops"], u.metrics.get("compulsory_bytes",
                                                                                  u.metrics["gm_bytes"]), u.time_us))
    peak = prof.peak_flops(dtype) / 1e12
    bw = prof.hbm_bytes_per_s
    ridge = peak * 1e12 / bw
    hbm_source = prof.source("hbm_bytes_per_s")
    peak_source = (f"derived: {prof.aic_cores} AIC cores x {prof.cube_macs_per_cycle} MAC/cycle x 2 x "
                   f"{prof.clock_mhz:g} MHz x {dtype} rate ({prof.source('cube_macs_per_cycle')}; "
                   f"{prof.source('clock_mhz')}; {prof.source('aic_cores')})")
    xs = [p["intensity"] for p in points if p["intensity"] > 0] or [ridge]
    x_lo, x_hi = min(min(xs) / 4, ridge / 100), max(max(xs) * 4, ridge * 10)
    roof = {"x": [x_lo, ridge, x_hi], "y": [x_lo * bw / 1e12, peak, peak]}
    ys = [p["tflops"] for p in points if p["tflops"] > 0] + roof["y"]
    y_lo, y_hi = min(ys) / 3, peak * 3
    peak_label = f"{dtype} cube peak {peak:,.1f} TFLOPS"
    hbm_label = f"HBM {bw / 1e9:,.0f} GB/s ({_source_word(hbm_source)})"
    ridge_label = f"ridge {ridge:,.0f} FLOP/B"
    # the bandwidth label sits on the slope a quarter of the way (in log x) from the left edge to the ridge
    x_bw = 10 ** (math.log10(x_lo) + 0.25 * (math.log10(ridge) - math.log10(x_lo)))
    def label(text: str, x: float, y: float, xanchor: str, yanchor: str, hover: str) -> dict[str, Any]:
        # plotly places annotations on a log axis by the log10 of the value
        return {"text": text, "x": x, "y": y, "x_log10": math.log10(x), "y_log10": math.log10(y),
                "xanchor": xanchor, "yanchor": yanchor, "hover": hover}

    labels = {
        # above the roof, ending at the ridge: left of it the slope runs below, so the text has room
        "peak": label(peak_label, ridge, peak, "right", "bottom", f"{peak_label}: {peak_source}"),
        "hbm": label(hbm_label, x_bw, x_bw * bw / 1e12, "left", "top", f"{hbm_label}: {hbm_source}"),
        "ridge": label(ridge_label, ridge, peak, "left", "top", f"{ridge_label}: below this intensity the HBM "
                       "bandwidth bounds the throughput, above it the cube's peak"),
    }
    return {"peak_tflops": peak, "peak_dtype": dtype, "hbm_bytes_per_s": bw, "ridge": ridge,
            "hbm_source": hbm_source, "peak_source": peak_source, "points": points,
            "bound_us": m["roofline_bound_us"], "limiter": m.get("roofline_limiter", ""),
            "efficiency": m["efficiency"], "roof": roof, "labels": labels,
            "ridge_line": {"x": [ridge, ridge], "y": [y_lo, peak]},
            "x_range": [math.log10(x_lo), math.log10(x_hi)], "y_range": [math.log10(y_lo), math.log10(y_hi)],
            "x_ticks": log_ticks(x_lo, x_hi), "y_ticks": log_ticks(y_lo, y_hi),
            "x_title": "arithmetic intensity (FLOP/byte, compulsory GM bytes)", "y_title": "TFLOPS"}


def _cube_dtype(design: Any) -> str:
    for k in design.schedule.kernels:
        if k.root is not None:
            return k.root.inputs[0].dtype
    return "float16"
