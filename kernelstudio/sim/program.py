"""The simulator's form of a TileIR kernel: one flat op list per core side (AIC, AIV) and a table of
static instructions, as `compile.compile_side` builds them and the engine walks them.

Each statement becomes one tuple in a flat list (loops become a LOOP op and an END op that jumps
back), so the engine walks a program with one `while` loop and can pause at a cross-core wait and
resume later. The first field of each tuple is one of the K_* op codes below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..tileir.expr import Expr
from ..tileir.program import Stmt

__all__ = ["PIPES", "PIPE_INDEX", "StaticInstr", "LoopInfo", "CoreProgram", "SYNC_TEXT", "SYNC_WAIT", "zero_load",
           "K_WORK", "K_LET", "K_LOOP", "K_END", "K_IF", "K_ALLOC", "K_ENQUE", "K_DEQUE",
           "K_FREE", "K_CSET", "K_CWAIT", "K_FSET", "K_FWAIT", "K_SYNC"]

PIPES = ("S", "MTE1", "MTE2", "MTE3", "M", "V", "FIX", "FLOW")  # FLOW: scalar stalls on flags
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}

(K_WORK, K_LET, K_LOOP, K_END, K_IF, K_ALLOC, K_ENQUE, K_DEQUE, K_FREE, K_CSET,
 K_CWAIT, K_FSET, K_FWAIT, K_SYNC) = range(14)


@dataclass(frozen=True, slots=True)
class StaticInstr:
    """One instruction of the program text: what it is, where its data goes, how it is priced."""

    sid: int
    kernel: int
    side: str  # "aic" | "aiv"
    pipe: int  # index into PIPES
    # "copy" | "mmad" | "img2col" | "vec" | "vcall" | "reduce" | "topk" | "mrgsort" | "gate" | "scalar" | "wait"
    kind: str
    text: str
    edge: str = ""  # memory edge of a data move ("GM->L1", "L0C->WS", ...), "" otherwise
    src: str = ""  # tier names for the cost model
    dst: str = ""
    tensor: str = ""  # GM tensor of a GM move
    gm_write: bool = False
    nd2nz: bool = False
    op: str = ""  # vector / reduce op
    dtype: str = ""  # element dtype the cost uses
    dst_dtype: str = ""  # cast destination / copy dtype on the written side
    accumulate: bool = False
    form: str = ""  # VecCall: "repeat" (sizes: repeats) or "count" (sizes: elements); mrgsort: "negated" ascending
    outer_loop: int = -1  # loop ids (index into CoreProgram.loops), -1 when not in a loop
    inner_loop: int = -1
    per_row: int = 0  # "gate": scalar element visits per row (sim.costs.gate_visits)
    stage: str = ""  # the kernel stage it belongs to (the enclosing TileIR Loop's `stage`), "" none


@dataclass(slots=True)
class LoopInfo:
    """What the steady-state shortcut needs to know about one loop."""

    lid: int
    var: str
    eligible: bool  # no cross-core wait and no scalar buffer read inside
    lets: tuple[tuple[str, Callable[..., int]], ...]  # body-level Lets, in order
    key_fns: tuple[Callable[..., int], ...] | None  # None: iterations cannot be keyed
    key_exprs: tuple[Expr, ...]
    outer_var: str  # the outermost loop variable enclosing this loop ("" if none)
    pipes: tuple[int, ...] = ()  # pipes and queue buffers its body touches (set after compiling)
    bufs: tuple[int, ...] = ()
    period: int = 1  # longest repeat the shortcut looks for: lcm of the touched queue depths (<= 8)
    memo: tuple[str, ...] | None = None  # the iteration memo's key variables (memo.py); None: not memoised
    stage: str = ""  # the TileIR Loop's stage: its variable is the block each iteration runs that stage of


@dataclass(slots=True)
class CoreProgram:
    """One side (AIC or AIV) of a kernel, flattened."""

    side: str
    ops: list[tuple]
    stmts: tuple[Stmt, ...]
    loops: list[LoopInfo]
    queue_bufs: list[str]  # buffers with queue semantics, index = buffer id in ops
    depths: list[int]
    instrs: int  # static instruction count
    scalar_sid: int  # static entry for the scalar unit's issue spans
    load: Callable[[str, int], int] | None = None  # scalar reads of GM the kernel plans (Kernel.planned_loads)


# the static instruction text of a SyncAll (the views name the barrier by it)
SYNC_TEXT = "sync_all (every AIC and AIV of the launch)"
SYNC_WAIT = "(the last core had not arrived)"  # how a wait at it is worded


def zero_load(buf: str, index: int) -> int:
    """The value a scalar read of a buffer (`Load` in a `Let`) takes: the simulator has no data."""
    return 0
