"""Precision facts of a fused kernel: which ops a kernel may compute natively in float16 and still round as
the golden model does. The lowering (its compute_dtype pass) and the plan-following golden model both read
them, so they live here, below both."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.errors import ScheduleError
from ..ir.node import Node
from ..ir.ops import Op
from .partition import FusedKernel, slice_view

__all__ = ["NATIVE_OPS", "COMPUTE_DTYPES", "LAYOUT_LOWERED", "native_blockers", "is_axis_reduce", "native_float16",
           "lowered_apart"]

# Ops whose float16 result computed natively equals the golden model's (float32 math, result rounded
# to float16): exact ops, and + - * whose float32 result rounded once is the correctly rounded fp16
# result (float32 holds 2 x 11 + 2 bits). Division and the transcendental ops are left in float32.
NATIVE_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.MAXIMUM, Op.MINIMUM, Op.NEG, Op.ABS, Op.RELU, Op.SQUARE,
                        Op.LEAKY_RELU, Op.RESHAPE, Op.BROADCAST_TO, Op.SLICE, Op.WHERE, Op.CONST})
COMPUTE_DTYPES = ("auto", "float16", "float32")  # the values of the compute_dtype directive
LAYOUT_LOWERED = (Op.TRANSPOSE, Op.SLICE, Op.CONCAT, Op.TOPK, Op.GATHER,  # ops lowered on their own
                  Op.SCATTER, Op.SORT, Op.HISTOGRAM, Op.MOE_GATING)  # (lower/layout.py, scatter.py, sort.py, gating.py)


def lowered_apart(fk: FusedKernel) -> bool:
    """A kernel of an op in LAYOUT_LOWERED (a split part that is a strided window is a vector kernel)."""
    return fk.nodes[0].op in LAYOUT_LOWERED and not slice_view(fk.nodes[0])


def native_blockers(nodes: Sequence[Node], dtype: str = "float16") -> list[str]:
    """The ops that keep `nodes` from being computed natively in `dtype` (empty: none do)."""
    out = []
    for n in nodes:
        if n.op is Op.CONST:
            continue
        if n.op not in NATIVE_OPS:
            out.append(f"{n.op.value} (computed in float32 for precision)")
        elif n.dtype != dtype:
            out.append(f"{n.op.value} on {n.dtype}")
    return out


def is_axis_reduce(fk: FusedKernel) -> bool:
    """A kernel of one reduction that does not reduce (only) the last axis of a row tile."""
    n = fk.nodes[0]
    return len(fk.nodes) == 1 and n.info.kind.value == "reduce" and fk.view(n) != "col"


def native_float16(fk: FusedKernel, want: str) -> bool:
    """Whether kernel `fk` computes its vector math natively in float16 under compute_dtype(`want`)
    ("auto", "float16", "float32"): the lowering and the plan-following golden model both ask this."""
    nodes = [n for n in fk.nodes if n is not fk.root]
    if lowered_apart(fk) or is_axis_reduce(fk) or not nodes or want == "float32":
        return False
    blockers = native_blockers(nodes, "float16")
    if want == "float16" and blockers:
        raise ScheduleError(
            f"kernel {fk.name}: compute_dtype('float16') but {', '.join(blockers)} cannot be computed "
            "natively in float16 with the golden model's rounding; use compute_dtype('auto') (float16 "
            "where every op allows it) or compute_dtype('float32')")
    return not blockers
