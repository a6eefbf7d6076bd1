"""Schedules: the fusion plan plus a tuple of frozen directives (replayable, hashable data)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..core.errors import ScheduleError
from ..fusion.partition import FusedKernel, FusionPlan, partition
from ..fusion.precision import COMPUTE_DTYPES
from ..ir.graph import Graph
from ..ir.node import Node
from ..ir.ops import Op
from .directive import Directive
from .replay import parse_directives

__all__ = ["Directive", "Schedule", "Stage", "create_schedule", "CUBE_AXES", "DIRECTIVE_KINDS"]

CUBE_AXES = ("m", "n", "k")
DIRECTIVE_KINDS = ("split", "reorder", "parallel", "double_buffer", "vectorize", "compute_dtype", "l1_k_steps",
                   "l1_depth", "l1_c_steps", "swizzle", "sync_all", "slots")


# The cost-aware fusion choice (graph, kept-out nodes, target or None) -> (choices, plan): it lowers and
# simulates, so it lives above this stage (plan/choose.py) and is handed in.
Planner = Callable[[Graph, tuple[Node, ...], Any], tuple[tuple[Any, ...], FusionPlan]]


def _node_of(t: Any) -> Node:
    node = getattr(t, "node", t)
    if not isinstance(node, Node):
        raise ScheduleError(f"expected a tensor of the graph, got {type(t).__name__}")
    return node


class Schedule:
    """Result of `create_schedule`: `kernels`, `s[tensor]` stages, and the directive tuple."""

    def __init__(self, outputs: Sequence[Node], *, fuse: bool | None = True, keep_out: Iterable[Node] = (),
                 directives: Sequence[Directive] = (), split: Iterable[Node] = (), target: Any = None,
                 planner: Planner | None = None):
        self.graph = Graph(tuple(outputs))
        from ..ir.golden import named_placeholders

        named_placeholders(self.graph, "create_schedule")  # two different placeholders may not share a name
        for n in keep_out:
            _check_in_graph(self.graph, n, "create_schedule(keep_out=...)")
        # "auto": the simulator picks fused or split per matmul/conv epilogue; "on": pattern fusion
        # everywhere; "off": one kernel per op or library call
        self.fusion = "auto" if fuse is None else ("on" if fuse else "off")
        self.fuse = fuse is not False
        self.keep_out: tuple[Node, ...] = tuple(keep_out)
        self.choices: tuple = ()  # FusionChoice per cube_vector candidate (auto mode)
        self._split: tuple[Node, ...] = tuple(split)
        self._target = target
        if self.fusion == "auto" and planner is None:
            raise ScheduleError("Schedule(fuse=None) lets the simulator choose the fusion plan, which needs a "
                                "planner; use ks.create_schedule(outputs), or pass fuse=True / fuse=False")
        self._planner = planner
        self.plan: FusionPlan = self._partition()
        self.directives: tuple[Directive, ...] = ()
        for d in directives:
            self.apply(d)

    def _partition(self) -> FusionPlan:
        if self.fusion != "auto":
            return partition(self.graph, fuse=self.fuse, keep_out=self.keep_out, split=self._split)
        self.choices, plan = self._planner(self.graph, self.keep_out, self._target)
        self._split = tuple(c.root for c in self.choices if not c.fused)
        return plan

    @property
    def kernels(self) -> tuple[FusedKernel, ...]:
        return self.plan.kernels

    @property
    def outputs(self) -> tuple[Node, ...]:
        return self.graph.outputs

    def kernel(self, name: str) -> FusedKernel:
        for k in self.kernels:
            if k.name == name:
                return k
        raise ScheduleError(f"no kernel named {name!r}; kernels: {', '.join(k.name for k in self.kernels)}")

    def __getitem__(self, tensor: Any) -> Stage:
        if isinstance(tensor, str):
            return Stage(self, self.kernel(tensor))
        node = _node_of(tensor)
        if node not in self.graph.names:
            raise ScheduleError("that tensor is not part of this schedule's graph; "
                                "index the schedule with a tensor computed on the way to its outputs")
        return Stage(self, self.plan.kernel_of(node))

    def keep_out_of_fusion(self, tensor: Any, *, drop_refused: bool = False) -> tuple[Directive, ...]:
        """Re-run fusion with `tensor`'s op kept out of fused kernels (its own kernel). The directives of kernels
        that no longer exist are dropped; one that a re-planned kernel of the same name refuses (a fused
        kernel's split("m", ...) on what is now a vector kernel) is a ScheduleError that leaves the schedule as
        it was, unless `drop_refused`: then it is dropped too. Returns the directives dropped."""
        node = _node_of(tensor)
        _check_in_graph(self.graph, node, "keep_out_of_fusion")
        before = (self.keep_out, self.plan, self.choices, self._split, self.directives)
        self.keep_out = (*self.keep_out, node)
        self.plan = self._partition()
        names = {k.name for k in self.kernels}
        kept, dropped, refused = [], [d for d in self.directives if d.kernel not in names], []
        for d in self.directives:
            if d.kernel not in names:
                continue
            try:
                _validate(self.kernel(d.kernel), _normalize(d))
                kept.append(d)
            except ScheduleError as e:
                refused.append((d, e))
        if refused and not drop_refused:
            self.keep_out, self.plan, self.choices, self._split, self.directives = before
            d, e = refused[0]
            raise ScheduleError(f"keep_out_of_fusion({self.graph.names[node]}): the directive {d.kind}"
                                f"({d.axis!r}, {d.value!r}) written for kernel {d.kernel!r} before it was re-planned "
                                f"is refused by the new kernel {d.kernel!r} ({e}); call keep_out_of_fusion before "
                                "writing directives, or pass drop_refused=True to drop such directives")
        self.directives = tuple(kept)
        return (*dropped, *(d for d, _ in refused))

    keep_out_op = keep_out_of_fusion

    def apply(self, d: Directive) -> None:
        """Validate and append one directive (used by stages and to replay saved schedules)."""
        if not isinstance(d, Directive):
            raise ScheduleError(f"apply takes a Directive, got {type(d).__name__}; use s[tensor].split(...) etc.")
        k = self.kernel(d.kernel)
        d = _normalize(d)
        try:
            _validate(k, d)
        except ScheduleError as e:
            note = next((n for n in k.notes if n.startswith("kept apart")), None)
            if note is not None:  # the directive was probably written for the fused kernel
                raise ScheduleError(f"{e}. Note: this kernel was {note}") from None
            raise
        self.directives = (*self.directives, d)

    def for_kernel(self, name: str) -> tuple[Directive, ...]:
        return tuple(d for d in self.directives if d.kernel == name)

    def to_dot(self) -> str:
        """DOT of the graph with one cluster per fused kernel ("name (family)")."""
        from ..ir.printer import to_dot

        return to_dot(self.outputs, clusters=[(f"{k.name} ({k.family})", k.nodes) for k in self.kernels])

    def explain(self) -> str:
        """Each kernel, its ops and the fusion rule that put every op there."""
        lines = []
        for k in self.kernels:
            lines.append(f"kernel {k.name}  family={k.family}  space={list(k.space)}")
            for n, r in k.reasons:
                lines.append(f"  {self.graph.names[n]:<28} {r.name:<18} {r.reason}")
            lines.extend(f"  note: {note}" for note in k.notes)
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps([d.to_json() for d in self.directives])

    def replay(self, text: str) -> None:
        """Apply the directives saved by `to_json`; all or none (a bad entry leaves the schedule as it was)."""
        before = self.directives
        try:
            for d in parse_directives(text):
                self.apply(d)
        except BaseException:
            self.directives = before
            raise

    def __repr__(self) -> str:
        ks = ", ".join(f"{k.name}:{k.family}" for k in self.kernels)
        mode = {"auto": "fusion chosen by cost", "on": "fused", "off": "unfused"}[self.fusion]
        return f"Schedule({mode}; {ks}; {len(self.directives)} directives)"


class Stage:
    """The schedule of one kernel; every method records a Directive."""

    def __init__(self, schedule: Schedule, kernel: FusedKernel):
        self.schedule = schedule
        self.kernel = kernel

    def _add(self, kind: str, axis: Any = None, value: Any = None) -> Stage:
        self.schedule.apply(Directive(kind, self.kernel.name, axis, value))
        return self

    def split(self, axis: str | int, factor: int) -> Stage:
        """The tile of `axis` is `factor` long. An attention kernel's axes: 's1' (query rows per task) and 's2'
        (key/value columns per step), multiples of 16, and 'kv': the key/value sequence cut into `factor` parts
        walked on different cores and combined by log-sum-exp (FlashDecode; lower/attention_split.py)."""
        return self._add("split", axis, factor)

    def reorder(self, *axes: str | int) -> Stage:
        return self._add("reorder", tuple(axes))

    def parallel(self, axis: str | int | None = None, cores: int | None = None) -> Stage:
        return self._add("parallel", axis, cores)

    def double_buffer(self, on: bool = True) -> Stage:
        return self._add("double_buffer", None, on)

    def l1_k_steps(self, a: int, b: int | None = None) -> Stage:
        """How many k tiles one L1 load of A (and of B; default: as A) brings — TCubeTiling stepKa and
        stepKb. The slab stays in L1 while its k tiles move on to L0A/L0B one by one; the larger
        step must be a multiple of the smaller. Conv kernels take A's step for their weights; their
        B is the img2col source, which already holds every channel's input rows."""
        return self._add("l1_k_steps", None, (a, a if b is None else b))

    def l1_c_steps(self, m: int, n: int = 1) -> Stage:
        """Cube operands stay resident in L1 across several C tiles (the L1 level TCubeTiling's stepM /
        stepN describe).

        A core computes its C tiles in groups of `m` x `n` (TCubeTiling singleCoreM = m x tile_m,
        singleCoreN = n x tile_n; stepN = n when B's panel spans the group, stepM = 1 as A's panel is
        one tile row), row by row (iterateOrder 1: n inner). When n > 1, A's row panel of one tile row
        (tile_m rows x the whole K) is loaded GM->L1 once and serves the row's n C tiles; when m > 1,
        B's column panel of the group (the whole K x n tile_n columns) is loaded once and serves the
        group's m tile rows. Reuse needs the whole K resident (the "full load" case: C tiles run their
        k loop one after another into one L0C accumulator, so a partial-K slab would be gone before the
        next tile wants it), so a resident operand loads all its k tiles at once (stepKa / stepKb = the
        k tiles); the operand that is not shared streams per C tile in its l1_k_steps slabs. Each C
        tile takes its L0A/L0B fractals from the resident panel at its own offsets. Default 1 x 1 (every
        C tile reloads its operands). Matmul kernels only; a mixed kernel with a row-reduction epilogue
        takes l1_c_steps(1, n) (its core walks whole rows already)."""
        return self._add("l1_c_steps", None, (m, n))

    def l1_depth(self, a: int, b: int | None = None) -> Stage:
        """L1 slots for A (and B) slabs: 2 double-buffers them (the next slab loads while the cube
        works on this one), 1 single-buffers — TCubeTiling depthA1 / depthB1 in slabs. Default: as
        double_buffer."""
        return self._add("l1_depth", None, (a, a if b is None else b))

    def swizzle(self, group: int, direction: str = "m") -> Stage:
        """The order a matmul/conv kernel deals its C tiles out to the cores: in groups of `group`
        tile rows (direction "m"; "n": tile columns), each column (row) of a group in turn, every
        other group backwards — catlass's GemmIdentityBlockSwizzle. A and B panels are then used
        again while they are still in L2. group 1 along "m" walks the rows one by one (every other
        row backwards), a group of all the tile rows is the column-major order (reorder("n", "m")).
        Numerics do not change."""
        return self._add("swizzle", direction, group)

    def compute_dtype(self, dtype: str) -> Stage:
        """Dtype of the vector math: "auto" (float16 where every op rounds as the golden model does,
        the default), "float16" (native; an error if an op needs float32) or "float32"."""
        return self._add("compute_dtype", None, dtype)

    def vectorize(self, axis: str | int, factor: int) -> Stage:
        return self._add("vectorize", axis, factor)

    def sync_all(self, on: bool = True) -> Stage:
        """A matmul whose epilogue reduces whole rows (layer_norm, rms_norm, softmax over N): True deals its C
        tiles to every cube core as a plain matmul does, into a workspace that holds the whole C, meets every
        core at one all-core barrier (Ascend C's hard `SyncAll<false>()`), then deals the rows of C to every
        vector core for the epilogue. False (the row-block plan): each core computes whole row blocks, all
        their n tiles, and hands each to its own two vector cores, so cube and vector overlap but only as many
        cores work as there are row blocks. The auto-schedule picks per kernel."""
        return self._add("sync_all", None, on)

    def slots(self, n: int) -> Stage:
        """An attention kernel's workspace slots per core, the S2 blocks in flight (1 to 4, default 3): with n
        slots the cube runs bmm1 of block j while the vector cores run vec1 of block j and vec2 of block j - (n - 1),
        so bmm2 of the earlier block overlaps them; 1 runs the four stages of each block one after another."""
        return self._add("slots", None, n)

    def __repr__(self) -> str:
        return f"Stage({self.kernel.name}, family={self.kernel.family})"


def _check_in_graph(graph: Graph, node: Node, call: str) -> None:
    if node not in graph.names:
        raise ScheduleError(f"{call}: tensor {node.name or node.op.value} {list(node.shape)} is not part of this "
                            "schedule's graph; pass a tensor computed on the way to the schedule's outputs")


def _normalize(d: Directive) -> Directive:
    """NumPy integers and bools in a directive become Python ones (so it compares, hashes and saves)."""
    def norm(v: Any) -> Any:
        if isinstance(v, tuple):
            return tuple(norm(x) for x in v)
        if isinstance(v, np.bool_):
            return bool(v)
        if isinstance(v, np.integer):
            return int(v)
        return v

    axis, value = norm(d.axis), norm(d.value)
    if axis is d.axis and value is d.value:
        return d
    return Directive(d.kind, d.kernel, axis, value)


def _axes_text(k: FusedKernel) -> str:
    if k.family in ("cube", "cube_vector"):
        return '"m", "n", "k" or an output dim'
    return f"an output dim in [-{len(k.space)}, {len(k.space)})"


def _check_axis(k: FusedKernel, kind: str, axis: Any) -> None:
    if isinstance(axis, bool) or not isinstance(axis, (str, int)):
        raise ScheduleError(f"kernel {k.name}: {kind} axis {axis!r} must be {_axes_text(k)}")
    nd = len(k.space)
    if isinstance(axis, int):
        if not -nd <= axis < nd:
            raise ScheduleError(f"kernel {k.name}: {kind} axis {axis} is out of range for its "
                                f"{nd}-d output {list(k.space)}; use {_axes_text(k)}")
        return
    valid = CUBE_AXES if k.family in ("cube", "cube_vector") else ("rows", "cols")
    if axis not in valid:
        raise ScheduleError(f"kernel {k.name} ({k.family}) has no axis {axis!r}; use {_axes_text(k)}")


def _check_factor(k: FusedKernel, kind: str, value: Any, what: str = "factor") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScheduleError(f"kernel {k.name}: {kind} {what} must be a whole number >= 1, got {value!r}")


ATTENTION_AXES = ("s1", "s2", "kv")  # an attention kernel's blocks: query rows per task, key/value columns per
# step; "kv": the key/value sequence split into that many parts over the cores, combined by log-sum-exp


def _validate_attention(k: FusedKernel, d: Directive) -> None:
    """An attention kernel (fusion/attention.py) takes split('s1' | 's2', block), parallel(cores=...) and
    double_buffer(...); every other directive names what it takes."""
    takes = ("split('s1', rows) / split('s2', columns) (multiples of 16), split('kv', parts), slots(1 to 4), "
             "parallel(cores=...) and double_buffer(...)")
    if d.kind == "split":
        if d.axis not in ATTENTION_AXES:
            raise ScheduleError(f"kernel {k.name} (attention) has no axis {d.axis!r}; its blocks are 's1' (query "
                                f"rows per task) and 's2' (key/value columns per step): it takes {takes}")
        if d.axis == "kv":
            if isinstance(d.value, bool) or not isinstance(d.value, int) or d.value < 1:
                raise ScheduleError(f"kernel {k.name}: split('kv', {d.value!r}): the key/value sequence splits into a "
                                    "whole number >= 1 of parts (1: no split, each task walks all of S_kv); e.g. "
                                    "split('kv', 4)")
            return
        _check_factor(k, "split", d.value)
        if d.value % 16:
            raise ScheduleError(f"kernel {k.name}: split({d.axis!r}, {d.value}): the attention blocks are whole "
                                f"16-row fractals of the cube; use a multiple of 16, e.g. {-(-d.value // 16) * 16}")
    elif d.kind == "parallel":
        if d.axis is not None:
            raise ScheduleError(f"kernel {k.name}: parallel({d.axis!r}, ...): an attention kernel spreads its "
                                "(batch*head, S1 block) tasks over the cores; give parallel(cores=...) alone")
        if d.value is not None:
            _check_factor(k, "parallel", d.value, "cores")
    elif d.kind == "double_buffer":
        if not isinstance(d.value, bool):
            raise ScheduleError(f"kernel {k.name}: double_buffer takes True or False, got {d.value!r}")
    elif d.kind == "slots":
        if isinstance(d.value, bool) or not isinstance(d.value, int) or not 1 <= d.value <= 4:
            raise ScheduleError(f"kernel {k.name}: slots({d.value!r}): the S2 blocks in flight per core are 1 (the "
                                "stages one after another) to 4; the default is 3")
    else:
        raise ScheduleError(f"kernel {k.name}: {d.kind}(...) does not apply to an attention kernel; it takes {takes}")


def _validate(k: FusedKernel, d: Directive) -> None:
    if d.kind not in DIRECTIVE_KINDS:
        raise ScheduleError(f"unknown directive {d.kind!r}; use one of {', '.join(DIRECTIVE_KINDS)}")
    if k.family == "attention":
        _validate_attention(k, d)
        return
    if d.kind == "split" and d.axis == "kv":
        raise ScheduleError(f"kernel {k.name}: split('kv', {d.value!r}) splits the key/value sequence of an attention "
                            f"kernel (ks.ops.flash_attention fused into one kernel); this kernel is {k.family}: split "
                            f"one of its own axes ({_axes_text(k)})")
    if d.kind == "slots":
        raise ScheduleError(f"kernel {k.name}: slots(...) applies to attention kernels (the S2 blocks in flight "
                            f"between their cube and vector cores); this kernel is {k.family}")
    if d.kind in ("split", "vectorize"):
        _check_axis(k, d.kind, d.axis)
        _check_factor(k, d.kind, d.value)
        if d.kind == "vectorize" and d.axis == "k":
            raise ScheduleError(f"kernel {k.name}: vectorize('k', ...) has no meaning: 'k' is the matmul's "
                                "reduction, the vector (epilogue) tile is rows 'm' and columns 'n'; use "
                                "vectorize('n', ...) or vectorize(-1, ...), or split('k', ...) for the k tile")
    elif d.kind == "reorder":
        axes = d.axis if isinstance(d.axis, tuple) else (d.axis,)
        if not axes:
            raise ScheduleError(f"kernel {k.name}: reorder needs at least one axis")
        for a in axes:
            _check_axis(k, "reorder", a)
        if len(set(axes)) != len(axes):
            raise ScheduleError(f"kernel {k.name}: reorder names an axis twice: {list(axes)}")
        if "k" in axes:
            raise ScheduleError(f"kernel {k.name}: reorder cannot move 'k': the reduction axis "
                                "accumulates in L0C and stays the innermost tile loop; reorder 'm' and 'n'")
    elif d.kind == "parallel":
        if d.axis is not None:
            _check_axis(k, "parallel", d.axis)
        if d.value is not None:
            _check_factor(k, "parallel", d.value, "cores")
        if d.axis == "k":
            raise ScheduleError(f"kernel {k.name}: parallel over 'k' would split the L0C accumulation "
                                "across cores; parallelise 'm' or 'n'")
    elif d.kind in ("l1_k_steps", "l1_depth", "l1_c_steps"):
        if k.root is None:
            raise ScheduleError(f"kernel {k.name}: {d.kind} applies to matmul/conv kernels (the cube's L1); "
                                f"this kernel is {k.family}")
        if d.kind == "l1_c_steps" and k.root.op is Op.CONV2D:
            raise ScheduleError(f"kernel {k.name}: l1_c_steps applies to matmul kernels; a convolution's pixel "
                                "tiles each load their own img2col source, so it takes split('m'/'n'/'k', ...), "
                                "l1_k_steps(a) for its weight slabs and l1_depth(...)")
        if not isinstance(d.value, tuple) or len(d.value) != 2:
            raise ScheduleError(f"kernel {k.name}: {d.kind} takes two whole numbers (for A and B / m and n), "
                                f"got {d.value!r}")
        what = {"l1_k_steps": "k tiles per L1 load", "l1_depth": "L1 slots",
                "l1_c_steps": "C tiles per L1-resident group"}[d.kind]
        for v in d.value:
            _check_factor(k, d.kind, v, what)
        a, b = d.value
        if d.kind == "l1_k_steps" and max(a, b) % min(a, b):
            raise ScheduleError(f"kernel {k.name}: l1_k_steps(a={a}, b={b}): the larger step must be a multiple "
                                f"of the smaller (the smaller slab reloads inside the larger); use e.g. "
                                f"l1_k_steps(a={a}, b={a * max(1, b // a) if b > a else a})")
        if d.kind == "l1_depth" and max(a, b) > 2:
            raise ScheduleError(f"kernel {k.name}: l1_depth(a={a}, b={b}): 1 (single) or 2 (double buffered) "
                                "slots per operand")
    elif d.kind == "swizzle":
        if k.root is None:
            raise ScheduleError(f"kernel {k.name}: swizzle applies to matmul/conv kernels (the order their C tiles "
                                f"are dealt to the cube cores); this kernel is {k.family}: its tiles are walked in "
                                "order, reorder(...) / parallel(...) choose which axis goes first")
        group, direction = d.value, d.axis
        _check_factor(k, "swizzle", group, "group (tile rows or columns per group)")
        if direction not in ("m", "n"):
            raise ScheduleError(f"kernel {k.name}: swizzle direction {direction!r} must be 'm' (groups of tile rows) "
                                "or 'n' (groups of tile columns)")
    elif d.kind == "compute_dtype" and d.value not in COMPUTE_DTYPES:
        raise ScheduleError(f"kernel {k.name}: compute_dtype {d.value!r} is not one of "
                            f"{', '.join(COMPUTE_DTYPES)}; 'auto' computes in float16 where precision allows")
    elif d.kind == "double_buffer" and not isinstance(d.value, bool):
        raise ScheduleError(f"kernel {k.name}: double_buffer takes True or False, got {d.value!r}")
    elif d.kind == "sync_all":
        if not isinstance(d.value, bool):
            raise ScheduleError(f"kernel {k.name}: sync_all takes True or False, got {d.value!r}")
        if not k.can_sync_all:
            what = ("a matmul with an elementwise epilogue, which hands each C tile to its vector cores as soon as "
                    "it is computed, on every core already" if k.family == "cube_vector" and k.root is not None
                    and k.root.op is not Op.CONV2D else f"a {k.family} kernel")
            raise ScheduleError(f"kernel {k.name}: sync_all applies to a matmul fused with an epilogue that reduces "
                                f"whole rows (layer_norm, rms_norm, softmax over N); this is {what}; parallel(...) "
                                "and split(...) set how its tiles spread over the cores")


def create_schedule(outputs: Any, *, fuse: bool | None = None, keep_out: Iterable[Any] = (),
                    target: Any = None, planner: Planner | None = None) -> Schedule:
    """Run the fusion pass on the graph that computes `outputs` and return its Schedule.

    By default (`fuse=None`) every matmul/conv keeps its epilogue in one kernel only where the
    simulator, on `target` (default: the Studio's target, else ascend910b2), finds that faster than
    running them as separate kernels; each such kernel's notes give both times. `fuse=True` fuses
    wherever the patterns allow, `fuse=False` gives the unfused baseline (one kernel per op or
    library call); `keep_out` lists tensors whose ops stay out of fused kernels. `planner` makes the
    cost-aware choice for `fuse=None` (plan/choose.py; `ks.create_schedule` passes it)."""
    from ..core.checks import as_bool

    outs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
    if not outs:
        raise ScheduleError("create_schedule: no outputs given; pass the output tensor(s) of the graph")
    if fuse is not None and not (isinstance(fuse, str) and fuse == "auto"):
        fz = as_bool(fuse)
        if fz is None:
            raise ScheduleError(f"create_schedule: fuse must be True, False or None (let the simulator choose), "
                                f"got {fuse!r}")
        fuse = fz
    else:
        fuse = None
    if target is not None:
        from ..hw import HardwareProfile
        from ..hw import get as get_profile

        if not isinstance(target, HardwareProfile):
            get_profile(target)  # an unknown name is a TargetError naming the known ones
    if isinstance(keep_out, (str, bytes)) or hasattr(keep_out, "node") or not isinstance(keep_out, Iterable):
        raise ScheduleError(f"create_schedule: keep_out must be a list of tensors (keep_out=[t]), "
                            f"got {type(keep_out).__name__}")
    nodes = [_node_of(o) for o in outs]
    if all(n.op in (Op.PLACEHOLDER, Op.CONST) for n in nodes):
        g = Graph(tuple(nodes))
        what = ", ".join(f"{g.name(n)}{list(n.shape)} {n.dtype} ({n.op.value})" for n in nodes)
        raise ScheduleError(
            f"create_schedule: nothing to schedule: the outputs are inputs or constants, not computed "
            f"tensors ({what}); "
            "pass the tensor an op returns, e.g. create_schedule(ks.relu(x)) rather than the placeholder x"
        )
    return Schedule(nodes, fuse=fuse, keep_out=[_node_of(t) for t in keep_out], target=target, planner=planner)
