"""The header strips: metric cards, the "what changed" strip, capacity bars and the error banner."""

from __future__ import annotations

import html
from typing import Any

from ..views.style import TIER_COLORS, shade
from .base import CSS as _CSS
from .base import MONO as _MONO
from .base import nbytes as _b
from .load import imbalance_card

__all__ = ["banner_html", "capacity_html", "cards_html", "changed_html", "header_html", "plan_html"]


def _card(value: str, label: str, title: str = "") -> str:
    return (f'<div class="ks-card" title="{html.escape(title)}" style="display:inline-block; margin:2px 14px 2px 0;">'
            f'<div style="font-size:17px; font-weight:600;">{value}</div>'
            f'<div style="font-size:10.5px; color:#868e96;">{label}</div></div>')


def header_html(cards: dict[str, Any]) -> str:
    """The title line: the design's name, target and kernels (the Tune and trace buttons sit beside it); the
    kernels' kinds in order of first launch, each counted when there are several (21 kernels read as three
    kinds, not as 21 entries)."""
    kinds: dict[str, int] = {}
    for f, t in zip(cards["families"], cards["kernel_types"], strict=True):
        kinds[f"{f} ({t})"] = kinds.get(f"{f} ({t})", 0) + 1
    fam = ", ".join(kind if c == 1 else f"{c} {kind}" for kind, c in kinds.items())
    n = len(cards["kernels"])
    return (f'<div class="ks-header" style="{_CSS}"><b style="font-size:14px;">{html.escape(cards["design"])}</b>'
            f' &middot; {html.escape(cards["target"])} &middot; {n} kernel{"s" if n != 1 else ""}: '
            f'{html.escape(fam)}</div>')


def plan_html(cards: dict[str, Any]) -> str:
    """Each fusion choice with the schedule its times are for (auto tiles, whatever the knobs say), beside
    the time the cards give for the knobs as set; empty for a design without a matmul/conv epilogue."""
    notes = cards.get("fusion", ())
    if not notes:
        return ""
    n = len(cards["kernels"])
    names = list(cards.get("fusion_kernels") or [None] * len(notes))
    if n <= 1 or not any(names):  # one kernel: its time is the cards' time
        lines = "".join(f'<div>fusion, chosen at the auto schedule: {html.escape(note)}</div>' for note in notes)
        return (f'<div class="ks-plan" style="{_CSS} color:#555;">{lines}<div style="color:#868e96;">those times '
                f'are for auto tiles; the cards below are for the knobs as set: {cards["time_us"]:,.2f} us</div></div>')
    # a plan of several kernels: each time is one kernel's, named, beside the whole plan's
    lines = "".join(f'<div>fusion of kernel <b>{html.escape(k or "?")}</b>, chosen at the auto schedule: '
                    f'{html.escape(note)}</div>' for k, note in zip(names, notes, strict=True))
    that = "that kernel alone" if len(notes) == 1 else "those kernels alone"
    return (f'<div class="ks-plan" style="{_CSS} color:#555;">{lines}<div style="color:#868e96;">those times are '
            f'for {that}, at auto tiles; the cards below are for the whole plan of {n} kernels, knobs as set: '
            f'{cards["time_us"]:,.2f} us</div></div>')


_L2_START = {
    "cold": "L2 cold: the run starts with nothing in L2, so each input's first read comes from HBM "
            "(ks.simulate(prog, l2='warm') times a benchmark loop that reuses its inputs)",
    "warm": "L2 warm: the run starts with L2 as the previous run of the same program left it, as a benchmark "
            "loop that reuses its inputs measures",
}


