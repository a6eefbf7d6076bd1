"""How many rows each expert of an MoE block receives under a token-imbalance setting, and a routing that
realises exactly those counts.

    sizes = expert_loads("zipf", tokens=64, experts=8, top_k=2)     # (rows per expert), sum = 64 * 2
    ids = route_tokens(sizes, tokens=64, top_k=2)                   # [64, 2]: each token's experts

The distributions (`imbalance`):
- "uniform": every expert equally likely.
- "zipf": expert e has weight (e + 1) ** -1.2 (Zipf, s = 1.2; expert 0 the most popular).
- "one_hot": expert 0 takes every token; the other experts share the remaining top_k - 1 picks evenly.

A token picks an expert at most once, so an expert holds at most `tokens` rows: the counts are the
weights scaled to tokens * top_k and capped at `tokens` (what a capped expert cannot take is shared by
the others in proportion to their weights), then rounded to integers by largest remainder (ties to the
lower expert index). Group-limited routing (DeepSeek-V3: 8 groups, 4 kept per token) is honoured the
same way one level up: each token keeps `topk_groups` groups and takes `top_k // topk_groups` experts
in each, group g's token count is its experts' summed weight scaled to tokens * topk_groups and capped
at `tokens`, and the group's experts share its picks, capped at the group's tokens. Everything is
deterministic: the same arguments give the same counts and the same routing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.errors import InputError

__all__ = ["IMBALANCES", "ZIPF_S", "expert_loads", "route_tokens", "check_routing"]

IMBALANCES = ("uniform", "zipf", "one_hot")
ZIPF_S = 1.2  # the Zipf exponent of "zipf"


def check_routing(tokens: int, experts: int, top_k: int, groups: int = 1, topk_groups: int = 1) -> None:
    """Raise InputError unless the token count, expert count, top-k and group limits can route."""
    for what, v in (("tokens", tokens), ("experts", experts), ("top_k", top_k), ("groups", groups),
                    ("topk_groups", topk_groups)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise InputError(f"moe: {what} must be a positive int, got {v!r}")
    if experts % groups:
        raise InputError(f"moe: {experts} experts do not split into {groups} groups; pick groups dividing "
                         f"the expert count (DeepSeek-V3: 256 experts in 8 groups)")
    if topk_groups > groups:
        raise InputError(f"moe: topk_groups={topk_groups} exceeds groups={groups}; keep at most as many groups "
                         "as there are")
    if top_k % topk_groups:
        raise InputError(f"moe: top_k={top_k} is not a multiple of topk_groups={topk_groups}; each kept group "
                         f"takes top_k // topk_groups experts here (DeepSeek-V3: top-8 over 4 groups)")
    per_group = experts // groups
    if top_k // topk_groups > per_group:
        raise InputError(f"moe: top_k={top_k} over topk_groups={topk_groups} asks {top_k // topk_groups} experts "
                         f"of a group of {per_group}; raise topk_groups or lower top_k")


def _weights(imbalance: str, experts: int) -> np.ndarray:
    if imbalance == "uniform":
        return np.ones(experts)
    if imbalance == "zipf":
        return np.arange(1, experts + 1, dtype=np.float64) ** -ZIPF_S
    if imbalance == "one_hot":
        return np.ones(experts)  # expert 0 is pinned at the cap by the caller
    raise InputError(f"moe: imbalance {imbalance!r} is not one of {list(IMBALANCES)}")


def _waterfill(total: int, weights: np.ndarray, cap: int, pinned: Sequence[int] = ()) -> np.ndarray:
    """Integers <= cap summing to `total`, proportional to `weights` where below the cap; `pinned` at the cap."""
    n = len(weights)
    capped = np.zeros(n, bool)
    capped[list(pinned)] = True
    while True:
        free = total - cap * int(capped.sum())
        w = np.where(capped, 0.0, weights)
        share = np.where(capped, float(cap), free * w / w.sum() if w.sum() > 0 else 0.0)
        over = ~capped & (share > cap)
        if not over.any():
            break
        capped |= over
    base = np.minimum(np.floor(share + 1e-9), cap).astype(np.int64)
    rest = total - int(base.sum())
    order = np.lexsort((np.arange(n), -(share - base)))  # largest remainder first, then lower index
    for i in order:
        if rest <= 0:
            break
        if base[i] < cap:
            base[i] += 1
            rest -= 1
    return base


def expert_loads(imbalance: str, *, tokens: int, experts: int, top_k: int, groups: int = 1,
                 topk_groups: int = 1) -> tuple[int, ...]:
    """Rows each expert receives (summing to tokens * top_k) under `imbalance` (see the module doc)."""
    check_routing(tokens, experts, top_k, groups, topk_groups)
    w = _weights(imbalance, experts)
    per_group = experts // groups
    hot = imbalance == "one_hot"
    group_tokens = _waterfill(tokens * topk_groups, w.reshape(groups, per_group).sum(axis=1), tokens,
                              pinned=(0,) if hot else ())
    picks = top_k // topk_groups
    out = np.zeros(experts, np.int64)
    for g in range(groups):
        n = int(group_tokens[g])
        out[g * per_group:(g + 1) * per_group] = _waterfill(picks * n, w[g * per_group:(g + 1) * per_group], n,
                                                            pinned=(0,) if hot and g == 0 else ())
    return tuple(int(c) for c in out)


def _deal(counts: Sequence[int], period: int, picks: int) -> np.ndarray:
    """[period, picks]: item list (each index repeated its count times) read at stride `period`.

    An item's copies are consecutive and at most `period` long, so no row gets an item twice."""
    items = np.repeat(np.arange(len(counts)), np.asarray(counts, np.int64))
    return items.reshape(picks, period).T


