"""The fused attention kernel's schedule knobs, searched by `ks.tune` without the build function declaring them.

A design whose schedule holds an attention kernel (fusion/attention.py) gets up to four knobs per such kernel,
named `<kernel>.s1`, `<kernel>.s2`, `<kernel>.slots` and `<kernel>.kv` (the dot keeps them apart from `ks.knob`
names, which are identifiers): the kernel's `split("s1", ...)`, `split("s2", ...)`, `slots(...)` and
`split("kv", ...)`. A knob is added only where the build function's schedule does not already state that
directive for the kernel (its own `ks.knob` then sets it). Their choices are the sensible stops, checked
against the chip's capacity at discovery (each axis with the others at the kernel's current values):

- s1 (query rows per task): 64, 128 and 256, those up to the query length and that fit (L0A holds an S1 block
  of Q, L0C one of S or P V);
- s2 (key/value columns per step): multiples of 128 (the cube walks a block in 128-column tiles) on the ladder
  128 x (1, 2, 3, 4, 6, 8, 12, 16, ...) up to the key length (its last stop the whole length) and up to the
  largest block UB and L1 hold;
- slots (S2 blocks in flight per core): 1 to 4;
- kv (FlashDecode parts, lower/attention_split.py): 1 up to the S2 blocks a task walks at the current S2 block,
  at most KV_MAX_PARTS, only where the auto schedule would split (S_q at decode size, DECODE_ROWS, and no causal
  mask: a causal kernel refuses the split with KvSplitError). The auto split picks its part count by an assumed
  cost model; the knob lets the simulator judge every count. With a wider S2 block from the s2 knob a count may
  exceed the blocks: the lowering refuses it (KvSplitError) and the tuner reports it.

A combination of stops that each fit alone may still overflow (a 256-row S1 block's float32 O accumulator beside
a wide S2 block in UB): the lowering's capacity check refuses it, and the tuner reports it with the buffer and
bytes, as for any other knob. `apply_attention_knobs` turns a configuration's values into those directives.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..core.errors import CapacityError, KernelStudioError
from ..fusion.attention import attention_parts
from ..lower.attention_split import DECODE_ROWS, KvSplitError
from ..lower.cube.shape import pad16
from ..schedule.directive import Directive
from ..schedule.knobs import Knob
from ..schedule.schedule import Schedule

__all__ = ["attention_knobs", "apply_attention_knobs", "directives_text", "knob_directive", "S1_STOPS", "S2_LADDER",
           "SLOT_STOPS", "KV_MAX_PARTS"]

S1_STOPS = (64, 128, 256)
S2_LADDER = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128)  # times 128 columns
SLOT_STOPS = (1, 2, 3, 4)
KV_MAX_PARTS = 8  # the kv knob's last stop, a cap that keeps the search small (assumed, not measured)
_WHAT = ("s1", "s2", "slots", "kv")


def knob_directive(kernel: str, what: str, value: int) -> Directive:
    """The directive a knob `<kernel>.<what>` sets to `value`."""
    if what == "slots":
        return Directive("slots", kernel, None, value)
    return Directive("split", kernel, what, value)


def _stated(sched: Schedule, kernel: str) -> set[str]:
    """Which of s1, s2, slots and kv the schedule's own directives set for this kernel."""
    out = set()
    for d in sched.for_kernel(kernel):
        if d.kind == "slots":
            out.add("slots")
        elif d.kind == "split" and d.axis in ("s1", "s2", "kv"):
            out.add(d.axis)
    return out


def _lower(sched: Schedule, directives: tuple[Directive, ...], target: Any) -> Any:
    from ..plan.depth import lower

    s = copy.copy(sched)  # every Schedule method replaces its fields, so the copy leaves `sched` as it is
    for d in directives:
        s.apply(d)
    return lower(s, target)


def _fits(sched: Schedule, d: Directive, target: Any) -> bool:
    try:
        _lower(sched, (d,), target)
    except (CapacityError, KvSplitError):  # KvSplitError: an S2 block too wide for the kv split the schedule states
        return False
    return True


