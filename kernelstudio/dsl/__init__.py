"""The compute DSL: placeholders, op constructors and composites that build the graph IR.

Stage 3. It may import core/ and ir/; fusion/ is its sibling and neither imports the other.
"""

from __future__ import annotations

from .cache import scatter
from .composites import gelu, layer_norm, rms_norm, rope, silu, softmax
from .grouped import grouped_matmul
from .moe_gating import moe_finalize_routing, moe_gating_topk, moe_gating_topk_softmax
from .ops import (
    abs,
    add,
    broadcast_to,
    cast,
    concat,
    conv2d,
    div,
    erf,
    exp,
    gather,
    leaky_relu,
    log,
    matmul,
    maximum,
    minimum,
    mul,
    neg,
    placeholder,
    reciprocal,
    reduce_max,
    reduce_mean,
    reduce_sum,
    relu,
    reshape,
    rsqrt,
    sigmoid,
    split,
    sqrt,
    square,
    sub,
    tanh,
    topk,
    transpose,
    where,
)
from .routing import argsort, moe_init_routing, sort
from .tensor import Tensor

__all__ = [
    "Tensor",
    "placeholder",
    # elementwise
    "add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "exp", "log", "sqrt", "rsqrt",
    "reciprocal", "square", "erf", "tanh", "sigmoid", "relu", "leaky_relu", "cast", "where",
    # reductions
    "reduce_sum", "reduce_mean", "reduce_max",
    # cube
    "matmul", "conv2d",
    # layout
    "reshape", "transpose", "broadcast_to", "split", "concat",
    # index / MoE
    "topk", "gather", "scatter", "grouped_matmul", "argsort", "sort", "moe_init_routing",
    "moe_gating_topk", "moe_gating_topk_softmax", "moe_finalize_routing",
    # composites
    "softmax", "layer_norm", "rms_norm", "gelu", "silu", "rope",
]
