"""Fusion rules as data: each has a name and the one-line reason the DAG view shows."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FusionRule", "RULES", "rule"]


@dataclass(frozen=True, slots=True)
class FusionRule:
    name: str
    fuses: bool  # True: the rule joins a node to its producer's kernel; False: it starts a kernel
    reason: str


RULES: tuple[FusionRule, ...] = (
    FusionRule("cube_epilogue", True,
               "elementwise/broadcast/row-reduction consumer of a Cube result runs on the vector cores "
               "as its epilogue: the C tile goes through L2-resident workspace, not a GM round trip"),
    FusionRule("elementwise_chain", True,
               "elementwise op on the same iteration space as its producer: computed on the tile "
               "already in UB"),
    FusionRule("row_reduction", True,
               "reduction over the last axis and its users stay in one kernel: statistics and the "
               "normalisation share the rows in UB (full-row or multi-pass)"),
    FusionRule("cube_root", False,
               "a matmul/conv starts its own kernel: one Cube computation per kernel"),
    FusionRule("layout_boundary", False,
               "reshape/transpose/broadcast_to/split/concat/topk/gather/scatter change the iteration space: own "
               "kernel"),
    FusionRule("slice_window", False,
               "a split part along the last axis (or of whole rows) starts a vector kernel that reads its band of "
               "the input with one strided copy per tile; its elementwise consumers join it"),
    FusionRule("space_mismatch", False,
               "operands do not map onto the producer's [rows, cols] tile (full, row vector, column "
               "vector or scalar): new kernel"),
    FusionRule("non_row_reduction", False,
               "a reduction over other than the last axis cannot share row tiles: own kernel"),
    FusionRule("kept_out", False, "the schedule keeps this op out of fused kernels"),
    FusionRule("cost_split", False,
               "the simulator found the matmul/conv and this epilogue faster as separate kernels (both "
               "times in the kernel notes); create_schedule(..., fuse=True) keeps them in one kernel"),
    FusionRule("composite_whole", False,
               "a composite op (layer_norm, rms_norm, softmax, ...) joins a matmul/conv kernel whole or not at "
               "all, and not all of its ops fit that kernel's tiles: a part left outside would read the cube's "
               "result back from GM, moving more bytes than no fusion"),
    FusionRule("unfused", False, "fusion is off: every op is its own kernel and intermediates round-trip GM"),
    FusionRule("cycle", False,
               "joining the producer's kernel would make kernels depend on each other: new kernel"),
    FusionRule("branch_join", True,
               "two branches from the same inputs rejoin at one op (x * 0.5 * (1 + erf(x)), ...): both "
               "branches are computed on the same tiles in UB, one kernel"),
    FusionRule("composite", True,
               "unfused plans keep one library call (layer_norm, softmax, gelu, ...) as one kernel"),
    FusionRule("attention", True,
               "softmax(Q K^T * scale) V per (batch, head): one cube-vector-cube kernel that walks the key/value "
               "sequence in blocks with the online softmax, so the scores S and probabilities P stay in the "
               "cores' workspaces and never make a round trip through HBM"),
    FusionRule("attention_layout", True,
               "a reshape or transpose of ks.ops.flash_attention's layout glue (BSND / BSH to (B, N, S, D), GQA's "
               "grouped heads): the attention kernel reads and writes the user's tensors through it in place, "
               "with their own row strides, so no copy kernel moves them"),
    FusionRule("new_kernel", False, "first op of its kernel"),
)

_BY_NAME = {r.name: r for r in RULES}


def rule(name: str) -> FusionRule:
    return _BY_NAME[name]
