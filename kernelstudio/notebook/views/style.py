"""One colour per unit, everywhere (DAG, timeline, flow): Cube, Vector, Scalar, MTE, FixPipe."""

from __future__ import annotations

import functools

__all__ = ["FAMILY_COLORS", "HIGHLIGHT", "IDLE", "LANE_COLORS", "LANE_ORDER", "LAUNCH_GAP", "PONG", "TIER_COLORS",
           "WAIT_PATTERN", "shade"]

# msprof lane name -> colour (6-digit hex: renderers disagree on short forms)
LANE_COLORS = {
    "CUBE": "#e8590c", "VECTOR": "#1c7ed6", "SCALAR": "#868e96", "MTE1": "#2b8a3e", "MTE2": "#37b24d",
    "MTE3": "#0ca678", "FIXP": "#ae3ec9", "FLOWCTRL": "#f59f00", "LAUNCH": "#495057",
}
# lanes of one core, top to bottom, in the order data flows
LANE_ORDER = ("MTE2", "MTE1", "CUBE", "FIXP", "VECTOR", "MTE3", "SCALAR", "FLOWCTRL")
PONG = 0.55  # the pong slot of a double buffer is drawn this much lighter
IDLE = "rgba(250,82,82,0.13)"  # idle gaps on a timeline lane: faint, hoverable
WAIT_PATTERN = "/"  # a wait (barrier, cross-core flag) is hatched: the pipe waits, it does no work
HIGHLIGHT = "rgba(255,212,59,0.35)"  # the lanes of the idle-table row picked
LAUNCH_GAP = "#b6b9bc"  # the host's launch gap before a kernel: shade(LAUNCH, 0.6)
# a kernel of a plan by the units it runs on
FAMILY_COLORS = {"cube": LANE_COLORS["CUBE"], "vector": LANE_COLORS["VECTOR"], "cube_vector": LANE_COLORS["FIXP"],
                 "attention": LANE_COLORS["FIXP"]}
TIER_COLORS = {"GM": "#495057", "L2": "#868e96", "L1": "#2b8a3e", "L0A": "#e8590c", "L0B": "#f08c00",
               "L0C": "#ae3ec9", "WS": "#868e96", "UB": "#1c7ed6"}


@functools.lru_cache(maxsize=256)  # a few colours and amounts, asked for by every segment of every capacity bar
def shade(color: str, lighten: float) -> str:
    """`color` mixed with white by `lighten` (0 = unchanged, 1 = white)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * lighten) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)
