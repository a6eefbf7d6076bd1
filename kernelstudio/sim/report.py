"""The CV-fusion article's comparison table, from two simulations: fused vs unfused."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tileir.program import Program
    from .results import SimResult

__all__ = ["report_table", "comparison"]


def comparison(fused: SimResult, unfused: SimResult) -> dict[str, float]:
    """The numbers behind the table (plain dict for views)."""
    f, u = fused.metrics, unfused.metrics
    saved = u["gm_bytes"] - f["gm_bytes"]
    # device time: the simulated time with the (assumed) launch gaps between kernels taken out, so a
    # speedup can be read without resting on the launch constant
    fdev = fused.time_us - f["launch_overhead_us"]
    udev = unfused.time_us - u["launch_overhead_us"]
    return {
        "fused_time_us": fused.time_us, "unfused_time_us": unfused.time_us,
        "speedup": unfused.time_us / fused.time_us if fused.time_us else 0.0,
        "fused_tflops": f["tflops"], "unfused_tflops": u["tflops"],
        "fused_bandwidth_pct": f["bandwidth_pct"], "unfused_bandwidth_pct": u["bandwidth_pct"],
        "fused_device_us": fdev, "unfused_device_us": udev,
        "device_speedup": udev / fdev if fdev > 0 else 0.0,
        "fused_launch_us": f["launch_overhead_us"], "unfused_launch_us": u["launch_overhead_us"],
        "fused_gm_bytes": f["gm_bytes"], "unfused_gm_bytes": u["gm_bytes"],
        "gm_bytes_saved": saved,
        "gm_share_removed": saved / u["gm_bytes"] if u["gm_bytes"] else 0.0,
        "fused_efficiency": f["efficiency"], "unfused_efficiency": u["efficiency"],
        "fused_roofline_us": f["roofline_bound_us"], "unfused_roofline_us": u["roofline_bound_us"],
        "fused_amplification": f["traffic_amplification"], "unfused_amplification": u["traffic_amplification"],
    }


def report_table(fused: SimResult, unfused: SimResult, prog_fused: Program, prog_unfused: Program) -> str:
    """Time, TFLOPS, bandwidth utilisation, launch overhead, GM traffic and speedup, side by side."""
    c = comparison(fused, unfused)
    rows = [
        ("kernels", f"{len(prog_fused.kernels)}", f"{len(prog_unfused.kernels)}", ""),
        ("time (us)", f"{c['fused_time_us']:.2f}", f"{c['unfused_time_us']:.2f}",
         _speed(c["speedup"])),
        ("device time, launch gaps aside (us)", f"{c['fused_device_us']:.2f}", f"{c['unfused_device_us']:.2f}",
         _speed(c["device_speedup"])),
        ("compute (TFLOPS)", f"{c['fused_tflops']:.2f}", f"{c['unfused_tflops']:.2f}",
         _pct(c["fused_tflops"], c["unfused_tflops"])),
        ("bandwidth utilisation", f"{c['fused_bandwidth_pct']:.1f}%", f"{c['unfused_bandwidth_pct']:.1f}%",
         ""),
        ("launch overhead (us)", f"{c['fused_launch_us']:.1f}", f"{c['unfused_launch_us']:.1f}",
         f"{c['fused_launch_us'] - c['unfused_launch_us']:+.1f} us"),
        ("GM traffic (MB)", f"{c['fused_gm_bytes'] / 1e6:.3f}", f"{c['unfused_gm_bytes'] / 1e6:.3f}",
         _bytes_delta(c["fused_gm_bytes"], c["unfused_gm_bytes"])),
        ("  of which HBM (MB)", f"{fused.metrics['hbm_bytes'] / 1e6:.3f}",
         f"{unfused.metrics['hbm_bytes'] / 1e6:.3f}",
         _bytes_delta(fused.metrics["hbm_bytes"], unfused.metrics["hbm_bytes"])),
        ("roofline bound (us)", f"{c['fused_roofline_us']:.2f}", f"{c['unfused_roofline_us']:.2f}", ""),
        ("roofline efficiency", f"{c['fused_efficiency']:.1%}", f"{c['unfused_efficiency']:.1%}", ""),
        ("traffic amplification", f"{c['fused_amplification']:.2f}x", f"{c['unfused_amplification']:.2f}x",
         ""),
    ]
    head = ("", "fused", "unfused", "fused vs unfused")
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(4)]
    line = lambda r: "  ".join(x.ljust(w) if i == 0 else x.rjust(w)  # noqa: E731
                               for i, (x, w) in enumerate(zip(r, widths, strict=True))).rstrip()
    title = f"{prog_fused.name} on {fused.target}: fused vs unfused"
    out = [title, line(head), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    per_launch = c["fused_launch_us"] / max(1, len(prog_fused.kernels))
    prof = prog_fused.profile
    source = f" ({prof.source('launch_overhead_us')})" if prof is not None else ""
    out.append(f"speedup from fusion: {c['speedup']:.2f}x with {per_launch:g} us per launch{source}; "
               f"{c['device_speedup']:.2f}x launch gaps aside")
    return "\n".join(out)


def _speed(x: float) -> str:
    if x <= 0:
        return ""
    return f"{x:.2f}x faster" if x >= 1 else f"{1 / x:.2f}x slower"


def _bytes_delta(fused: float, unfused: float) -> str:
    """"0.262 MB less (-20.5 %)": the fused plan's bytes against the unfused plan's, one sign, one word."""
    d = fused - unfused
    if d == 0:
        return "same"
    pct = f" ({d / unfused:+.1%})" if unfused else ""
    return f"{abs(d) / 1e6:.3f} MB {'less' if d < 0 else 'more'}{pct}"


def _pct(a: float, b: float) -> str:
    return f"{(a - b) / b:+.1%}" if b else ""
