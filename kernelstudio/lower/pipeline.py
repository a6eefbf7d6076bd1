"""`lower()`: the named pass pipeline from a Schedule to a TileIR Program.

Each pass makes one kind of decision for every kernel (it updates the kernel's KernelConfig); after
each pass the program is re-emitted and its text kept in `prog.passes`, so the pass viewer shows
what every decision did to the IR.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from ..core.config import DEFAULT_TARGET, verify_enabled
from ..core.errors import CapacityError, TargetError, UnsupportedError
from ..fusion.partition import FusedKernel
from ..fusion.precision import is_axis_reduce, lowered_apart, native_float16
from ..hw import HardwareProfile
from ..hw import get as get_profile
from ..ir.node import Node
from ..ir.ops import Kind, Op, itemsize
from ..schedule.schedule import Schedule
from ..tileir.printer import format_program
from ..tileir.program import GmTensor, Kernel, Program
from ..tileir.verify import verify
from .attention import lower_attention_kernel
from .config import KernelConfig
from .cube.grouped import lower_grouped_kernel
from .cube.kernel import lower_cube_kernel
from .directive_checks import check_directives_act
from .families import lower_vector_kernel
from .layout import lower_axis_reduce, lower_layout_kernel
from .scatter import alias_in_place, check_in_place
from .tile_order import auto_swizzle
from .tiling import SMALLER_FOR_TWO_SLOTS, auto_tiles, check_capacity, resolve_directives, validate_tiles
from .vector_body import ident

__all__ = ["lower", "PASSES", "describe", "default_name"]

Configs = dict[str, KernelConfig]


class _Ctx:
    def __init__(self, schedule: Schedule, profile: HardwareProfile, name: str):
        self.schedule, self.profile, self.name = schedule, profile, name
        g = schedule.graph
        self.names: dict[Node, str] = {n: ident(g.names[n]) for n in g.nodes}
        alias_in_place(g, self.names)  # a scatter's result is the cache it updates
        self.kernels: dict[str, FusedKernel] = {ident(k.name): k for k in schedule.kernels}
        self.tiles: dict[str, dict] = {}  # auto/user tiles decided by split_loop, applied in stages
        self.emitted: dict[tuple[str, KernelConfig], tuple[Kernel, GmTensor | tuple[GmTensor, ...] | None]] = {}
        self.gm: tuple | None = None  # `_gm_tensors`, made by the first `_emit`
        self.kernel_keys: dict[str, int] = {}  # `_kernel_id` per kernel name: the same for every config
        self._user: dict[str, dict] = {}

    def user(self, name: str) -> dict:
        """The user's directives for kernel `name`, resolved against the target (cached)."""
        if name not in self._user:
            fk = self.kernels[name]
            self._user[name] = resolve_directives(fk, self.schedule.for_kernel(fk.name), self.profile)
        return self._user[name]


def normalize_loop(ctx: _Ctx, cfgs: Configs) -> Configs:
    # one loop nest per kernel over its whole iteration space: one tile, one core, one buffer
    out = {}
    for name, fk in ctx.kernels.items():
        if fk.root is not None:
            out[name] = KernelConfig(tile_m=1 << 30, tile_n=1 << 30, tile_k=1 << 30, tile_rows=1 << 30,
                                     tile_cols=1 << 30, cores=1, depth=1, notes=fk.notes,
                                     l0c_bytes=ctx.profile.l0c_bytes)
        else:
            out[name] = KernelConfig(tile_rows=fk.rows, tile_cols=fk.cols, cores=1, depth=1, notes=fk.notes)
    return out


def inline_injection(ctx: _Ctx, cfgs: Configs) -> Configs:
    # scalar constants fold into vector-scalar instructions (Adds/Muls/Maxs) instead of duplicated tiles
    return {n: c.with_(inline_scalars=True) for n, c in cfgs.items()}


