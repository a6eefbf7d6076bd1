"""Dynamic shapes: shape buckets, one tuned configuration per bucket, and a sweep over one dimension.

`ks.DynamicKernel(build_fn, buckets)` takes a build function whose parameters are the shape's dimensions
(`def mm_rms(m, n, k): ...`, declaring knobs with `ks.knob` as for `ks.tune`). A bucket is a named predicate
on those dimensions; the default buckets are the ones a CV-fusion design usually starts from:

- `small`: rows <= 64 and cols <= 64,
- `tall_skinny`: rows >= 1024 and cols <= 64,
- `general`: everything else,

with rows and cols the build function's first two parameters. `tune(examples)` tunes each bucket once, at
the first example shape that falls in it; `design(**dims)` builds (and caches) the design of any shape with
its bucket's configuration; `explore(dim, values, **fixed)` sweeps one dimension and reports, per value, the
bucket, the predicted time, TFLOPS, % of the roofline bound and the tail efficiency.

Each shape gets a design lowered for that shape: the generated kernels hold the shape's extents, so the
cache holds one design per (bucket, shape), not one kernel per bucket. `codegen(dim, **fixed)` writes one
operator for every bucket (a TILING_KEY_IS branch each, the key picked from the run-time rows), and
`export_project(out_dir, dim, **fixed)` writes it as a CANN custom-operator project.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import DEFAULT_TARGET
from .errors import TuneError

if TYPE_CHECKING:
    from ..codegen.bundle import CodeBundle
    from ..plan.build import Design
    from ..sim.results import SimResult
    from ..tileir.program import Program
    from .result import TuneResult

__all__ = ["Bucket", "DynamicKernel", "ShapeSweep", "default_buckets", "tail_efficiency"]


@dataclass(frozen=True)
class Bucket:
    """A named set of shapes: `when(**dims)` says whether a shape belongs to it."""

    name: str
    when: Callable[..., bool]
    doc: str = ""


def _holds(b: Bucket, shape: Mapping[str, int]) -> bool:
    """Whether bucket `b`'s predicate holds for `shape`, or a TuneError saying how the predicate failed."""
    dims = ", ".join(f"{k}={v}" for k, v in shape.items())
    try:
        ans = b.when(**shape)
    except KeyError as e:
        raise TuneError(f"bucket {b.name!r}: its predicate reads dimension {e.args[0]!r}, which the design does "
                        f"not have (it is called with {dims})") from None
    except TypeError as e:
        raise TuneError(f"bucket {b.name!r}: its predicate cannot be called with the dimensions as keywords "
                        f"({dims}): {e}; write it as `lambda **d: ...` or name every dimension") from None
    if isinstance(ans, (bool, np.bool_, int, np.integer)):
        return bool(ans)
    raise TuneError(f"bucket {b.name!r}: its predicate returned {type(ans).__name__} {ans!r} for {dims}; it must "
                    "return True or False (reduce an array with .all() or .any())")


def _check_probe(probe: object, what: str) -> None:
    """`probe` (row counts whose bucket is read from the predicates) as DynamicKernel.codegen takes it."""
    from .dynamic_code import MAX_PROBE

    if isinstance(probe, bool) or not isinstance(probe, int) or probe < 1:
        raise TuneError(f"{what}: probe={probe!r} must be a positive int (row counts whose bucket is read from "
                        "the predicates)")
    if probe > MAX_PROBE:
        raise TuneError(f"{what}: probe={probe:,} would call the bucket predicates {probe:,} times (about a second "
                        f"per million); at most {MAX_PROBE:,}: row counts past the probe take the last range's "
                        "bucket, so probe as far as the buckets change")


