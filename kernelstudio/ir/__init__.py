"""Graph IR: the op enum, nodes, graphs, the golden NumPy model and graph printers.

Stage 2. It may import core/ only: the golden model follows a rounding plan it is given and never asks a later
stage."""

from __future__ import annotations

from .golden import GOLDEN, evaluate, random_inputs
from .graph import Graph, as_nodes
from .node import Composite, Node
from .ops import DTYPES, FLOAT_DTYPES, OP_INFO, Kind, Op, OpInfo, Unit, itemsize
from .printer import UNIT_COLORS, format_graph, to_dot

__all__ = [
    "Op", "Kind", "Unit", "OpInfo", "OP_INFO", "DTYPES", "FLOAT_DTYPES", "itemsize",
    "Node", "Composite", "Graph", "as_nodes",
    "GOLDEN", "evaluate", "random_inputs",
    "format_graph", "to_dot", "UNIT_COLORS",
]
