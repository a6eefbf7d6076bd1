"""An MoE block's load in the Studio: each cube core's load in the grouped matmuls (busy, when it finished, the
share of core time spent waiting for the last one) and the cost of imbalance against the balanced block.

`moe_data(design)` is None for a design that is not an `ks.ops.moe` block. The balanced block is the same
block built with `imbalance="uniform"` (its default schedule, the design's chip and L2 protocol); it is built
once per block shape and kept.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

__all__ = ["balanced_time_us", "moe_data"]

_BALANCED: dict[Any, float] = {}  # (config with uniform plan, chip, L2 protocol) -> balanced block's us
_KEEP = 16


def _config(design: Any) -> Any:
    from ...ops.moe import find_moe_config

    outs = getattr(getattr(design, "graph", None), "outputs", None) or ()
    return find_moe_config(outs[0]) if outs else None  # None for a design that is not an MoE block


def balanced_time_us(design: Any, cfg: Any) -> float:
    """The simulated time of `design`'s MoE block with every expert given the same rows (the design's own time
    when its plan already is balanced)."""
    if tuple(cfg.plan_sizes) == tuple(cfg.balanced()):
        return float(design.sim.time_us)
    from ...ops.moe import moe
    from ...plan.build import build

    profile = getattr(design.program, "profile", None) or design.target
    l2 = design.sim.metrics.get("l2_start", "cold")
    key = (replace(cfg, imbalance="uniform", plan_sizes=tuple(cfg.balanced())), profile, l2)
    if key not in _BALANCED:
        block = moe(tokens=cfg.tokens, hidden=cfg.hidden, intermediate=cfg.intermediate, experts=cfg.experts,
                    top_k=cfg.top_k, groups=cfg.groups, topk_groups=cfg.topk_groups,
                    shared_experts=cfg.shared_experts, gating=cfg.gating, route_scale=cfg.route_scale,
                    imbalance="uniform", dtype=cfg.dtype)
        _BALANCED[key] = float(build(block, profile, compare=False, l2=l2).sim.time_us)
        while len(_BALANCED) > _KEEP:
            _BALANCED.pop(next(iter(_BALANCED)))
    return _BALANCED[key]


def moe_data(design: Any) -> dict[str, Any] | None:
    """The block's `imbalance` plan name, its rows per expert, `time_us`, `balanced_us`, `cost` (time /
    balanced) and `loads`: per grouped-matmul kernel its `kernel`, `stage`, `span_us` and per cube core
    (`cores`: label, busy us, finish us from the kernel's start), the `last` core to finish and `idle_pct`
    (the share of the cores' time in the kernel spent waiting for it). None: not an MoE block."""
    cfg = _config(design)
    if cfg is None:
        return None
    from ...ops.moe_report import core_loads

    balanced = balanced_time_us(design, cfg)
    cube = sorted((c for c in design.sim.events.core_labels if "cube" in c),
                  key=lambda c: int("".join(ch for ch in c.split(".")[0] if ch.isdigit()) or 0))
    loads = []
    for ld in core_loads(design.program, design.sim):
        if not ld.finish_us:
            continue
        cores = [{"core": label, "busy_us": b, "finish_us": f}
                 for label, b, f in zip(cube, ld.busy_us, ld.finish_us, strict=False)]
        last = max(range(len(cores)), key=lambda i: cores[i]["finish_us"])
        loads.append({"kernel": ld.kernel, "stage": ld.stage, "span_us": ld.span_us, "cores": cores,
                      "last": last, "idle_pct": ld.idle_pct})
    return {"imbalance": cfg.imbalance, "plan_sizes": tuple(cfg.plan_sizes), "time_us": float(design.sim.time_us),
            "balanced_us": balanced, "cost": design.sim.time_us / balanced if balanced else None, "loads": loads}
