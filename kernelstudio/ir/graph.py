"""A Graph: the nodes reachable from some outputs, in topological order, with readable names."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..core.errors import InputError
from .node import Composite, Node
from .ops import Op

__all__ = ["Graph", "as_nodes"]


class Graph:
    """Nodes reachable from `outputs` in a deterministic topological order (inputs first).

    Nodes the user did not name get names from their op in topological order ("matmul",
    "add", "add_1", ...), so a graph built twice prints the same text.
    """

    def __init__(self, outputs: Node | Sequence[Node]):
        outs = (outputs,) if isinstance(outputs, Node) else tuple(outputs)
        self.outputs: tuple[Node, ...] = outs
        self.nodes: tuple[Node, ...] = tuple(_toposort(outs))
        self.names: dict[Node, str] = _assign_names(self.nodes)
        self._by_name = {n: node for node, n in self.names.items()}
        users: dict[Node, list[Node]] = {n: [] for n in self.nodes}
        for n in self.nodes:
            for i in dict.fromkeys(n.inputs):
                users[i].append(n)
        self.users: dict[Node, tuple[Node, ...]] = {k: tuple(v) for k, v in users.items()}
        self._text: str | None = None

    def text(self) -> str:
        """The graph as `format_graph` prints it, made once (a stable key: equal graphs print alike)."""
        if self._text is None:
            self._text = graph_text(self)
        return self._text

    @property
    def placeholders(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.op is Op.PLACEHOLDER)

    def name(self, node: Node) -> str:
        return self.names[node]

    def node(self, name: str) -> Node:
        return self._by_name[name]

    def __iter__(self):
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


def as_nodes(outputs: object) -> tuple[tuple[Node, ...], bool]:
    """The output Nodes of a Tensor/Node or a tuple/list of them, and whether a single one was given.

    Tensors are recognised by their ``.node`` attribute (the IR does not import the DSL).
    """
    single = not isinstance(outputs, (tuple, list))
    items = (outputs,) if single else tuple(outputs)
    nodes = []
    for o in items:
        node = o if isinstance(o, Node) else getattr(o, "node", None)
        if not isinstance(node, Node):
            raise InputError(
                f"outputs must be Tensors (or graph Nodes), or a tuple/list of them; got {type(o).__name__}"
            )
        nodes.append(node)
    if not nodes:
        raise InputError("outputs is empty; pass at least one Tensor")
    return tuple(nodes), single


def _toposort(outputs: Iterable[Node]) -> list[Node]:
    order: list[Node] = []
    seen: set[Node] = set()  # structural: equal subexpressions appear once
    for out in outputs:
        stack: list[tuple[Node, bool]] = [(out, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            for inp in reversed(node.inputs):
                if inp not in seen:
                    stack.append((inp, False))
    return order


def _assign_names(nodes: Sequence[Node]) -> dict[Node, str]:
    taken = {n.name for n in nodes if n.name}
    used: set[str] = set()
    counts: dict[str, int] = {}
    names: dict[Node, str] = {}
    for n in nodes:
        if n.name:
            if n.name not in used:  # the first node with a user name keeps it
                used.add(n.name)
                names[n] = n.name
                continue
            base = n.name  # the same name on another node (e.g. set in a loop): "h", "h_1", ...
        elif n.op is Op.PLACEHOLDER:
            base = "input"
        else:
            base = n.composite.name + "_" + n.op.value if n.composite else n.op.value
        while True:
            k = counts.get(base, 0)
            counts[base] = k + 1
            cand = base if k == 0 else f"{base}_{k}"
            if cand not in taken:
                break
        taken.add(cand)
        names[n] = cand
    return names


# --- the text form: the graph's canonical key (ir/printer.py shows it as `format_graph`) ---

_HIDDEN_ATTRS = ("uid",)  # identity of unnamed placeholders, not meaning


def fmt_shape(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _attrs(node: Node) -> str:
    items = [f"{k}={v!r}" for k, v in node.attrs if k not in _HIDDEN_ATTRS]
    return "{" + ", ".join(items) + "}" if items else ""


def composite_labels(graph: Graph) -> dict[Composite, str]:
    labels: dict[Composite, str] = {}
    counts: dict[str, int] = {}
    for n in graph.nodes:
        c = n.composite
        if c is not None and c not in labels:
            k = counts.get(c.name, 0)
            counts[c.name] = k + 1
            labels[c] = f"{c.name}#{k}"
    return labels


def graph_text(g: Graph) -> str:
    """`format_graph` of a built graph's outputs (`Graph.text()` keeps it)."""
    nodes = g.outputs
    comps = composite_labels(g)
    lines = []
    for n in g.nodes:
        args = ", ".join(f"%{g.name(i)}" for i in n.inputs)
        line = f"%{g.name(n)} = {n.op.value}({args}) : {fmt_shape(n.shape)} {n.dtype}"
        if attrs := _attrs(n):
            line += f"  {attrs}"
        if n.composite is not None:
            line += f"  # {comps[n.composite]}"
        lines.append(line)
    lines.append("return " + ", ".join(f"%{g.name(n)}" for n in nodes))
    return "\n".join(lines) + "\n"
