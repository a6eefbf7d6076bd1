"""The arithmetic of MoE gating, shared by the golden model, the interpreter and the lowering.

`gate_select` is the selection of CANN's MoeGatingTopK (ops-transformer docs, aclnnMoeGatingTopK) for one
block of token rows, written as the scalar loops the generated kernel runs, so every reader picks the
same experts:

1. per group of `experts // groups` consecutive experts, a score from the selection values `sel`
   (scores + bias): the sum of its two largest values ("top2_sum", DeepSeek-V3's rule; a group of one
   expert scores its value) or its largest value ("max");
2. the `topk_groups` best groups are kept, best first, ties to the lower group index;
3. the `k` largest selection values among the experts of the kept groups, best first, ties to the lower
   expert index;
4. the weights are the chosen experts' `scores` (the values without the bias).

`gate_weights` then renormalises (w / (sum(w) + eps), CANN's eps 1e-20) and scales by the route scale,
in float32.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GROUP_SELECT", "DEFAULT_EPS", "gate_select", "gate_weights", "sigmoid32", "check_gating"]

GROUP_SELECT = ("top2_sum", "max")
DEFAULT_EPS = 1e-20  # aclnnMoeGatingTopK's eps default


def sigmoid32(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in float32, as the vector unit's Sigmoid computes it (exp(-x) may overflow: 0)."""
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore"):
        return np.float32(1) / (np.float32(1) + np.exp(-x))


def _group_score(vals: np.ndarray, rule: str) -> np.float32:
    b1 = b2 = np.float32(-np.inf)
    for v in vals:
        if v > b1:
            b1, b2 = v, b1
        elif v > b2:
            b2 = v
    if rule == "max" or len(vals) == 1:
        return np.float32(b1)
    return np.float32(b1 + b2)


def gate_select(scores: np.ndarray, sel: np.ndarray, k: int, groups: int = 1, topk_groups: int = 1,
                group_select: str = "top2_sum") -> tuple[np.ndarray, np.ndarray]:
    """(weights before renormalisation [R, k] float32, expert ids [R, k] int32) for rows of `sel` [R, E]
    (module doc)."""
    scores = np.asarray(scores, np.float32)
    sel = np.asarray(sel, np.float32)
    rows, experts = sel.shape
    per = experts // groups
    w = np.zeros((rows, k), np.float32)
    ids = np.zeros((rows, k), np.int32)
    for r in range(rows):
        row = sel[r]
        allowed = np.ones(experts, bool)
        if groups > 1:
            gs = [_group_score(row[g * per:(g + 1) * per], group_select) for g in range(groups)]
            kept = np.zeros(groups, bool)
            for _ in range(topk_groups):
                best = -1
                for g in range(groups):
                    if not kept[g] and (best < 0 or gs[g] > gs[best]):
                        best = g
                kept[best] = True
            allowed = np.repeat(kept, per)
        for j in range(k):
            best = -1
            for e in range(experts):
                if allowed[e] and (best < 0 or row[e] > row[best]):
                    best = e
            allowed[best] = False
            ids[r, j] = best
            w[r, j] = scores[r, best]
    return w, ids


def gate_weights(w: np.ndarray, renorm: bool, route_scale: float, eps: float = DEFAULT_EPS) -> np.ndarray:
    """w / (sum(w) + eps) when `renorm`, times `route_scale`, in float32."""
    w = np.asarray(w, np.float32)
    if renorm:
        w = w / (np.sum(w, axis=-1, keepdims=True, dtype=np.float32) + np.float32(eps))
    if route_scale != 1.0:
        w = w * np.float32(route_scale)
    return w.astype(np.float32)


def check_gating(experts: int, k: int, groups: int, topk_groups: int, group_select: str) -> str:
    """Why these gating settings are invalid ("" when they are valid)."""
    if groups < 1 or experts % groups:
        return (f"groups={groups} does not divide the {experts} experts; pick a divisor of {experts} "
                "(DeepSeek-V3: 256 experts in 8 groups)")
    if not 1 <= topk_groups <= groups:
        return f"topk_groups={topk_groups} must be in 1..groups={groups}"
    if group_select not in GROUP_SELECT:
        return f"group_select={group_select!r} is not one of {', '.join(GROUP_SELECT)}"
    kept = experts // groups * topk_groups
    if not 1 <= k <= kept:
        return (f"k={k} must be in 1..{kept}: the experts of the {topk_groups} kept group(s) of "
                f"{experts // groups}; keep more groups or lower k")
    return ""
