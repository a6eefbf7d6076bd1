"""Shared look of the HTML views (fonts, the byte unit a kernel engineer reads) and the figures' patch updates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["CSS", "MONO", "changed", "nbytes", "update_figure"]

CSS = ("font-family: var(--jp-ui-font-family, Helvetica, Arial, sans-serif); font-size: 12px; "
        "color: var(--jp-ui-font-color1, #212529);")
MONO = "font-family: var(--jp-code-font-family, monospace); font-size: 11.5px;"


def nbytes(n: float) -> str:
    """Bytes in the unit a kernel engineer reads (B, KB, MB, GB; powers of 1000 as msprof prints)."""
    a = abs(n)
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if a >= div:
            return f"{n / div:,.2f} {unit}"
    return f"{n:,.0f} B"



def changed(fig: Any, part: str, props: dict[str, Any]) -> dict[str, Any]:
    """The `props` of `part` (a trace index or a layout path, as the caller names it) that differ from what
    was last set through here: a figure update sends only those (plotly validates every value it is given,
    element by element, before it compares), and remembers them. Only properties the front end never
    changes (trace data, tick labels, shapes, titles) may go through here: a zoom in the browser changes
    the axis ranges behind this record's back."""
    sent = fig.__dict__.setdefault("_ks_sent", {})
    out = {}
    for name, value in props.items():
        key = (part, name)
        if key not in sent or sent[key] != value:
            out[name] = sent[key] = value
    return out


def update_figure(fig: Any, traces: dict[int, dict[str, Any]], layout: dict[str, Any] | None = None) -> None:
    """Patch a figure in one plotly update message: of `traces` (trace index -> {plotly path: value}) the
    properties that changed since the last call (`changed`), and the `layout` paths whose value differs from
    the figure's. The values are the views' plain data, set as given: plotly's per-element validation of a
    property set (most of a redraw's time) is skipped, as for the updates plotly.js sends back. Shapes and
    annotations are arrays of objects: assign those as properties instead."""
    from plotly.basedatatypes import Undefined

    per = {ti: send for ti, props in traces.items() if (send := changed(fig, ti, props))}
    order = sorted(per)
    paths = dict.fromkeys(path for ti in order for path in per[ti])
    restyle = {path: [per[ti].get(path, Undefined) for ti in order] for path in paths}
    if restyle or layout:
        with _one_message(fig):
            fig.plotly_update(restyle_data=restyle, relayout_data=layout or {}, trace_indexes=order or None)


@contextmanager
def _one_message(fig: Any) -> Iterator[None]:
    """Plotly's update inside sent to the front end as one comm message instead of four: the two edit ids and the
    update message held and sent together, and the reset of the update trait to None (which the front end
    ignores) not sent. A figure outside a widget front end (no `hold_sync`) updates as plotly does."""
    if not hasattr(fig, "hold_sync") or not hasattr(fig, "_py2js_update"):
        yield
        return
    sent: list[Any] = []

    def keep(change: dict[str, Any]) -> None:
        if change["new"] is not None:
            sent.append(change["new"])

    fig.observe(keep, names="_py2js_update")
    try:
        with fig.hold_sync():  # the ids and the update trait collected, sent once at the end
            yield
            if sent:  # plotly reset it to None: the message is what the front end is sent
                fig._py2js_update = sent[-1]
    finally:
        fig.unobserve(keep, names="_py2js_update")
    if not sent:
        return
    prev = fig._property_lock
    fig._property_lock = {**prev, "_py2js_update": None}  # the reset: kept in Python, not sent
    try:
        fig._py2js_update = None
    finally:
        fig._property_lock = prev
