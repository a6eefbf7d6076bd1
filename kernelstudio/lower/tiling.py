"""Tile decisions: the user's directives, the auto-schedule that fills the rest, and the checks
(alignment, legality, capacity) that `lower()` applies. Errors name kernel, buffer and numbers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.dtypes import block_elems
from ..core.errors import CapacityError, ScheduleError
from ..fusion.partition import FusedKernel
from ..hw import HardwareProfile
from ..schedule.schedule import Directive
from ..tileir.capacity import fits, usage
from ..tileir.program import CoreType, Kernel, Tier
from .config import KernelConfig
from .cube.shape import aiv_rows, pad16, sync_rows_per_aiv

__all__ = ["SMALLER_FOR_TWO_SLOTS", "resolve_directives", "auto_tiles", "validate_tiles", "check_capacity", "usage"]

# the note of a vector kernel whose auto tiles were chosen smaller so that its queues have two slots
SMALLER_FOR_TWO_SLOTS = "double_buffer: smaller tiles for two slots"

_TILE_CHOICES = (256, 128, 64, 32, 16)


def _cube_axis(fk: FusedKernel, axis: str | int) -> str:
    if isinstance(axis, str):
        return {"rows": "m", "cols": "n"}.get(axis, axis)
    nd = len(fk.space)
    a = axis % nd
    if a >= fk.row_dims:
        return "n"
    if a == fk.row_dims - 1:
        return "m"
    raise ScheduleError(f"kernel {fk.name}: axis {axis} is a batch dimension of {list(fk.space)}; batch items "
                        "are walked one at a time: split 'm', 'n' or 'k'")


def _vector_rows_factor(fk: FusedKernel, axis: str | int, factor: int) -> tuple[str, int]:
    """Map split(axis, factor) of a vector kernel onto tile_rows / tile_cols."""
    if axis in ("cols",):
        return "tile_cols", factor
    if axis in ("rows",):
        return "tile_rows", factor
    a = int(axis) % len(fk.space)
    if a >= fk.row_dims:
        inner = 1
        for d in fk.space[a + 1:]:
            inner *= d
        return "tile_cols", factor * inner
    inner = 1
    for d in fk.space[a + 1: fk.row_dims]:
        inner *= d
    return "tile_rows", factor * inner


def _loop_axis(fk: FusedKernel, axis: str | int) -> str:
    """The tile loop a reorder/parallel axis names: "m"/"n" (cube kernels) or "rows"/"cols" (vector)."""
    if fk.root is not None:
        return _cube_axis(fk, axis)
    return "rows" if _vector_rows_factor(fk, axis, 1)[0] == "tile_rows" else "cols"


def resolve_directives(fk: FusedKernel, directives: Sequence[Directive], profile: HardwareProfile) -> dict[str, Any]:
    """The user's choices for one kernel (None where the auto-schedule decides)."""
    cube = fk.root is not None
    max_cores = profile.aic_cores if cube else profile.aiv_cores
    out: dict[str, Any] = {"tile_m": None, "tile_n": None, "tile_k": None, "tile_rows": None, "tile_cols": None,
                           "order": ("m", "n") if cube else ("rows", "cols"), "cores": max_cores, "depth": 2,
                           "compute_dtype": "auto", "step_ka": None, "step_kb": None, "step_m": None, "step_n": None,
                           "depth_a1": None, "depth_b1": None, "order_by": "", "swizzle": None,
                           "sync_all": fk.sync_all, "slots": 0, "kv_splits": 0}
    for d in directives:
        if d.kind == "split" and fk.family == "attention":  # its blocks: s1 rows, s2 columns (lower/attention.py)
            out[{"s1": "tile_m", "s2": "tile_n", "kv": "kv_splits"}[d.axis]] = d.value
        elif d.kind == "split":
            if cube:
                out[f"tile_{_cube_axis(fk, d.axis)}"] = d.value
            else:
                key, v = _vector_rows_factor(fk, d.axis, d.value)
                out[key] = v
        elif d.kind == "vectorize":
            key = "tile_cols"
            if cube:  # the epilogue's vector tile: rows ("m", leading dims) or columns ("n", last dims)
                if isinstance(d.axis, int):
                    key = "tile_cols" if d.axis % len(fk.space) >= fk.row_dims else "tile_rows"
                else:
                    key = "tile_rows" if _cube_axis(fk, d.axis) == "m" else "tile_cols"
            else:
                key, _ = _vector_rows_factor(fk, d.axis, 1)
            out[key] = d.value
        elif d.kind == "reorder":
            axes = [_loop_axis(fk, a) for a in d.axis]
            rest = [a for a in out["order"] if a not in axes]
            out["order"] = tuple(axes) + tuple(rest)
            out["order_by"] = f"reorder({', '.join(map(repr, d.axis))})"
        elif d.kind == "parallel":
            if d.value is not None:
                if d.value > max_cores:
                    unit = "AIC (cube)" if cube else "AIV (vector)"
                    raise ScheduleError(f"kernel {fk.name}: parallel(cores={d.value}) but {profile.name} has "
                                        f"{max_cores} {unit} cores; use at most {max_cores}")
                out["cores"] = d.value
            if d.axis is not None:
                a = _loop_axis(fk, d.axis)
                out["order"] = (a,) + tuple(x for x in out["order"] if x != a)
                out["order_by"] = f"parallel({d.axis!r})"
        elif d.kind == "double_buffer":
            out["depth"] = 2 if d.value else 1
            out["depth_stated"] = True
        elif d.kind == "compute_dtype":
            out["compute_dtype"] = d.value
        elif d.kind == "l1_k_steps":
            out["step_ka"], out["step_kb"] = d.value
        elif d.kind == "l1_depth":
            out["depth_a1"], out["depth_b1"] = d.value
        elif d.kind == "l1_c_steps":
            out["step_m"], out["step_n"] = d.value
        elif d.kind == "sync_all":
            out["sync_all"] = d.value
        elif d.kind == "slots":
            out["slots"] = d.value
        elif d.kind == "swizzle":
            out["swizzle"] = (d.value, d.axis)  # (group, direction)
    if out["swizzle"] and out["order_by"]:
        g, direction = out["swizzle"]
        raise ScheduleError(f"kernel {fk.name}: swizzle(group={g}, direction={direction!r}) and {out['order_by']} both "
                            "set the order of the C tiles; keep one (a swizzle group of all the tile rows is the "
                            "column-major order, reorder('n', 'm'))")
    return out


