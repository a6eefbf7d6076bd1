"""Analyses of a lowered program that more than one reader needs, each with a printed form: the steps
after the pass pipeline (`ks.PASSES`) that the simulator and the code generator run, listed here so the
Studio's Passes view can show them too.

`ANALYSES` is a list of (name, what it decides, program -> text); the code generator adds its own
(operator naming) in `codegen.ANALYSES`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import UnsupportedError
from .printer import instr_text, region_text
from .program import Copy, Kernel, Program, Reduce, Tier, VecCall, VecOp, walk
from .scratch import scratch_buffers
from .vec_calls import calls_of

__all__ = ["ANALYSES", "Analysis", "vector_calls_text", "scratch_text"]

Analysis = tuple[str, str, Callable[[Program], str]]


def _call(c: VecCall) -> str:
    srcs = ", ".join(region_text(r) for r in c.srcs)
    scalar = f", {c.scalar:g}" if c.scalar is not None else ""
    if c.form == "count":
        shape = f"count={c.count}"
    else:
        shape = f"mask={c.mask} repeats={c.repeats} params={list(c.params)}"
    return f"{c.api}({region_text(c.dst)}, {srcs}{scalar})  {c.dtype} {shape}"


def _kernel_calls(k: Kernel, out: list[str]) -> None:
    tiers = {b.name: b.tier for b in k.buffers}
    for side, stmts in (("aic", k.aic), ("aiv", k.aiv)):
        for s in walk(stmts):
            if not isinstance(s, (VecOp, Reduce, Copy)):
                continue
            if isinstance(s, Copy) and not (tiers.get(s.src.buf) is Tier.UB and tiers.get(s.dst.buf) is Tier.UB):
                continue  # a data move (MTE), not a vector copy
            try:
                exp = calls_of(k, s)
            except UnsupportedError as e:
                out.append(f"  {side}: {instr_text(s, tiers).strip()}\n    not expanded: {str(e).splitlines()[0]}")
                continue
            if exp is None:
                continue
            calls = [c for c in walk(exp.stmts) if isinstance(c, VecCall)]
            work = f"  (scratch {exp.work} x {exp.dtype})" if exp.work else ""
            out.append(f"  {side}: {instr_text(s, tiers).strip()}{work}")
            out.extend(f"    -> {_call(c)}" for c in calls)


def vector_calls_text(prog: Program) -> str:
    """Every vector instruction that becomes more than one contiguous call, and the Ascend C calls
    (repeat or count form) it becomes: what the code generator writes and the simulator prices."""
    out: list[str] = []
    for k in prog.kernels:
        out.append(f"kernel {k.name}")
        n = len(out)
        _kernel_calls(k, out)
        if len(out) == n:
            out.append("  (every vector instruction is one contiguous count-form call)")
    return "\n".join(out) + "\n"


def scratch_text(prog: Program) -> str:
    """The TBuf scratch (VECCALC) each kernel's vector statements need in UB besides its own buffers."""
    out: list[str] = []
    for k in prog.kernels:
        scratch = scratch_buffers(k)
        out.append(f"kernel {k.name}: " + ("no scratch" if not scratch else
                                           f"{sum(n for n, _ in scratch.values()):,} B"))
        out.extend(f"  {name}: {n:,} B  {purpose}" for name, (n, purpose) in sorted(scratch.items()))
    return "\n".join(out) + "\n"


ANALYSES: list[Analysis] = [
    ("expand_vector_calls", "vector instructions as the Ascend C calls they become", vector_calls_text),
    ("size_scratch", "UB scratch of the vector statements", scratch_text),
]

