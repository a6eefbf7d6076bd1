"""The advisor's candidate moves: one small rule per idea, each reading one kernel's evidence and proposing
schedule directives that answer it. A rule proposes; only the simulator decides (plan/advise.py).

Adding an idea means adding one function and one entry to `RULES`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..lower.attention import FLAG_O, FLAG_P, FLAG_S
from ..lower.attention_split import DECODE_ROWS, split_cost
from ..schedule.directive import Directive
from .advise_evidence import KernelEvidence, Wait

__all__ = ["Candidate", "RULES", "candidates", "move_text"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A proposed move before simulation: directives for one kernel, the evidence it answers, and how much
    idle time that evidence names (`weight_us`, the order candidates are tried in when a caller limits them)."""

    rule: str
    kernel: str
    directives: tuple[Directive, ...]
    cause: str
    weight_us: float
    keep_out: tuple[str, ...] = ()  # graph names of ops kept out of fused kernels (Schedule.keep_out_of_fusion)


Rule = Callable[[KernelEvidence], Iterator[Candidate]]
MAX_SLOTS = 4  # an attention kernel's workspace slots (schedule.py's slots(1 to 4))
S1_LARGEST = 256  # the largest S1 block proposed: L0A holds 256 rows of Q at D = 128 (64 KiB)
S1_SMALLEST = 64  # the smallest: the stops ks.tune searches (tune/attention_knobs.py)
KV_MOST_PARTS = 8  # the most FlashDecode parts proposed: the last stop of ks.tune's kv knob (assumed)


def _cand(rule: str, ev: KernelEvidence, cause: str, weight: float, *ds: tuple) -> Candidate:
    return Candidate(rule, ev.name, tuple(Directive(kind, ev.name, axis, value) for kind, axis, value in ds), cause,
                     max(0.0, weight))


def _pow2_up(x: int) -> int:
    p = 16
    while p < x:
        p *= 2
    return p


# the L0 tiers a tile axis of a matmul/conv sizes: doubling the tile doubles what they hold
_L0_OF_AXIS = {"m": ("L0A", "L0C"), "n": ("L0B", "L0C"), "k": ("L0A", "L0B")}


def _grow(ev: KernelEvidence, axis: str, why: str, weight: float) -> tuple[str, float]:
    """The cause and weight of doubling a tile along `axis`: a tier already over half full would overflow, so
    such a move is still proposed (and reported when it does not fit) but tried last."""
    tier, share = ev.fullest(_L0_OF_AXIS[axis])
    if share > 0.5:
        return f"{why}; {tier} {100 * share:.0f} % used, so twice the tile may not fit", 0.1 * weight
    return why, weight


def double_buffer(ev: KernelEvidence) -> Iterator[Candidate]:
    """Single-buffered queues whose consumers wait for fills (or producers for slots): two slots overlap them."""
    if ev.queue_depth >= 2 or (ev.family == "attention" and ev.stated("double_buffer") is not False):
        return  # an attention kernel keeps its Q block in one slot by design: only double_buffer(False) is undone
    w = ev.top(("fill", "slot"))
    if w is not None and w.pct >= 2:
        yield _cand("double_buffer", ev, f"{w.text()} with single-buffered queues", w.credit_us,
                    ("double_buffer", None, True))


