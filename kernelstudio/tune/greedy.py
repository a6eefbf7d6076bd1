"""`ks.advise_greedy`: the advisor's best move, applied round after round — a tuner that only tries what the
evidence points at.

Each round builds the design at the current knob values (plus any schedule moves taken so far), asks the
advisor (`kernelstudio.plan.advise`) for its simulated moves and takes the best one while it saves time. Knob
configurations run on the tuner's executors (tune/executors.py: inline, the local process pool, a
concurrent.futures Executor or a Dask client); schedule moves are lowered and simulated in this process.
Every configuration is simulated once: `evaluations` counts distinct ones, the default included.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..core.errors import KernelStudioError
from ..hw import HardwareProfile
from ..hw import get as get_profile
from ..plan.advise import Advice, AdviceError, KnobOutcome, advise_counted, why_not, with_moves
from ..plan.build import Design
from ..plan.choose import planning_target
from ..plan.depth import lower
from ..schedule.directive import Directive
from ..schedule.knobs import Knob
from ..sim import simulate
from .attention_knobs import attention_knobs
from .evaluate import _check_no_arguments, run_build_fn
from .executors import make_runner
from .space import config_json

__all__ = ["GreedyResult", "advise_greedy"]


@dataclass
class GreedyResult:
    """Where the greedy rounds ended: knob values, schedule moves on top, the time, and the moves taken."""

    config: dict[str, Any]  # knob values
    directives: tuple[Directive, ...]  # schedule moves appended to the build function's schedule
    keep_out: tuple[str, ...]  # ops kept out of fused kernels (by graph name), before the directives
    time_us: float
    default_us: float
    evaluations: int  # distinct configurations simulated, the default included
    steps: list[Advice] = field(default_factory=list)  # the move taken in each round
    design: Design | None = None  # the final design
    seconds: float = 0.0
    notes: tuple[str, ...] = ()

    def speedup(self) -> float:
        return self.default_us / self.time_us

    def summary(self) -> str:
        lines = [f"{self.default_us:.2f} -> {self.time_us:.2f} us ({self.speedup():.2f}x) in {len(self.steps)} "
                 f"round(s), {self.evaluations} evaluations"]
        lines += [f"  {i + 1}. {a.move}: -{a.gain_us:.2f} us ({a.cause})" for i, a in enumerate(self.steps)]
        return "\n".join(lines)


def _check(build_fn: Any, rounds: Any, per_round: Any) -> None:
    if not callable(build_fn):
        raise AdviceError(f"advise_greedy: build_fn must be a function taking no arguments that returns the output "
                          f"tensor(s) or a Schedule (as for ks.tune), got {type(build_fn).__name__}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= 50:
        raise AdviceError(f"advise_greedy: rounds is how many moves to take one after another, an int from 1 to 50; "
                          f"got {rounds!r}; try rounds=5")
    if per_round is not None and (isinstance(per_round, bool) or not isinstance(per_round, int) or per_round < 1):
        raise AdviceError(f"advise_greedy: per_round is how many proposed moves to simulate each round, a positive "
                          f"int or None (all); got {per_round!r}")


class _State:
    """The build function at knob values plus schedule moves, built and simulated in this process or a runner."""

    def __init__(self, build_fn: Callable[[], Any], target: Any, l2: str, runner: Any,
                 added: tuple[Knob, ...] = ()) -> None:
        self.build_fn, self.target, self.l2, self.runner = build_fn, target, l2, runner
        self.added = added  # the knobs ks.tune adds (tune/attention_knobs.py), always applied, defaults included
        self.seen: dict[tuple[str, tuple], KnobOutcome] = {}

    def design(self, config: dict[str, Any], extra: tuple[tuple[Directive, ...], tuple[str, ...]]) -> Design:
        config = {**{k.name: k.default for k in self.added}, **config}
        _, sched, seen = run_build_fn(self.build_fn, config, self.target)
        with planning_target(self.target):
            sched = with_moves(sched, *extra)
        prog = lower(sched, self.target)
        sim = simulate(prog, l2=self.l2)
        full = {k: config.get(k, kb.default) for k, kb in seen.items()} | {k.name: config[k.name] for k in self.added}
        return Design(sched, prog, sim, name=prog.name, knobs=full)

    def known(self, extra: tuple[tuple[Directive, ...], tuple[str, ...]]) -> Callable[[dict[str, Any]], bool]:
        """Whether a knob configuration (with these schedule moves) was simulated already."""
        return lambda config: (config_json(config), extra) in self.seen

    def knob_evaluator(self, extra: tuple[tuple[Directive, ...], tuple[str, ...]]
                       ) -> Callable[[Sequence[dict[str, Any]]], list[KnobOutcome]]:
        def run(configs: Sequence[dict[str, Any]]) -> list[KnobOutcome]:
            keys = [(config_json(c), extra) for c in configs]
            todo = [(i, dict(c)) for i, (c, k) in enumerate(zip(configs, keys, strict=True)) if k not in self.seen]
            if todo and extra == ((), ()) and self.l2 == "cold":  # the runners simulate with the cold-L2 protocol
                def done(i: int, out: Any) -> None:
                    self.seen[keys[i]] = KnobOutcome(out.time_us, "" if out.ok else (out.error or out.kind or ""))
                self.runner.run(todo, done)
            else:
                for i, c in todo:
                    try:
                        self.seen[keys[i]] = KnobOutcome(float(self.design(c, extra).sim.time_us))
                    except KernelStudioError as e:
                        self.seen[keys[i]] = KnobOutcome(None, why_not(e))
            return [self.seen[k] for k in keys]
        return run


def advise_greedy(build_fn: Callable[[], Any], target: str | HardwareProfile = DEFAULT_TARGET, rounds: int = 5,
                  executor: Any = None, *, l2: str = "cold", per_round: int | None = None,
                  patience: int | None = None) -> GreedyResult:
    """Take the advisor's best simulated move up to `rounds` times, starting from `build_fn`'s defaults.

    `build_fn` is a ks.tune build function (no arguments; knobs declared with `ks.knob`). Knob moves are
    evaluated on `executor` (as ks.tune's: None a local process pool, "inline", an Executor, a Dask client),
    schedule moves in this process. `per_round` simulates only that many of each round's proposals (those
    whose evidence names the most idle time), going on to the next ones only when none of them saves time, at
    most `patience` batches a round (None: until the proposals run out). Stops when no move saves time. A move
    that drops directives of the build function's schedule (an op kept out of fusion whose split kernels refuse
    them) is not taken: the knobs behind those directives would no longer reach the kernel."""
    _check(build_fn, rounds, per_round)
    if patience is not None and (isinstance(patience, bool) or not isinstance(patience, int) or patience < 1):
        raise AdviceError(f"advise_greedy: patience is how many batches of per_round proposals a round may try, a "
                          f"positive int or None (until they run out); got {patience!r}")
    if not isinstance(target, HardwareProfile):
        get_profile(target)  # an unknown name is a TargetError naming the known ones
    _check_no_arguments(build_fn, getattr(build_fn, "__name__", repr(build_fn)))
    t0 = time.perf_counter()
    knobs, added = _knobs(build_fn, target)
    runner, note = make_runner(executor, build_fn, target)
    state = _State(build_fn, target, l2, runner, added)
    config: dict[str, Any] = {}
    extra: tuple[tuple[Directive, ...], tuple[str, ...]] = ((), ())
    steps: list[Advice] = []
    counted = 0
    try:
        design = state.design(config, extra)
        default = float(design.sim.time_us)
        state.seen[(config_json(design.knobs), extra)] = KnobOutcome(default)
        for _ in range(rounds):
            ev = state.knob_evaluator(extra)
            best, at, total = None, 0, 1
            tries = 0
            while best is None and at < total and (patience is None or tries < patience):
                tries += 1  # the next `per_round` proposals, until one saves time or patience runs out
                moves, n, total = advise_counted(design, _no_direct_build, knobs=knobs, limit=per_round, start=at,
                                                 evaluate_knobs=ev, known=state.known(extra))
                counted += n
                # a move that drops the build function's directives would leave its knobs reaching nothing
                best = next((a for a in moves if a.fits and a.gain_us > 1e-9 and not a.drops), None)
                at = total if per_round is None else at + per_round
            if best is None:
                break
            steps.append(best)
            config = {**design.knobs, **best.knobs}
            extra = ((*extra[0], *best.directives), (*extra[1], *best.keep_out))
            design = state.design(config, extra)
    finally:
        runner.close()
    return GreedyResult(dict(design.knobs), extra[0], extra[1], float(design.sim.time_us), default,
                        len(state.seen) + counted,
                        steps, design, time.perf_counter() - t0, (note,) if note else ())


def _knobs(build_fn: Callable[[], Any], target: Any) -> tuple[list[Knob], tuple[Knob, ...]]:
    """Every knob (the build function's, then those ks.tune adds for fused attention kernels) and the added ones."""
    _, sched, seen = run_build_fn(build_fn, {}, target)
    added = attention_knobs(sched, target) if sched is not None else ()
    return [*seen.values(), *added], added


def _no_direct_build(values: dict[str, Any]) -> Design:
    raise AdviceError("advise_greedy evaluates knob configurations through its executor")  # never called
