"""`ks.advise(design)`: which move helps, and by how much — every gain a simulation.

The advisor reads a built design's evidence (plan/advise_evidence.py: idle causes per pipe, roofline,
capacity, the plan's tiles), lets a table of small rules propose moves (plan/advise_rules.py), lowers and
simulates each on the design's target with the design's L2 protocol, and returns them ranked by the time
they save. A move the lowering refuses is kept as one that does not fit, with the error's reason. Given a
`build_fn` (knob values -> Design, e.g. a Studio session's `build`), a proposed directive whose value a knob
sets becomes that knob's move, and knobs no rule speaks for are tried one step either way.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import CapacityError, KernelStudioError
from ..schedule.directive import Directive
from ..schedule.knobs import Knob, knob_values
from ..schedule.schedule import Schedule
from ..sim import simulate, simulate_time
from ..tileir.capacity import profile_of
from .advise_evidence import gather
from .advise_rules import Candidate, candidates, move_text
from .choose import planning_target
from .depth import lower

__all__ = ["SAVES_US", "Advice", "AdviceError", "KnobOutcome", "advise", "advise_counted", "rank", "why_not",
           "with_moves"]


SAVES_US = 0.005  # a move saves time when its gain shows as at least 0.01 us where lists print it (2 decimals)


class AdviceError(KernelStudioError, ValueError):
    """An advisor call that cannot run: not a Design, a build function that is not callable, bad rounds."""


@dataclass(frozen=True)
class Advice:
    """One move, simulated: what to do (`move`, and the `directives` / `knobs` that do it), how much it saves
    (`gain_us` = time before - `time_us` after), the evidence it answers (`cause`), and, for a move the
    lowering refuses, `fits=False` with `why_not`."""

    move: str
    gain_us: float
    time_us: float | None  # after the move (None when it does not fit)
    cause: str
    directives: tuple[Directive, ...] = ()  # appended to the design's schedule
    keep_out: tuple[str, ...] = ()  # graph names of ops kept out of fused kernels (Schedule.keep_out_of_fusion)
    drops: tuple[Directive, ...] = ()  # the schedule's directives a keep_out move drops (the split kernels refuse them)
    knobs: dict[str, Any] = field(default_factory=dict)  # knob name -> new value (rebuild with build_fn)
    fits: bool = True
    why_not: str = ""
    kernel: str = ""
    rule: str = ""
    before_us: float = 0.0

    @property
    def saves(self) -> bool:
        """It fits and saves time at the precision the lists print (a gain of at least `SAVES_US`)."""
        return self.fits and self.gain_us >= SAVES_US

    @property
    def text(self) -> str:
        """One line for a list: the move, its simulated effect and the evidence."""
        if not self.fits:
            return f"{self.move}: does not fit ({self.why_not})"
        return (f"{self.move}: {self.before_us:.2f} -> {self.time_us:.2f} us ({-self.gain_us:+.2f} us); "
                f"{self.cause}")

    def schedule(self, base: Schedule) -> Schedule:
        """A copy of `base` with this move's ops kept out of fusion and its directives appended (`base` is left
        as it is)."""
        return with_moves(base, self.directives, self.keep_out)

    def apply(self, design: Any, build_fn: Callable[[dict[str, Any]], Any] | None = None) -> Any:
        """The design after this move: knob moves rebuild with `build_fn` at the new knob values, directive moves
        lower and simulate the schedule with the directives appended (same target and L2 protocol)."""
        if self.knobs:
            if build_fn is None:
                raise AdviceError(f"advice {self.move!r} sets knobs; pass the build function that takes knob values "
                                  "(e.g. the Studio session's build) to apply it")
            design = build_fn({**design.knobs, **self.knobs})
        if not self.directives and not self.keep_out:
            return design
        profile = profile_of(design.program)
        with planning_target(profile):
            sched = self.schedule(design.schedule)
            prog = lower(sched, profile, name=design.program.name)
        return replace(design, schedule=sched, program=prog, sim=simulate(prog, l2=design.sim.metrics["l2_start"]),
                       knobs=dict(design.knobs), _code=None)


@dataclass(frozen=True)
class KnobOutcome:
    """The simulated time of one knob configuration, or why it is illegal; `problem` is the built graph's text
    when the evaluator saw it ("" when it did not): a configuration whose graph differs from the design's
    computes another operator (a shape or a flag of the problem moved), so it is no move of this design."""

    time_us: float | None
    why_not: str = ""
    problem: str = ""


KnobMove = tuple[Candidate | None, tuple[tuple[Knob, Any], ...]]  # a proposal (or none) as knob values
KnobEvaluator = Callable[[Sequence[dict[str, Any]]], Sequence[KnobOutcome]]


def with_moves(base: Schedule, directives: Iterable[Directive], keep_out: Iterable[str] = ()) -> Schedule:
    """A copy of `base` with the ops named in `keep_out` kept out of fused kernels and `directives` appended."""
    return _moved(base, tuple(directives), tuple(keep_out))[0]


def _moved(base: Schedule, directives: tuple[Directive, ...], keep_out: tuple[str, ...]
           ) -> tuple[Schedule, tuple[Directive, ...]]:
    """`with_moves`, and the schedule's directives it dropped: after ops are kept out of fusion, a directive
    written for the fused kernel that the re-planned kernel of that name refuses (split('k', ...) on what is
    now a vector kernel) is dropped rather than misread."""
    s = copy.copy(base)  # every Schedule method replaces its fields, so the copy leaves `base` as it is
    dropped: list[Directive] = []
    for name in keep_out:
        dropped += [d for d in s.keep_out_of_fusion(s.graph.node(name), drop_refused=True)
                    if d.kernel in {k.name for k in s.kernels}]  # refused by a re-planned kernel of the same name
    for d in directives:
        s.apply(d)
    return s, tuple(dropped)


def why_not(e: BaseException) -> str:
    """A refused move's reason: a capacity overflow as its buffer and bytes, else the error's first sentence."""
    cause = getattr(e, "cause", None)
    e = cause if isinstance(cause, KernelStudioError) else e
    if isinstance(e, CapacityError) and getattr(e, "need", None) is not None:
        bufs = ", ".join(f"{b.name} {b.nbytes:,} B" for b in getattr(e, "buffers", ())[:3])
        return (f"{e.tier} needs {e.need:,} B but has {e.have:,} B (kernel {e.kernel}"
                + (f": {bufs}" if bufs else "") + ")")
    return str(e).split("\n")[0][:300]


# per base schedule: (directives, target, l2, name) -> (time_us | None, why_not, kernels' shape)
_CACHE: weakref.WeakKeyDictionary[Schedule, dict[tuple, tuple[float | None, str, Any]]] = weakref.WeakKeyDictionary()


def _shape(prog: Any) -> tuple:
    """What a move can change in a program (not its notes): per kernel its tiling, buffers and block_dim."""
    return tuple((k.name, k.family, k.block_dim, k.tiling, k.buffers) for k in prog.kernels)


def _simulate_move(design: Any, directives: tuple[Directive, ...], keep_out: tuple[str, ...], count: list[int]
                   ) -> tuple[float | None, str, Any, tuple[Directive, ...]]:
    base = design.schedule
    profile = profile_of(design.program)
    l2 = design.sim.metrics["l2_start"]
    key = (directives, keep_out, repr(profile), l2, design.program.name)
    memo = _CACHE.setdefault(base, {})
    if key not in memo:
        count[0] += 1
        try:
            with planning_target(profile):  # a re-planned fusion (keep_out) is chosen for the design's chip
                sched, dropped = _moved(base, directives, keep_out)
                prog = lower(sched, profile, name=design.program.name)
            shape = _shape(prog)
            # a move whose kernels are the design's changes nothing (it is not listed): no need to simulate it
            t = float(design.sim.time_us) if shape == _shape(design.program) else simulate_time(prog, l2=l2)
            memo[key] = (t, "", shape, dropped)
        except KernelStudioError as e:
            memo[key] = (None, why_not(e), None, ())
    return memo[key]


def _check(design: Any, build_fn: Any, limit: Any) -> None:
    if not (isinstance(getattr(design, "schedule", None), Schedule) and hasattr(design, "program")
            and hasattr(design, "sim")):  # a Design (plan/build.py imports this module, so no import back)
        raise AdviceError(f"advise: takes the Design that ks.build returns, got {type(design).__name__}; build it "
                          "first: d = ks.build(out); d.advise()")
    if build_fn is not None and not callable(build_fn):
        raise AdviceError(f"advise: build_fn must be a function that takes a dict of knob values and returns a Design "
                          f"(e.g. the Studio session's build), got {type(build_fn).__name__}; or leave it out for "
                          "schedule moves only")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise AdviceError(f"advise: limit is how many proposed moves to simulate, a positive int or None (all); got "
                          f"{limit!r}")


def _knob_list(build_fn: Any, design: Any, knobs: Any) -> list[Knob]:
    """The knobs' choices: `knobs` when given, else those of the object `build_fn` is bound to (a Studio
    session's `knobs`), else those met by one call of `build_fn` at the design's values."""
    if knobs is None:
        knobs = getattr(getattr(build_fn, "__self__", None), "knobs", None)
    if knobs is None:
        with knob_values({}, strict=False) as ctx:
            build_fn(dict(design.knobs))
        knobs = ctx.seen
        if not knobs and design.knobs:
            raise AdviceError(f"advise: the design was built with knobs {', '.join(design.knobs)} but one call of "
                              "build_fn declared none where the advisor could see them (it sets its own knob "
                              "values); pass their choices: advise(d, build_fn, knobs=session.knobs)")
    items = list(knobs.values()) if isinstance(knobs, Mapping) else list(knobs)
    bad = [k for k in items if not isinstance(k, Knob)]
    if bad:
        raise AdviceError(f"advise: knobs must be ks Knob objects (a Studio session's .knobs), got "
                          f"{type(bad[0]).__name__}")
    return items


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _knob_for(d: Directive, design: Any, knobs: list[Knob]) -> tuple[Knob, Any] | None:
    """The knob that sets directive `d`'s kind/kernel/axis in the design's schedule, and the knob value `d` asks for.
    A knob sets a directive when its value is the directive's (or both halves of a pair); several such knobs
    are told apart by name (tile_m sets split('m', ...))."""
    cur = [x for x in design.schedule.directives if (x.kind, x.kernel, x.axis) == (d.kind, d.kernel, d.axis)]
    if not cur:
        return None
    now = cur[-1].value
    want = d.value[0] if isinstance(d.value, tuple) and len(set(d.value)) == 1 else d.value
    now1 = now[0] if isinstance(now, tuple) and len(set(now)) == 1 else now
    found = [k for k in knobs if k.name in design.knobs and _same(design.knobs[k.name], now1)
             and any(_same(c, want) for c in k.choices)]
    if len(found) > 1:
        tokens = {str(d.axis), d.kind, *d.kind.split("_")} - {"None"}
        found = [k for k in found if tokens & set(k.name.lower().split("_")) or d.kind in k.name]
    return (found[0], want) if len(found) == 1 else None


def _knobs_for(directives: tuple[Directive, ...], design: Any, knobs: list[Knob]
               ) -> tuple[tuple[Knob, Any], ...] | None:
    """The knobs that set every one of `directives` (a move of two splits at once is two knobs at once), and the
    values they ask for; None unless each directive has its own knob."""
    hits = [_knob_for(d, design, knobs) for d in directives]
    if any(h is None for h in hits) or len({h[0].name for h in hits if h is not None}) < len(hits):
        return None
    return tuple(h for h in hits if h is not None)


def _same_problem(design: Any, build_fn: Any, order: list[Candidate | KnobMove]) -> list[Candidate | KnobMove]:
    """Leave out the knob moves to another operator (a shape or a flag of the problem moved) before building
    them, when `build_fn` is bound to an object whose `problem(values)` gives the graph's text at knob values
    without lowering (a Studio session's); a configuration the probe cannot run is kept (its build says why)."""
    probe = getattr(getattr(build_fn, "__self__", None), "problem", None)
    if not callable(probe) or not any(isinstance(m, tuple) for m in order):
        return order
    problem = design.schedule.graph.text()
    out = []
    for m in order:
        if isinstance(m, tuple):
            try:
                if probe(_config(design, m[1])) != problem:
                    continue
            except KernelStudioError:
                pass
        out.append(m)
    return out


def _config(design: Any, moves: tuple[tuple[Knob, Any], ...]) -> dict[str, Any]:
    return {**design.knobs, **{k.name: v for k, v in moves}}


def _neighbours(design: Any, knobs: list[Knob], taken: set[str]) -> list[tuple[Knob, Any]]:
    out = []
    for k in knobs:
        if k.name in taken or k.name not in design.knobs:
            continue
        idx = next((i for i, c in enumerate(k.choices) if _same(c, design.knobs[k.name])), None)
        if idx is None:
            continue
        out += [(k, k.choices[j]) for j in (idx - 1, idx + 1) if 0 <= j < len(k.choices)]
    return out


def _default_knob_eval(build_fn: Callable[[dict[str, Any]], Any]) -> KnobEvaluator:
    def run(configs: Sequence[dict[str, Any]]) -> list[KnobOutcome]:
        out = []
        for cfg in configs:
            try:
                d = build_fn(dict(cfg))
                out.append(KnobOutcome(float(d.sim.time_us), problem=d.schedule.graph.text()))
            except KernelStudioError as e:
                out.append(KnobOutcome(None, why_not(e)))
        return out
    return run


def advise(design: Any, build_fn: Callable[[dict[str, Any]], Any] | None = None, *,
           knobs: Mapping[str, Knob] | Iterable[Knob] | None = None, limit: int | None = None,
           evaluate_knobs: KnobEvaluator | None = None) -> list[Advice]:
    """Moves that change `design` (a `ks.build` Design), each simulated, fastest first; moves that do not fit
    come last with the reason. With `build_fn` (knob values -> Design) knob moves are proposed too; their
    choices come from `knobs` (default: the session `build_fn` is bound to, or one call of it). `limit`
    simulates only the moves whose evidence names the most idle time; `evaluate_knobs` evaluates knob
    configurations in a batch (the greedy tuner's executors)."""
    return advise_counted(design, build_fn, knobs=knobs, limit=limit, evaluate_knobs=evaluate_knobs)[0]


def advise_counted(design: Any, build_fn: Callable[[dict[str, Any]], Any] | None = None, *,
                   knobs: Mapping[str, Knob] | Iterable[Knob] | None = None, limit: int | None = None,
                   start: int = 0, evaluate_knobs: KnobEvaluator | None = None,
                   known: Callable[[dict[str, Any]], bool] | None = None) -> tuple[list[Advice], int, int]:
    """`advise` over the proposals `start` to `start + limit` (in the order of the idle time their evidence
    names), how many schedules it lowered and simulated itself (knob configurations handed to `evaluate_knobs`
    are counted by their evaluator; cached moves are not counted again), and how many proposals there are.
    Knob moves to configurations `known(config)` says are already evaluated cost nothing: they are left out of
    the window and come with the first one (`start == 0`)."""
    _check(design, build_fn, limit)
    before = float(design.sim.time_us)
    props = candidates(gather(design))
    props.sort(key=lambda c: -c.weight_us)  # stable: rules' order breaks ties
    klist = _knob_list(build_fn, design, knobs) if build_fn is not None else []
    order: list[Candidate | KnobMove] = []
    for c in props:
        hit = _knobs_for(c.directives, design, klist) if klist and c.directives and not c.keep_out else None
        order.append(c if hit is None else (c, hit))
    taken = {k.name for m in order if isinstance(m, tuple) for k, _ in m[1]}
    order += [(None, ((k, v),)) for k, v in _neighbours(design, klist, taken)]  # knob steps no evidence speaks for
    order = _same_problem(design, build_fn, order)
    free: list[Candidate | KnobMove] = []
    if known is not None:
        free = [m for m in order if isinstance(m, tuple) and known(_config(design, m[1]))]
        order = [m for m in order if not any(m is f for f in free)]
    chosen = order[start:] if limit is None else order[start:start + limit]
    if start == 0:
        chosen = free + chosen
    count = [0]
    out = [_directive_advice(design, c, before, count) for c in chosen if isinstance(c, Candidate)]
    knob_moves = [m for m in chosen if isinstance(m, tuple)]
    if knob_moves and evaluate_knobs is None:
        count[0] += len(knob_moves)
    out += _knob_advice(design, build_fn, knob_moves, before, evaluate_knobs)
    return rank([a for a in out if a is not None]), count[0], len(order)


def rank(moves: Iterable[Advice]) -> list[Advice]:
    """Moves that fit by simulated gain (largest first), then those that do not fit."""
    moves = list(moves)
    return (sorted((a for a in moves if a.fits), key=lambda a: (-a.gain_us, a.move))
            + [a for a in moves if not a.fits])


def _directive_advice(design: Any, c: Candidate, before: float, count: list[int]) -> Advice | None:
    t, why, shape, dropped = _simulate_move(design, c.directives, c.keep_out, count)
    if t is not None and shape == _shape(design.program):
        return None  # the kernel already does this
    move = move_text(c.directives, c.keep_out)
    if dropped:
        move += f" (drops {move_text(dropped)}, written for the fused kernel)"
    if t is None:
        return Advice(move, 0.0, None, c.cause, c.directives, keep_out=c.keep_out, fits=False, why_not=why,
                      kernel=c.kernel, rule=c.rule,
                      before_us=before)
    return Advice(move, before - t, t, c.cause, c.directives, keep_out=c.keep_out, drops=dropped, kernel=c.kernel,
                  rule=c.rule, before_us=before)


def _knob_advice(design: Any, build_fn: Any, moves: list[KnobMove], before: float,
                 evaluate: KnobEvaluator | None) -> list[Advice]:
    if not moves:
        return []
    configs = [_config(design, kv) for _, kv in moves]
    outcomes = (evaluate or _default_knob_eval(build_fn))(configs)
    out = []
    problem = design.schedule.graph.text()
    for (c, kv), o in zip(moves, outcomes, strict=True):
        if o.problem and o.problem != problem:
            continue  # another operator (a shape, a flag of the problem), not a faster design of this one
        move = ", ".join(f"{k.name} {design.knobs[k.name]!r} -> {v!r}" for k, v in kv)
        cause = c.cause if c is not None else f"knob {kv[0][0].name}: one step from {design.knobs[kv[0][0].name]!r}"
        kernel, rule = (c.kernel, c.rule) if c is not None else ("", "knob_step")
        values = {k.name: v for k, v in kv}
        if o.time_us is None:
            out.append(Advice(move, 0.0, None, cause, knobs=values, fits=False, why_not=o.why_not,
                              kernel=kernel, rule=rule, before_us=before))
        elif o.time_us != before:
            out.append(Advice(move, before - o.time_us, o.time_us, cause, knobs=values, kernel=kernel, rule=rule,
                              before_us=before))
    return out