def cards_html(cards: dict[str, Any]) -> str:
    """The metric cards: time, TFLOPS, GB/s (% HBM), GM bytes, speedup, roofline bound and efficiency."""
    parts = [
        _card(f"{cards['time_us']:,.2f} us", f"predicted time, knobs as set, L2 {cards['l2_start']}",
              f"the schedule of the controls above; launch overhead {cards['launch_overhead_us']:.1f} us "
              "(profile field launch_overhead_us); " + _L2_START[cards["l2_start"]]),
        _card(f"{cards['tflops']:,.2f}", "TFLOPS (cube)"),
        _card(f"{cards.get('hbm_gbps', cards['gm_gbps']):,.0f} GB/s",
              f"HBM ({cards['bandwidth_pct']:.1f} % of peak), GM {cards['gm_gbps']:,.0f} GB/s",
              "HBM: bytes that missed L2; GM: every byte moved to or from global memory (L2 hits included)"),
        _card(_b(cards["gm_bytes"]), f"GM traffic (HBM {_b(cards['hbm_bytes'])})"),
    ]
    if cards["speedup"] is not None:
        parts.append(_card(f"{cards['speedup']:.2f}x", "vs unfused",
                           f"unfused plan {cards['unfused_time_us']:,.2f} us, {_b(cards['unfused_gm_bytes'])} GM"))
    card = imbalance_card(cards.get("moe"))
    if card is not None:
        parts.append(_card(card["value"], card["label"], card["title"]))
    limiter = f" ({cards['roofline_limiter']})" if "roofline_limiter" in cards else ""
    parts.append(_card(f"{cards['roofline_bound_us']:,.2f} us", f"roofline bound{limiter}",
                       "max(cube flops / cube peak, vector work / vector peak, compulsory bytes / HBM bandwidth)"))
    parts.append(_card(f"{cards['efficiency']:.1%}", "of roofline"))
    if "traffic_amplification" in cards:
        parts.append(_card(f"{cards['traffic_amplification']:.2f}x", "traffic amplification"))
    if "l2_hit_ratio" in cards:
        parts.append(_card(f"{cards['l2_hit_ratio']:.0%}", "L2 hit ratio"))
    parts.append(_card(cards["bottleneck"], "busiest pipe"))
    return f'<div class="ks-cards" style="{_CSS}">{"".join(parts)}</div>'


def changed_html(ch: dict[str, Any] | None) -> str:
    """The "what changed" strip after a knob move."""
    if ch is None:
        return f'<div class="ks-changed" style="{_CSS} color:#868e96;">move a control to see what it changes</div>'
    moved = [f"{k} {html.escape(str(a))} &rarr; {html.escape(str(b))}" for k, (a, b) in ch["knobs"].items()]
    moved += [f"{f} {_hw(a)} &rarr; {_hw(b)}" for f, (a, b) in ch.get("hardware", {}).items()]
    added, dropped = ch.get("schedule", ([], []))
    moved += [f"+ <code>{html.escape(t)}</code>" for t in added] + [f"&minus; <code>{html.escape(t)}</code>"
                                                                   for t in dropped]
    knobs = ", ".join(moved)
    dt, db = ch["d_time_us"], ch["d_gm_bytes"]
    col = "#2b8a3e" if dt < 0 else ("#c92a2a" if dt > 0 else "#495057")
    b0, b1 = ch["bottleneck"]
    neck = f"bottleneck {b0} &rarr; {b1}" if b0 != b1 else f"bottleneck {b1}"
    add, rem = ch["code_lines"]
    return (f'<div class="ks-changed" style="{_CSS}"><b>what changed:</b> {knobs or "nothing"} &nbsp;'
            f'<span style="color:{col}; font-weight:600;">{dt:+,.2f} us</span> &nbsp; {"+" if db >= 0 else "-"}'
            f'{_b(abs(db))} GM &nbsp; {neck} &nbsp; code: +{add} / -{rem} lines</div>')


def _hw(v: Any) -> str:
    """A profile value as the strip shows it: whole numbers with separators, others as they read."""
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else html.escape(f"{v:g}" if isinstance(v, float)
                                                                                       else str(v))


_BAR_PX = 260  # a bar's widest; it narrows with the Studio (every part is a share of the bar, never past it)
# label | bar | numbers, one grid for every row, so the capacity ticks line up and nothing runs past the box
_GRID = (f"display:grid; grid-template-columns:max-content minmax(80px, {_BAR_PX}px) minmax(0, max-content); "
         "column-gap:8px; row-gap:3px; align-items:center; max-width:100%;")


KERNEL_CHARS = 12  # a capacity row's kernel name, at most: a longer one ends in an ellipsis, whole in its tooltip