def split_loop(ctx: _Ctx, cfgs: Configs) -> Configs:
    # tile sizes from split()/reorder() or the auto-schedule; tails are min(tile, extent - i*tile)
    out = {}
    for name, c in cfgs.items():
        fk = ctx.kernels[name]
        if fk.family == "attention":  # its blocks (0: the defaults), which lower/attention.py reads
            ctx.tiles[name] = {}
            out[name] = c.with_(tile_m=ctx.user(name)["tile_m"] or 0, tile_n=ctx.user(name)["tile_n"] or 0,
                                ws_slots=ctx.user(name)["slots"], kv_splits=ctx.user(name)["kv_splits"])
            continue
        tiles = auto_tiles(fk, ctx.user(name), ctx.profile, _emit_one(ctx, name))
        validate_tiles(fk, tiles, ctx.profile)
        _check_acts(ctx, name, c, tiles)
        ctx.tiles[name] = tiles
        keys = ("tile_m", "tile_n", "tile_k", "order") if fk.root is not None else ("tile_rows", "order")
        out[name] = c.with_(**{k: tiles[k] for k in keys}, order_by=ctx.user(name)["order_by"],
                            sync_all=ctx.user(name)["sync_all"])
        if ctx.user(name)["swizzle"]:  # the C tiles' order (tile_order.py)
            g, direction = ctx.user(name)["swizzle"]
            out[name] = out[name].with_(swizzle_group=g, swizzle_dir=direction)
        if fk.root is not None:  # the L1 level: k tiles per L1 load of A and B (user or auto)
            out[name] = out[name].with_(step_ka=tiles.get("step_ka") or 1, step_kb=tiles.get("step_kb") or 1,
                                        step_m=tiles.get("step_m") or 1, step_n=tiles.get("step_n") or 1)
        if "smaller_for_two_slots" in tiles:
            r, c = tiles["smaller_for_two_slots"]
            out[name] = out[name].noted(f"{SMALLER_FOR_TWO_SLOTS}: the {r}x{c} tiles fit UB once, not twice; "
                                        f"{tiles['tile_rows']}x{tiles['tile_cols']} tiles fit twice")
        single = [t for key, t in (("depth_l0", "L0A/L0B"), ("depth_ub", "the epilogue's UB queues")) if tiles.get(key)]
        if single:
            out[name] = out[name].with_(depth_l0=tiles.get("depth_l0", 0), depth_ub=tiles.get("depth_ub", 0)).noted(
                f"double_buffer: {' and '.join(single)} keep one slot each: the {tiles['tile_m']}x{tiles['tile_n']}x"
                f"{tiles['tile_k']} tiles (the single-buffered choice) do not fit there twice; every other queue is "
                "double-buffered")
    return out


def _check_acts(ctx: _Ctx, name: str, c: KernelConfig, tiles: dict) -> None:
    """Every directive of the kernel acts on it (directive_checks.py), now that the tiles are known."""
    fk = ctx.kernels[name]
    directives = ctx.schedule.for_kernel(fk.name)
    if not directives:
        return
    tiling: dict = {}
    if fk.root is not None:
        kind = fk.family
        probe = _emit_one(ctx, name)(c.with_(tile_m=tiles["tile_m"], tile_n=tiles["tile_n"], tile_k=tiles["tile_k"],
                                             step_m=tiles.get("step_m") or 1, step_n=tiles.get("step_n") or 1,
                                             sync_all=ctx.user(name)["sync_all"], aligned=True, aic_only=True))
        tiling = dict(probe.tiling)
    elif lowered_apart(fk):
        kind = "layout"
    elif is_axis_reduce(fk):
        kind = "axis_reduce"
    else:
        kind = "vector"
    check_directives_act(fk, directives, kind, tiling)


def vectorize_loop(ctx: _Ctx, cfgs: Configs) -> Configs:
    # the vector tile: columns per vector instruction (vector kernels), rows x columns per epilogue chunk
    out = {}
    for name, c in cfgs.items():
        t = ctx.tiles[name]
        if ctx.kernels[name].family == "attention":
            out[name] = c
            continue
        keys = ("tile_rows", "tile_cols") if ctx.kernels[name].root is not None else ("tile_cols",)
        out[name] = c.with_(**{k: t[k] for k in keys})
    return out


