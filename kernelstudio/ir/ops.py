"""The one enum of graph operations, grouped, with a rules table saying what each op is.

Adding an op means: one line in `Op`, one entry in `OP_INFO`, one golden rule (ir/golden.py),
and one lowering rule per family that can hold it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..core.dtypes import DTYPES, FLOAT_DTYPES, itemsize  # dtype facts live in core; re-exported for ops

__all__ = ["Op", "Kind", "Unit", "OpInfo", "OP_INFO", "DTYPES", "FLOAT_DTYPES", "itemsize"]


class Op(enum.Enum):
    # leaves
    PLACEHOLDER = "placeholder"
    CONST = "const"  # a scalar constant (shape ()), attrs: value
    # elementwise unary
    NEG = "neg"
    ABS = "abs"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    RECIPROCAL = "reciprocal"
    SQUARE = "square"
    ERF = "erf"
    TANH = "tanh"
    SIGMOID = "sigmoid"
    RELU = "relu"
    LEAKY_RELU = "leaky_relu"  # attrs: alpha
    CAST = "cast"  # target dtype is the node's dtype
    # elementwise binary (numpy broadcasting)
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    # elementwise ternary
    WHERE = "where"  # cond != 0 ? a : b
    # reductions over attrs axes (a sorted tuple of non-negative dims), attrs keepdims
    REDUCE_SUM = "reduce_sum"
    REDUCE_MEAN = "reduce_mean"
    REDUCE_MAX = "reduce_max"
    # cube
    MATMUL = "matmul"  # attrs: transpose_a, transpose_b; leading dims broadcast as batch (batch_axis=1: per head)
    CONV2D = "conv2d"  # NCHW x OIHW; attrs: stride (sh, sw), padding (pt, pb, pl, pr)
    # layout
    RESHAPE = "reshape"
    TRANSPOSE = "transpose"  # attrs: perm
    BROADCAST_TO = "broadcast_to"
    SLICE = "slice"  # one part of ks.split: attrs axis, start (the size is the node's shape[axis])
    CONCAT = "concat"  # attrs: axis; inputs in order
    # index / MoE
    TOPK = "topk"  # attrs: k, axis, which ("values" | "indices")
    GATHER = "gather"  # inputs (x, indices); attrs: axis, row_divisor (optional: row indices[i] // it)
    SCATTER = "scatter"  # inputs (cache, index, values); attrs: layout, inplace (the input it updates: 0)
    GROUPED_MATMUL = "grouped_matmul"  # inputs (x, weights, group_list); attrs: group_list_type, plan_sizes
    SORT = "sort"  # stable; attrs: axis, descending, which ("values" | "indices")
    HISTOGRAM = "histogram"  # int32 ids -> int32 counts [bins]; attrs: bins, per_row (ids per token, for messages)
    MOE_GATING = "moe_gating"  # inputs (logits, bias); attrs: k, groups, topk_groups, ..., which ("weights" | "ids")


class Kind(enum.Enum):
    LEAF = "leaf"
    UNARY = "unary"
    BINARY = "binary"
    TERNARY = "ternary"
    REDUCE = "reduce"
    CUBE = "cube"
    LAYOUT = "layout"
    INDEX = "index"


class Unit(enum.Enum):
    """The unit of an AI Core that runs an op (the DAG view colours nodes by it)."""

    CUBE = "cube"
    VECTOR = "vector"
    SCALAR = "scalar"
    NONE = "none"  # leaves: data, not work


@dataclass(frozen=True, slots=True)
class OpInfo:
    kind: Kind
    unit: Unit

    @property
    def elementwise(self) -> bool:
        return self.kind in (Kind.UNARY, Kind.BINARY, Kind.TERNARY)


_U, _B = Kind.UNARY, Kind.BINARY
OP_INFO: dict[Op, OpInfo] = {
    Op.PLACEHOLDER: OpInfo(Kind.LEAF, Unit.NONE),
    Op.CONST: OpInfo(Kind.LEAF, Unit.NONE),
    **{op: OpInfo(_U, Unit.VECTOR) for op in (
        Op.NEG, Op.ABS, Op.EXP, Op.LOG, Op.SQRT, Op.RSQRT, Op.RECIPROCAL, Op.SQUARE, Op.ERF,
        Op.TANH, Op.SIGMOID, Op.RELU, Op.LEAKY_RELU, Op.CAST)},
    **{op: OpInfo(_B, Unit.VECTOR) for op in (
        Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.MAXIMUM, Op.MINIMUM)},
    Op.WHERE: OpInfo(Kind.TERNARY, Unit.VECTOR),
    Op.REDUCE_SUM: OpInfo(Kind.REDUCE, Unit.VECTOR),
    Op.REDUCE_MEAN: OpInfo(Kind.REDUCE, Unit.VECTOR),
    Op.REDUCE_MAX: OpInfo(Kind.REDUCE, Unit.VECTOR),
    Op.MATMUL: OpInfo(Kind.CUBE, Unit.CUBE),
    Op.CONV2D: OpInfo(Kind.CUBE, Unit.CUBE),
    Op.RESHAPE: OpInfo(Kind.LAYOUT, Unit.SCALAR),  # a view: no data moves
    Op.TRANSPOSE: OpInfo(Kind.LAYOUT, Unit.VECTOR),
    Op.BROADCAST_TO: OpInfo(Kind.LAYOUT, Unit.VECTOR),
    Op.SLICE: OpInfo(Kind.LAYOUT, Unit.VECTOR),  # strided moves GM -> UB -> GM
    Op.CONCAT: OpInfo(Kind.LAYOUT, Unit.VECTOR),
    Op.TOPK: OpInfo(Kind.INDEX, Unit.VECTOR),  # vector Sort + extract
    Op.GATHER: OpInfo(Kind.INDEX, Unit.SCALAR),  # index-driven moves
    Op.SCATTER: OpInfo(Kind.INDEX, Unit.SCALAR),  # index-driven rows into a paged cache, in place
    Op.GROUPED_MATMUL: OpInfo(Kind.CUBE, Unit.CUBE),  # MoE experts: x's rows by group, each @ its weights
    Op.SORT: OpInfo(Kind.INDEX, Unit.VECTOR),  # vector Sort over a row (TopK with k = row length)
    Op.HISTOGRAM: OpInfo(Kind.INDEX, Unit.VECTOR),  # per bin: compare, select, sum over the ids
    Op.MOE_GATING: OpInfo(Kind.INDEX, Unit.VECTOR),  # sigmoid + bias on the vector unit, selection on the scalar
}
