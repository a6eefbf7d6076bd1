"""The per-kernel lowering configuration that the pass pipeline fills in, decision by decision."""

from __future__ import annotations

from dataclasses import dataclass, fields
from operator import attrgetter

__all__ = ["KernelConfig"]


@dataclass(frozen=True, slots=True)
class KernelConfig:
    """Every choice the lowering of one kernel depends on.

    Cube tiles (tile_m x tile_n x tile_k) apply to matmul/conv-rooted kernels; tile_rows x
    tile_cols is the vector tile (vector kernels) or the epilogue chunk one AIV computes at a time.
    """

    tile_m: int = 0
    tile_n: int = 0
    tile_k: int = 0
    tile_rows: int = 1
    tile_cols: int = 1
    order: tuple[str, ...] = ("m", "n")
    order_by: str = ""  # the directive that set `order` (reorder/parallel with an axis); "" = the default
    swizzle_group: int = 0  # cube C tiles walked in groups of this many tile rows/columns; 0 = `order`
    swizzle_dir: str = "m"  # "m": groups of tile rows, "n": groups of tile columns (tile_order.py)
    cores: int = 1
    depth: int = 1
    aligned: bool = False
    inline_scalars: bool = False
    step_ka: int = 1  # k tiles one L1 load of A brings (TCubeTiling stepKa)
    step_kb: int = 1  # k tiles one L1 load of B brings (stepKb)
    step_m: int = 1  # C tiles along m per group (l1_c_steps): B's whole-K panel stays in L1 across them
    step_n: int = 1  # C tiles along n per group: A's whole-K panel stays in L1 across them
    depth_a1: int = 0  # L1 slots of A / B slabs (depthA1 / depthB1 in slabs); 0 = the queue depth
    depth_b1: int = 0
    depth_l0: int = 0  # slots of the L0A/L0B fractals; 0 = the queue depth (1 when double-buffered tiles
    # chosen single-buffered would not fit L0 twice: the auto-schedule keeps the tiles, not the slots)
    depth_ub: int = 0  # slots of a mixed kernel's epilogue queues in UB; 0 = the queue depth (1 likewise)
    compute_dtype: str = ""  # vector math dtype: "" = float32 (int32 for integer kernels), "float16" native
    # a matmul with a row-reduction epilogue: C tiles over every core into a whole-C workspace, SyncAll, then the
    # epilogue's rows over every AIV (sync_all(True)); False: each core computes row blocks and their epilogue
    sync_all: bool = False
    aic_only: bool = False  # emit only the cube part (the auto-schedule's capacity probes)
    aiv_only: bool = False  # emit only a mixed kernel's AIV epilogue (the auto-schedule's UB probes)
    l0c_bytes: int = 0  # the target's L0C: a double-buffered C takes two slots when they fit (0: one slot)
    ws_slots: int = 0  # an attention kernel's workspace slots per core (slots(...)); 0 = its default
    kv_splits: int = 0  # an attention kernel's key/value splits (split('kv', n)); 0 = the auto choice
    notes: tuple[str, ...] = ()

    def with_(self, **kw: object) -> KernelConfig:
        """A copy with the fields `kw` names changed (as dataclasses.replace, in a third of its time: the
        auto-schedule's probes and every pass make many)."""
        vals = list(_VALUES(self))
        for k, v in kw.items():
            i = _INDEX.get(k)
            if i is None:
                raise TypeError(f"KernelConfig has no field {k!r}")
            vals[i] = v
        new = _NEW(KernelConfig)
        for put, v in zip(_PUT, vals, strict=True):
            put(new, v)
        return new

    def noted(self, note: str) -> KernelConfig:
        return self.with_(notes=(*self.notes, note))


_NAMES = tuple(f.name for f in fields(KernelConfig))
_VALUES = attrgetter(*_NAMES)
_INDEX = {n: i for i, n in enumerate(_NAMES)}
_PUT = tuple(KernelConfig.__dict__[n].__set__ for n in _NAMES)  # the slots' own setters (the class is frozen)
_NEW = object.__new__
