"""Memory flow: bytes per edge HBM -> GM (L2) -> L1 -> L0A/L0B -> L0C -> workspace/UB -> GM -> HBM, as
Sankey data. What leaves "GM in" beyond what HBM fed it was served by L2."""

from __future__ import annotations

from typing import Any

from .style import TIER_COLORS

__all__ = ["flow_data", "sankey_data"]

# traffic edge name -> (source node, target node); GM appears twice so the flow reads left to right
_NODES = ("HBM (reads)", "GM in", "L1", "L0A", "L0B", "L0C", "workspace", "UB", "GM out", "HBM (writes)")
_EDGE = {
    "HBM->L2": ("HBM (reads)", "GM in"), "L2->HBM": ("GM out", "HBM (writes)"),
    "GM->L1": ("GM in", "L1"), "L1->L0A": ("L1", "L0A"), "L1->L0B": ("L1", "L0B"),
    "L0C->WS": ("L0C", "workspace"), "L0C->GM": ("L0C", "GM out"), "WS->UB": ("workspace", "UB"),
    "GM->UB": ("GM in", "UB"), "UB->GM": ("UB", "GM out"), "L0C->L1": ("L0C", "L1"), "L0C->UB": ("L0C", "UB"),
    "UB->UB": ("UB", "UB"),
}
_COLOR_KEY = {"GM in": "L2", "GM out": "L2", "workspace": "WS", "HBM (reads)": "GM", "HBM (writes)": "GM"}


def sankey_data(traffic: dict[str, int], mmad_out_bytes: int = 0) -> dict[str, Any]:
    """Sankey nodes and links (bytes) for one plan's traffic; unknown edges keep their own names.

    When the plan has cube work (`mmad_out_bytes` > 0), L0A and L0B also get a "read by Mmad" link to
    L0C (the operand bytes the cube consumed; not a data move, so not in `total_bytes`)."""
    nodes: list[str] = []
    index: dict[str, int] = {}

    def node(name: str) -> int:
        if name not in index:
            index[name] = len(nodes)
            nodes.append(name)
        return index[name]

    for n in _NODES:
        node(n)
    links = []
    for edge, nbytes in traffic.items():
        if nbytes <= 0:
            continue
        src, dst = _EDGE.get(edge, tuple(edge.split("->", 1)) if "->" in edge else (edge, "?"))
        links.append({"edge": edge, "source": node(src), "target": node(dst), "bytes": int(nbytes)})
    if mmad_out_bytes > 0:
        a = traffic.get("L1->L0A", 0)
        b = traffic.get("L1->L0B", 0)
        for src, share in (("L0A", a), ("L0B", b)):
            if share and a + b:
                links.append({"edge": f"{src}->L0C (read by Mmad)", "source": node(src), "target": node("L0C"),
                              "bytes": int(share)})
    used = {x for lk in links for x in (lk["source"], lk["target"])}
    colors = [TIER_COLORS.get(_COLOR_KEY.get(n, n), "#adb5bd") for n in nodes]
    return {"nodes": nodes, "colors": colors, "links": links, "used": sorted(used),
            "total_bytes": sum(lk["bytes"] for lk in links if "Mmad" not in lk["edge"])}


def flow_data(design: Any) -> dict[str, Any]:
    """Sankey data of the fused plan and (when compared) the unfused plan, side by side."""
    out: dict[str, Any] = {"fused": None, "unfused": None}
    for plan, sim in (("fused", design.sim), ("unfused", design.unfused_sim)):
        if sim is not None:
            out[plan] = sankey_data(sim.traffic, _l0c_bytes(sim.traffic))
            out[plan]["gm_bytes"] = sim.metrics["gm_bytes"]  # HBM + L2 side of GM, as the cards show
    return out


def _l0c_bytes(traffic: dict[str, int]) -> int:
    return traffic.get("L0C->WS", 0) + traffic.get("L0C->GM", 0) + traffic.get("L0C->L1", 0)
