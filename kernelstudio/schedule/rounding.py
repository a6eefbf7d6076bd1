"""The golden model that follows a schedule's plan: where its kernels round (`ks.evaluate(..., schedule=s)`).

The graph's golden model (ir/golden.py) follows whatever rounding plan it is given; this module makes that
plan from a Schedule, with the fusion stage's precision facts (which kernels compute natively in float16).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.checks import need
from ..core.errors import InputError
from ..fusion.precision import native_float16
from ..ir import golden
from ..ir.graph import Graph, as_nodes
from ..ir.node import Node
from ..ir.ops import Op
from .schedule import Schedule

__all__ = ["rounding_plan", "evaluate"]


def rounding_plan(s: Schedule) -> golden.RoundingPlan:
    """Where the plan of `s` rounds float values: inputs, casts, cube results and, in kernels that compute
    natively in float16, every op (everywhere); each kernel's outputs (stored in GM)."""
    graph = s.graph
    everywhere: set[Node] = set(graph.placeholders)
    stored: set[Node] = set()
    home: dict[Node, int] = {}
    for i, k in enumerate(s.kernels):
        stored.update(k.outputs)
        home.update((n, i) for n in k.nodes)
        if k.root is not None:
            everywhere.add(k.root)  # the cube unit's result leaves L0C in the matmul's dtype
        wants = [d.value for d in s.for_kernel(k.name) if d.kind == "compute_dtype"]
        if native_float16(k, wants[-1] if wants else "auto"):
            everywhere.update(k.nodes)  # float16 math on chip: every op rounds, as the kernel computes
    # casts round; scalar constants do not: kernels take them as float32 operands of Adds/Muls/...
    everywhere.update(n for n in graph.nodes if n.op is Op.CAST)
    return golden.RoundingPlan(frozenset(everywhere), frozenset(stored), home)


def evaluate(outputs: object, inputs: Mapping[str, object], *,
             schedule: object = None) -> np.ndarray | tuple[np.ndarray, ...]:
    """Golden values of `outputs` for `inputs` (name -> array): every node rounded to its dtype (the
    framework reference), or with `schedule=s` rounded where the plan of `s` rounds (bit-exact with
    `run_tiled` of that plan; see ir/golden.py)."""
    if schedule is None:
        return golden.evaluate(outputs, inputs)
    s = need(schedule, Schedule, "evaluate(schedule=...)")
    nodes, _ = as_nodes(outputs)
    graph = Graph(nodes)
    if set(s.graph.outputs) != set(graph.outputs) or set(s.graph.nodes) != set(graph.nodes):
        raise InputError("evaluate: the schedule was made for another graph; pass the schedule "
                         "ks.create_schedule made from these outputs")
    return golden.evaluate(outputs, inputs, rounding=rounding_plan(s))
