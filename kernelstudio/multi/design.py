"""An MC2 design: one of the three operators on placeholders, a cluster, and its schedule (the MC2 knobs),
checked against CANN's rules and simulated per device (compute.py + algorithms.py -> timeline.py)."""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.checks import as_number, check_inputs
from ..core.dtypes import itemsize, numpy_dtype, round_to
from ..core.errors import DTypeError, InputError, ScheduleError, ShapeError, StageError
from ..dsl import Tensor
from ..ir.ops import Op
from . import golden
from .algorithms import collective_steps
from .cluster import Cluster
from .compute import epilogue_tile, matmul_tile, matmul_tile_sim
from .errors import ClusterError
from .execute import run_tiled
from .link import ALGORITHMS, LINK_FIELDS
from .tiling import TAILS, feasible_tiles, tile_rows
from .timeline import Event, MultiSim, TileWork, run_timeline

__all__ = ["Mc2Schedule", "Mc2Design", "KINDS", "ENGINES", "K_MIN", "K_END", "MC2_DTYPES"]

KINDS = ("matmul_allreduce", "all_gather_matmul", "matmul_reduce_scatter")
ENGINES = ("aicpu", "aiv")
K_MIN, K_END = 256, 65535  # aclnnMatmulAllReduce: k in [256, 65535)
MC2_DTYPES = ("float16", "bfloat16")
_COLLECTIVE = {"matmul_allreduce": "all_reduce", "all_gather_matmul": "all_gather",
               "matmul_reduce_scatter": "reduce_scatter"}


@dataclass(frozen=True, slots=True)
class Mc2Schedule:
    """The MC2 knobs: tile count, where the short tile goes, the communication engine, HCCL's algorithm."""

    tiles: int = 1
    tail: str = "auto"  # "auto" | "back" (short tile last) | "front" (short tile first)
    engine: str = "aicpu"  # "aicpu": the AI CPU server drives HCCL; "aiv": vector cores do
    algorithm: str = "mesh"  # "mesh" | "ring"