def check_capacity(k: Kernel, profile: HardwareProfile) -> None:
    for (core, tier), need in sorted(usage(k).items()):
        have = profile.capacity_bytes(tier)
        if need > have:
            bufs = [b for b in k.buffers if b.core.value == core and b.tier.value == tier]
            listing = ", ".join(f"{b.name} {b.rows}x{b.cols} {b.dtype} x{b.depth} = {b.nbytes:,} B" for b in bufs)
            if (core, tier) == ("aiv", "UB"):
                from ..tileir.scratch import scratch_buffers

                listing += "".join(f", scratch {m} = {n:,} B" for m, (n, _) in sorted(scratch_buffers(k).items()))
            way = ("lower split('m'/'n'/'k', ...)" if tier != "UB" else
                   "lower split(...) / vectorize(-1, ...) on the vector tile")
            if k.does == "flash_attention":  # lower/attention.py: its blocks are the only sizes a user sets
                way = "lower split('s1', ...) / split('s2', ...) (the attention kernel's blocks)"
            elif tier == "L1":
                way += ", fewer l1_k_steps(...) or l1_depth(1)"
                panels = [b for b in bufs if "panel" in b.purpose]
                if panels:
                    way += (f" (the resident panels {', '.join(b.name for b in panels)} hold the whole K: smaller "
                            "l1_c_steps(...) or split('m'/'n', ...), or l1_c_steps(1, 1) to stream them)")
            if any(b.depth > 1 for b in bufs):
                way += " or turn off double_buffer"
            err = CapacityError(f"kernel {k.name}: {tier} needs {need:,} B but {profile.name} has {have:,} B "
                                f"({listing}); {way}")
            # the numbers as data, for views that draw the overflowing bar
            err.kernel, err.tier, err.need, err.have = k.name, tier, need, have
            err.buffers = tuple(bufs)
            raise err