def default_buckets(rows: str, cols: str | None) -> tuple[Bucket, ...]:
    """small (rows, cols <= 64), tall_skinny (rows >= 1024, cols <= 64), general (the rest)."""
    if cols is None:
        return (Bucket("small", lambda **d: d[rows] <= 64, f"{rows} <= 64"),
                Bucket("general", lambda **d: True, "everything else"))
    return (Bucket("small", lambda **d: d[rows] <= 64 and d[cols] <= 64, f"{rows} <= 64 and {cols} <= 64"),
            Bucket("tall_skinny", lambda **d: d[rows] >= 1024 and d[cols] <= 64, f"{rows} >= 1024 and {cols} <= 64"),
            Bucket("general", lambda **d: True, "everything else"))


def _spans(sim: SimResult) -> dict[str, float]:
    """Simulated span (first start to last end, us) of each kernel."""
    ev = sim.events
    cols = ev.columns
    out: dict[str, float] = {}
    if not len(cols["start_us"]):
        return out
    kid = cols["kernel"]
    for i, name in enumerate(ev.kernel_names):
        sel = kid == i
        if sel.any():
            out[name] = float(cols["end_us"][sel].max() - cols["start_us"][sel].min())
    return out


def _kernel_tail(tiling: Mapping[str, int]) -> float:
    """Useful share of one kernel's tile slots: tile fill (elements of the tensor / elements of the tiles
    that cover it) times wave fill (tiles / cores x waves)."""
    t = tiling
    fill = 1.0
    if all(k in t for k in ("M", "N", "tile_m", "tile_n", "m_tiles", "n_tiles")):
        fill = (t["M"] * t["N"]) / (t["m_tiles"] * t["tile_m"] * t["n_tiles"] * t["tile_n"])
    elif all(k in t for k in ("rows", "cols", "tile_rows", "tile_cols", "tiles")):
        fill = min(1.0, (t["rows"] * t["cols"]) / (t["tiles"] * t["tile_rows"] * t["tile_cols"]))
    tiles, cores = t.get("tiles"), t.get("block_dim")
    wave = tiles / (math.ceil(tiles / cores) * cores) if tiles and cores else 1.0
    return fill * wave


def tail_efficiency(prog: Program, sim: SimResult | None = None) -> float:
    """Useful share of the tile slots the program's kernels run, weighted by each kernel's simulated span
    (equal weights without `sim`): tile fill (a 100-row tensor in tiles of 64 fills 100/128) times wave
    fill (30 tiles on 24 cores run 2 waves of 24: 30/48)."""
    spans = _spans(sim) if sim is not None else {}
    num = den = 0.0
    for k in prog.kernels:
        w = spans.get(k.name, 1.0 if sim is None else 0.0)
        num += w * _kernel_tail(dict(k.tiling))
        den += w
    return num / den if den > 0 else 1.0


@dataclass(frozen=True)
class ShapeSweep:
    """`DynamicKernel.explore`: one row per value of the swept dimension."""

    dim: str
    fixed: dict[str, int]
    rows: list[dict[str, Any]]  # value, bucket, time_us, tflops, roofline_pct, tail_efficiency, bound

    def table(self) -> str:
        head = f"{self.dim:>8}  bucket        time (us)   TFLOPS  % roofline  tail eff.  bound"
        lines = [head, "-" * len(head)]
        for r in self.rows:
            lines.append(f"{r['value']:>8}  {r['bucket']:<12} {r['time_us']:>10.2f} {r['tflops']:>8.2f} "
                         f"{r['roofline_pct']:>10.1f}% {r['tail_efficiency']:>9.1%}  {r['bound']}")
        return "\n".join(lines)

    def figure(self) -> Any:
        """Predicted time (log axes) per bucket, with % of the roofline and the tail efficiency below."""
        from .plots import sweep_figure

        return sweep_figure(self)


