"""The DeepSeek MoE block as one composite of the DSL's MoE ops, named after CANN's operators:

    out = ks.ops.moe(tokens=64, hidden=256, intermediate=128, experts=8, top_k=2, imbalance="zipf")
    feeds = ks.ops.moe_inputs(out)          # routing data that follows the same distribution

gate (x @ gate_weight) -> MoeGatingTopK (sigmoid + bias, group limit, top-k, renormalise x route_scale; or
MoeGatingTopKSoftmax) -> MoeInitRouting (rows sorted by expert, per-expert counts) -> GroupedMatmul gate/up
(weights [E, H, 2I]) -> SiLU(gate) * up -> GroupedMatmul down (weights [E, I, H]) -> MoeFinalizeRouting
(out = shared + sum_k w_k * expert_out[row]), the shared experts a dense gate/up, SiLU * up, down beside them.

How the imbalance knob and the data agree: the grouped matmuls' group sizes are run-time data (the per-expert
counts MoeInitRouting writes), so the simulator, which sees no data, times the `plan_sizes` the node carries.
`imbalance` sets those to `expert_loads(imbalance, ...)` (moe_load.py: deterministic integer rows per expert,
summing to tokens * top_k). `moe_inputs` then builds inputs whose routing gives exactly those counts: it
deals each token its experts (`route_tokens`) and writes router logits that pick them: the first `experts`
columns of x hold the logits (3.0 + 0.25 j for a token's j-th chosen expert, -3.0 - 0.25 (e mod 8) elsewhere,
all exact in bfloat16) and gate_weight's first `experts` rows are the identity (the rest zero), so
x @ gate_weight is the designed logits exactly, and the bias is zero. The golden model, run_tiled and the twin
then route the tokens the way the timeline assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import dsl
from ..core import dtypes as _dt
from ..core.errors import InputError
from .moe_load import IMBALANCES, check_routing, expert_loads, route_tokens

__all__ = ["MoeConfig", "moe", "moe_inputs", "moe_config", "find_moe_config", "STAGES"]

GATINGS = ("sigmoid", "softmax")
# the block's stages, in order, and the prefixes of the graph names that mark each (a kernel belongs to the
# stages whose nodes it computes)
STAGES: dict[str, tuple[str, ...]] = {
    "gating": ("router_logits", "gating"),
    "routing": ("routing",),
    "gate_up": ("gate_up",),
    "silu_mul": ("act",),
    "down": ("expert_out",),
    "shared": ("shared_",),
    "finalize": ("out",),
}


@dataclass(frozen=True)
class MoeConfig:
    """The knobs one MoE block was built with (kept on its output as `moe_config(out)` reads it)."""

    tokens: int
    hidden: int
    intermediate: int
    experts: int
    top_k: int
    groups: int
    topk_groups: int
    shared_experts: int
    gating: str
    route_scale: float
    imbalance: str
    dtype: str
    plan_sizes: tuple[int, ...]

    def balanced(self) -> tuple[int, ...]:
        """The perfectly balanced plan: the same rows spread evenly over the experts."""
        return expert_loads("uniform", tokens=self.tokens, experts=self.experts, top_k=self.top_k,
                            groups=self.groups, topk_groups=self.topk_groups)


def moe_config(out: object) -> MoeConfig:
    """The MoeConfig of an output `moe(...)` returned."""
    cfg = find_moe_config(out)
    if cfg is None:
        raise InputError(f"moe_config: {out!r} is not the output of ks.ops.moe(...); pass what moe returned")
    return cfg


def find_moe_config(out: object) -> MoeConfig | None:
    """The MoeConfig of an output `moe(...)` returned, or None for any other tensor or node (no error)."""
    return _CONFIGS.get(getattr(out, "node", out))


def moe(*, tokens: int, hidden: int, intermediate: int, experts: int, top_k: int, groups: int = 1,
        topk_groups: int = 1, shared_experts: int = 1, gating: str = "sigmoid", route_scale: float = 1.0,
        imbalance: str | Sequence[int] = "uniform", dtype: str = "bfloat16", name: str = "out") -> dsl.Tensor:
    """The MoE block's output [tokens, hidden] (see the module doc); `imbalance` is a name of IMBALANCES or
    the rows per expert themselves."""
    check_routing(tokens, experts, top_k, groups, topk_groups)
    if gating not in GATINGS:
        raise InputError(f"moe: gating {gating!r} is not one of {list(GATINGS)} (MoeGatingTopK scores with a "
                         "sigmoid, MoeGatingTopKSoftmax with a softmax)")
    if gating == "softmax" and (groups, topk_groups) != (1, 1):
        raise InputError(f"moe: softmax gating has no group limit, got groups={groups}, topk_groups={topk_groups}; "
                         "use gating='sigmoid' or groups=1, topk_groups=1")
    for what, v in (("hidden", hidden), ("intermediate", intermediate)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"moe: {what} must be a positive int, got {v!r}")
    if isinstance(shared_experts, bool) or not isinstance(shared_experts, int) or shared_experts < 0:
        raise InputError(f"moe: shared_experts must be an int >= 0, got {shared_experts!r}")
    plan = plan_sizes(imbalance, tokens=tokens, experts=experts, top_k=top_k, groups=groups,
                      topk_groups=topk_groups)
    i2 = 2 * intermediate

    x = dsl.placeholder((tokens, hidden), dtype, name="x")
    gate_w = dsl.placeholder((hidden, experts), dtype, name="gate_weight")
    w_gate_up = dsl.placeholder((experts, hidden, i2), dtype, name="gate_up_weight")
    w_down = dsl.placeholder((experts, intermediate, hidden), dtype, name="down_weight")

    logits = dsl.matmul(x, gate_w, out_dtype="float32", name="router_logits")
    if gating == "sigmoid":
        bias = dsl.placeholder((experts,), "float32", name="gate_bias")
        weights, ids = dsl.moe_gating_topk(logits, bias, top_k, groups=groups, topk_groups=topk_groups,
                                           renorm=True, route_scale=route_scale, name="gating")
    else:
        weights, ids = dsl.moe_gating_topk_softmax(logits, top_k, renorm=True, name="gating")
        if route_scale != 1.0:
            weights = dsl.mul(weights, float(route_scale), name="gating_scaled")
    expanded_x, row_idx, counts = dsl.moe_init_routing(x, ids, experts, name="routing")
    h = dsl.grouped_matmul(expanded_x, w_gate_up, counts, plan_sizes=plan, name="gate_up")
    act = _silu_mul(h, intermediate, "act")
    expert_out = dsl.grouped_matmul(act, w_down, counts, plan_sizes=plan, name="expert_out")
    shared = _shared(x, hidden, intermediate * shared_experts, dtype) if shared_experts else None
    # MoeInitRoutingV2 numbers a token's pairs t * k + j: the finalize reads them in that order
    out = dsl.moe_finalize_routing(expert_out, weights, row_idx, shared=shared, row_order="token_major",
                                   name=name)
    _remember(out, MoeConfig(tokens, hidden, intermediate, experts, top_k, groups, topk_groups, shared_experts,
                             gating, float(route_scale), imbalance if isinstance(imbalance, str) else "custom",
                             dtype, plan))
    return out


_CONFIGS: dict = {}  # output node -> its MoeConfig (nodes hash by structure); the latest few only
_KEEP = 64


def _remember(out: dsl.Tensor, cfg: MoeConfig) -> None:
    _CONFIGS.pop(out.node, None)
    _CONFIGS[out.node] = cfg
    while len(_CONFIGS) > _KEEP:
        _CONFIGS.pop(next(iter(_CONFIGS)))


def plan_sizes(imbalance: str | Sequence[int], *, tokens: int, experts: int, top_k: int, groups: int = 1,
               topk_groups: int = 1) -> tuple[int, ...]:
    """Rows per expert for `imbalance`: a name of IMBALANCES, or the counts themselves (checked)."""
    if isinstance(imbalance, str):
        if imbalance not in IMBALANCES:
            raise InputError(f"moe: imbalance {imbalance!r} is not one of {list(IMBALANCES)}, nor a tuple of rows "
                             "per expert")
        return expert_loads(imbalance, tokens=tokens, experts=experts, top_k=top_k, groups=groups,
                            topk_groups=topk_groups)
    loads = tuple(int(v) for v in imbalance)
    route_tokens(loads, tokens=tokens, top_k=top_k, groups=groups, topk_groups=topk_groups)  # raises if unroutable
    return loads


def _silu_mul(h: dsl.Tensor, inter: int, name: str) -> dsl.Tensor:
    gate, up = dsl.split(h, [inter, inter], axis=-1)
    return dsl.mul(dsl.silu(gate), up, name=name)


def _shared(x: dsl.Tensor, hidden: int, inter: int, dtype: str) -> dsl.Tensor:
    w_gu = dsl.placeholder((hidden, 2 * inter), dtype, name="shared_gate_up_weight")
    w_d = dsl.placeholder((inter, hidden), dtype, name="shared_down_weight")
    act = _silu_mul(dsl.matmul(x, w_gu, name="shared_gate_up"), inter, "shared_act")
    return dsl.matmul(act, w_d, name="shared_out")


def moe_inputs(out: dsl.Tensor, *, seed: int = 0) -> dict[str, np.ndarray]:
    """Inputs for the block `out` whose routing gives exactly its plan's rows per expert (see the module doc)."""
    cfg = moe_config(out)
    t, h, e, k = cfg.tokens, cfg.hidden, cfg.experts, cfg.top_k
    if h < e:
        raise InputError(f"moe_inputs: hidden={h} < experts={e}: the router logits ride in x's first {e} columns; "
                         "use hidden >= experts or write the inputs yourself")
    ids = route_tokens(cfg.plan_sizes, tokens=t, top_k=k, groups=cfg.groups, topk_groups=cfg.topk_groups)
    logits = -3.0 - 0.25 * (np.arange(e) % 8)[None, :].repeat(t, axis=0)
    logits[np.arange(t)[:, None], ids] = 3.0 + 0.25 * np.arange(k)[None, :]
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (t, h))
    x[:, :e] = logits
    gate_w = np.zeros((h, e))
    gate_w[np.arange(e), np.arange(e)] = 1.0
    i, si = cfg.intermediate, cfg.intermediate * cfg.shared_experts
    feeds = {"x": x, "gate_weight": gate_w,
             "gate_up_weight": rng.standard_normal((e, h, 2 * i)) / np.sqrt(h),
             "down_weight": rng.standard_normal((e, i, h)) / np.sqrt(i)}
    if cfg.shared_experts:
        feeds["shared_gate_up_weight"] = rng.standard_normal((h, 2 * si)) / np.sqrt(h)
        feeds["shared_down_weight"] = rng.standard_normal((si, h)) / np.sqrt(si)
    out_feeds = {n: _dt.round_to(cfg.dtype, v) for n, v in feeds.items()}
    if cfg.gating == "sigmoid":
        out_feeds["gate_bias"] = np.zeros(e, np.float32)
    return out_feeds


def routed_ids(cfg: MoeConfig) -> np.ndarray:
    """[tokens, top_k] the experts `moe_inputs` routes each token to (increasing ids per token)."""
    return route_tokens(cfg.plan_sizes, tokens=cfg.tokens, top_k=cfg.top_k, groups=cfg.groups,
                        topk_groups=cfg.topk_groups)
