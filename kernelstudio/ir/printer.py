"""Graph printers: a line-per-node text form and Graphviz DOT, both deterministic.

Names come from `Graph` (user names, else readable op-based names); composite calls are
numbered per graph in topological order ("layer_norm#0"), so a graph built twice prints the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.errors import InputError
from .graph import Graph, as_nodes, composite_labels, fmt_shape, graph_text
from .node import Composite, Node
from .ops import Op, Unit

__all__ = ["format_graph", "to_dot", "UNIT_COLORS"]

UNIT_COLORS: dict[Unit, str] = {
    Unit.CUBE: "#F4A261",
    Unit.VECTOR: "#8ECAE6",
    Unit.SCALAR: "#CDB4DB",
    Unit.NONE: "#E9ECEF",  # leaves: placeholders and constants
}
_UNIT_LABEL = {Unit.CUBE: "cube", Unit.VECTOR: "vector", Unit.SCALAR: "scalar", Unit.NONE: "leaf"}


def format_graph(outputs: object) -> str:
    """One line per node: ``%name = op(%a, %b) : [64,512] float16  {attrs}  # layer_norm#0``."""
    nodes, _ = as_nodes(outputs)
    return graph_text(Graph(nodes))


def _esc(text: str) -> str:
    """Escape user text for a DOT string (labels join escaped parts with a literal \\n)."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _q(s: str) -> str:
    return f'"{s}"'


def _node_line(g: Graph, n: Node, is_output: bool) -> str:
    color = UNIT_COLORS[n.info.unit]
    if n.op is Op.CONST:
        label = f"{n.attr('value')!r}\\n{n.dtype}"
        return f'{_q(g.name(n))} [label={_q(label)}, shape=ellipse, fontsize=8, fillcolor="{color}"];'
    head = g.name(n) if g.name(n) == n.op.value else f"{g.name(n)}\\n{n.op.value}"
    label = f"{head}\\n{fmt_shape(n.shape)} {n.dtype}"
    extra = ", penwidth=2.5" if is_output else ""
    return f'{_q(g.name(n))} [label={_q(label)}, fillcolor="{color}"{extra}];'


def _kernel_of(g: Graph, clusters: Sequence[tuple]) -> dict[Node, int]:
    members = set(g.nodes)
    owner: dict[Node, int] = {}
    for k, (kname, knodes, *_) in enumerate(clusters):
        for item in knodes:
            n = item if isinstance(item, Node) else getattr(item, "node", None)
            if not isinstance(n, Node) or n not in members:
                what = f"{n.op.value} {fmt_shape(n.shape)}" if isinstance(n, Node) else repr(item)
                raise InputError(f"to_dot: cluster {kname!r} lists {what}, which is not a node of this graph")
            if n in owner and owner[n] != k:
                raise InputError(
                    f"to_dot: node {g.name(n)} is in both clusters {clusters[owner[n]][0]!r} and {kname!r}; "
                    "each node belongs to at most one kernel"
                )
            owner[n] = k
    return owner


def _constants_join_their_users(g: Graph, owner: dict[Node, int]) -> None:
    """A constant no cluster lists is drawn in the kernel of its first user (in topological order): it is an
    immediate of that kernel's code, and left outside it would open a second cluster of its composite."""
    users: dict[Node, list[Node]] = {}
    for n in g.nodes:
        for i in n.inputs:
            users.setdefault(i, []).append(n)
    for n in g.nodes:
        if n.op is Op.CONST and n not in owner:
            k = next((owner[u] for u in users.get(n, ()) if u in owner), None)
            if k is not None:
                owner[n] = k


def to_dot(outputs: object, *, clusters: Sequence[tuple] = ()) -> str:
    """Graphviz DOT text of the graph of `outputs`.

    Nodes show name, op, shape and dtype and are filled by the unit that runs them (cube, vector,
    scalar, leaf; see the legend). Composite calls are dashed clusters. `clusters` are optional
    ``(kernel name, nodes)`` or ``(kernel name, nodes, tooltip)`` groups (the fusion pass passes its
    kernels); composite clusters nest inside them, and a constant joins the kernel of its first user.
    """
    nodes, _ = as_nodes(outputs)
    g = Graph(nodes)
    comps = composite_labels(g)
    owner = _kernel_of(g, clusters)
    _constants_join_their_users(g, owner)
    outs = set(nodes)
    # group: kernel index (None: top level) -> composite (None: loose) -> nodes in topo order
    groups: dict[int | None, dict[Composite | None, list[Node]]] = {None: {}}
    for k in range(len(clusters)):
        groups[k] = {}
    for n in g.nodes:
        groups[owner.get(n)].setdefault(n.composite, []).append(n)

    lines = [
        "digraph kernelstudio {",
        '  graph [rankdir=TB, fontname="Helvetica", fontsize=10, newrank=true, ranksep=0.35, nodesep=0.25];',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
        '  edge [color="#555555", arrowsize=0.6];',
    ]

    def emit_group(by_comp: dict[Composite | None, list[Node]], indent: str, prefix: str) -> None:
        for comp, members in by_comp.items():
            inner = indent
            if comp is not None:
                cid = comps[comp].replace("#", "_")
                lines.append(f"{indent}subgraph {_q(f'cluster_{prefix}{cid}')} {{")
                lines.append(f'{indent}  label={_q(comps[comp])}; style="dashed,rounded"; color="#777777";')
                inner = indent + "  "
            lines.extend(inner + _node_line(g, n, n in outs) for n in members)
            if comp is not None:
                lines.append(f"{indent}}}")

    for k, cl in enumerate(clusters):
        kname, tip = cl[0], (cl[2] if len(cl) > 2 else "")
        lines.append(f"  subgraph {_q(f'cluster_kernel_{k}')} {{")
        lines.append(f'    label={_q(_esc(f"kernel {kname}"))}; style="rounded,bold"; color="#264653";')
        if tip:
            lines.append(f"    tooltip={_q(_esc(tip))};")
        emit_group(groups[k], "    ", f"k{k}_")
        lines.append("  }")
    emit_group(groups[None], "  ", "")

    for n in g.nodes:
        for i in n.inputs:
            lines.append(f"  {_q(g.name(i))} -> {_q(g.name(n))};")

    lines.append('  subgraph cluster_legend {')
    lines.append('    label="unit"; style="rounded"; color="#BBBBBB"; fontsize=9;')
    for unit, color in UNIT_COLORS.items():
        lid = f"legend:{_UNIT_LABEL[unit]}"
        lines.append(f'    {_q(lid)} [label={_q(_UNIT_LABEL[unit])}, fillcolor="{color}", fontsize=9];')
    ids = " -> ".join(_q(f"legend:{_UNIT_LABEL[u]}") for u in UNIT_COLORS)
    lines.append(f"    {ids} [style=invis];")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
