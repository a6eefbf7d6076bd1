"""Memory flow: the simulator's traffic as a balanced Sankey, from HBM and L2 through the core's buffers
back to L2 and HBM.

The simulator (sim/simulate.py, sim/l2.py) counts every GM move once, by the edge it takes ("GM->L1",
"L0C->WS", "UB->GM", ...), and splits the GM reads into L2 hits and HBM misses ("HBM->L2") and the GM writes
into what L2 writes back to HBM ("L2->HBM", every written byte but the workspaces') and what stays in L2.
The Sankey draws exactly that:

    HBM (misses) ┐                                   ┌ HBM (written back)
                 ├ GM read ─ L1 ─ L0A/L0B ─ L0C ─ …  ┤
    L2 (hits)   ─┘        └──────── UB ──── GM write ┘ L2 (kept)

A node that only moves data (GM read, GM write, L0A, L0B) sends out what it takes in, byte for byte. Three
kinds of node may not, and say why in their hover: L1 (a tile loaded once is moved to L0A/L0B again for
every tile that reuses it; img2col expands overlapping windows), L0C (Mmad reads the operand tiles and
accumulates them along k into fewer result bytes) and UB (the vector units read inputs and write results of
another size). The GM workspace of a mixed kernel (cube -> vector hand-off) is written and read back in L2.
"""

from __future__ import annotations

from typing import Any

from .style import TIER_COLORS

__all__ = ["flow_data", "sankey_data"]

# node name -> (colour key, kind); kinds: source, sink, move (balanced), reuse (L1), compute (L0C, UB), store
_NODE_KIND = {
    "HBM (read)": ("GM", "source"), "L2 (read)": ("L2", "source"), "GM read": ("L2", "move"),
    "L1": ("L1", "reuse"), "L0A": ("L0A", "move"), "L0B": ("L0B", "move"), "L0C": ("L0C", "compute"),
    "workspace": ("WS", "store"), "UB": ("UB", "compute"), "GM write": ("L2", "move"),
    "HBM (written back)": ("GM", "sink"), "L2 (kept)": ("L2", "sink"),
}
_ORDER = tuple(_NODE_KIND)
_SHORT = {"HBM (read)": "HBM", "L2 (read)": "L2", "HBM (written back)": "HBM", "L2 (kept)": "L2"}
_MMAD = "read by Mmad"


def _src_node(tier: str) -> str:
    return {"GM": "GM read", "WS": "workspace"}.get(tier, tier)


def _dst_node(tier: str) -> str:
    return {"GM": "GM write", "WS": "workspace"}.get(tier, tier)


def _b(n: int) -> str:
    return f"{n:,} B"


def sankey_data(traffic: dict[str, int], cube_flops: int = 0) -> dict[str, Any]:
    """Sankey nodes and links (bytes) of one plan's traffic (`SimResult.traffic`); `cube_flops` names the
    Mmad work in L0C's hover.

    Returns {"nodes": [{name, short, kind, color, in, out, balanced, hover, column}], "links": [{edge, source,
    target, bytes, hover}], "total_bytes": the data moves (traffic without the HBM legs), "within": bytes a
    tier copies to itself (not drawn)}. Every "move" node has in == out; the others say in their hover why
    not. Links into L0C from L0A/L0B ("read by Mmad") are the operand tiles the cube consumes, not moves."""
    moves = {e: int(b) for e, b in traffic.items() if b > 0 and e not in ("HBM->L2", "L2->HBM")}
    links: list[dict[str, Any]] = []
    within: dict[str, int] = {}

    def link(edge: str, src: str, dst: str, nbytes: int, hover: str) -> None:
        if nbytes > 0:
            links.append({"edge": edge, "src": src, "dst": dst, "bytes": nbytes, "hover": hover})

    for edge, nbytes in moves.items():
        a, _, b = edge.partition("->")
        if a == b or not b:  # a copy inside one tier: no edge to draw
            within[a or edge] = within.get(a or edge, 0) + nbytes
            continue
        what = {"WS": "the workspace (GM, held in L2)", "GM": "GM"}
        link(edge, _src_node(a), _dst_node(b), nbytes, f"{edge}: {_b(nbytes)} moved "
             f"from {what.get(a, a)} to {what.get(b, b)}")
    reads = sum(lk["bytes"] for lk in links if lk["src"] == "GM read")
    writes = sum(lk["bytes"] for lk in links if lk["dst"] == "GM write")
    misses = int(traffic.get("HBM->L2", 0))
    back = int(traffic.get("L2->HBM", 0))
    link("HBM->L2", "HBM (read)", "GM read", misses, f"GM reads that miss L2: {_b(misses)} from HBM (through L2)")
    link("L2 hit", "L2 (read)", "GM read", reads - misses,
         f"GM reads that hit L2: {_b(reads - misses)} ({_pct(reads - misses, reads)} of {_b(reads)} read; "
         "the workspace's reads are drawn at the workspace node)")
    link("L2->HBM", "GM write", "HBM (written back)", back,
         f"GM writes L2 writes back to HBM: {_b(back)} (L2 is write-back; every written byte but the "
         "workspaces' reaches HBM)")
    link("L2 kept", "GM write", "L2 (kept)", writes - back, f"GM writes that stay in L2: {_b(writes - back)}")
    into_l0c = sum(lk["bytes"] for lk in links if lk["src"] == "L0C")
    if into_l0c:  # the cube ran: what L0A and L0B received, Mmad consumed
        for tile in ("L0A", "L0B"):
            got = sum(lk["bytes"] for lk in links if lk["dst"] == tile)
            link(f"{tile}->L0C ({_MMAD})", tile, "L0C", got, f"{tile} -> L0C: Mmad reads the {_b(got)} of operand "
                 f"tiles MTE1 loaded into {tile}")
    nodes = _nodes(links, within, cube_flops)
    index = {n["name"]: i for i, n in enumerate(nodes)}
    for lk in links:
        lk["source"], lk["target"] = index[lk.pop("src")], index[lk.pop("dst")]
    _columns(nodes, links)
    return {"nodes": nodes, "links": links, "within": within,
            "total_bytes": sum(moves.values()), "gm_read_bytes": reads, "gm_write_bytes": writes}


