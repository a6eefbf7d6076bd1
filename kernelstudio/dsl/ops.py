"""DSL op constructors: each checks its arguments, infers shape and dtype, and adds one graph node.

Operands may be Tensors or (where sensible) Python ints/floats, which become ``const`` nodes of
the other operand's dtype. Tensors of different dtypes meet in the promoted dtype (see
`shapes.promote`) through explicit ``cast`` nodes, so every elementwise node computes on inputs
of its own dtype. Every op takes an optional ``name=`` (an identifier); unnamed nodes get
readable names from the graph ("matmul", "add_1", ...).

This module gathers the constructors from the modules that hold them (`build`: the node builder and
argument checks; `placeholder`; `elementwise`; `reductions`; `cube_ops`; `layout_ops`: layout and
index ops) under one name, ``from kernelstudio.dsl import ops as O``, and binds them to Tensor's
operators.
"""

from __future__ import annotations

import sys

from . import shapes as S
from .build import (
    Operand,
    Scalar,
    _check_dtype,
    _d,
    _describe,
    _flag,
    _n,
    _node,
    _operands,
    _scalar_or_tensor,
    _tensor,
    check_name,
    composite_scope,
    const,
)
from .cube_ops import conv2d, matmul
from .elementwise import (
    abs,
    add,
    cast,
    div,
    erf,
    exp,
    leaky_relu,
    log,
    maximum,
    minimum,
    mul,
    neg,
    reciprocal,
    relu,
    rsqrt,
    sigmoid,
    sqrt,
    square,
    sub,
    tanh,
    where,
)
from .layout_ops import broadcast_to, concat, gather, reshape, split, topk, transpose
from .placeholder import placeholder
from .reductions import reduce_max, reduce_mean, reduce_sum
from .tensor import Tensor, bind_ops

__all__ = [
    "placeholder", "add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "exp", "log",
    "sqrt", "rsqrt", "reciprocal", "square", "erf", "tanh", "sigmoid", "relu", "leaky_relu", "cast",
    "where", "reduce_sum", "reduce_mean", "reduce_max", "matmul", "conv2d", "reshape", "transpose",
    "broadcast_to", "split", "concat", "topk", "gather", "composite_scope",
]

# the builder's helpers stay reachable as O._tensor, O._d, ... for the composites built on them
_BUILDER = (S, Operand, Scalar, Tensor, _check_dtype, _d, _describe, _flag, _n, _node, _operands,
            _scalar_or_tensor, _tensor, check_name, const)

bind_ops(sys.modules[__name__])  # Tensor operators call the constructors above