def _fits_cfg(fk: FusedKernel, cfg: KernelConfig, emit: Callable[[KernelConfig], Kernel],
              profile: HardwareProfile) -> bool:
    """Whether kernel `fk` lowered with `cfg` fits every tier: a cube kernel's buffers are those of its
    cube part, a mixed kernel's those of its cube part and its AIV epilogue, each emitted alone."""
    if fk.root is None:
        return fits(emit(cfg), profile)
    if not fits(emit(cfg.with_(aic_only=True)), profile):
        return False
    return fk.family != "cube_vector" or _epilogue_fits(_epilogue_probe(cfg), emit, profile)


def _epilogue_fits(probe: KernelConfig, emit: Callable[[KernelConfig], Kernel], profile: HardwareProfile) -> bool:
    """Whether the AIV epilogue probe `probe` fits. Its queues' slots (`depth`, no depth_ub of its own) are
    the only thing that differs from the single-slot probe the single-buffered tile search emitted: the same
    buffers, statements and scratch, each queue `depth` times the bytes of one slot. So its count is that
    probe's plus the extra slots, with no second epilogue emitted (tests/unit/test_capacity_probes.py checks
    the two counts agree)."""
    if probe.depth <= 1 or probe.depth_ub:
        return fits(emit(probe), profile)
    return all(need <= profile.capacity_bytes(tier) for (_, tier), need in deeper_usage(emit(probe.with_(depth=1)),
                                                                                       probe.depth).items())


def deeper_usage(one: Kernel, depth: int) -> dict[tuple[str, str], int]:
    """`usage` of an epilogue probe emitted with one slot per queue, had its queues `depth` slots."""
    u = usage(one)
    for b in one.buffers:
        if b.queue is not None:
            key = (b.core.value, b.tier.value)
            u[key] = u[key] + b.nbytes * (depth - 1)
    return u


def _epilogue_probe(cfg: KernelConfig) -> KernelConfig:
    """The UB probe of a mixed kernel's AIV epilogue for `cfg`: the cube's L1/L0 choices (the k tile and steps,
    L1 and L0 slots, C-tile groups) do not touch the epilogue, so they are reset and equal probes are emitted
    once (settings that differ in tile_k alone share one). With sync_all the groups stay: they set the block
    count, and so the rows each vector core takes."""
    groups = {} if cfg.sync_all else {"step_m": 1, "step_n": 1}
    return cfg.with_(aiv_only=True, tile_k=1 << 30, step_ka=1, step_kb=1, depth_a1=0, depth_b1=0, depth_l0=0,
                     **groups)