def _columns(nodes: list[dict[str, Any]], links: list[dict[str, Any]]) -> None:
    """Each node's column, left to right: its longest path from a source; the sinks share the last column.

    A fused attention kernel's flow has cycles (the workspace feeds UB and L1, which write back into it): a
    link that closes a cycle, found depth first from the sources in node order, is drawn but not counted."""
    out: dict[int, list[int]] = {}
    for lk in links:
        out.setdefault(lk["source"], []).append(lk["target"])
    state = [0] * len(nodes)  # 0 unseen, 1 on the path, 2 done
    back: set[tuple[int, int]] = set()
    order: list[int] = []  # reverse topological order of the acyclic rest

    def visit(i: int) -> None:
        state[i] = 1
        for j in out.get(i, ()):
            if state[j] == 1:
                back.add((i, j))
            elif state[j] == 0:
                visit(j)
        state[i] = 2
        order.append(i)

    for i in range(len(nodes)):
        if state[i] == 0:
            visit(i)
    col = [0] * len(nodes)
    for i in reversed(order):  # sources first
        for j in out.get(i, ()):
            if (i, j) not in back:
                col[j] = max(col[j], col[i] + 1)
    last = max(col, default=0)
    for i, n in enumerate(nodes):
        n["column"] = last if n["kind"] == "sink" else col[i]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f} %" if whole else "0 %"


def _nodes(links: list[dict[str, Any]], within: dict[str, int], cube_flops: int) -> list[dict[str, Any]]:
    names = [n for n in _ORDER if any(n in (lk["src"], lk["dst"]) for lk in links)]
    names += sorted({x for lk in links for x in (lk["src"], lk["dst"])} - set(names))
    out = []
    for name in names:
        got = sum(lk["bytes"] for lk in links if lk["dst"] == name)
        sent = sum(lk["bytes"] for lk in links if lk["src"] == name)
        key, kind = _NODE_KIND.get(name, (name, "move"))
        balanced = kind in ("source", "sink") or got == sent
        hover = _hover(name, kind, got, sent, cube_flops)
        if name in within:
            hover += f"; plus {_b(within[name])} copied within {name} (not drawn)"
        out.append({"name": name, "short": _SHORT.get(name, name), "kind": kind, "in": got, "out": sent,
                    "balanced": balanced, "hover": hover,
                    "color": TIER_COLORS.get(key, "#adb5bd")})
    return out


def _hover(name: str, kind: str, got: int, sent: int, cube_flops: int) -> str:
    if kind == "source":
        return f"{name}: {_b(sent)} read" + (" (L2 misses)" if name.startswith("HBM") else " (L2 hits)")
    if kind == "sink":
        return f"{name}: {_b(got)} written"
    flow = f"{name}: {_b(got)} in, {_b(sent)} out"
    if got == sent:
        return flow
    if name == "L1":
        return (f"{flow}: L1 keeps what MTE2 loaded and MTE1 moves it to L0A/L0B {sent / got:.2f} times on "
                "average (a tile loaded once is moved again for every tile that reuses it; img2col also "
                "expands a convolution's overlapping windows)") if got else flow
    if name == "L0C":
        return (f"{flow}: Mmad reads the L0A/L0B operand tiles and accumulates them along k "
                f"({cube_flops:,} flops) into the result tiles that leave L0C, so in and out differ")
    if name == "UB":
        return (f"{flow}: the vector units compute in UB, so in and out differ (several inputs make one "
                "output, a reduction shrinks its rows, a cast changes the element size)")
    if name == "workspace":
        return f"{flow}: the vector side reads the cube's hand-off {sent / got:.2f} times" if got else flow
    return f"{flow} (unbalanced)"


def flow_data(design: Any) -> dict[str, Any]:
    """Sankey data of the fused plan and (when compared) the unfused plan, with the simulator's GM totals."""
    out: dict[str, Any] = {"fused": None, "unfused": None}
    for plan, sim in (("fused", design.sim), ("unfused", design.unfused_sim)):
        if sim is not None:
            d = sankey_data(sim.traffic, sim.metrics.get("cube_flops", 0))
            m = sim.metrics
            d.update(gm_bytes=m["gm_bytes"], hbm_bytes=m["hbm_bytes"], l2_bytes=m["l2_bytes"],
                     l2_hit_ratio=m["l2_hit_ratio"], kernels=len(sim.kernels))
            out[plan] = d
    return out
