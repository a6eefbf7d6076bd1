"""Kernels compiled, fingerprinted and simulated once across programs: a move that changes one kernel of a
20-kernel program pays for that kernel.

Lowering hands back the very same (frozen) Kernel object for a kernel a schedule move left alone
(lower/pipeline.py keeps the kernels it emitted), so the simulator keys by that object (kept alive with its
entry, so its id is never reused while cached), and by its value for an equal kernel built anew (a design
built again once lowering forgot its kernels), and keeps per kernel:

- its compiled sides (compile.py) with their static instructions numbered from 0, and the GM tensors the
  compiler read of the program (a copy's dtype and whether it is a workspace), checked on every hit. A program
  places them at its own offset: sid = base + the kernel's own number (`Compiled.placed`).
- its block classes: blocks with equal fingerprints (fingerprint.py) as the first such block's index, once
  per placement (AIC/AIV core counts) and shortcut setting, so a pass compares small ints, not fingerprints.
- its simulations (`Compiled.runs`). A kernel's blocks run from idle cores and each instruction's price reads
  the profile, the instruction, the L2 hit ratio of its GM move and the memory share of its wave, nothing
  else. So a run is keyed by the profile, the shortcut and memo settings, the blocks simulated in each
  block's place and, in the kernel's own numbering, the hit ratios of its GM moves and the shares of its
  waves. The L2 state that crosses kernel boundaries (what earlier kernels left resident, what later ones
  evict before a write reaches HBM) reaches a kernel through its hit ratios alone (l2.py computes them for the
  whole program), so a kernel after a changed one is simulated again exactly when its ratios moved.

A cached run is the same arithmetic on the same numbers: its events, relocated to the program's sids (the sid
column and the flag-wait `why` codes shifted by `base`), are bit for bit those of a fresh simulation; the
tests compare both (`ENABLED = False` turns the caches off).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..tileir.program import GmTensor, Kernel, Program
from .compile import compile_side
from .engine import WHY_FLAG
from .program import CoreProgram, StaticInstr

__all__ = ["ENABLED", "MAX_KERNELS", "MAX_RUNS", "Compiled", "compiled", "relocate", "clear"]

ENABLED = True  # off: every program compiled and simulated afresh (the tests compare both)
MAX_KERNELS = 128  # kernels kept (their compiled sides and runs); a larger heap slows every garbage collection
MAX_RUNS = 16  # runs kept per kernel (the passes of a few programs; each holds one block class's events)

# by the kernel object's id (the kernel kept with it), and by its value (hash and == walk its statements: the
# second lookup, for an equal kernel lowering built anew)
_BY_ID: OrderedDict[int, tuple[Kernel, Compiled]] = OrderedDict()
_BY_VALUE: OrderedDict[_ByValue, Compiled] = OrderedDict()


class _ByValue:
    """A kernel as a key by its value, its hash computed once: a kernel hashes by walking every statement, and a
    lookup, an insertion and a move to the end would each walk it again."""

    __slots__ = ("kernel", "hash")

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.hash = hash(kernel)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByValue) and self.hash == other.hash and self.kernel == other.kernel


class _Reads:
    """The program as the compiler sees it: `tensor(name)`, recording the tensors it asked for."""

    def __init__(self, prog: Program) -> None:
        self.prog = prog
        self.read: dict[str, GmTensor] = {}

    def tensor(self, name: str) -> GmTensor:
        t = self.prog.tensor(name)
        self.read[name] = t
        return t


@dataclass
class Compiled:
    """One kernel compiled on its own: its sides and static instructions in its own numbering (from 0)."""

    kernel: Kernel
    tensors: tuple[tuple[str, GmTensor], ...]  # what the compiler read of the program
    sides: dict[str, CoreProgram]
    statics: list[StaticInstr]
    outer_ids: np.ndarray  # per own sid: its outermost / innermost loop id (-1 none)
    inner_ids: np.ndarray
    moves: tuple[int, ...]  # own sids of the GM moves (the instructions that have an L2 hit ratio)
    classes: dict[tuple, list] = field(default_factory=dict)  # block classes per placement and shortcuts
    runs: OrderedDict[tuple, Any] = field(default_factory=OrderedDict)  # run key -> the kernel's run
    _placed: dict[tuple[int, int], list[StaticInstr]] = field(default_factory=dict)
    _prices: dict[int, tuple[Any, dict[int, dict]]] = field(default_factory=dict)

    def fixed_prices(self, profile: Any) -> dict[int, dict]:
        """Per own sid of an instruction that is not a GM move, its price table on `profile` ((sizes) -> (cycles,
        bytes, flops)), shared by every Pricer of the kernel's runs: only a GM move's price reads the L2 hit
        ratios and memory shares (costs.py). Keyed by the profile object, kept with its tables (a profile hashes
        by value, slowly)."""
        hit = self._prices.get(id(profile))
        if hit is None or hit[0] is not profile:
            hit = self._prices[id(profile)] = (profile, {s.sid: {} for s in self.statics
                                                         if not (s.kind == "copy" and s.tensor)})
        return hit[1]

    def placed(self, base: int, kidx: int) -> list[StaticInstr]:
        """The static instructions as kernel `kidx` of a program whose earlier kernels hold `base` of them."""
        if not base and not kidx:  # compiled as kernel 0 from sid 0: these very (frozen) instructions
            return self.statics
        key = (base, kidx)
        if key not in self._placed:
            self._placed[key] = [replace(s, sid=s.sid + base, kernel=kidx) for s in self.statics]
        return self._placed[key]

    def block_classes(self, key: tuple, compute: Callable[[], list]) -> list:
        if key not in self.classes:
            self.classes[key] = compute()
        return self.classes[key]

    def run(self, key: tuple, compute: Callable[[], Any]) -> Any:
        hit = self.runs.get(key)
        if hit is None:
            hit = self.runs[key] = compute()
            if len(self.runs) > MAX_RUNS:
                self.runs.popitem(last=False)
        else:
            self.runs.move_to_end(key)
        return hit


def _compile(prog: Program, kernel: Kernel) -> Compiled:
    statics: list[StaticInstr] = []
    reads = _Reads(prog)
    sides = {}
    if kernel.aic:
        sides["aic"] = compile_side(reads, kernel, 0, "aic", statics)  # type: ignore[arg-type]
    if kernel.aiv:
        sides["aiv"] = compile_side(reads, kernel, 0, "aiv", statics)  # type: ignore[arg-type]
    return Compiled(kernel, tuple(reads.read.items()), sides, statics,
                    np.array([s.outer_loop for s in statics], dtype=np.int64),
                    np.array([s.inner_loop for s in statics], dtype=np.int64),
                    tuple(s.sid for s in statics if s.kind == "copy" and s.tensor))


def compiled(prog: Program, kernel: Kernel) -> Compiled:
    """`kernel` of `prog` compiled on its own, from the cache when this kernel (the same object, else an equal one:
    frozen TileIR compares by value) compiled before against the same GM tensors."""
    if not ENABLED:
        return _compile(prog, kernel)
    hit = _BY_ID.get(id(kernel))
    key = None
    if hit is not None and hit[0] is kernel:
        c = hit[1]
    else:
        key = _ByValue(kernel)
        c = _BY_VALUE.get(key)
    if c is None or not all(_tensor(prog, n) == t for n, t in c.tensors):
        c = _compile(prog, kernel)
        _keep(_BY_VALUE, key or _ByValue(kernel), c)
    _keep(_BY_ID, id(kernel), (kernel, c))  # the kernel kept alive with it: its id is not reused while cached
    return c


def _keep(cache: OrderedDict, key: Any, value: Any) -> None:
    if key in cache:
        cache.move_to_end(key)
    cache[key] = value
    if len(cache) > MAX_KERNELS:
        cache.popitem(last=False)


def _tensor(prog: Program, name: str) -> GmTensor | None:
    try:
        return prog.tensor(name)
    except KeyError:
        return None


def relocate(a: np.ndarray, base: int) -> np.ndarray:
    """Event rows of a kernel's own numbering as sids `base` on: the sid column and flag-wait why codes."""
    if not base or not len(a):
        return a
    a = a.copy()
    a[:, 3] += base
    flag = a[:, 9] >= WHY_FLAG
    a[flag, 9] += base
    return a


def clear() -> None:
    """Forget every cached kernel."""
    _BY_ID.clear()
    _BY_VALUE.clear()