def _placeholder(t: Any, what: str, op: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise StageError(f"{op}: {what} must be a tensor made with ks.placeholder, got {type(t).__name__}")
    if t.op is not Op.PLACEHOLDER:
        raise ShapeError(f"{op}: {what} is {t.describe()}, computed by {t.op.value}; the operator's inputs are "
                         f"the per-device tensors themselves: make {what} a ks.placeholder and compute the "
                         "rest in a design of its own")
    if t.dtype not in MC2_DTYPES:
        raise DTypeError(f"{op}: {what} is {t.describe()}; MC2 takes {' or '.join(MC2_DTYPES)}; cast the "
                         f"tensor before the operator (ks.cast(t, 'float16'))")
    return t


def _choice(value: Any, allowed: tuple[str, ...], what: str, op: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ScheduleError(f"{op}: {what}={value!r}; choose one of {', '.join(map(repr, allowed))}")
    return value


class Mc2Design:
    """A multi-device operator with its schedule, simulated on `cluster`.

    `time_us`, `compute_us`, `comm_us`, `exposed_comm_us`, `serial_us` are one device's; `sim.events[d]`
    is device d's timeline; `baseline()` is the same operator unsplit (tiles=1)."""

    def __init__(self, kind: str, x: Tensor, w: Tensor, *, cluster: Cluster, schedule: Mc2Schedule,
                 bias: Tensor | None = None, add: Tensor | None = None, rms_norm: Tensor | bool | None = None,
                 eps: float = 1e-6) -> None:
        op = f"ks.multi.{_choice(kind, KINDS, 'kind', 'ks.multi.Mc2Design')}"
        if not isinstance(cluster, Cluster):
            raise ClusterError(f"{op}: cluster must be a ks.multi.Cluster(devices=..., target=...), got "
                               f"{type(cluster).__name__}")
        self.kind, self.cluster = kind, cluster
        self.eps = as_number(eps, f"{op}: eps", positive=True, error=ScheduleError)
        self.x, self.w = _placeholder(x, "x", op), _placeholder(w, "w", op)
        if w.ndim != 2 or x.ndim not in ((2, 3) if kind == "matmul_allreduce" else (2,)) or x.shape[-1] != w.shape[0]:
            dims = "(m, k) or (b, s, k)" if kind == "matmul_allreduce" else "(m, k)"
            raise ShapeError(f"{op}: x {x.describe()} and w {w.describe()} do not multiply: x is {dims} and w "
                             "(k, n) with the same k")
        if x.dtype != w.dtype:
            raise DTypeError(f"{op}: x is {x.dtype} but w is {w.dtype}; MC2 multiplies one dtype: cast one of them")
        self.dtype = x.dtype
        self.k, self.n = w.shape
        self.m = int(np.prod(x.shape[:-1]))
        if not K_MIN <= self.k < K_END:
            way = f"pad k up to {K_MIN}" if self.k < K_MIN else "split k and add the partial results"
            raise ShapeError(f"{op}: k = {self.k:,}; MC2 takes k in [{K_MIN}, {K_END}) (aclnnMatmulAllReduce); {way}")
        p = cluster.devices
        if kind == "matmul_reduce_scatter" and self.m % p:
            raise ShapeError(f"{op}: m = {self.m:,} rows do not split over {p} devices; MatmulReduceScatter needs m "
                             f"a multiple of the rank count: pad m to {-(-self.m // p) * p:,}")
        self.bias = self._side(bias, "bias", (self.n,), op)
        self.norm = rms_norm is not None and rms_norm is not False
        if kind != "matmul_allreduce" and (add is not None or self.norm):
            raise ScheduleError(f"{op}: the add and rms_norm epilogues run after a reduce to the full output; "
                                "only ks.multi.matmul_allreduce has them (this operator takes bias)")
        self.add = self._side(add, "add", self.out_shape, op)
        self.gamma = None if isinstance(rms_norm, bool) or rms_norm is None else self._side(rms_norm, "rms_norm gamma",
                                                                                           (self.n,), op)
        if not isinstance(schedule, Mc2Schedule):
            raise ScheduleError(f"{op}: schedule must be a Mc2Schedule, got {type(schedule).__name__}")
        _choice(schedule.engine, ENGINES, "engine", op)
        _choice(schedule.algorithm, ALGORITHMS, "algorithm", op)
        _choice(schedule.tail, TAILS, "tail", op)
        if schedule.engine == "aiv" and cluster.link.aiv_comm_cores >= cluster.profile.aiv_cores:
            raise ClusterError(f"{op}: AIV-mode HCCL takes {cluster.link.aiv_comm_cores} vector cores but "
                               f"{cluster.profile.name} has {cluster.profile.aiv_cores}; set the link's "
                               "aiv_comm_cores lower or use engine='aicpu'")
        self._requested = schedule
        back = tile_rows(self.split_rows, schedule.tiles, "back", self.comm_bytes_per_row,
                         what=f"{op} (M split: {self.split_rows:,} rows)")  # the rules checked before any timing
        tail = schedule.tail if schedule.tail != "auto" else self._auto_tail(schedule)
        self.tile_rows = back if tail == "back" else back[::-1]
        self.schedule = dataclasses.replace(schedule, tail=tail, tiles=len(self.tile_rows))
        self.sim = self._simulate()

    # --- shapes ------------------------------------------------------------------------------------
    def _side(self, t: Any, what: str, shape: tuple[int, ...], op: str) -> Tensor | None:
        if t is None:
            return None
        t = _placeholder(t, what, op)
        if t.shape != tuple(shape) or t.dtype != self.dtype:
            raise ShapeError(f"{op}: {what} is {t.describe()}; it must be {list(shape)} {self.dtype}")
        return t

    @property
    def out_shape(self) -> tuple[int, ...]:
        """One device's output."""
        p = self.cluster.devices
        if self.kind == "matmul_allreduce":
            return (*self.x.shape[:-1], self.n)
        if self.kind == "matmul_reduce_scatter":
            return (self.m // p, self.n)
        return (self.m * p, self.n)

    @property
    def split_rows(self) -> int:
        """The rows MC2 splits into tiles (per rank block for ReduceScatter)."""
        return self.m // self.cluster.devices if self.kind == "matmul_reduce_scatter" else self.m

    @property
    def comm_bytes_per_row(self) -> int:
        """Bytes one split row communicates (the 64 KB rule counts every rank's share)."""
        p, isz = self.cluster.devices, itemsize(self.dtype)
        if self.kind == "matmul_allreduce":
            return self.n * isz
        if self.kind == "matmul_reduce_scatter":
            return p * self.n * isz
        return p * self.k * isz

    def feasible_tiles(self) -> tuple[int, ...]:
        """The tile counts CANN's rules allow for this operator's shape."""
        return feasible_tiles(self.split_rows, self.comm_bytes_per_row)

    # --- the model ---------------------------------------------------------------------------------
    def _compute_rows(self, rows: int) -> int:
        p = self.cluster.devices
        return {"matmul_allreduce": rows, "matmul_reduce_scatter": p * rows, "all_gather_matmul": (p - 1) * rows}[
            self.kind]

    def _tile(self, rows: int, first: bool, schedule: Mc2Schedule) -> TileWork:
        c, p = self.cluster, self.cluster.devices
        crows = self._compute_rows(rows)
        compute = matmul_tile(c.profile, crows, self.k, self.n, self.dtype, self.bias is not None,
                              first).us if crows else 0.0
        nbytes = rows * self.comm_bytes_per_row
        steps = collective_steps(_COLLECTIVE[self.kind], schedule.algorithm, nbytes, p, c.link)
        epi = 0.0
        if self.add is not None or self.norm:
            cores = c.profile.aiv_cores - (c.link.aiv_comm_cores if schedule.engine == "aiv" else 0)
            epi = epilogue_tile(c.profile, rows, self.n, self.dtype, self.add is not None, self.norm,
                                self.gamma is not None, self.eps, cores).us
        return TileWork(compute, steps, epi)

    def _auto_tail(self, schedule: Mc2Schedule) -> str:
        """CANN's rule: the short tile last when the matmul bounds the time, first when communication does."""
        whole = self._tile(self.split_rows, True, schedule)
        comm = self.cluster.link.issue_us(schedule.engine) + sum(s.us for s in whole.steps)
        return "back" if whole.compute_us >= comm else "front"

    def _simulate(self) -> MultiSim:
        c, s = self.cluster, self.schedule
        first = self.kind != "all_gather_matmul"  # AllGatherMatmul reads w cold in its local matmul
        tiles = [self._tile(r, first and i == 0, s) for i, r in enumerate(self.tile_rows)]
        local = None
        if self.kind == "all_gather_matmul":
            local = TileWork(matmul_tile(c.profile, self.m, self.k, self.n, self.dtype, self.bias is not None,
                                         True).us, ())
        return run_timeline("comm_first" if self.kind == "all_gather_matmul" else "compute_first", tiles,
                            devices=c.devices, launch_us=c.profile.launch_overhead_us,
                            sync_us=c.profile.sync_all_us, issue_us=c.link.issue_us(s.engine), local=local)

    def tile_sim(self, tile: int) -> Any:
        """The single-chip simulation that tile `tile`'s matmul time comes from (-1: an AllGatherMatmul's
        local rows): its events are the device's compute pipes during that tile, from the launch on; None for a
        tile that multiplies nothing."""
        c = self.cluster
        if tile == -1 and self.kind == "all_gather_matmul":
            return matmul_tile_sim(c.profile, self.m, self.k, self.n, self.dtype, self.bias is not None, True)
        if not isinstance(tile, int) or not 0 <= tile < len(self.tile_rows):
            raise ScheduleError(f"ks.multi.{self.kind}: no tile {tile!r}; this split has tiles 0.."
                                f"{len(self.tile_rows) - 1}" + (" (and -1, the local rows)"
                                                                 if self.kind == "all_gather_matmul" else ""))
        first = self.kind != "all_gather_matmul" and tile == 0
        rows = self._compute_rows(self.tile_rows[tile])
        if not rows:  # an AllGatherMatmul on one device gathers nothing to multiply
            return None
        return matmul_tile_sim(c.profile, rows, self.k, self.n, self.dtype, self.bias is not None, first)

    # --- results -----------------------------------------------------------------------------------
    time_us = property(lambda self: self.sim.time_us, doc="One device's time, launch to the last event.")
    compute_us = property(lambda self: self.sim.compute_us, doc="Matmul tiles and SyncAlls.")
    comm_us = property(lambda self: self.sim.comm_us, doc="The communication engine busy.")
    exposed_comm_us = property(lambda self: self.sim.exposed_comm_us, doc="Communication the matmul does not hide.")
    serial_us = property(lambda self: self.sim.serial_us, doc="The same tiles, nothing overlapped.")

    @property
    def events(self) -> tuple[tuple[Event, ...], ...]:
        return self.sim.events

    def with_schedule(self, **knobs: Any) -> Mc2Design:
        """The same operator with some MC2 knobs changed (tiles=, tail=, engine=, algorithm=)."""
        unknown = [k for k in knobs if k not in Mc2Schedule.__slots__]
        if unknown:
            raise ScheduleError(f"ks.multi.{self.kind}: no knob {', '.join(map(repr, unknown))}; knobs: "
                                f"{', '.join(Mc2Schedule.__slots__)}")
        base = dataclasses.replace(self._requested, **knobs)
        return Mc2Design(self.kind, self.x, self.w, cluster=self.cluster, schedule=base, bias=self.bias,
                         add=self.add, rms_norm=self.gamma if self.gamma is not None else self.norm, eps=self.eps)

    @functools.cached_property
    def _baseline(self) -> Mc2Design:
        return self if self.schedule.tiles == 1 else self.with_schedule(tiles=1)

    def baseline(self) -> Mc2Design:
        """The operator unsplit: one matmul, then one collective (what the split is measured against)."""
        return self._baseline

    @property
    def gain(self) -> float:
        """The fraction of the unsplit time the split saves (negative when splitting costs time)."""
        return 1.0 - self.time_us / self.baseline().time_us

    def sweep(self, tiles: Any = None) -> tuple[Mc2Design, ...]:
        """This operator at every tile count CANN allows (or those of `tiles` that it allows)."""
        ok = self.feasible_tiles()
        counts = ok if tiles is None else tuple(t for t in tiles if t in ok)
        return tuple(self.with_schedule(tiles=t) for t in counts)

    def summary(self) -> str:
        s = self.schedule
        head = (f"{self.kind} on {self.cluster.devices} x {self.cluster.target} ({s.algorithm}, {s.engine}): "
                f"x {list(self.x.shape)} w {list(self.w.shape)} {self.dtype}, tiles {s.tiles} "
                f"{list(self.tile_rows)} rows" + (f", short tile {s.tail}" if len(set(self.tile_rows)) > 1 else ""))
        return head + "\n" + self.sim.summary()

    def __repr__(self) -> str:
        return f"<Mc2Design {self.kind} tiles={self.schedule.tiles} {self.time_us:,.1f} us>"

    def describe(self) -> str:
        """What decides this operator's time apart from its knobs: the operator, its tensors, the cluster, the
        chip and every link figure (a tuner keys cached results on it)."""
        tensors = ", ".join(t.describe() for t in (self.x, self.w, self.bias, self.add, self.gamma) if t is not None)
        link = self.cluster.link
        figures = ", ".join(f"{f}={getattr(link, f)!r}" for f in LINK_FIELDS)
        return (f"{self.kind}({tensors}; rms_norm={self.norm}, eps={self.eps!r}) on {self.cluster.devices} x "
                f"{self.cluster.profile!r}; link {link.name}: {figures}")

    def schedule_json(self) -> str:
        """The knobs as asked for (tail "auto" stays "auto"), as JSON."""
        return json.dumps(dataclasses.asdict(self._requested), sort_keys=True, default=str)

    # --- numerics ----------------------------------------------------------------------------------
    def _per_rank(self) -> list[tuple[str, tuple[int, ...], str]]:
        p = self.cluster.devices
        out = [(self.x.name, (p, *self.x.shape), self.dtype), (self.w.name, (p, *self.w.shape), self.dtype)]
        out += [(t.name, t.shape, self.dtype) for t in (self.bias, self.add, self.gamma) if t is not None]
        return out

    def random_inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        """Inputs for `evaluate`: x and w with a leading device axis, bias/add/gamma shared."""
        rng = np.random.default_rng(seed)
        return {n: round_to(self.dtype, rng.uniform(-1, 1, size=shape).astype(np.float32)).astype(
            numpy_dtype(self.dtype)) for n, shape, _ in self._per_rank()}

    def _checked(self, inputs: Any, call: str) -> dict[str, np.ndarray]:
        spec = self._per_rank()
        names = [n for n, _, _ in spec]
        if len(set(names)) != len(names):
            raise InputError(f"ks.multi.{self.kind}: two inputs share the name {names}; name the placeholders apart")
        return check_inputs(f"ks.multi.{self.kind}.{call}", spec, inputs)

    def run_tiled(self, inputs: dict[str, Any]) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The result computed tile by tile, each tile's collective step by step (execute.py); the same
        form as `evaluate`, and equal to it."""
        return run_tiled(self, self._checked(inputs, "run_tiled"))[0]

    def evaluate(self, inputs: dict[str, Any]) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
        """The operator's result on every device (golden.py): (devices, *out_shape); AllGatherMatmul also
        returns the gathered x."""
        arr = self._checked(inputs, "evaluate")
        x = arr[self.x.name].reshape(self.cluster.devices, self.m, self.k)
        w = arr[self.w.name]
        get = {t: arr[t.name] for t in (self.bias, self.add, self.gamma) if t is not None}
        bias = get.get(self.bias)
        if self.kind == "matmul_reduce_scatter":
            return golden.reduce_scatter_ref(x, w, self.dtype, bias=bias)
        if self.kind == "all_gather_matmul":
            return golden.all_gather_ref(x, w, self.dtype, bias=bias)
        add = get[self.add].reshape(self.m, self.n) if self.add is not None else None
        out = golden.allreduce_ref(x, w, self.dtype, bias=bias, add=add, norm=self.norm, gamma=get.get(self.gamma),
                                   eps=self.eps)
        return out.reshape(self.cluster.devices, *self.out_shape)