def storage_align(ctx: _Ctx, cfgs: Configs) -> Configs:
    # cube tiles padded to 16 and on-chip rows to whole 32-byte blocks, as the data movers need
    return {n: c.with_(aligned=True) for n, c in cfgs.items()}


def compute_dtype(ctx: _Ctx, cfgs: Configs) -> Configs:
    # vector math natively in float16 where every op rounds as the golden model does, else float32
    return {name: (c.with_(compute_dtype="float16")
                   if ctx.kernels[name].family != "attention"
                   and native_float16(ctx.kernels[name], ctx.user(name)["compute_dtype"]) else c)
            for name, c in cfgs.items()}


def double_buffer(ctx: _Ctx, cfgs: Configs) -> Configs:
    # queue depth 2 (ping-pong) unless double_buffer(False): copies overlap compute
    # (L1 slabs as l1_depth(...) says, else as the queues)
    out = {}
    for name, c in cfgs.items():
        u = ctx.user(name)
        out[name] = c.with_(depth=u["depth"], depth_a1=u["depth_a1"] or 0, depth_b1=u["depth_b1"] or 0)
    return out


def parallel_loop(ctx: _Ctx, cfgs: Configs) -> Configs:
    # tiles dealt round robin over block_dim cores (all cores unless parallel(cores=...)); cube C tiles
    # in a swizzled order where the L2 model says it pays (tile_order.auto_swizzle)
    out = {name: c.with_(cores=ctx.user(name)["cores"]) for name, c in cfgs.items()}
    for name, c in out.items():
        fk = ctx.kernels[name]
        if fk.family in ("cube", "cube_vector") and not (fk.family == "cube_vector" and fk.has_row_reduction()
                                                          and not c.sync_all):
            nbytes = sum(itemsize(o.dtype) * math.prod(o.shape) for o in fk.outputs)
            out[name] = auto_swizzle(c, _emit_one(ctx, name), nbytes, ctx.profile.l2_bytes)
    return out


def plan_memory(ctx: _Ctx, cfgs: Configs) -> Configs:
    # every buffer of every tier (x depth, scratch included) must fit the target's capacity
    for name in cfgs:
        check_capacity(_emit_one(ctx, name)(cfgs[name]), ctx.profile)
    return cfgs


PASSES: list[tuple[str, Callable[[_Ctx, Configs], Configs]]] = [
    ("normalize_loop", normalize_loop),      # whole-space loop nests, one core, single buffers
    ("inline_injection", inline_injection),  # constants into vector-scalar instructions
    ("split_loop", split_loop),              # cube tiles / vector row tiles (user or auto), tails
    ("vectorize_loop", vectorize_loop),      # vector tile length, epilogue chunks
    ("storage_align", storage_align),        # 16-element cube tiles, 32-byte on-chip rows
    ("compute_dtype", compute_dtype),        # float16 vector math where precision allows
    ("double_buffer", double_buffer),        # TQue depth 2
    ("parallel_loop", parallel_loop),        # tiles over cores (block_dim)
    ("plan_memory", plan_memory),            # capacity of L1/L0A/L0B/L0C/UB
]


# Kernels emitted by earlier lower() calls: a kernel is a function of its fused kernel, the names of the tensors
# it touches and its config alone, and a Studio knob move lowers the same kernels for most configs again (the
# probes of plan_memory and auto tiles, the program after each pass). Equal keys give the same (frozen) object.
_EMITTED: OrderedDict[tuple, tuple[Kernel, GmTensor | tuple[GmTensor, ...] | None]] = OrderedDict()
_EMITTED_MAX = 128  # a few knob settings of a design (a larger heap slows every garbage collection)


