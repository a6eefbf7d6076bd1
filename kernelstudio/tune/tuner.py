"""`ks.tune`: search a design's knobs for the fastest predicted time on a target.

The build function's `ks.knob(...)` calls are the search space (found by one run at the defaults).
Each configuration is built, lowered and simulated on a worker; a `KernelStudioError` marks it
illegal and is counted by kind. Results are cached by hash(model, profile, graph, schedule at the
defaults, configuration) in the design database, so a second tune of the same kernel on the same
profile rebuilds nothing it has seen.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..hw import HardwareProfile
from ..hw import get as get_profile
from .db import open_db
from .errors import TuneError
from .evaluate import Outcome, discover
from .evaluator import Evaluator
from .executors import make_runner
from .result import Trial, TuneResult
from .space import config_json
from .strategies import STRATEGIES

__all__ = ["tune", "Evaluator"]  # Evaluator lives in evaluator.py

def _check_args(budget: Any, strategy: Any, seed: Any) -> None:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise TuneError(f"tune: budget is the number of configurations to evaluate, a positive int; got {budget!r}; "
                        "try budget=32")
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise TuneError(f"tune: unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TuneError(f"tune: seed must be an int (or None), got {seed!r}")


def tune(build_fn: Callable[[], Any], target: str | HardwareProfile = DEFAULT_TARGET, budget: int = 64,
         strategy: str = "evolutionary", seed: int | None = 0, executor: Any = None, *, db: Any = None,
         name: str | None = None, progress: bool = True) -> TuneResult:
    """Search the knobs `build_fn` declares for the fastest simulated time on `target`.

    `build_fn()` returns the output tensor(s) or a Schedule and declares knobs with `ks.knob`.
    `strategy`: "grid", "random" or "evolutionary" (seeded, reproducible); `budget`: configurations to
    evaluate (at most the size of the space). `executor`: None for a local process pool, "inline" for
    this process, a concurrent.futures Executor or a dask.distributed Client. `db`: the design database
    file (default `$KS_DESIGN_DB` or ~/.cache/kernelstudio/designs.sqlite; False: none)."""
    _check_args(budget, strategy, seed)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise TuneError(f"tune: name must be a non-empty string (the design's name in the database), got {name!r:.60}")
    if not isinstance(target, HardwareProfile):
        get_profile(target)  # an unknown name is a TargetError naming the known ones
    t0 = time.perf_counter()
    disc = discover(build_fn, target)
    ev = Evaluator(build_fn, target, disc, db)
    space = ev.space
    strat = STRATEGIES[strategy](space, budget, seed)
    label = name or getattr(build_fn, "__name__", "design")
    runner, note = make_runner(executor, build_fn, target)
    notes = [n for n in (note, strat.note) if n]
    if note:
        warnings.warn(f"ks.tune: {note}", UserWarning, stacklevel=2)
    dbh = open_db(db)
    trials: dict[int, Trial] = {}
    bar = _bar(strat.budget, label, progress)
    best = [math.inf]
    try:
        while len(trials) < strat.budget:
            want = strat.budget - len(trials)
            batch = strat.ask(want if strat.batch is None else min(strat.batch, want))
            if not batch:
                break
            base = len(trials)
            configs = [space.config(g) for g in batch]

            def on_trial(i: int, out: Outcome, cached: bool, base: int = base,
                         configs: list[dict[str, Any]] = configs) -> None:
                trials[base + i] = Trial(base + i, configs[i], out.time_us, out.kind, out.error, out.info, cached,
                                         out.seconds)
                if out.ok:
                    best[0] = min(best[0], out.time_us)
                _advance(bar, best[0], trials)

            try:
                ev.evaluate(configs, runner, dbh, on_trial)
            except TuneError as e:  # the sweep stops: what finished is kept (and stored) with the error
                if e.result is None:
                    e.result = TuneResult(label, ev, strategy, seed, budget, [trials[i] for i in sorted(trials)],
                                          notes, runner.name, time.perf_counter() - t0)
                raise
            for i, g in enumerate(batch):
                t = trials[base + i]
                strat.tell(g, t.time_us if t.ok else math.inf)
        history = [trials[i] for i in sorted(trials)]
        result = TuneResult(label, ev, strategy, seed, budget, history, notes, runner.name,
                            time.perf_counter() - t0)
        if dbh is not None:
            b = result.best if result.feasible else None
            dbh.record_run(kernel_key=ev.kernel_key, name=label, target=ev.profile.name, strategy=strategy,
                           budget=budget, seed=seed, evaluated=len(history), cache_hits=result.cache_hits,
                           best_config=config_json(b.config) if b else None, best_time_us=b.time_us if b else None,
                           default_time_us=history[0].time_us if history else None)
    finally:
        if bar is not None:
            bar.close()
        runner.close()
        if dbh is not None and dbh is not db:
            dbh.close()
    if not result.feasible:
        counts = ", ".join(f"{k}: {v}" for k, v in result.pruned.items())
        raise TuneError(f"tune: none of the {len(history)} configurations of {label} is legal on {ev.profile.name} "
                        f"({counts}); widen the knobs' choices (smaller tiles, double_buffer off) or raise budget",
                        result=result)
    return result


def _bar(total: int, label: str, on: bool) -> Any:
    if not on:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=f"tune {label}", unit="cfg", leave=True)


def _advance(bar: Any, best: float, trials: dict[int, Trial]) -> None:
    if bar is None:
        return
    pruned = sum(1 for t in trials.values() if not t.ok)
    hits = sum(1 for t in trials.values() if t.cached)
    bar.set_postfix_str(f"best {best:.2f} us, {pruned} pruned, {hits} cached", refresh=False)
    bar.update(1)

