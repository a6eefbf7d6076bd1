"""One colour per unit, everywhere (DAG, timeline, flow): Cube, Vector, Scalar, MTE, FixPipe."""

from __future__ import annotations

__all__ = ["LANE_COLORS", "LANE_ORDER", "PONG", "TIER_COLORS", "shade"]

# msprof lane name -> colour (6-digit hex: renderers disagree on short forms)
LANE_COLORS = {
    "CUBE": "#e8590c", "VECTOR": "#1c7ed6", "SCALAR": "#868e96", "MTE1": "#2b8a3e", "MTE2": "#37b24d",
    "MTE3": "#0ca678", "FIXP": "#ae3ec9", "FLOWCTRL": "#f59f00", "LAUNCH": "#495057",
}
# lanes of one core, top to bottom, in the order data flows
LANE_ORDER = ("MTE2", "MTE1", "CUBE", "FIXP", "VECTOR", "MTE3", "SCALAR", "FLOWCTRL")
PONG = 0.55  # the pong slot of a double buffer is drawn this much lighter
TIER_COLORS = {"GM": "#495057", "L2": "#868e96", "L1": "#2b8a3e", "L0A": "#e8590c", "L0B": "#f08c00",
               "L0C": "#ae3ec9", "WS": "#868e96", "UB": "#1c7ed6"}


def shade(color: str, lighten: float) -> str:
    """`color` mixed with white by `lighten` (0 = unchanged, 1 = white)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * lighten) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)