class DynamicKernel:
    """A design over shape buckets (see the module doc)."""

    def __init__(self, build_fn: Callable[..., Any], buckets: Sequence[Bucket | tuple[str, Callable[..., bool]]]
                 | None = None, *, target: str = DEFAULT_TARGET, name: str | None = None) -> None:
        from ..hw import get as get_profile

        if not callable(build_fn):
            raise TuneError(f"DynamicKernel: build_fn must be a function of the shape's dimensions, "
                            f"got {type(build_fn).__name__}")
        params = [p for p in inspect.signature(build_fn).parameters.values()
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if not params:
            raise TuneError(f"DynamicKernel: {getattr(build_fn, '__name__', 'build_fn')} takes no dimensions; "
                            "give it one parameter per dimension, e.g. def mm(m, n, k): ...")
        self.build_fn, self.dims = build_fn, tuple(p.name for p in params)
        get_profile(target)  # an unknown name is a TargetError naming the known ones
        self.target, self.name = target, name or getattr(build_fn, "__name__", "dynamic")
        self.buckets = self._check_buckets(buckets)
        self.configs: dict[str, dict[str, Any]] = {}  # bucket -> tuned configuration (knob values)
        self.tuned: dict[str, TuneResult] = {}
        self.examples: dict[str, dict[str, int]] = {}  # bucket -> the shape it was tuned at
        self._cache: dict[tuple[str, tuple[int, ...]], Design] = {}

    def _check_buckets(self, buckets: Any) -> tuple[Bucket, ...]:
        if buckets is None:
            return default_buckets(self.dims[0], self.dims[1] if len(self.dims) > 1 else None)
        if isinstance(buckets, Bucket) or (isinstance(buckets, tuple) and len(buckets) == 2
                                           and isinstance(buckets[0], str)):
            raise TuneError(f"DynamicKernel: buckets must be a list of buckets, got one ({buckets!r}); pass "
                            "buckets=[...] ending with a catch-all such as ks.Bucket('general', lambda **d: True)")
        try:
            items = list(buckets)
        except TypeError:
            raise TuneError(f"DynamicKernel: buckets must be a list of ks.Bucket(name, when), got "
                            f"{type(buckets).__name__}") from None
        out: list[Bucket] = []
        for b in items:
            if isinstance(b, tuple) and len(b) == 2:
                b = Bucket(*b)
            if not isinstance(b, Bucket) or not isinstance(b.name, str) or not b.name.isidentifier() \
                    or not callable(b.when):
                raise TuneError(f"DynamicKernel: bucket {b!r} must be ks.Bucket(name, when) or (name, when), with "
                                "an identifier name and a predicate called with the dimensions as keywords")
            out.append(b)
        names = [b.name for b in out]
        if not out or len(set(names)) != len(names):
            raise TuneError(f"DynamicKernel: buckets need distinct names, got {names}")
        return tuple(out)

    # ---- shapes ------------------------------------------------------------------------------------
    def _shape(self, dims: Mapping[str, Any], what: str) -> dict[str, int]:
        unknown = sorted(set(dims) - set(self.dims))
        missing = [d for d in self.dims if d not in dims]
        if unknown or missing:
            raise TuneError(f"{what}: {self.name} takes the dimensions {list(self.dims)}; "
                            + (f"unknown {unknown}" if unknown else f"missing {missing}"))
        out = {}
        for d in self.dims:
            v = dims[d]
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or int(v) < 1:
                raise TuneError(f"{what}: dimension {d}={v!r} must be a positive integer")
            out[d] = int(v)
        return out

    def bucket_of(self, **dims: int) -> str:
        """The name of the first bucket whose predicate holds for this shape."""
        shape = self._shape(dims, "bucket_of")
        for b in self.buckets:
            if _holds(b, shape):
                return b.name
        raise TuneError(f"bucket_of: shape {shape} is in none of the buckets {[b.name for b in self.buckets]}; "
                        "end the list with a catch-all bucket such as ks.Bucket('general', lambda **d: True)")

    # ---- tuning ------------------------------------------------------------------------------------
    def tune(self, examples: Sequence[Mapping[str, int]], *, budget: int = 32, strategy: str = "evolutionary",
             seed: int | None = 0, executor: Any = None, db: Any = None, progress: bool = True
             ) -> dict[str, TuneResult]:
        """Tune every bucket that has an example, at its first example shape; returns bucket -> TuneResult.
        Buckets without an example keep the knobs' defaults (`untuned`)."""
        from .tuner import tune

        if isinstance(examples, Mapping) or not isinstance(examples, Sequence) or not examples:
            raise TuneError("DynamicKernel.tune: examples must be a non-empty list of shapes, "
                            f"e.g. [dict({', '.join(f'{d}=64' for d in self.dims)})]")
        firsts: dict[str, dict[str, int]] = {}
        for ex in examples:
            if not isinstance(ex, Mapping):
                raise TuneError(f"DynamicKernel.tune: example {ex!r} must be a dict of dimensions")
            shape = self._shape(ex, "DynamicKernel.tune")
            firsts.setdefault(self.bucket_of(**shape), shape)
        self._warn_shadowed(examples, firsts)
        for bucket, shape in firsts.items():
            label = f"{self.name}_{bucket}"
            res = tune(partial(self.build_fn, **shape), self.target, budget, strategy, seed, executor, db=db,
                       name=label, progress=progress)
            self.tuned[bucket], self.configs[bucket], self.examples[bucket] = res, dict(res.best.config), shape
        self._cache = {k: v for k, v in self._cache.items() if k[0] not in firsts}
        return dict(self.tuned)

    def _warn_shadowed(self, examples: Sequence[Mapping[str, int]], firsts: Mapping[str, Any]) -> None:
        """Warn of a bucket that gets no example and that no shape near the examples reaches although some
        satisfy its predicate: an earlier bucket takes them all (the first bucket that holds wins), so it
        would stay untuned, and never be chosen, without a word. The shapes probed vary one dimension of
        each example over 1..8 and 2^i - 1, 2^i, 2^i + 1 up to 2^20."""
        left = [b for b in self.buckets if b.name not in firsts]
        if not left:
            return
        values = sorted({*range(1, 9), *(v for i in range(3, 21) for v in (2**i - 1, 2**i, 2**i + 1))})
        shapes = [self._shape(ex, "DynamicKernel.tune") for ex in examples]
        probes = [{**sh, d: v} for sh in shapes for d in self.dims for v in values]
        reached: set[str] = set()
        holds: dict[str, dict[str, int]] = {}
        for sh in probes:
            first = next((b for b in self.buckets if _holds(b, sh)), None)
            if first is None:
                continue
            reached.add(first.name)
            for b in left:
                if b.name not in holds and b is not first and _holds(b, sh):
                    holds[b.name] = sh
        for b in left:
            if b.name in holds and b.name not in reached:
                taker = self.bucket_of(**holds[b.name])
                warnings.warn(f"DynamicKernel.tune: bucket {b.name!r} is never chosen: shapes that satisfy it "
                              f"(such as {holds[b.name]}) are all taken by an earlier bucket ({taker!r} for that "
                              f"one; the first bucket whose predicate holds wins), so it stays untuned; move it "
                              f"before {taker!r} or narrow the earlier predicates", UserWarning, stacklevel=3)

    @property
    def untuned(self) -> list[str]:
        return [b.name for b in self.buckets if b.name not in self.configs]

    # ---- designs -----------------------------------------------------------------------------------
    def design(self, **dims: int) -> Design:
        """The design of this shape, built with its bucket's configuration (cached per bucket and shape)."""
        shape = self._shape(dims, "design")
        bucket = self.bucket_of(**shape)
        key = (bucket, tuple(shape[d] for d in self.dims))
        if key not in self._cache:
            self._cache[key] = self.design_with(self.configs.get(bucket, {}), **shape)
        return self._cache[key]

    def design_with(self, config: Mapping[str, Any], **dims: int) -> Design:
        """The design of this shape built with `config` (any bucket's, or your own), not cached: to measure
        what a bucket's configuration is worth on shapes of another bucket."""
        from ..plan.build import build
        from .evaluate import run_build_fn

        shape = self._shape(dims, "design_with")
        outs, sched, _ = run_build_fn(partial(self.build_fn, **shape), dict(config), self.target)
        d = build(list(outs), self.target, schedule=sched, name=self.name, compare=False)
        d.knobs = dict(config)
        return d

    @property
    def kernel_cache(self) -> dict[tuple[str, tuple[int, ...]], Design]:
        """The designs built so far, keyed by (bucket, shape)."""
        return dict(self._cache)

    def explore(self, dim: str, values: Sequence[int], **fixed: int) -> ShapeSweep:
        """Sweep `dim` over `values` with the other dimensions `fixed`."""
        if dim not in self.dims:
            raise TuneError(f"explore: {dim!r} is not a dimension of {self.name} (it has {list(self.dims)})")
        if isinstance(values, str) or not isinstance(values, Sequence) or not values:
            raise TuneError(f"explore: values must be a non-empty list of sizes for {dim}")
        rows = []
        for v in values:
            d = self.design(**{**fixed, dim: v})
            m = d.sim.metrics
            rows.append({"value": int(v), "bucket": self.bucket_of(**{**fixed, dim: v}),
                         "time_us": float(d.sim.time_us), "tflops": float(m["tflops"]),
                         "roofline_pct": 100.0 * float(m["efficiency"]),
                         "tail_efficiency": tail_efficiency(d.program, d.sim), "bound": m["roofline_limiter"]})
        return ShapeSweep(dim, {k: int(v) for k, v in fixed.items()}, rows)

    def codegen(self, dim: str | None = None, *, probe: int = 1 << 16, **fixed: int) -> CodeBundle:
        """One operator for every bucket: each bucket's kernel (built with its configuration) under
        `TILING_KEY_IS(key)`, and a TilingFunc that picks the key from the run-time row count, so the same
        binary runs shapes of every bucket. `dim` (default: the first dimension) is swept at run time and
        must be the kernel's row count; give the other dimensions in `fixed`. Covers designs that lower to
        one kernel taking its rows at run time: a row-tiled vector kernel, a matmul with its epilogue, a conv
        along its batch (see tune/dynamic_code.py); others raise UnsupportedError."""
        from .dynamic_code import dynamic_bundle

        _check_probe(probe, "DynamicKernel.codegen")
        return dynamic_bundle(self, dim or self.dims[0], fixed, probe)

    def export_project(self, out_dir: str | Path, dim: str | None = None, *, overwrite: bool = False,
                       probe: int = 1 << 16, **fixed: int) -> Path:
        """Write the CANN custom-operator project of `codegen(dim, probe=probe, **fixed)` into `out_dir`, as
        `ks.export_project` does for one design: the multi-bucket kernel (one `TILING_KEY_IS` branch per
        bucket), its host source whose TilingFunc picks the bucket from the run-time row count (with
        InferShape and InferDataType for graph mode), main.cpp, CMakeLists.txt, the msOpGen JSON and a
        README that lists the keys. `out_dir` must be empty or new unless `overwrite=True`; returns it."""
        from ..codegen.project import write_project
        from .dynamic_code import dynamic_parts

        what = "DynamicKernel.export_project"
        _check_probe(probe, what)
        if not isinstance(overwrite, bool):
            raise TuneError(f"{what}: overwrite must be True or False, got {overwrite!r}")
        prog, bundle, keys = dynamic_parts(self, dim or self.dims[0], fixed, probe)
        return write_project(prog, out_dir, dict(bundle.files), overwrite=overwrite, keys=keys, what=what)

    def __repr__(self) -> str:
        tuned = ", ".join(f"{b}: {self.configs[b]}" for b in self.configs) or "none"
        return (f"DynamicKernel({self.name}, dims={list(self.dims)}, buckets={[b.name for b in self.buckets]}, "
                f"tuned: {tuned})")