def _emit_full(ctx: _Ctx, name: str, cfg: KernelConfig) -> tuple[Kernel, GmTensor | tuple[GmTensor, ...] | None]:
    """The kernel (and workspace) for one config, emitted once per lower() (plan_memory and the final
    program ask for the same one), and kept across lower() calls."""
    key = (name, cfg)
    hit = ctx.emitted.get(key)  # (each dict use of a key hashes the whole config again: one use per case)
    if hit is not None:
        return hit
    kid = ctx.kernel_keys.get(name)
    if kid is None:
        kid = ctx.kernel_keys[name] = _kernel_id(_kernel_key(ctx.kernels[name], ctx.names))
    gkey = (kid, cfg)
    hit = _EMITTED.pop(gkey, None)  # taken out and put back last: the most recently used
    if hit is None:
        fk = ctx.kernels[name]
        if fk.family == "attention":
            k, ws = lower_attention_kernel(fk, ctx.names, cfg)
        elif fk.root is not None and fk.root.op is Op.GROUPED_MATMUL:
            k, ws = lower_grouped_kernel(fk, ctx.names, cfg)
        elif fk.root is not None:
            k, ws = lower_cube_kernel(fk, ctx.names, cfg)
        elif lowered_apart(fk):  # a long sort returns its workspaces with it (lower/sort_merge.py)
            made = lower_layout_kernel(fk, ctx.names, cfg)
            k, ws = made if isinstance(made, tuple) else (made, None)
        elif is_axis_reduce(fk):
            k, ws = lower_axis_reduce(fk, ctx.names, cfg), None
        else:
            k, ws = lower_vector_kernel(fk, ctx.names, cfg), None
        hit = (k if k.does else dataclasses.replace(k, does=describe(fk.nodes))), ws
        if len(_EMITTED) >= _EMITTED_MAX:
            _EMITTED.popitem(last=False)
    _EMITTED[gkey] = ctx.emitted[key] = hit
    return hit


# `_kernel_key`s seen lately, each numbered once (numbers are never reused): the kernel caches key by the number,
# so a lookup hashes the long key once per lower() and kernel, not once per config
_KERNEL_IDS: OrderedDict[tuple, int] = OrderedDict()
_KERNEL_IDS_MAX = 256
_next_kernel_id = itertools.count()


def _kernel_id(kkey: tuple) -> int:
    kid = _KERNEL_IDS.pop(kkey, None)
    if kid is None:
        kid = next(_next_kernel_id)
        if len(_KERNEL_IDS) >= _KERNEL_IDS_MAX:
            _KERNEL_IDS.popitem(last=False)
    _KERNEL_IDS[kkey] = kid
    return kid


def _kernel_key(fk: FusedKernel, names: dict[Node, str]) -> tuple:
    """What lowering reads of a fused kernel, by name: every node it holds or reads (op, shape, dtype,
    attributes, inputs, composite numbered within the kernel), its space, views and boundary. Equal for the
    same kernel of a cell run again (new Node objects and composite ids)."""
    members = set(fk.nodes)
    comps: dict[object, int] = {}
    nodes = []
    for m in dict.fromkeys(m for n in fk.nodes for m in (n, *n.inputs)):
        comp = (m.composite.name, comps.setdefault(m.composite.uid, len(comps))) if m.composite else None
        nodes.append((names[m], m.op, m.shape, m.dtype, m.attrs, comp,
                      tuple(names[i] for i in m.inputs) if m in members else ()))
    return (fk.name, fk.family, fk.space, fk.row_dims, fk.sync_all, fk.notes,
            names[fk.root] if fk.root is not None else None, tuple(names[n] for n in fk.inputs),
            tuple(names[n] for n in fk.outputs), tuple((names[n], v) for n, v in fk.views),
            tuple((names[n], r.name) for n, r in fk.reasons), tuple(nodes))


def _emit_one(ctx: _Ctx, name: str) -> Callable[[KernelConfig], Kernel]:
    def emit(cfg: KernelConfig) -> Kernel:
        return _emit_full(ctx, name, cfg)[0]
    return emit


