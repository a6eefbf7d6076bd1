"""Roofline: the plan(s) as points under the profile's compute roof and HBM bandwidth roof."""

from __future__ import annotations

from typing import Any

from ...hw import get as get_profile

__all__ = ["roofline_data"]


def _point(label: str, flops: float, nbytes: float, time_us: float) -> dict[str, Any]:
    """x = flops per compulsory GM byte (the algorithm's intensity), y = achieved TFLOPS."""
    secs = time_us * 1e-6
    return {"label": label, "flops": flops, "bytes": nbytes, "time_us": time_us,
            "intensity": flops / nbytes if nbytes else 0.0,
            "tflops": flops / secs / 1e12 if secs else 0.0}


def roofline_data(design: Any) -> dict[str, Any]:
    """Roofs (peak TFLOPS of the cube for the design's dtype, HBM GB/s) and one point per plan and kernel:
    x = flops per compulsory GM byte (each input read once, each output written once), y = achieved TFLOPS;
    `bound_us`/`limiter` are the simulator's true roofline."""
    sim = design.sim
    prof = get_profile(sim.target)
    dtype = _cube_dtype(design)
    m = sim.metrics
    points = [_point("fused plan", m["flops"], m.get("compulsory_bytes", m["gm_bytes"]), sim.time_us)]
    for k in sim.kernels:
        if len(sim.kernels) > 1:
            points.append(_point(f"kernel {k['name']}", k["cube_flops"],
                                 k.get("compulsory_bytes", k["hbm_bytes"] + k["l2_bytes"]), k["time_us"]))
    if design.unfused_sim is not None:
        u = design.unfused_sim
        points.append(_point("unfused plan", u.metrics["flops"], u.metrics.get("compulsory_bytes",
                                                                                  u.metrics["gm_bytes"]), u.time_us))
    peak = prof.peak_flops(dtype) / 1e12
    bw = prof.hbm_bytes_per_s
    return {"peak_tflops": peak, "peak_dtype": dtype, "hbm_bytes_per_s": bw, "ridge": peak * 1e12 / bw,
            "hbm_source": prof.source("hbm_bytes_per_s"), "points": points,
            "bound_us": m["roofline_bound_us"], "limiter": m.get("roofline_limiter", ""),
            "efficiency": m["efficiency"]}


def _cube_dtype(design: Any) -> str:
    for k in design.schedule.kernels:
        if k.root is not None:
            return k.root.inputs[0].dtype
    return "float16"