def attention_knobs(sched: Schedule, target: Any) -> tuple[Knob, ...]:
    """The knobs (module doc) of every attention kernel of `sched` whose directive the schedule does not state;
    each default is the kernel's current value. None when the schedule holds no attention kernel or does not
    lower as it is."""
    kernels = [k for k in sched.kernels if k.family == "attention"]
    if not kernels:
        return ()
    try:
        prog = _lower(sched, (), target)
    except KernelStudioError:
        return ()
    tilings = {k.name: dict(k.tiling) for k in prog.kernels if k.family == "attention"}
    out: list[Knob] = []
    for fk in kernels:
        t = tilings.get(fk.name)
        if t is None:
            continue
        stated = _stated(sched, fk.name)
        m = attention_parts(fk.nodes)
        now = {"s1": int(t["s1_block"]), "s2": int(t["s2_block"]), "slots": int(t["ws_slots"]),
               "kv": int(t.get("kv_splits", 1))}
        decode = m.s1 <= DECODE_ROWS and not m.causal
        stops = {
            "s1": [v for v in S1_STOPS if v <= pad16(m.s1)],
            "s2": sorted({min(128 * r, pad16(m.s2)) for r in S2_LADDER if 128 * r < pad16(m.s2) + 128}),
            "slots": list(SLOT_STOPS),
            "kv": list(range(1, min(int(t["s2_blocks"]), KV_MAX_PARTS) + 1)) if decode else [],
        }
        for what in _WHAT:
            if what in stated:
                continue
            choices = _fitting(sched, fk.name, what, stops[what], now[what], target)
            if len(choices) > 1:
                out.append(Knob(f"{fk.name}.{what}", now[what], tuple(choices)))
    return tuple(out)


def _fitting(sched: Schedule, kernel: str, what: str, stops: list[int], now: int, target: Any) -> list[int]:
    """The stops that fit with the kernel's other values as they are, and the current value. s1 stops are
    probed one by one; s2 stops in increasing order until the first that overflows (UB and L1 only grow with
    the S2 block) or leaves fewer blocks than the kv split the schedule states; slots and kv always fit (the
    workspaces are in GM; kv's stops are within the kernel's S2 blocks)."""
    if what in ("slots", "kv"):
        return sorted({*stops, now})
    keep = []
    for v in stops:
        if v == now or _fits(sched, knob_directive(kernel, what, v), target):
            keep.append(v)
        elif what == "s2" and v > now:
            break
    return sorted({*keep, now})


def apply_attention_knobs(sched: Schedule, config: Mapping[str, Any]) -> Schedule:
    """`sched` with the directives of the configuration's attention knobs (`<kernel>.s1` etc.) appended, as a
    copy (`sched` is left as it is); a knob whose kernel the schedule does not hold (a knob of the build function
    changed the plan) sets nothing. `sched` itself when the configuration holds no such knob."""
    names = {k.name: k for k in sched.kernels}
    moves = []
    for key, value in config.items():
        kernel, dot, what = key.rpartition(".")
        if dot and what in _WHAT and kernel in names and names[kernel].family == "attention":
            moves.append(knob_directive(kernel, what, value))
    if not moves:
        return sched
    s = copy.copy(sched)
    for d in moves:
        s.apply(d)
    return s


def directives_text(config: Mapping[str, Any]) -> str:
    """The configuration's attention knobs as the Stage calls that state them: `s['attention_out'].split('s1',
    64).slots(4).split('kv', 3)`."""
    calls: dict[str, list[str]] = {}
    for key, value in config.items():
        kernel, dot, what = key.rpartition(".")
        if dot and what in _WHAT:
            calls.setdefault(kernel, []).append(f"slots({value})" if what == "slots" else f"split({what!r}, {value})")
    return "; ".join(f"s[{k!r}]." + ".".join(c) for k, c in calls.items())