def _bar(bar: dict[str, Any], over: bool = False) -> str:
    """One tier's row: the slots as segments, the capacity as a tick, and past it (an overflow) a hatched
    part; the bar spans max(capacity, used), so the overflow is drawn inside the bar, not beyond it."""
    cap, used = bar["capacity"] or 1, bar["used"]
    full = max(cap, used, sum(s["bytes"] for s in bar["segments"]), 1)
    segs = []
    palette = TIER_COLORS.get(bar["tier"], "#868e96")
    for i, s in enumerate(bar["segments"]):
        color = shade(palette, 0.45) if s["slot"] == 1 else shade(palette, 0.1 if i % 2 else 0.0)
        tip = (f"{s['buffer']} slot {s['slot'] + 1}/{s['depth']} ({s['queue']}): {s['bytes']:,} B"
               + (f" - {s['purpose']}" if s["purpose"] else ""))
        segs.append(f'<div title="{html.escape(tip)}" style="flex:0 0 {100 * s["bytes"] / full:.2f}%; '
                    f'min-width:1px; height:100%; background:{color}; box-shadow:inset -1px 0 #ffffff;"></div>')
    cap_pct = 100 * cap / full
    tick = (f'<div title="capacity {bar["capacity"]:,} B" style="position:absolute; left:0; top:0; '
            f'width:{cap_pct:.2f}%; height:100%; box-sizing:border-box; border-right:2px solid #212529;"></div>')
    pct = bar["pct"]
    excess = ""
    if used > cap:
        excess = (f'<div title="over capacity by {used - cap:,} B" style="position:absolute; left:{cap_pct:.2f}%; '
                  f'top:0; width:{100 - cap_pct:.2f}%; height:100%; box-sizing:border-box; '
                  'border:1px solid #c92a2a; background:repeating-linear-gradient(135deg, rgba(201,42,42,0.55) 0 '
                  '3px, rgba(255,255,255,0.35) 3px 6px);"></div>')
    label_col = "#c92a2a" if over or pct > 100 else "#495057"
    unit, div = _unit(bar["capacity"] or used)
    nb = "&nbsp;"  # the numbers of a part stay on one line; a narrow box breaks only between the parts
    over_txt = f", over{nb}by{nb}{_in(used - cap, div)}{nb}{unit}" if used > cap else ""
    name = bar["kernel"] if len(bar["kernel"]) <= KERNEL_CHARS else bar["kernel"][:KERNEL_CHARS - 1] + "\u2026"
    return (f'<div class="ks-bar-row" style="display:contents;"><span style="white-space:nowrap; {_MONO}" '
            f'title="{html.escape(bar["kernel"])} {bar["tier"]}">{html.escape(name)} {bar["tier"]}</span>'
            f'<div class="ks-bar" style="position:relative; width:100%; height:10px; background:#f1f3f5; '
            f'overflow:hidden; display:flex;">{"".join(segs)}{excess}{tick}</div>'
            f'<span style="color:{label_col}; min-width:0;" title="{used:,} / '
            f'{bar["capacity"]:,} B">{pct:.0f}{nb}% ({_in(used, div)}{nb}/{nb}{_in(bar["capacity"], div)}{nb}{unit}'
            f'{over_txt})</span></div>')


def _unit(capacity: int) -> tuple[str, int]:
    """The unit a tier's numbers are given in: KiB from 1 KiB of capacity (the chip's buffers are powers of two
    of it), else bytes."""
    return ("KiB", 1024) if capacity >= 1024 else ("B", 1)


def _in(n: int, div: int) -> str:
    """`n` bytes in units of `div`: whole numbers plain, others to 0.1 (a sliver of a unit reads "<0.1")."""
    if div == 1 or n % div == 0:
        return f"{n // div:,}"
    v = n / div
    return "<0.1" if v < 0.05 else f"{v:,.1f}"


def capacity_html(bars: list[dict[str, Any]]) -> str:
    """Bytes used vs capacity per kernel and tier; each queue slot a segment (double buffering halves room)."""
    rows = "".join(_bar(b) for b in bars)
    return f'<div class="ks-capacity" style="{_CSS} {_GRID}">{rows}</div>'


def banner_html(message: str | None, overflow: dict[str, Any] | None = None) -> str:
    """The error banner over the last good views (empty when there is no error)."""
    if not message:
        return ""
    bar = f'<div style="{_GRID} margin-top:2px;">{_bar(overflow, over=True)}</div>' if overflow else ""
    return (f'<div class="ks-banner" style="{_CSS} background:#fff5f5; border:1px solid #ffa8a8; '
            f'border-radius:4px; padding:6px 8px; margin:4px 0; box-sizing:border-box; max-width:100%; '
            f'overflow:hidden; overflow-wrap:anywhere;"><b style="color:#c92a2a;">not applied:</b> '
            f'{html.escape(message)}<div style="color:#868e96;">the views below show the last good setting</div>'
            f'{bar}</div>')

