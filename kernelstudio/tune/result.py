"""What `ks.tune` returns: every configuration tried (in proposal order), the best one, pruned counts,
and the plots."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..plan.build import Design
    from .db import DesignRecord
    from .evaluator import Evaluator

__all__ = ["Trial", "Best", "TuneResult"]


@dataclass(frozen=True)
class Trial:
    """One configuration: its predicted time, or the kind and message of why it is illegal."""

    index: int  # proposal order
    config: dict[str, Any]
    time_us: float | None
    kind: str | None = None
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    cached: bool = False  # taken from the cache / design database, not rebuilt
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.time_us is not None

    def __str__(self) -> str:
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.config.items())
        what = f"{self.time_us:10.2f} us" if self.ok else f"   illegal   {self.kind}"
        return f"#{self.index:<4} {what}  {cfg}"


class Best:
    """The best configuration: `config`, `time_us`, and its `design` (built on first access)."""

    def __init__(self, result: TuneResult, trial: Trial) -> None:
        self._result, self.config, self.time_us = result, dict(trial.config), float(trial.time_us or 0.0)
        self._design: Design | None = None

    @property
    def design(self) -> Design:
        if self._design is None:
            self._design = self._result.build(self.config)
        return self._design

    def __iter__(self) -> Iterator[Any]:  # config, design, time_us = result.best
        return iter((self.config, self.design, self.time_us))

    def __repr__(self) -> str:
        return f"Best(config={self.config!r}, time_us={self.time_us:.3f})"


class TuneResult:
    """Result of `ks.tune`."""

    def __init__(self, name: str, evaluator: Evaluator, strategy: str, seed: int | None, budget: int,
                 history: list[Trial], notes: list[str], executor: str, wall_s: float) -> None:
        self.name, self._ev, self.strategy, self.seed, self.budget = name, evaluator, strategy, seed, budget
        self.history, self.notes, self.executor, self.wall_s = history, notes, executor, wall_s
        self.target = evaluator.profile.name
        self.knobs = evaluator.space.knobs
        ok = [t for t in history if t.ok]
        self._best_trial = min(ok, key=lambda t: (t.time_us, t.index)) if ok else None
        self._best = Best(self, self._best_trial) if self._best_trial else None

    # --- numbers ----------------------------------------------------------------------------------
    @property
    def feasible(self) -> bool:
        return self._best is not None

    @property
    def best(self) -> Best:
        if self._best is None:
            from .errors import TuneError

            raise TuneError(f"tune {self.name}: no legal configuration among {len(self.history)} ({self.pruned})")
        return self._best

    @property
    def best_time_us(self) -> float:
        return self.best.time_us

    @property
    def default(self) -> Trial:
        """The default configuration's trial (every strategy proposes it first)."""
        return next((t for t in self.history if t.index == 0), self.history[0])

    @property
    def default_config(self) -> dict[str, Any]:
        return {k.name: k.default for k in self.knobs}

    @property
    def pruned(self) -> dict[str, int]:
        """Illegal configurations counted by kind, e.g. {"CapacityError: L0B": 3}."""
        return dict(Counter(t.kind for t in self.history if not t.ok and t.kind).most_common())

    @property
    def cache_hits(self) -> int:
        return sum(1 for t in self.history if t.cached)

    @property
    def evaluated(self) -> int:
        """Configurations built, lowered and simulated in this run (cache hits excluded)."""
        return sum(1 for t in self.history if not t.cached)

    @property
    def space_size(self) -> int:
        return self._ev.space.size

    def speedup(self) -> float:
        """Default time / best time (nan when the default is illegal)."""
        d = self.default
        return d.time_us / self.best_time_us if d.ok and d.config == self.default_config else math.nan

    # --- designs ----------------------------------------------------------------------------------
    def build(self, config: dict[str, Any]) -> Design:
        """The full design (schedule, program, simulation) at a configuration; for a multi-device build
        function, its ks.multi design."""
        from ..plan.build import build
        from .evaluate import run_build_fn

        outs, sched, _ = run_build_fn(self._ev.build_fn, config, self._ev.target, allow_multi=True)
        if sched is None:
            return outs
        d = build(list(outs), self._ev.target, schedule=sched, name=self.name, compare=False)
        d.knobs = dict(config)
        return d

    def save(self, name: str | None = None, *, db: Any = None) -> DesignRecord:
        """Store the best design in the design database (see `ks.designs()`)."""
        from .designs import save_design

        return save_design(self.best.design, name=name or self.name, db=db)

    # --- views ------------------------------------------------------------------------------------
    def table(self, n: int = 10) -> str:
        """The n fastest legal configurations, one line each."""
        ok = sorted((t for t in self.history if t.ok), key=lambda t: (t.time_us, t.index))
        lines = [str(t) for t in ok[:n]]
        return "\n".join(lines)

    def summary(self) -> str:
        d = self.default
        lines = [f"tune {self.name} on {self.target}: {self.strategy}, budget {self.budget}, seed {self.seed}, "
                 f"{self.executor}; space {self.space_size} configurations",
                 f"  tried {len(self.history)} ({self.evaluated} built, {self.cache_hits} cache hits), "
                 f"{sum(self.pruned.values())} illegal, {self.wall_s:.1f} s"]
        if d.ok:
            lines.append(f"  default {d.time_us:.2f} us  {d.config}")
        else:
            lines.append(f"  default illegal ({d.kind})  {d.config}")
        if self.feasible:
            lines.append(f"  best    {self.best.time_us:.2f} us  {self.best.config}"
                         + (f"  ({self.speedup():.2f}x)" if d.ok else ""))
        if self.pruned:
            lines.append("  pruned: " + ", ".join(f"{k} x{v}" for k, v in self.pruned.items()))
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def plot(self) -> Any:
        """Plotly figure: predicted time of every configuration tried (parallel coordinates for >2 knobs)."""
        from .plots import tune_figure

        return tune_figure(self)

    def feasibility_data(self, x: str, y: str, *, at: str | dict[str, Any] = "best") -> dict[str, Any]:
        """Pure data of the feasibility map over knobs x and y (other knobs at the best values, or at="default",
        or a dict of values)."""
        from .feasibility import feasibility_data

        return feasibility_data(self, x, y, at=at)

    def feasibility_map(self, x: str, y: str, *, at: str | dict[str, Any] = "best") -> Any:
        """Plotly heatmap of predicted time over knobs x and y; illegal cells shaded with their reason; the
        default and best outlined in their own cells when the slice holds them (a note says where otherwise)."""
        from .feasibility import feasibility_figure

        return feasibility_figure(self.feasibility_data(x, y, at=at))