def _emit(ctx: _Ctx, cfgs: Configs) -> Program:
    if ctx.gm is None:
        ctx.gm = _gm_tensors(ctx)
    inputs, outputs, order, outs = ctx.gm
    tensors = dict(inputs)
    kernels: list[Kernel] = []
    for name in ctx.kernels:
        k, ws = _emit_full(ctx, name, cfgs[name])
        for t in outputs[name]:
            if t.name not in tensors:  # else updated in place: the input tensor it names
                tensors[t.name] = t
        for w in ws if isinstance(ws, tuple) else (ws,):
            if w is not None:
                tensors[w.name] = w
        kernels.append(k)
    return Program(ctx.name, ctx.profile.name, tuple(tensors.values()), tuple(kernels), order, outs,
                   fused=ctx.schedule.fuse)


def _gm_tensors(ctx: _Ctx) -> tuple[dict[str, GmTensor], dict[str, list[GmTensor]], tuple[str, ...], tuple[str, ...]]:
    """What `_emit` puts in every program of a lower() whatever the configs: the inputs' GM tensors, each
    kernel's output tensors (in order), the input and output names."""
    g = ctx.schedule.graph
    inputs = {ctx.names[p]: GmTensor(ctx.names[p], p.shape, p.dtype, "input", str(p.attr("format", "ND")))
              for p in g.placeholders}
    outputs = {name: [GmTensor(ctx.names[o], o.shape, o.dtype, "output" if o in g.outputs else "intermediate")
                      for o in fk.outputs] for name, fk in ctx.kernels.items()}
    return (inputs, outputs, tuple(ctx.names[p] for p in g.placeholders), tuple(ctx.names[o] for o in g.outputs))


_DESCRIBED: dict[tuple, str] = {}  # (nodes, words) -> describe(...): every emitted kernel asks it of its nodes


def describe(nodes: Iterable[Node], words: int = 3) -> str:
    """What `nodes` compute, in at most `words` words joined by '_': the matmul/conv and the composite
    calls (layer_norm, gelu, ...) in order, then the last op when it is not one of them
    (`matmul_layer_norm_gelu`, `matmul_leaky_relu`, `add`). It names kernels and, when the output has
    no name of the user's, the design, so it does not depend on the graph's numbering."""
    key = (nodes if type(nodes) is tuple else tuple(nodes), words)
    text = _DESCRIBED.get(key)
    if text is None:
        if len(_DESCRIBED) >= 64:
            _DESCRIBED.clear()
        text = _DESCRIBED[key] = _describe(key[0], words)
    return text


def _describe(nodes: tuple[Node, ...], words: int) -> str:
    seen: list[str] = []
    last = ""
    for n in nodes:
        if n.info.kind is Kind.LEAF:
            continue
        last = n.composite.name if n.composite else n.op.value
        if (n.composite or n.info.kind is Kind.CUBE) and last not in seen:
            seen.append(last)
    if last and last not in seen:
        seen.append(last)
    return "_".join(seen[:words]) or "kernel"


def default_name(schedule: Schedule) -> str:
    """The design's name when none is given: the first output's own name if the user gave it one,
    else what the graph computes (`describe`)."""
    g = schedule.graph
    out = g.outputs[0]
    return ident(out.name) if out.name else describe(g.nodes)


def _separated_targets() -> list[str]:
    from ..hw import names

    return [n for n in names() if get_profile(n).arch == "separated"]


def needs_other_chip(schedule: Schedule, profile: HardwareProfile) -> str | None:
    """Why the schedule's kernels cannot lower on `profile` at all (None: they can): matmul/conv kernels
    lower for separated chips only (AIC and AIV cores, FixPipe L0C -> GM). lower() raises it; the Studio's
    target list leaves such profiles out with it."""
    if profile.arch == "separated" or not any(k.root is not None for k in schedule.kernels):
        return None
    return (f"{profile.name} is a {profile.arch} chip (one core, L0C -> UB, no FixPipe to GM): matmul/conv kernels "
            f"lower for separated chips only so far; choose one of {', '.join(_separated_targets())} or keep to "
            f"vector kernels on {profile.name}")


