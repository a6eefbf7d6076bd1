"""One design on several chips: `compare_targets` (side by side) and `what_if_sweep` (targets x knob settings).

    cmp = compare_targets(build_fn, targets=("ascend910b2", "ascend910b4", "ascend950"))
    print(cmp.table())                    # time, TFLOPS, HBM GB/s, bound, efficiency per target
    sw = what_if_sweep(build_fn, targets, configs=50, executor=None)   # on ks.tune's runners

A target is a profile name or a HardwareProfile (a `what_if` one among them). A design that cannot lower on a
target gets a row that says why, as the Studio's target list does. The figure of the timelines is drawn at the
notebook stage (`kernelstudio.notebook.render.compare`); `ks.compare_targets` fills it in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..core.errors import KernelStudioError
from ..hw import HardwareProfile
from ..hw import get as get_profile
from ..ir.graph import as_nodes
from ..plan.create import create_schedule
from ..plan.depth import lower
from ..schedule.schedule import Schedule
from ..sim import SimResult, simulate
from ..sim.results import busiest_pipe
from .errors import TuneError
from .evaluate import Outcome, discover, run_build_fn
from .executors import make_runner
from .space import Space

__all__ = ["DEFAULT_TARGETS", "HEADLINE_FIELDS", "TargetRow", "TargetComparison", "SweepResult",
           "compare_targets", "what_if_sweep", "profile_label"]

DEFAULT_TARGETS = (DEFAULT_TARGET, "ascend910b4", "ascend950")  # the default target, a smaller A2 and the 950
# The profile numbers a comparison row shows beside its times, each with the profile's source.
HEADLINE_FIELDS = ("aic_cores", "aiv_cores", "clock_mhz", "hbm_bytes_per_s", "l2_bytes", "ub_bytes",
                   "launch_overhead_us")


def _profile(target: Any) -> HardwareProfile:
    if isinstance(target, HardwareProfile):
        return target
    if not isinstance(target, str):
        raise TuneError(f"compare_targets: a target is a profile name or a HardwareProfile, got "
                        f"{type(target).__name__} {target!r:.60}; see ks.hw.names()")
    return get_profile(target)  # an unknown name is a TargetError naming the known ones


def profile_label(p: HardwareProfile) -> str:
    """The profile's name, "(provisional)" when it says so, and its user-changed fields ("what-if: ub_bytes")."""
    user = [k for k, s in p.sources if s == "user"]
    label = p.name + (" (provisional)" if p.provisional else "")
    return label + (f" (what-if: {', '.join(user)})" if user else "")


def _tag(source: str) -> str:
    """The kind of a source: its [tag] or first word ("[ini]", "measured", "assumed", "derived", "user")."""
    return source.split()[0].rstrip(":;,") if source else "?"


def bound_of(sim: SimResult) -> tuple[str, str]:
    """(what bounds the time, the busiest pipe and its utilisation): "launch" when the launch gap is at least
    half of it, else the roofline's limiter (HBM or L2 for memory, as the L2 hit ratio says)."""
    m = sim.metrics
    busiest, util = busiest_pipe(m)
    busy = f"{busiest} {util:.0%}" if busiest else "-"
    if m["launch_overhead_us"] >= 0.5 * sim.time_us:
        return "launch", busy
    if m["roofline_limiter"] == "memory":
        return ("L2" if m.get("l2_hit_ratio", 0.0) >= 0.5 else "HBM"), busy
    return str(m["roofline_limiter"]), busy


@dataclass(frozen=True)
class TargetRow:
    """One target's result: its numbers, or `why` the design does not lower or simulate there."""

    target: str  # the profile's name
    label: str  # with "(provisional)" and the what-if fields
    ok: bool
    why: str = ""
    time_us: float = float("nan")
    tflops: float = float("nan")
    gm_gbps: float = float("nan")
    hbm_gbps: float = float("nan")
    bandwidth_pct: float = float("nan")  # of the profile's HBM bandwidth
    efficiency: float = float("nan")  # roofline bound / time
    bound: str = ""
    busiest: str = ""
    kernels: tuple[str, ...] = ()
    headline: tuple[tuple[str, Any, str], ...] = ()  # (field, value, source) of HEADLINE_FIELDS
    peak_tflops: float = float("nan")  # derived: AIC x MAC/cycle x 2 x clock (fp16)

    def as_dict(self) -> dict[str, Any]:
        return {"target": self.target, "label": self.label, "ok": self.ok, "why": self.why, "time_us": self.time_us,
                "tflops": self.tflops, "gm_gbps": self.gm_gbps, "hbm_gbps": self.hbm_gbps,
                "bandwidth_pct": self.bandwidth_pct, "efficiency": self.efficiency, "bound": self.bound,
                "busiest": self.busiest, "kernels": list(self.kernels), "peak_tflops": self.peak_tflops,
                "headline": [{"field": f, "value": v, "source": s} for f, v, s in self.headline]}