def validate_tiles(fk: FusedKernel, tiles: dict[str, Any], profile: HardwareProfile) -> None:
    if fk.root is not None:
        for ax in ("m", "n", "k"):
            v = tiles[f"tile_{ax}"]
            if v % 16:
                raise ScheduleError(f"kernel {fk.name}: split('{ax}', {v}) is not a multiple of 16; cube tiles "
                                    f"are 16x16 fractals: use {max(16, v // 16 * 16)} or {(v // 16 + 1) * 16}")
    else:
        g = _period_gcd(fk)
        tr = tiles.get("tile_rows", 1)
        if g and g % tr:
            name = next(str(i.shape) for i in fk.inputs if fk.input_period(i))
            divs = [d for d in (g, g // 2, g // 4, 16, 8, 4, 2, 1) if d and g % d == 0]
            where = (f"spans {tr // g} repeats" if tr % g == 0 else
                     f"would straddle a repeat ({g} is not a multiple of {tr})" if tr < g else
                     f"spans {tr / g:.2f} repeats")
            raise ScheduleError(f"kernel {fk.name}: an input of shape {name} repeats every {g} rows and a tile "
                                f"reads it as one run of rows, so a tile must lie within one repeat; a tile of "
                                f"{tr} rows {where}: use a divisor of {g} such as "
                                f"{', '.join(str(d) for d in dict.fromkeys(divs))}")
        per = max(block_elems(n.dtype) for n in (*fk.nodes, *fk.inputs))
        tc = tiles["tile_cols"]
        if tc < fk.cols and tc % per:
            raise ScheduleError(f"kernel {fk.name}: a vector tile of {tc} columns is not a whole number of "
                                f"32-byte blocks ({per} elements); use a multiple of {per} or the whole row "
                                f"({fk.cols})")


def _period_gcd(fk: FusedKernel) -> int:
    """gcd of the row periods of a vector kernel's periodic inputs (0: none)."""
    import math

    g = 0
    for p in fk.row_periods:
        g = math.gcd(g, p)
    return g


def _pow2_at_most(n: int) -> int:
    p = 1
    while p * 2 <= n:
        p *= 2
    return p


def auto_tiles(fk: FusedKernel, d: dict[str, Any], profile: HardwareProfile,
               emit: Callable[[KernelConfig], Kernel]) -> dict[str, Any]:
    """Fill the tiles the user did not state: the largest that fit single-buffered on all cores, kept
    as they are when they also fit with the queue depth asked for (double_buffer changes slots, not
    tiles). When they do not fit twice, the tier that overflows keeps one slot (L0A/L0B of a matmul,
    a mixed kernel's epilogue queues in UB) and the tiles stay; only when that does not fit either are
    they chosen again, smaller, under the deeper queues."""
    # UB probes that overflowed single-buffered: they overflow deeper too (every queue's slots grow)
    ub_fails: set[KernelConfig] = set()
    if d["depth"] > 1:
        # l1_depth(...) stated by the user stays as stated; unstated L1 slabs follow the queue depth
        # (L1 groups are chosen with the slots they will have: "l1_depth_final")
        single = _auto_tiles_at(fk, {**d, "depth": 1, "l1_depth_final": d["depth"]}, profile, emit, ub_fails)
        cfg = _base(d, profile).with_(depth_a1=d["depth_a1"] or 0, depth_b1=d["depth_b1"] or 0,
                             **{k: v for k, v in single.items() if k != "order"})
        if _fits_cfg(fk, cfg, emit, profile):
            return single
        # the tiles do not fit twice: keep them, and single-buffer only the tier that does not fit
        # (L0A/L0B, or a mixed kernel's epilogue queues in UB); every other queue keeps two slots
        # (matmul only: a conv's img2col into L0B is slow enough that its two slots pay more than the
        # larger tiles; the user's own tiles get the capacity error instead)
        chosen = not all(d.get(f"tile_{a}") for a in "mnk")
        matmul = fk.root is not None and fk.root.op.value != "conv2d"
        mixed = fk.family == "cube_vector" and not (d["tile_rows"] or d["tile_cols"])
        # fewest single slots first: L0A/L0B, then the epilogue's UB queues, then both
        for extra in ({"depth_l0": 1}, {"depth_ub": 1}, {"depth_l0": 1, "depth_ub": 1}):
            if ("depth_l0" in extra and not matmul) or ("depth_ub" in extra and not mixed) or not chosen:
                continue
            if _fits_cfg(fk, cfg.with_(**extra), emit, profile):
                return {**single, **extra}
        deeper = _auto_tiles_at(fk, d, profile, emit, ub_fails)
        if fk.root is None and not d.get("depth_stated"):
            # smaller tiles for two slots: whether that pays is the simulator's to say (plan/depth.py)
            deeper["smaller_for_two_slots"] = (single["tile_rows"], single["tile_cols"])
        return deeper
    return _auto_tiles_at(fk, d, profile, emit, ub_fails)


def _base(d: dict[str, Any], profile: HardwareProfile) -> KernelConfig:
    return KernelConfig(cores=d["cores"], depth=d["depth"], aligned=True, inline_scalars=True, order=d["order"],
                        sync_all=d.get("sync_all", False), l0c_bytes=profile.l0c_bytes)


def _auto_tiles_at(fk: FusedKernel, d: dict[str, Any], profile: HardwareProfile,
                   emit: Callable[[KernelConfig], Kernel], ub_fails: set[KernelConfig]) -> dict[str, Any]:
    base = _base(d, profile)
    if fk.root is not None:
        return _auto_cube(fk, d, profile, emit, base, ub_fails)
    return _auto_vector(fk, d, profile, emit, base)


def _auto_vector(fk, d, profile, emit, base: KernelConfig) -> dict[str, Any]:
    R, C, cores = fk.rows, fk.cols, d["cores"]
    per = max(block_elems(n.dtype) for n in (*fk.nodes, *fk.inputs))
    if len(fk.space) == 3 and fk.nodes[0].info.kind.value == "reduce" and len(fk.nodes) == 1:
        return _auto_axis_reduce(fk, d, profile, emit, base, per)
    tr_user, tc_user = d["tile_rows"], d["tile_cols"]
    reduce = fk.has_row_reduction()
    if tc_user is not None:
        tc_cands = [tc_user]
    else:
        tc_cands = [C]
        if not reduce and R < cores:  # fewer rows than cores: spread the columns, but no core gets
            # less than one full repeat (8 blocks of 32 bytes): narrower tiles issue as many vector
            # instructions per core and only add cores' fixed costs
            share = -(-C // max(1, cores // R))
            tc_cands = [min(C, max(8 * per, -(-share // per) * per))]
        c = _pow2_at_most(C)
        while c >= per:
            if c < tc_cands[-1]:
                tc_cands.append(c // per * per or per)
            c //= 2
    for tc in tc_cands:
        if tr_user is not None:
            cfg = base.with_(tile_rows=tr_user, tile_cols=tc)
            if fits(emit(cfg), profile) or tc == tc_cands[-1]:
                return {"tile_rows": tr_user, "tile_cols": tc, "order": d["order"]}
            continue
        tr = max(1, -(-R // cores)) if R >= cores else 1
        tr = min(tr, 1024)
        g = _period_gcd(fk)
        while tr >= 1:
            if g and g % tr:  # tiles must not straddle the repeat of a periodic input
                tr -= 1
                continue
            if fits(emit(base.with_(tile_rows=tr, tile_cols=tc)), profile):
                return {"tile_rows": tr, "tile_cols": tc, "order": d["order"]}
            tr = tr // 2 if not g else tr - 1
    return {"tile_rows": tr_user or 1, "tile_cols": tc_cands[-1], "order": d["order"]}


def _auto_axis_reduce(fk, d, profile, emit, base: KernelConfig, per: int) -> dict[str, Any]:
    """[outer, reduced, inner]: tiles are (outer, column chunk) pairs spread over the cores; each
    accumulates the reduced rows in chunks of tile_rows."""
    outer, red, inner = fk.space
    share = -(-inner // max(1, d["cores"] // outer))
    tc = d["tile_cols"] or min(inner, max(per, -(-share // per) * per))
    tr = d["tile_rows"] or min(red, 64)
    while tr > 1 and not fits(emit(base.with_(tile_rows=tr, tile_cols=tc)), profile):
        tr //= 2
    while tc > per and not fits(emit(base.with_(tile_rows=tr, tile_cols=tc)), profile):
        tc = max(per, tc // 2 // per * per)
    return {"tile_rows": tr, "tile_cols": tc, "order": d["order"]}


_L1_STEPS = (1, 2, 4, 8, 16)


def _auto_l1_steps(fk, d, profile, emit, base: KernelConfig, tiles: tuple[int, int, int],
                   K: int) -> tuple[int, int]:
    """k tiles per L1 load of A and of B: the pair whose smaller slab is largest (big moves use the
    GM->L1 path best), then the least L1, that fits L1 with the slabs' buffering. Conv: the largest
    weight slab that fits beside the img2col source (B stays 1)."""
    tm, tn, tk = tiles
    ua, ub = d.get("step_ka"), d.get("step_kb")
    conv = fk.root.op.value == "conv2d"
    if conv:  # the weights load in slabs; B is the img2col source, which holds all of K already
        ub = 1
    if ua and ub:
        return ua, ub
    kt = -(-K // tk)
    cands = [(a, b) for a in ([ua] if ua else _L1_STEPS) for b in ([ub] if ub else _L1_STEPS)
             if max(a, b) % min(a, b) == 0 and (a <= kt or a == ua) and (b <= kt or b == ub)]
    ranked = sorted(cands, key=lambda ab: (-ab[0],) if conv else
                    (-min(tm * ab[0], tn * ab[1]), tm * ab[0] + tn * ab[1]))
    # one emit with single k tiles; a slab's slot grows linearly with its step
    one = emit(base.with_(tile_m=tm, tile_n=tn, tile_k=tk, tile_rows=1, tile_cols=16, step_ka=1, step_kb=1,
                          depth_a1=d.get("depth_a1") or 0, depth_b1=d.get("depth_b1") or 0, aic_only=True))
    l1 = {b.name: b for b in one.buffers if b.tier is Tier.L1 and b.core is CoreType.AIC}
    if "a1" not in l1:
        return ua or 1, ub or 1
    rest = sum(b.nbytes for n, b in l1.items() if n not in ("a1", "b1"))
    b1 = l1["b1"].nbytes if "b1" in l1 else 0
    for a, b in ranked:
        if rest + l1["a1"].nbytes * a + b1 * b <= profile.l1_bytes:
            return a, b
    return ua or 1, ub or 1


def _auto_c_steps(fk, d, profile, emit, base: KernelConfig, tiles: dict[str, Any], mnkb: tuple[int, int, int, int],
                  row_block: bool) -> dict[str, Any]:
    """Groups of C tiles whose operands stay resident in L1 (l1_c_steps; cube_groups.py): the group
    that moves the fewest GM->L1 bytes among those that fit L1 beside the streamed operand's slabs
    and leave the busiest core no more C tiles than one tile per unit would. A resident panel holds
    the whole K, so large K keeps the 1 x 1 default; the streamed operand's k step halves until the
    panel fits. Byte counts, not simulations (lowering stays fast); tests check the simulator agrees."""
    um, un = d.get("step_m"), d.get("step_n")
    keep = {"step_m": um or 1, "step_n": un or 1}
    conv = fk.root.op.value == "conv2d"
    # a swizzle the user gave orders C tiles: groups would change what it walks, so they stay 1 x 1
    # unless l1_c_steps is given too
    mixed = fk.family == "cube_vector" and not d.get("sync_all", False)
    if (um and un) or conv or (mixed and not row_block) or (d.get("swizzle") and not um):
        return keep
    M, N, K, batch = mnkb
    tm, tn, tk = tiles["tile_m"], tiles["tile_n"], tiles["tile_k"]
    mt, nt = -(-M // tm), -(-N // tn)
    cores = d["cores"]
    units = batch * mt * (1 if row_block else nt)
    per_core = -(-units // cores) * (nt if row_block else 1)  # C tiles of the busiest core, no groups

    def gm_bytes(m: int, n: int) -> float:
        """GM -> L1 element reads per C tile: A once per tile row when n > 1, B once per group when m > 1."""
        return K * ((tm / n if n > 1 else tm) + (tn / m if m > 1 else tn))

    kt = -(-K // tk)
    # an l1_k_steps of the user's that slabs an operand keeps it streamed (resident panels take all of K)
    a_free = d.get("step_ka") in (None, kt)
    b_free = d.get("step_kb") in (None, kt)
    ms = [1] if row_block or not b_free else ([um] if um else [v for v in (1, 2, 4, 8) if v <= mt])
    ns = [1] if not a_free else [un] if un else sorted({v for v in (1, 2, 4, 8, nt) if v <= nt})
    cands = []
    for m in ms:
        for n in ns:
            groups = batch * -(-mt // m) * (1 if row_block else -(-nt // n))
            if (m, n) == (1, 1) or -(-groups // cores) * (1 if row_block else m * n) > per_core:
                continue
            cands.append((gm_bytes(m, n), m * n, m, n))
    # L1 with the slots the kernel will have (the single-buffered tile search runs with one)
    depth = d.get("l1_depth_final") or d["depth"]
    for _, _, m, n in sorted(cands):
        sa, sb = tiles["step_ka"], tiles["step_kb"]
        while True:
            cfg = base.with_(tile_m=tm, tile_n=tn, tile_k=tk, tile_rows=1, tile_cols=16, step_ka=sa, step_kb=sb,
                             step_m=m, step_n=n, depth=depth, depth_a1=d.get("depth_a1") or 0,
                             depth_b1=d.get("depth_b1") or 0, aic_only=True)
            if usage(emit(cfg)).get((CoreType.AIC.value, Tier.L1.value), 0) <= profile.l1_bytes:
                return {"step_m": m, "step_n": n, "step_ka": sa, "step_kb": sb}
            streamed = "step_ka" if n == 1 else "step_kb" if m == 1 else ""
            if not streamed or (d.get(streamed) is not None) or (sa if streamed == "step_ka" else sb) == 1:
                break
            sa, sb = (max(1, sa // 2), sb) if streamed == "step_ka" else (sa, max(1, sb // 2))
    return keep


def _auto_cube(fk, d, profile, emit, base: KernelConfig, ub_fails: set[KernelConfig]) -> dict[str, Any]:
    root = fk.root
    probe = emit(base.with_(tile_m=16, tile_n=16, tile_k=16, tile_rows=1, tile_cols=16, aic_only=True))
    tiling = dict(probe.tiling)
    M, N, K, batch = tiling["M"], tiling["N"], tiling["K"], tiling["batch"]
    del root

    sync = fk.family == "cube_vector" and d.get("sync_all", False)
    # the row-block plan: a core's unit is a whole row block (sync_all walks C tiles as a plain matmul)
    row_block = fk.family == "cube_vector" and fk.has_row_reduction() and not sync
    cand = {ax: [d[f"tile_{ax}"]] if d[f"tile_{ax}"] else [c for c in _TILE_CHOICES if c <= max(16, pad16(n))]
            for ax, n in (("m", M), ("n", N), ("k", K))}
    best = None
    # largest C tile first, then the largest k step: the first that fits wins
    for tm, tn, tk in sorted(((m, n, k) for k in cand["k"] for m in cand["m"] for n in cand["n"]),
                             key=lambda c: (c[0] * c[1], c[2]), reverse=True):
        k = emit(base.with_(tile_m=tm, tile_n=tn, tile_k=tk, tile_rows=1, tile_cols=16, aic_only=True))
        if all(need <= profile.capacity_bytes(t) for (core, t), need in usage(k).items()
               if core == CoreType.AIC.value):
            best = (tm, tn, tk)
            break
    tm, tn, tk = best if best is not None else (cand["m"][-1], cand["n"][-1], cand["k"][-1])

    def units(tm: int, tn: int) -> int:
        return batch * -(-M // tm) * (1 if row_block else -(-N // tn))

    cores = d["cores"]
    while units(tm, tn) < cores:
        can_m = d["tile_m"] is None and tm > 16
        can_n = d["tile_n"] is None and tn > 16 and not row_block
        if can_n and (tn >= tm or not can_m):
            tn //= 2
        elif can_m:
            tm //= 2
        else:
            break
    out = {"tile_m": tm, "tile_n": tn, "tile_k": tk, "order": d["order"]}
    out["step_ka"], out["step_kb"] = _auto_l1_steps(fk, d, profile, emit, base, (tm, tn, tk), K)
    out.update(_auto_c_steps(fk, d, profile, emit, base, out, (M, N, K, batch), row_block))
    if fk.family != "cube_vector":
        out.update(tile_rows=1, tile_cols=16)
        return out
    ucols = N if (row_block or sync) else tn
    vr_user, vc_user = d["tile_rows"], d["tile_cols"]
    vc_cands = [vc_user] if vc_user else [ucols] + [c for c in (4096, 2048, 1024, 512, 256, 128, 64, 32, 16)
                                                    if c < ucols]
    # each AIV takes half a row block, or with sync_all its share of all the rows (blocks: C tiles, in groups)
    mt, nt = -(-M // tm), -(-N // tn)
    groups = batch * -(-mt // out["step_m"]) * -(-nt // out["step_n"])
    half = max(1, sync_rows_per_aiv(batch * M, min(cores, groups)) if sync else aiv_rows(tm))
    for vc in vc_cands:
        vr = vr_user or half
        while vr >= 1:
            probe = _epilogue_probe(base.with_(tile_m=tm, tile_n=tn, tile_k=tk, tile_rows=vr, tile_cols=vc,
                                               step_m=out["step_m"], step_n=out["step_n"]))
            single = probe.with_(depth=1)
            if single not in ub_fails:
                if usage(emit(probe)).get((CoreType.AIV.value, Tier.UB.value), 0) <= profile.capacity_bytes("UB"):
                    out.update(tile_rows=vr, tile_cols=vc)
                    return out
                if probe.depth == 1:
                    ub_fails.add(single)
            if vr_user:
                break
            vr //= 2
    out.update(tile_rows=vr_user or 1, tile_cols=vc_cands[-1])
    return out