def lower(schedule: Schedule, target: str | HardwareProfile = DEFAULT_TARGET, *, name: str | None = None) -> Program:
    """Run the pass pipeline; the returned Program's `passes` holds (name, ir_text) after each pass."""
    from ..core.checks import need
    from ..core.names import check_name

    schedule = need(schedule, Schedule, "lower")
    if not isinstance(target, (str, HardwareProfile)):
        raise TargetError(f"lower: target must be a profile name or a HardwareProfile, got "
                          f"{type(target).__name__} {target!r}; see ks.hw.names()")
    if name is not None:
        check_name("lower", name)
    profile = target if isinstance(target, HardwareProfile) else get_profile(target)
    for o in schedule.graph.outputs:
        if o.info.kind is Kind.LEAF:
            raise UnsupportedError(f"output {schedule.graph.names[o]} is an input or a constant, not a computation")
    why = needs_other_chip(schedule, profile)
    if why:
        raise UnsupportedError(why)
    check_in_place(schedule.graph)
    ctx = _Ctx(schedule, profile, name or default_name(schedule))
    cfgs: Configs = {}
    steps: list[tuple[str, Configs]] = []
    each = verify_enabled()  # KS_VERIFY=1: check the program after every pass too
    for pname, fn in PASSES:
        cfgs = fn(ctx, cfgs)
        steps.append((pname, cfgs))
        if each:
            verify(_emit(ctx, cfgs), after=pname)
    prog = _emit(ctx, cfgs)
    ctx.emitted.clear()  # the probes are done with; the PassLog keeps ctx alive with the Program
    _check_gm(prog, profile)  # a user's too-big tensors are a CapacityError, before any internal check
    if not each:  # always the final program: a bad pass fails here, not later in a reader
        verify(prog, after=PASSES[-1][0])
    return Program(prog.name, prog.target, prog.tensors, prog.kernels, prog.inputs, prog.outputs,
                   prog.fused, PassLog(ctx, steps, prog), profile)


def _check_gm(prog: Program, profile: HardwareProfile) -> None:
    """Every GM tensor (inputs, outputs, intermediates, workspaces) together must fit device memory."""
    total = sum(t.nbytes for t in prog.tensors)
    if total > profile.hbm_bytes:
        big = max(prog.tensors, key=lambda t: t.nbytes)
        raise CapacityError(
            f"program {prog.name}: its GM tensors need {total:,} B but {profile.name} has {profile.hbm_bytes:,} B "
            f"of device memory (largest: {big.name} {list(big.shape)} {big.dtype} = {big.nbytes:,} B); "
            "shrink the shapes or split the work across launches")


class PassLog(Sequence):
    """(pass name, IR text after the pass) for every pass, printed when first read: the decisions are
    kept, so a lower() that nobody inspects does not pay for a printout per pass."""

    def __init__(self, ctx: _Ctx, steps: list[tuple[str, Configs]], final: Program | None = None):
        self._ctx, self._steps = ctx, steps
        self._text: dict[int, str] = {}
        self._by_configs: dict[tuple, str] = {}  # passes that changed nothing print the same program
        self._final = final  # the program lower() emitted from the last pass's configs

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        i = range(len(self))[i]
        if i not in self._text:
            key = tuple(self._steps[i][1].items())
            if key not in self._by_configs:
                last = self._final is not None and key == tuple(self._steps[-1][1].items())
                prog = self._final if last else _emit(self._ctx, self._steps[i][1])
                self._by_configs[key] = format_program(prog)
            self._text[i] = self._by_configs[key]
        return self._steps[i][0], self._text[i]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(name for name, _ in self._steps))

    def __repr__(self) -> str:
        return f"PassLog({[name for name, _ in self._steps]})"
