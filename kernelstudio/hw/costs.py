"""CostModel: cycles of one data move, Mmad or vector instruction on one core of a profile.

All results are CYCLES of the profile's core clock (`clock_mhz`, the one clock of a profile),
start-up cost included, for ONE core and ONE instruction. They come from the measured msKPP curves
(calibration/): piecewise-linear through every measured size (the measured shape is kept, peaks at
aligned sizes included), extended below the smallest size with the curve's fixed start-up cost and
above the largest with its asymptotic rate. Data moves were measured as bandwidth (GiB/s): they
become cycles of the profile's clock, so a move lasts its measured time on every profile. Mmad and
vector instructions were counted in cycles of their unit: those cycles are kept, and the profile's
clock turns them into time. Lookups are memoised per CostModel, since a simulation asks for the same few
shapes millions of times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from ..core.config import COST_MEMO_LIMIT
from ..core.errors import ShapeError, UnsupportedError
from . import _calibration as cal
from .vector_ops import (
    BIT_PATTERN_OPS,
    COMPOSITES,
    DTYPE_BYTES,
    DTYPE_TAGS,
    INSTRUCTIONS,
    REDUCTIONS,
    REPEAT_BYTES,
    all_ops,
    cast_route,
    expand,
    reduction_levels,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class MoveCurveSpec:
    """Which measured curve times the data path src->dst on this chip, and how it is scaled."""

    src: str
    dst: str
    curve: str  # source_key in mov_bandwidth_vs_size.csv
    nd2nz_curve: str = ""  # curve for nd2nz=True ("" = nd2nz not available on this path)
    bandwidth_scale: float = 1.0  # measured bytes/cycle are multiplied by this (derived curves)
    source: str = ""


class ProfileFacts(Protocol):
    """What the cost model reads of a chip (HardwareProfile in profile.py holds these and builds the model)."""

    name: str
    clock_hz: float
    clock_mhz: float
    hbm_bytes_per_s: float
    has_l0c_to_ub: bool
    move_curves: tuple[MoveCurveSpec, ...]
    mmad_curve: str
    mmad_curve_source: str
    vector_curve_chip: str
    vector_curve_source: str

__all__ = ["CostModel", "MoveCurveSpec", "ProfileFacts", "MMAD_K0", "MEMORIES"]

MEMORIES = ("GM", "L1", "L0A", "L0B", "L0C", "UB")
# k of one 16 x 16 x k0 cube fractal per dtype ([ini] DtypeMKN; fp32 runs at a quarter of fp16,
# HF32 at half).
MMAD_K0 = {"float16": 16, "bfloat16": 16, "int8": 32, "hfloat32": 8, "float32": 4}


class CostModel:
    """Cycle costs of one profile (get it as `profile.costs`; one instance per profile)."""

    def __init__(self, profile: ProfileFacts) -> None:
        self.profile = profile
        self._moves: dict[tuple[str, str], MoveCurveSpec] = {
            (m.src, m.dst): m for m in profile.move_curves
            if not ((m.src, m.dst) == ("L0C", "UB") and not profile.has_l0c_to_ub)
        }
        self._mmad = cal.mmad_curve(profile.mmad_curve)
        self._vec_chip = profile.vector_curve_chip
        self._vec_keys = cal.vector_curve_keys(self._vec_chip)
        self._move_memo: dict[tuple[str, str, int, bool], float] = {}
        self._mmad_memo: dict[tuple[int, int, int, str], float] = {}
        self._vec_memo: dict[tuple[str, str, int, str | None, int], float] = {}
        #: whole-chip HBM bandwidth in bytes per core-clock cycle (shared by all cores)
        self.hbm_bytes_per_cycle_chip: float = profile.hbm_bytes_per_s / profile.clock_hz

    def __repr__(self) -> str:
        return f"CostModel({self.profile.name})"

    # --- bandwidth shares ---------------------------------------------------------------------
    def l2_bytes_per_cycle(self, read: bool = True) -> float:
        """Per-core L2 bandwidth in bytes per cycle ([ini] l2_read_rate / l2_write_rate)."""
        p = self.profile
        return p.l2_read_bytes_per_cycle if read else p.l2_write_bytes_per_cycle

    # --- data moves ---------------------------------------------------------------------------
    def moves(self) -> tuple[str, ...]:
        """The data paths this chip has, as "SRC->DST"."""
        return tuple(f"{s}->{d}" for s, d in self._moves)

    def has_move(self, src: str, dst: str) -> bool:
        """Whether the chip can move data src -> dst in one instruction."""
        return (src.upper(), dst.upper()) in self._moves

    def _spec(self, src: str, dst: str) -> MoveCurveSpec:
        key = (src.upper(), dst.upper())
        spec = self._moves.get(key)
        if spec is None:
            why = ""
            if key == ("L0C", "UB"):
                why = " (has_l0c_to_ub is false: cube results reach the vector cores through GM)"
            elif key[0] not in MEMORIES or key[1] not in MEMORIES:
                why = f" (memories are {', '.join(MEMORIES)})"
            raise UnsupportedError(
                f"{self.profile.name} has no data path {src}->{dst}{why}; "
                f"known paths: {', '.join(self.moves())}"
            )
        return spec

    def move_cycles(self, src: str, dst: str, nbytes: int, *, nd2nz: bool = False) -> float:
        """Cycles of one src -> dst move of `nbytes` (nd2nz: ND->NZ on GM->L1, NZ->ND on L0C->GM)."""
        key = (src, dst, nbytes, nd2nz)
        hit = self._move_memo.get(key)
        if hit is not None:
            return hit
        spec = self._spec(src, dst)
        if nbytes < 0:
            raise ShapeError(f"{src}->{dst} move of {nbytes} bytes: size must be >= 0")
        curve_key = spec.curve
        if nd2nz:
            if not spec.nd2nz_curve:
                with_nz = [f"{m.src}->{m.dst}" for m in self._moves.values() if m.nd2nz_curve]
                raise UnsupportedError(
                    f"{self.profile.name}: no nd2nz conversion on {src}->{dst}; paths with nd2nz: "
                    f"{', '.join(with_nz)}"
                )
            curve_key = spec.nd2nz_curve
        cycles = cal.move_curve(curve_key, spec.bandwidth_scale, self.profile.clock_mhz)(nbytes) if nbytes else 0.0
        if len(self._move_memo) >= COST_MEMO_LIMIT:
            self._move_memo.clear()
        self._move_memo[key] = cycles
        return cycles

    def move_source(self, src: str, dst: str, *, nd2nz: bool = False) -> str:
        """Which measured curve times src -> dst on this profile, and how it was adapted."""
        spec = self._spec(src, dst)
        key = spec.nd2nz_curve if nd2nz and spec.nd2nz_curve else spec.curve
        return f"{spec.source} [curve {key}, bandwidth x {spec.bandwidth_scale:g}]"

    # --- cube ---------------------------------------------------------------------------------
    @property
    def mmad_head_cycles(self) -> float:
        """Fitted head of the fractal model used beyond the measured grid: head + fractals cycles."""
        return float(self._mmad.tail_intercept or 0.0)

    @property
    def mmad_source(self) -> str:
        """Which measured Mmad curve this profile uses."""
        return f"{self.profile.mmad_curve_source} [curve {self.profile.mmad_curve}]"

    def mmad_cycles(self, m: int, k: int, n: int, dtype: str = "float16") -> float:
        """Cycles of one Mmad (m x k) @ (k x n) into L0C.

        Shapes are counted in 16 x 16 x k0 fractals (k0 = MMAD_K0[dtype]); the measured curve gives
        cycles against the fractal count, and beyond it head + 1 cycle per fractal.
        """
        key = (m, k, n, dtype)
        hit = self._mmad_memo.get(key)
        if hit is not None:
            return hit
        if dtype not in MMAD_K0:
            raise UnsupportedError(f"Mmad dtype {dtype!r} is not modelled; known: {', '.join(MMAD_K0)}")
        if min(m, k, n) < 1:
            raise ShapeError(f"Mmad {m}x{k}x{n}: every dimension must be >= 1")
        cycles = self._mmad(cal.fractals(m, k, n, MMAD_K0[dtype]))
        if len(self._mmad_memo) >= COST_MEMO_LIMIT:
            self._mmad_memo.clear()
        self._mmad_memo[key] = cycles
        return cycles

    # --- vector -------------------------------------------------------------------------------
    def vector_ops(self) -> tuple[str, ...]:
        """Every op name vector_cycles accepts (instructions, reductions, composites)."""
        return all_ops()

    def vector_cycles(
        self, op: str, dtype: str, count: int, *, dst_dtype: str | None = None, rows: int = 1
    ) -> float:
        """Cycles of vector `op` over `count` elements of `dtype` (the input dtype).

        cast takes `dst_dtype=` or dtype "src->dst" (e.g. "float16->float32"); a pair with no
        measured curve is timed as the shortest chain of measured casts (assumed; `vector_source`
        names it). Reductions take the
        total `count` split into `rows` independent rows. bfloat16 uses the fp16 curve (assumed)
        except for casts, which have their own curves.
        """
        key = (op, dtype, count, dst_dtype, rows)
        hit = self._vec_memo.get(key)
        if hit is not None:
            return hit
        if count < 0:
            raise ShapeError(f"vector {op} over {count} elements: count must be >= 0")
        if rows != 1 and op not in REDUCTIONS:
            raise UnsupportedError(f"rows= applies to reductions ({', '.join(REDUCTIONS)}), not {op!r}")
        if count == 0:
            cycles = 0.0
        elif op in COMPOSITES:
            cycles = sum(p * self.vector_cycles(i, dtype, count) for i, p in expand(op))
        elif op in REDUCTIONS:
            tag, curve = self._vector_curve(op, dtype, None)
            per_rep = int(REPEAT_BYTES // DTYPE_BYTES[tag])
            cycles = sum(curve(r) for r in reduction_levels(count, per_rep, rows))
        elif op == "cast":  # one VCONV, or the chain of measured ones an unmeasured pair is timed by
            _, keys, _ = self._resolve(op, dtype, dst_dtype)
            cycles = 0.0
            for key in keys.split(" "):
                curve = cal.vector_curve(self._vec_chip, INSTRUCTIONS["cast"], key)
                cycles += curve(math.ceil(count * DTYPE_BYTES[key.split("_")[0]] / REPEAT_BYTES))
        elif op in INSTRUCTIONS:
            tag, curve = self._vector_curve(op, dtype, dst_dtype)
            cycles = curve(math.ceil(count * DTYPE_BYTES[tag] / REPEAT_BYTES))
        else:
            raise UnsupportedError(f"unknown vector op {op!r}; known: {', '.join(all_ops())}")
        if len(self._vec_memo) >= COST_MEMO_LIMIT:
            self._vec_memo.clear()
        self._vec_memo[key] = cycles
        return cycles

    def vector_source(self, op: str, dtype: str, *, dst_dtype: str | None = None) -> str:
        """Which measured curve(s) time `op` on `dtype`, and any assumption made."""
        if op in COMPOSITES:
            parts = ", ".join(f"{i} x{p}" for i, p in expand(op))
            return f"assumed sequence: {parts}"
        if op not in INSTRUCTIONS and op not in REDUCTIONS:
            raise UnsupportedError(f"unknown vector op {op!r}; known: {', '.join(all_ops())}")
        instr, dtypes, note = self._resolve(op, dtype, dst_dtype)
        seq = " (levels of repeat reduction, assumed sequence)" if op in REDUCTIONS else ""
        return f"{self.profile.vector_curve_source}: {instr} {dtypes}{seq}{note}"

    def _vector_curve(self, op: str, dtype: str, dst_dtype: str | None) -> tuple[str, cal.Curve]:
        instr, dtypes, _ = self._resolve(op, dtype, dst_dtype)
        return dtypes.split("_")[0], cal.vector_curve(self._vec_chip, instr, dtypes)

    def _resolve(self, op: str, dtype: str, dst_dtype: str | None) -> tuple[str, str, str]:
        """(instruction, dtypes key, note) of the measured curve for op on dtype."""
        instr = INSTRUCTIONS.get(op) or REDUCTIONS[op]
        measured = self._vec_keys.get(instr, ())
        if op == "cast":
            return instr, *self._resolve_cast(dtype, dst_dtype, measured)
        if dst_dtype is not None or "->" in dtype:
            raise UnsupportedError(f"only cast takes a destination dtype, not {op!r}")
        by_tag: dict[str, str] = {}
        for d in measured:  # prefer curves whose operands all share the input dtype
            tags = d.split("_")
            if tags[0] not in by_tag or len(set(tags)) == 1:
                by_tag[tags[0]] = d
        tag = DTYPE_TAGS.get(dtype)
        tries: list[tuple[str, str]] = [(tag, "")] if tag else []
        if tag == "BF16":
            tries.append(("FP16", "; bfloat16 timed as float16 (assumed)"))
        if tag in ("INT32", "INT16") and op in REDUCTIONS:  # VCADD / VCMAX were measured on floats only
            width = tag[3:]
            tries.append((f"FP{width}", f"; {dtype} timed by the float{width} curve of the same width (assumed)"))
        if op in BIT_PATTERN_OPS and tag in ("FP16", "BF16", "FP32", "INT16", "INT32"):
            width = {"FP16": "16", "BF16": "16", "INT16": "16", "FP32": "32", "INT32": "32"}[tag]
            note = f"; {dtype} timed by the {width}-bit integer curve (same bit pattern)"
            tries += [(f"INT{width}", note), (f"UINT{width}", note)]
        for t, note in tries:
            if t in by_tag:
                return instr, by_tag[t], note
        names = {v: k for k, v in DTYPE_TAGS.items()}
        known = sorted({names[t] for t in by_tag if t in names})
        if "FP16" in by_tag and "bfloat16" not in known:
            known.append("bfloat16")
        raise UnsupportedError(
            f"vector {op} ({instr}) has no measured curve for dtype {dtype!r}; known: {', '.join(known)}"
        )

    @staticmethod
    def _resolve_cast(dtype: str, dst_dtype: str | None, measured: tuple[str, ...]) -> tuple[str, str]:
        src, dst = (dtype.split("->", 1) if "->" in dtype else (dtype, dst_dtype))
        names = {v: k for k, v in DTYPE_TAGS.items()}
        pairs = [f"{names[a]}->{names[b]}" for a, b in (d.split("_") for d in measured)]
        if dst is None:
            raise UnsupportedError(
                f"cast needs a destination dtype (dst_dtype= or 'src->dst'); known: {', '.join(pairs)}"
            )
        src, dst = src.strip(), dst.strip()
        want = f"{DTYPE_TAGS.get(src, '?')}_{DTYPE_TAGS.get(dst, '?')}"
        if want in measured:
            return want, ""
        route = cast_route(*want.split("_"), measured) if "?" not in want else None
        if route is None:
            raise UnsupportedError(
                f"no measured cast {src}->{dst} and no chain of measured casts between them "
                f"(dtypes: {', '.join(DTYPE_TAGS)}); cast through float32 in the design; known: {', '.join(pairs)}"
            )
        via = "->".join([src, *(names[k.split("_")[1]] for k in route)])
        return " ".join(route), f"; no measured {src}->{dst}: timed as the casts {via} (assumed)"
