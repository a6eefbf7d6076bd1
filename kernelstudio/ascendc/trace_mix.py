"""A MIX kernel's Matmul object called from vector code, placed where the chip runs it: on the block's AIC.

In a `KERNEL_TYPE_MIX_AIC_1_2` kernel that registers its Matmul object (`REGIST_MATMUL_OBJ`), the vector cores
call Iterate / GetTensorC and the block's cube core does the work. The twin logs that work (copies to L1, L0
loads, Mmads, Fixpipes, marked internal=1) at the vector core's call; here each run of those calls is one
request, and the trace becomes the hand-off the chip performs:

- the vector core signals the request (a cross-core set by its scalar) and goes on; after a request that
  delivers a C tile (a Fixpipe) it waits for the cube's answer, then reads the tile in (on a chip without an
  L0C -> UB path, the GM -> UB half of the trip stays on the vector core);
- the cube core, after its own calls, serves request n of vector core 0 and then of vector core 1 once both
  have asked (a vector core with fewer requests signals its missing ones at its start, so it never holds the
  cube), and answers each delivering request with a set after its Fixpipe. Each vector core's Matmul object
  keeps its own cube-side buffers (vector core 1's are copies named `<buffer> (AIV1)`), as two objects do.

The order in which the cube core interleaves the two vector cores' requests is the model's (the chip serves
them as their messages arrive); the work, its bytes and its pipes are the run's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields, replace

from ..tileir.program import Copy, CrossSet, CrossWait, Pipe, Region, Stmt
from ..twin.calllog import Call

__all__ = ["REQUEST_FLAG", "ANSWER_FLAG", "SECOND_OBJECT", "served_by_cube", "serve_on_cube"]

REQUEST_FLAG = 1 << 21  # a vector core asks its cube core for its next Matmul request (beside the user's flags)
ANSWER_FLAG = REQUEST_FLAG + 1  # + the vector core's sub-block index: the cube has delivered its C tile

_CUBE_WORK = ("Mmad", "LoadData", "Fixpipe")
SECOND_OBJECT = " (AIV1)"  # the suffix of vector core 1's Matmul object's copy of a cube-side buffer


def _renamed(stmt: Stmt, cube_side: Callable[[str], bool]) -> Stmt:
    """`stmt` on vector core 1's object: its cube-side buffers (by name or in a Region) renamed."""
    changes = {}
    for f in fields(stmt):  # type: ignore[arg-type]
        v = getattr(stmt, f.name)
        if isinstance(v, Region) and not v.gm and cube_side(v.buf):
            changes[f.name] = replace(v, buf=v.buf + SECOND_OBJECT)
        elif f.name == "buf" and isinstance(v, str) and cube_side(v):
            changes[f.name] = v + SECOND_OBJECT
    return replace(stmt, **changes) if changes else stmt  # type: ignore[type-var]


def served_by_cube(calls: Sequence[Call]) -> int:
    """How many of a MIX launch's cube-work calls (Mmad, LoadData, Fixpipe) a vector core logged for its
    Matmul object (0: the kernel calls no Matmul from vector code)."""
    return sum(1 for c in calls if c.core != "AIC" and int(c.args.get("internal", 0)) == 1 and c.api in _CUBE_WORK)


def _requests(seq: Sequence[Call]) -> list[list[Call] | Call]:
    """The vector core's calls with each run of Matmul-internal calls gathered into one request (a list)."""
    out: list[list[Call] | Call] = []
    for c in seq:
        if int(c.args.get("internal", 0)) == 1:
            if out and isinstance(out[-1], list):
                out[-1].append(c)
            else:
                out.append([c])
        else:
            out.append(c)
    return out


def serve_on_cube(by_core: dict[tuple[int, str], list[Call]], translate: Callable[[Sequence[Call]], list[Stmt]],
                  via_gm: str, cube_side: Callable[[str], bool]) -> dict[tuple[int, str], list[Stmt]]:
    """Each core's statements of a MIX launch whose vector cores call a Matmul object: the vector cores'
    requests handed to their block's AIC (module doc). `translate` turns calls into statements; `via_gm` is the
    GM buffer a C tile to a local tensor goes through, whose read back stays on the vector core; `cube_side`
    says whether a buffer name is in the cube core's memories (vector core 1's object gets copies of those)."""
    out: dict[tuple[int, str], list[Stmt]] = {}
    blocks = sorted({b for b, _ in by_core})
    for block in blocks:
        served: dict[int, list[tuple[list[Stmt], bool]]] = {}  # per sub-block: (cube statements, delivers)
        vec: dict[int, list[Stmt]] = {}
        for sub, core in enumerate(("AIV0", "AIV1")):
            body: list[Stmt] = []
            mine: list[tuple[list[Stmt], bool]] = []
            for item in _requests(by_core.get((block, core), [])):
                if not isinstance(item, list):
                    body += translate([item])
                    continue
                stmts = translate(item)
                back = [s for s in stmts if isinstance(s, Copy) and s.src.buf == via_gm]
                delivers = any(c.api == "Fixpipe" for c in item)
                work = [s for s in stmts if not any(s is b for b in back)]
                mine.append(([_renamed(s, cube_side) for s in work] if sub else work, delivers))
                body.append(CrossSet(REQUEST_FLAG, Pipe.S))
                if delivers:
                    body += [CrossWait(ANSWER_FLAG + sub), *back]
            served[sub], vec[sub] = mine, body
        n = max(len(r) for r in served.values())
        cube = translate(by_core.get((block, "AIC"), []))
        for i in range(n):
            cube.append(CrossWait(REQUEST_FLAG))
            for sub in (0, 1):
                if i < len(served[sub]):
                    stmts, delivers = served[sub][i]
                    cube += stmts + ([CrossSet(ANSWER_FLAG + sub, Pipe.FIX)] if delivers else [])
        for sub, core in enumerate(("AIV0", "AIV1")):  # the missing requests of the one that asked less
            out[(block, core)] = [CrossSet(REQUEST_FLAG, Pipe.S)] * (n - len(served[sub])) + vec[sub]
        out[(block, "AIC")] = cube
    return out