def _spread(ev: KernelEvidence) -> float:
    """The share of the cube cores a kernel keeps busy once its C tiles are halved in number (1.0 while there
    are still at least as many tiles as cores): a larger tile reloads less but spreads over fewer cores."""
    return min(1.0, (ev.t("tiles") // 2) / max(1, ev.max_cores))


def larger_c_tiles(ev: KernelEvidence) -> Iterator[Candidate]:
    """A cube kernel that moves much more than its compulsory bytes reloads operands per C tile: larger tiles
    reload less (each axis tried alone). With fewer C tiles than twice the cube cores, halving the tiles' number
    leaves cores idle: such a move is weighted by the share of cores it keeps busy."""
    if not ev.cube or ev.amplification < 1.3:
        return
    fill = ev.top(("fill",), ("MTE1", "CUBE"))
    why = (f"GM traffic {ev.amplification:.1f}x the compulsory bytes ({ev.limiter}-bound, {100 * ev.efficiency:.0f} % "
           f"of the roof)" + (f"; {fill.text()}" if fill else ""))
    spread = _spread(ev)
    if spread < 1.0:
        why += f"; {ev.t('tiles')} C tiles for {ev.max_cores} cube cores, so half as many leave more of them idle"
    for axis, extent in (("m", ev.t("M")), ("n", ev.t("N"))):
        tile = ev.t(f"tile_{axis}")
        if tile and tile < _pow2_up(extent):
            cause, weight = _grow(ev, axis, why, ((fill.credit_us if fill else 0.0) + 0.05 * ev.span_us) * spread)
            yield _cand("larger_c_tiles", ev, cause, weight, ("split", axis, tile * 2))


def _waves(tiles: int, cores: int) -> int:
    return -(-tiles // max(1, cores))


def more_c_tiles(ev: KernelEvidence) -> Iterator[Candidate]:
    """Fewer C tiles than cube cores, or pipes idle at the end: smaller tiles spread the work wider (the larger
    tile halved first). Twice the tiles of half the size shorten the busiest core only when they need fewer
    than twice the waves over the cores (16 tiles on 24 cores: one wave; 32 tiles: two waves of half the work,
    the same time plus twice the per-tile overhead): the weight is scaled by that share."""
    if not ev.cube:
        return
    tiles, tail = ev.t("tiles"), ev.top(("tail",), ("CUBE", "MTE2"))
    few = tiles < ev.max_cores
    if not few and (tail is None or tail.pct < 25):
        return
    why = (f"{tiles} C tiles for {ev.max_cores} cube cores ({ev.block_dim} busy)" if few else tail.text())
    # the share of cores left idle is the share of the time spreading could win back (about half of it)
    weight = (0.5 * ev.span_us * (1 - tiles / ev.max_cores) if few else 0.0) + (tail.us if tail else 0.0)
    shorter = 1 - _waves(2 * tiles, ev.max_cores) / (2 * _waves(tiles, ev.max_cores))  # 0 .. 0.5
    if shorter < 0.5:
        why += (f"; {2 * tiles} tiles of half the size take {_waves(2 * tiles, ev.max_cores)} wave(s) over "
                f"{ev.max_cores} cores")
    weight *= 2 * shorter
    largest = max(ev.t("tile_m"), ev.t("tile_n"), 1)
    for axis in ("m", "n"):
        tile = ev.t(f"tile_{axis}")
        if tile >= 32:
            yield _cand("more_c_tiles", ev, why, weight * tile / largest, ("split", axis, tile // 2))


def k_tile(ev: KernelEvidence) -> Iterator[Candidate]:
    """The cube waiting for its L0 fractals: a larger k tile issues fewer, larger moves; a smaller one
    pipelines them finer. Both are tried. When the larger k tile would overflow an L0 tier already over half
    full, the same move with the tier's other axis halved keeps its bytes (two splits at once; the k tile
    alone is still proposed, last, so that it can say what it overflows)."""
    w = ev.top(("fill",), ("CUBE",))
    if not ev.cube or w is None or w.pct < 10:
        return
    tile, extent = ev.t("tile_k"), ev.t("K")
    if tile and tile < _pow2_up(extent):
        tier, share = ev.fullest(_L0_OF_AXIS["k"])
        other = {"L0A": "m", "L0B": "n"}.get(tier, "")
        half = ev.t(f"tile_{other}") // 2 if other else 0
        if share > 0.5 and half >= 16:
            yield _cand("k_tile", ev, f"{w.text()}; {tier} {100 * share:.0f} % used, so the {other} tile halves to "
                        f"{half} to hold twice the k tile", w.credit_us, ("split", "k", tile * 2),
                        ("split", other, half))
        yield _cand("k_tile", ev, *_grow(ev, "k", w.text(), w.credit_us), ("split", "k", tile * 2))
    if tile >= 32:  # a finer pipeline wins back the wait for a C tile's first k tile: about 1/k_tiles of it
        yield _cand("k_tile", ev, f"{w.text()}; {ev.t('k_tiles', 1)} k tile(s) per C tile", w.credit_us /
                    max(1, ev.t("k_tiles", 1)), ("split", "k", tile // 2))


def l1_k_steps(ev: KernelEvidence) -> Iterator[Candidate]:
    """MTE1 waiting for L1 slabs: more k tiles per GM->L1 load means fewer, larger copies."""
    w = ev.top(("fill",), ("MTE1",))
    if not ev.cube or w is None or w.pct < 8:
        return
    a, b, k_tiles = ev.t("step_ka", 1), ev.t("step_kb", 1), ev.t("k_tiles", 1)
    if max(a, b) * 2 <= k_tiles:
        yield _cand("l1_k_steps", ev, w.text(), w.credit_us, ("l1_k_steps", None, (a * 2, b * 2)))


def l1_c_steps(ev: KernelEvidence) -> Iterator[Candidate]:
    """A matmul reloading its A or B panels per C tile: keep a panel resident in L1 across several C tiles."""
    if ev.root != "matmul" or ev.amplification < 1.3 or (ev.family in ("cube_vector", "attention")
                                                          and ev.sync_all is None):
        return  # an elementwise epilogue takes each C tile as it is written: C tiles cannot be grouped
    sm, sn = ev.t("step_m", 1), ev.t("step_n", 1)
    why = f"GM traffic {ev.amplification:.1f}x the compulsory bytes; " + (ev.used("L1") or "L1 unused")
    if sn * 2 <= ev.t("n_tiles"):
        yield _cand("l1_c_steps", ev, why, 0.05 * ev.span_us, ("l1_c_steps", None, (sm, sn * 2)))
    if ev.sync_all is None and sm * 2 <= ev.t("m_tiles"):
        yield _cand("l1_c_steps", ev, why, 0.04 * ev.span_us, ("l1_c_steps", None, (sm * 2, sn)))


def swizzle(ev: KernelEvidence) -> Iterator[Candidate]:
    """More C tiles than cores and operands re-read from HBM: deal the tiles in groups that share panels in L2."""
    if not ev.cube or ev.t("tiles") <= ev.block_dim or ev.amplification < 1.2 or ev.l2_hit > 0.9:
        return
    why = (f"{ev.t('tiles')} C tiles over {ev.block_dim} cores, L2 hit ratio {100 * ev.l2_hit:.0f} %, GM traffic "
           f"{ev.amplification:.1f}x compulsory")
    for direction in ("m", "n"):
        if ev.t(f"{direction}_tiles") > 2:  # a group of 2 out of more tile rows (columns)
            yield _cand("swizzle", ev, why, 0.03 * ev.span_us, ("swizzle", direction, 2))


def sync_all(ev: KernelEvidence) -> Iterator[Candidate]:
    """A matmul with a row-reduction epilogue: the all-core barrier plan against the row-block plan."""
    if ev.sync_all is None:
        return
    w = ev.top(("sync", "flag", "tail"))
    why = (w.text() if w else f"{ev.block_dim} of {ev.max_cores} cube cores busy") + (
        "; with the barrier" if ev.sync_all else "; row blocks")
    weight = w.us if w else 0.05 * ev.span_us
    margin = ev.planned_margin()
    if margin > 0:  # the planner's own estimate of the other plan, at auto schedules, was slower by this much
        why += f"; the planner estimated the other plan {margin:.2f} us slower"
        weight = max(0.0, weight - margin)
    yield _cand("sync_all", ev, why, weight, ("sync_all", None, not ev.sync_all))


def vector_rows(ev: KernelEvidence) -> Iterator[Candidate]:
    """A vector kernel: fewer tiles than cores wants smaller row tiles; many small tiles per core want larger."""
    if ev.family != "vector" or "tile_rows" not in ev.tiling:
        return
    rows, tile, tiles = ev.t("rows"), ev.t("tile_rows"), ev.t("tiles")
    if tiles < ev.max_cores and tile >= 2:
        yield _cand("vector_rows", ev, f"{tiles} tiles of {tile} rows for {ev.max_cores} vector cores",
                    0.1 * ev.span_us, ("split", "rows", tile // 2))
    w = ev.top(("fill", "slot"), ("VECTOR", "MTE2", "MTE3"))
    if tiles > ev.max_cores and tile * 2 <= rows:
        why = f"{tiles} tiles of {tile} rows over {ev.block_dim} cores" + (f"; {w.text()}" if w else "")
        yield _cand("vector_rows", ev, why, (w.credit_us if w else 0.0) + 0.05 * ev.span_us,
                    ("split", "rows", tile * 2))


def compute_dtype(ev: KernelEvidence) -> Iterator[Candidate]:
    """Vector math held in float32 by a compute_dtype("float32") directive: "auto" computes natively in float16
    wherever every op still rounds as the golden model does (it keeps float32 elsewhere)."""
    if ev.stated("compute_dtype") != "float32" or not ev.math_f32:
        return
    idle = ev.top(("fill", "slot", "tail", "flag", "sync"), ("VECTOR",))
    busy = 100 - (idle.pct if idle else 0)
    yield _cand("compute_dtype", ev, f"vector math held in float32 by compute_dtype('float32'), the vector pipe busy "
                f"{busy:.0f} % ({ev.limiter}-bound)", 0.01 * busy * ev.span_us, ("compute_dtype", None, "auto"))


def parallel_cores(ev: KernelEvidence) -> Iterator[Candidate]:
    """Tiles waiting for cores that the chip has: spread them over more cores."""
    tiles = ev.t("tiles")
    if ev.block_dim < ev.max_cores and tiles > ev.block_dim:
        n = min(tiles, ev.max_cores)
        yield _cand("parallel_cores", ev, f"{tiles} tiles on {ev.block_dim} of {ev.max_cores} cores",
                    0.2 * ev.span_us * (1 - ev.block_dim / n), ("parallel", None, n))


def keep_out_of_fusion(ev: KernelEvidence) -> Iterator[Candidate]:
    """A fused matmul/conv whose vector cores mostly wait for the cube: the split plan (cube kernel, then the
    epilogue as a vector kernel) lets each run on all its cores."""
    if ev.family not in ("cube_vector", "attention") or not ev.root_name:
        return
    w = ev.top(("flag", "sync"))
    if w is None or w.pct < 30:
        return
    planned = next((n.split(";")[0] for n in ev.notes if n.startswith("fusion pays")), "")
    why = w.text() + (f"; the planner found {planned}" if planned else "")
    yield Candidate("keep_out_of_fusion", ev.name, (), why, 0.5 * w.us, (ev.root_name,))


# ---- the fused attention kernel (lower/attention.py): its blocks s1 / s2 and its workspace slots

def _flag_wait(ev: KernelEvidence, flag: int, on_cube: bool) -> Wait | None:
    """The largest wait of a cube (or vector) core's pipe for cross-core flag `flag`."""
    ws = [w for w in ev.waits if w.kind == "flag" and ("cubecore" in w.core) == on_cube
          and re.search(rf"\bflag={flag}\b", w.what)]
    return max(ws, key=lambda w: w.us) if ws else None


def _task_blocks(ev: KernelEvidence) -> int:
    """The S2 blocks one task of an attention kernel walks (all of them, or its part under a FlashDecode split)."""
    return -(-ev.t("s2_blocks", 1) // max(1, ev.t("kv_splits", 1)))


def attention_slots(ev: KernelEvidence) -> Iterator[Candidate]:
    """The cube waiting for vec1's P (the P flag): more workspace slots let bmm1 run further ahead of bmm2. The
    vector cores waiting for the cube's S or P V: more slots decouple the two sides too (weighted lower)."""
    if ev.family != "attention":
        return
    slots, blocks = ev.t("ws_slots", 3), _task_blocks(ev)
    if slots >= MAX_SLOTS:
        return
    w, weight = _flag_wait(ev, FLAG_P, True), 1.0
    if w is not None and w.pct >= 5:
        why = (f"{w.pipe} of the cube core idle {w.pct:.0f} % waiting for vec1's P (flag {FLAG_P}, {w.us:.2f} us) "
               f"with {slots} slot(s): bmm1 of block j + {slots} waits behind bmm2 of block j")
    else:
        w = max((x for f in (FLAG_S, FLAG_O) if (x := _flag_wait(ev, f, False)) is not None), key=lambda x: x.us,
                default=None)
        if w is None or w.pct < 10:
            return
        stage = "bmm1's S" if re.search(rf"\bflag={FLAG_S}\b", w.what) else "bmm2's P V"
        why = (f"{w.pipe} of the vector core idle {w.pct:.0f} % waiting for {stage} ({w.what.split(' (')[0]}, "
               f"{w.us:.2f} us) with {slots} slot(s)")
        weight = 0.5
    for n in range(slots + 1, min(MAX_SLOTS, blocks) + 1):  # slots beyond a task's S2 blocks have nothing to hold
        share = weight / (n - slots)
        yield _cand("attention_slots", ev, f"{why}; {n} slots let the cube run {n - 1} block(s) ahead", w.us * share,
                    ("slots", None, n))


def attention_s1(ev: KernelEvidence) -> Iterator[Candidate]:
    """The cube core's MTE2 the limiter (the cube waits for K and V tiles it brings to L1): a larger S1 block
    reuses each K/V tile for more query rows. Fewer tasks than cores: a smaller S1 block spreads them wider."""
    if ev.family != "attention":
        return
    s1, tasks, cores = ev.t("s1_block"), ev.t("tiles"), ev.max_cores
    kv = max((w for w in ev.waits if "cubecore" in w.core and w.kind == "fill" and w.what == "kv1"),
             key=lambda w: w.us, default=None)
    if kv is not None and kv.pct >= 10 and s1 * 2 <= S1_LARGEST:
        why = (f"{kv.pipe} of the cube core idle {kv.pct:.0f} % waiting for K and V tiles (kv1) filled by {kv.by} "
               f"({kv.us:.2f} us): each K/V tile serves {s1} query rows, {2 * s1} rows load them half as often")
        spread = min(1.0, (tasks // 2) / max(1, cores))
        if spread < 1.0:
            why += f"; {tasks} tasks for {cores} cores, so half as many leave cores idle"
        yield _cand("attention_s1", ev, why, kv.credit_us * spread, ("split", "s1", s1 * 2))
    if tasks < cores and s1 // 2 >= S1_SMALLEST:
        # twice the tasks of half the rows shorten the busiest core only if they need fewer than twice the waves
        shorter = 1 - _waves(2 * tasks, cores) / (2 * _waves(tasks, cores))
        why = (f"{tasks} tasks of {s1} query rows for {cores} cores ({ev.block_dim} busy): blocks of {s1 // 2} rows "
               f"make {2 * tasks} tasks in {_waves(2 * tasks, cores)} wave(s)")
        yield _cand("attention_s1", ev, why, ev.span_us * (1 - tasks / cores) * shorter, ("split", "s1", s1 // 2))


def attention_s2(ev: KernelEvidence) -> Iterator[Candidate]:
    """vec1 the limiter (the cube waits for its P with every slot in use), or a walk of fewer S2 blocks than
    slots (nothing for the stages to overlap): smaller S2 blocks hand P over sooner."""
    if ev.family != "attention":
        return
    s2, blocks, slots = ev.t("s2_block"), _task_blocks(ev), ev.t("ws_slots", 3)
    if s2 < 256:
        return
    w = _flag_wait(ev, FLAG_P, True)
    if blocks < slots:
        yield _cand("attention_s2", ev, f"S2 in {blocks} block(s) of {s2} columns for {slots} slots: the four "
                    f"stages of a task cannot overlap; blocks of {s2 // 2} make {2 * blocks}", 0.3 * ev.span_us,
                    ("split", "s2", s2 // 2))
    elif w is not None and w.pct >= 10:
        yield _cand("attention_s2", ev, f"vec1 holds the cube back: {w.pipe} of the cube core idle {w.pct:.0f} % "
                    f"waiting for its P (flag {FLAG_P}, {w.us:.2f} us) with {slots} slot(s); blocks of {s2 // 2} "
                    "columns hand P over sooner", 0.5 * w.us, ("split", "s2", s2 // 2))


def attention_kv(ev: KernelEvidence) -> Iterator[Candidate]:
    """A decode kernel (S1 blocks of at most DECODE_ROWS query rows, where the auto split and ks.tune's kv knob
    act) with fewer tasks than cube cores while each walks several S2 blocks: FlashDecode (split('kv', p),
    lower/attention_split.py) cuts every task's walk into parts on more cores, combined by log-sum-exp. Each part
    count the auto split's cost model (`split_cost`, assumed) rates faster than now is proposed, weighted by that
    model's saving; the simulator decides. A causal kernel refuses the split (KvSplitError), reported as such."""
    if ev.family != "attention":
        return
    tasks, cores, blocks = ev.t("tiles"), ev.max_cores, _task_blocks(ev)
    if ev.t("s1_block") > DECODE_ROWS or tasks >= cores or blocks < 2:
        return
    p, n2, s2, lag = max(1, ev.t("kv_splits", 1)), ev.t("s2_blocks", 1), ev.t("s2_block"), ev.t("ws_slots", 3) - 1
    heads = tasks // p  # the tasks before any split
    now = split_cost(heads, n2, cores, lag, p)
    for q in range(p + 1, min(n2, KV_MOST_PARTS) + 1):
        cost = split_cost(heads, n2, cores, lag, q)
        if cost >= now:
            continue
        why = (f"{tasks} tasks for {cores} cube cores ({ev.block_dim} busy), each walking {blocks} S2 block(s) of "
               f"{s2} columns: split('kv', {q}) makes {heads * q} tasks of at most {-(-n2 // q)} block(s), "
               "combined by log-sum-exp")
        yield _cand("attention_kv", ev, why, ev.span_us * (1 - cost / now), ("split", "kv", q))


RULES: list[Rule] = [
    double_buffer,  # single-buffered queues with fill/slot waits
    larger_c_tiles,  # GM traffic far above compulsory: larger C tiles
    more_c_tiles,  # fewer tiles than cores, or a long tail: smaller C tiles
    k_tile,  # the cube starved of L0 fractals: k tile up or down
    l1_k_steps,  # MTE1 starved of L1 slabs: more k tiles per load
    l1_c_steps,  # panels reloaded per C tile: keep them resident in L1
    swizzle,  # operands re-read from HBM: L2-friendly tile order
    sync_all,  # row-reduction epilogue: barrier plan vs row blocks
    vector_rows,  # vector tiles against the vector cores
    compute_dtype,  # float32 vector math by directive: let 'auto' use float16 where it may
    parallel_cores,  # idle cores while tiles queue
    keep_out_of_fusion,  # the epilogue's vector cores wait for the cube: split the kernel
    attention_slots,  # attention: the cube waits for vec1's P: more workspace slots
    attention_s1,  # attention: K/V loads bound the cube (larger S1 block), or idle cores (smaller)
    attention_s2,  # attention: vec1 holds the cube back, or too few S2 blocks to overlap: smaller S2 block
    attention_kv,  # attention at decode: idle cube cores, several S2 blocks per task: FlashDecode split
]


def candidates(evidence: tuple[KernelEvidence, ...]) -> list[Candidate]:
    """Every rule on every kernel; a move proposed twice keeps its first cause."""
    seen: dict[tuple, Candidate] = {}
    for ev in evidence:
        for rule in RULES:
            for c in rule(ev):
                seen.setdefault((c.directives, c.keep_out), c)
    return list(seen.values())


def _call(d: Directive) -> str:
    v = d.value
    if d.kind in ("split", "vectorize"):
        return f"{d.kind}({d.axis!r}, {v})"
    if d.kind in ("l1_k_steps", "l1_c_steps", "l1_depth"):
        return f"{d.kind}({v[0]}, {v[1]})"
    if d.kind == "swizzle":
        return f"swizzle({v}, {d.axis!r})"
    if d.kind == "parallel":
        return f"parallel({d.axis!r}, cores={v})" if d.axis is not None else f"parallel(cores={v})"
    if d.kind == "reorder":
        return f"reorder({', '.join(map(repr, d.axis))})"
    return f"{d.kind}({v!r})"


def move_text(directives: tuple[Directive, ...], keep_out: tuple[str, ...] = ()) -> str:
    """`s["out"].split('m', 64).double_buffer(True)`: the directives as the Stage calls that make them (and
    `s.keep_out_of_fusion(matmul)` for ops kept out, by their graph names)."""
    parts: dict[str, list[str]] = {}
    for d in directives:
        parts.setdefault(d.kernel, []).append(_call(d))
    return "; ".join([f"s.keep_out_of_fusion({n})" for n in keep_out]
                     + [f"s[{k!r}]." + ".".join(calls) for k, calls in parts.items()])