def _headline(p: HardwareProfile) -> tuple[tuple[str, Any, str], ...]:
    return tuple((f, getattr(p, f), p.source(f)) for f in HEADLINE_FIELDS)


def _row(p: HardwareProfile, sim: SimResult | None, why: str = "") -> TargetRow:
    common = {"target": p.name, "label": profile_label(p), "headline": _headline(p),
              "peak_tflops": p.peak_flops("float16") / 1e12}
    if sim is None:
        return TargetRow(ok=False, why=why, **common)
    m = sim.metrics
    bound, busy = bound_of(sim)
    return TargetRow(ok=True, time_us=float(sim.time_us), tflops=float(m["tflops"]), gm_gbps=float(m["gm_gbps"]),
                     hbm_gbps=float(m.get("hbm_gbps", float("nan"))), bandwidth_pct=float(m["bandwidth_pct"]),
                     efficiency=float(m["efficiency"]), bound=bound, busiest=busy,
                     kernels=tuple(k["name"] for k in sim.kernels), **common)


def _fmt(v: float, spec: str) -> str:
    return "-" if v != v else format(v, spec)


@dataclass
class TargetComparison:
    """`rows` (one TargetRow per target, in the order given), `programs`/`sims` of the targets that lowered
    (keyed by the row's label: its name, "(provisional)", the what-if fields), and `figure` (the timelines
    on one time axis: filled by ks.compare_targets, None from the tune stage)."""

    design: str
    rows: list[TargetRow]
    programs: dict[str, Any] = field(default_factory=dict, repr=False)
    sims: dict[str, SimResult] = field(default_factory=dict, repr=False)
    figure: Any = field(default=None, repr=False)

    @property
    def best(self) -> TargetRow | None:
        """The fastest target that lowered, or None."""
        ok = [r for r in self.rows if r.ok]
        return min(ok, key=lambda r: r.time_us) if ok else None

    def table(self, *, sources: bool = True) -> str:
        """The side-by-side table as text: one line per target, then (with `sources`) each profile's headline
        numbers with the kind of their source, and why a target was left out."""
        head = ("target", "time (us)", "TFLOPS", "GM GB/s", "HBM GB/s", "% HBM", "bound", "busiest", "efficiency")
        cells = [(r.label, _fmt(r.time_us, ",.2f"), _fmt(r.tflops, ".2f"), _fmt(r.gm_gbps, ",.1f"),
                  _fmt(r.hbm_gbps, ",.1f"), _fmt(r.bandwidth_pct, ".1f"), r.bound or "-", r.busiest or "-",
                  "-" if r.efficiency != r.efficiency else f"{r.efficiency:.1%}")
                 for r in self.rows]
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
        fmt = lambda c: "  ".join(x.ljust(w) if i in (0, 6, 7) else x.rjust(w)  # noqa: E731
                                  for i, (x, w) in enumerate(zip(c, widths, strict=True))).rstrip()
        lines = [f"{self.design} on {len(self.rows)} targets", fmt(head), *(fmt(c) for c in cells)]
        if sources:
            lines.append("profiles (value [kind of source]; profile.source(field) has the whole text):")
            for r in self.rows:
                h = dict((f, (v, s)) for f, v, s in r.headline)
                lines.append(f"  {r.label}: " + ", ".join(
                    f"{_SHORT[f]} {_show(f, h[f][0])} {_tag(h[f][1])}" for f in HEADLINE_FIELDS)
                    + f"; fp16 peak {r.peak_tflops:.1f} TFLOPS derived")
        for r in self.rows:
            if not r.ok:
                lines.append(f"not on {r.target}: {r.why}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


_SHORT = {"aic_cores": "AIC", "aiv_cores": "AIV", "clock_mhz": "clock", "hbm_bytes_per_s": "HBM",
          "l2_bytes": "L2", "ub_bytes": "UB", "launch_overhead_us": "launch"}


def _show(f: str, v: Any) -> str:
    if f == "clock_mhz":
        return f"{v:,.0f} MHz"
    if f == "hbm_bytes_per_s":
        return f"{v / 1e12:.2f} TB/s"
    if f == "l2_bytes":
        return f"{v / 2**20:,.0f} MiB"
    if f == "ub_bytes":
        return f"{v / 1024:,.0f} KiB"
    if f == "launch_overhead_us":
        return f"{v:g} us"
    return f"{v}"


def _schedule_for(design: Any, profile: HardwareProfile, config: Mapping[str, Any]) -> Schedule:
    """The design's schedule planned for `profile`: a build function is run there (knobs at `config`),
    outputs are planned there, a Schedule is taken as it is (its plan was chosen when it was made)."""
    if isinstance(design, Schedule):
        return design
    if callable(design) and not hasattr(design, "node"):
        try:
            _, sched, _ = run_build_fn(design, config, profile)
        except KernelStudioError:
            raise
        except Exception as e:  # a bug in the build function, not a design the target refuses
            name = getattr(design, "__name__", repr(design))
            raise TuneError(f"compare_targets: {name}() raised {type(e).__name__}: {e} on {profile.name}; this is not "
                            "a KernelStudioError (a design a target refuses gets a row saying why): fix the build "
                            "function") from e
        return sched
    nodes, _ = as_nodes(design)
    return create_schedule(list(nodes), target=profile)


def _name_of(design: Any) -> str:
    if isinstance(design, Schedule):
        return "schedule"
    return getattr(design, "__name__", None) or "design"


def compare_targets(design: Any, targets: Sequence[Any] = DEFAULT_TARGETS, *, l2: str = "cold",
                    config: Mapping[str, Any] | None = None, name: str | None = None) -> TargetComparison:
    """Build `design` (a build function, its output tensor(s), or a Schedule) on each target and simulate it
    with the `l2` protocol; `config` sets a build function's knobs (others at their defaults). A target where
    it does not lower gets a row saying why; the others get time, TFLOPS, GB/s, bound and efficiency."""
    if isinstance(targets, str | HardwareProfile):
        targets = (targets,)
    profiles = [_profile(t) for t in targets]
    if not profiles:
        raise TuneError("compare_targets: no targets given; pass e.g. targets=('ascend910b2', 'ascend950')")
    if not (isinstance(design, Schedule) or callable(design)):
        try:
            as_nodes(design)
        except KernelStudioError as e:
            raise TuneError(f"compare_targets: design must be a build function, its output tensor(s) or a Schedule; "
                            f"{e}") from None
    cmp_ = TargetComparison(name or _name_of(design), [])
    for p in profiles:
        try:
            sched = _schedule_for(design, p, dict(config or {}))
            prog = lower(sched, p, name=name)
            sim = simulate(prog, l2=l2)
        except TuneError:
            raise
        except KernelStudioError as e:
            cmp_.rows.append(_row(p, None, f"{type(e).__name__}: {str(e).splitlines()[0]}"))
            continue
        row = _row(p, sim)
        if row.label in cmp_.sims:
            raise TuneError(f"compare_targets: target {row.label} is given twice; give each target once")
        cmp_.programs[row.label], cmp_.sims[row.label] = prog, sim
        cmp_.rows.append(row)
    return cmp_


# --- sweeps ------------------------------------------------------------------------------------------------

@dataclass
class SweepResult:
    """Every (target, configuration) outcome of a what-if sweep, the best per target and how long it took."""

    design: str
    targets: list[str]  # profile labels, in the order given
    configs: list[dict[str, Any]]
    outcomes: dict[str, list[Outcome]]  # label -> one Outcome per configuration
    seconds: float
    runner: str
    best: TargetComparison  # each target at its own fastest configuration (rows with their numbers)
    best_configs: dict[str, dict[str, Any] | None]
    notes: list[str] = field(default_factory=list)

    @property
    def evaluated(self) -> int:
        return sum(len(v) for v in self.outcomes.values())

    def legal(self, target: str) -> int:
        return sum(o.ok for o in self.outcomes[target])

    def table(self) -> str:
        """One line per target: legal configurations, the best time and its knobs; then the best's numbers."""
        lines = [f"what-if sweep of {self.design}: {len(self.targets)} targets x {len(self.configs)} configurations "
                 f"= {self.evaluated} builds in {self.seconds:.1f} s on {self.runner}"]
        for t in self.targets:
            cfg = self.best_configs.get(t)
            times = [o.time_us for o in self.outcomes[t] if o.ok]
            knobs = ", ".join(f"{k}={v}" for k, v in cfg.items()) if cfg else ""
            span = f"best {min(times):,.2f} us at {knobs} (worst {max(times):,.2f} us)" if times else "none legal"
            lines.append(f"  {t}: {self.legal(t)}/{len(self.configs)} legal; {span}")
        lines.append(self.best.table(sources=False))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _configs(build_fn: Callable[[], Any], target: Any, configs: Any) -> list[dict[str, Any]]:
    if isinstance(configs, Sequence) and not isinstance(configs, str):
        out = [dict(c) for c in configs if isinstance(c, Mapping)]
        if len(out) != len(configs) or not out:
            raise TuneError(f"what_if_sweep: configs must be a non-empty list of {{knob: value}} dicts, a count "
                            f"or None (the whole grid), got {configs!r:.80}")
        return out
    space = Space(discover(build_fn, target).knobs)
    if configs is None:
        n = space.size
    elif isinstance(configs, int) and not isinstance(configs, bool) and configs > 0:
        n = min(configs, space.size)
    else:
        raise TuneError(f"what_if_sweep: configs must be a list of {{knob: value}} dicts, a positive count or None "
                        f"(the whole grid of {space.size}), got {configs!r:.80}")
    # evenly spread over the row-major grid, so a count smaller than the grid still varies every knob
    picks = sorted({(i * space.size) // n for i in range(n)})
    return [space.config(space.unflatten(i)) for i in picks]


def what_if_sweep(build_fn: Callable[[], Any], targets: Sequence[Any] = DEFAULT_TARGETS, configs: Any = None,
                  executor: Any = None, *, name: str | None = None) -> SweepResult:
    """Build and simulate `build_fn` at every configuration on every target, on ks.tune's runners: `executor`
    None (a local process pool), "inline", a concurrent.futures Executor or a dask.distributed Client.
    `configs`: a list of {knob: value}, a count spread over the knob grid, or None for the whole grid. Each
    target's fastest configuration is then rebuilt here for its full row (TFLOPS, GB/s, bound)."""
    if not callable(build_fn):
        raise TuneError(f"what_if_sweep: build_fn must be a function taking no arguments that returns the output "
                        f"tensor(s) or a Schedule, got {type(build_fn).__name__}")
    if isinstance(targets, str | HardwareProfile):
        targets = (targets,)
    profiles = [_profile(t) for t in targets]
    if not profiles:
        raise TuneError("what_if_sweep: no targets given; pass e.g. targets=('ascend910b2', 'ascend950')")
    t0 = time.perf_counter()
    cfgs = _configs(build_fn, profiles[0], configs)
    labels = [profile_label(p) for p in profiles]
    if len(set(labels)) != len(labels):
        raise TuneError(f"what_if_sweep: targets {labels} repeat one; give each target once")
    outcomes: dict[str, list[Outcome]] = {}
    notes: list[str] = []
    runner_name = ""
    for p, label in zip(profiles, labels, strict=True):
        runner, note = make_runner(executor, build_fn, p)
        runner_name = runner.name
        if note and note not in notes:
            notes.append(note)
        got: list[Outcome | None] = [None] * len(cfgs)

        def done(i: int, out: Outcome, got: list[Outcome | None] = got) -> None:
            got[i] = out

        try:
            runner.run(list(enumerate(cfgs)), done)
        finally:
            runner.close()
        outcomes[label] = [o if o is not None else Outcome(None, "lost", "no result came back") for o in got]
    best_cfgs: dict[str, dict[str, Any] | None] = {}
    rows: list[TargetRow] = []
    best = TargetComparison(name or getattr(build_fn, "__name__", "design"), rows)
    for p, label in zip(profiles, labels, strict=True):
        ok = [(o.time_us, i) for i, o in enumerate(outcomes[label]) if o.ok]
        if not ok:
            best_cfgs[label] = None
            first = next((o for o in outcomes[label] if o.error), None)
            rows.append(_row(p, None, f"no configuration lowers: {first.error if first else 'none ran'}"))
            continue
        cfg = cfgs[min(ok)[1]]
        best_cfgs[label] = cfg
        one = compare_targets(build_fn, (p,), config=cfg, name=name)
        rows.extend(one.rows)
        best.programs.update(one.programs)
        best.sims.update(one.sims)
    return SweepResult(best.design, labels, cfgs, outcomes, time.perf_counter() - t0, runner_name, best, best_cfgs,
                       notes)