def route_tokens(loads: Sequence[int], *, tokens: int, top_k: int, groups: int = 1,
                 topk_groups: int = 1) -> np.ndarray:
    """[tokens, top_k] int32 expert ids, distinct per token, whose per-expert counts are exactly `loads`.

    Each token's experts lie in `topk_groups` groups, `top_k // topk_groups` in each (as `expert_loads`
    plans them); a token's ids are in increasing order."""
    loads = np.asarray(loads, np.int64)
    experts = len(loads)
    check_routing(tokens, experts, top_k, groups, topk_groups)
    per_group = experts // groups
    picks = top_k // topk_groups
    by_group = loads.reshape(groups, per_group).sum(axis=1)
    if int(loads.sum()) != tokens * top_k or (loads > tokens).any() or (by_group % picks).any():
        raise InputError(f"moe: expert loads {loads.tolist()} cannot route {tokens} tokens top-{top_k}: they must "
                         f"sum to {tokens * top_k}, hold at most {tokens} each and fill {picks} picks per token "
                         "in a group; make them with expert_loads(...)")
    group_tokens = by_group // picks
    over = [e for e in range(experts) if loads[e] > group_tokens[e // per_group]]
    if over:
        e = over[0]
        raise InputError(f"moe: expert {e} holds {loads[e]} rows but its group routes only "
                         f"{group_tokens[e // per_group]} tokens; make the loads with expert_loads(...)")
    token_groups = _deal(group_tokens, tokens, topk_groups)  # [tokens, topk_groups]
    ids = np.zeros((tokens, top_k), np.int64)
    filled = np.zeros(tokens, np.int64)
    for g in range(groups):
        members = np.nonzero((token_groups == g).any(axis=1))[0]
        if not len(members):
            continue
        chosen = _deal(loads[g * per_group:(g + 1) * per_group], len(members), picks) + g * per_group
        for row, t in enumerate(members):
            ids[t, filled[t]:filled[t] + picks] = chosen[row]
            filled[t] += picks
    return np.sort(ids, axis=1).astype(np.int32)
