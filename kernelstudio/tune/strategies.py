"""Search strategies over a `Space`, as ask/tell objects: `ask(n)` proposes up to n new configurations
(choice-index tuples, never one proposed before), `tell(genes, cost)` reports a cost (inf: illegal).

All are seeded and deterministic: the tuner tells results in proposal order, whatever order the
workers finish in. Every strategy proposes the default configuration first, so a tuned design is
never worse than the default one.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod

from .space import Genes, Space

__all__ = ["STRATEGIES", "Strategy", "GridSearch", "RandomSearch", "EvolutionarySearch"]


class Strategy(ABC):
    """Base: remembers what was proposed and what it cost."""

    def __init__(self, space: Space, budget: int, seed: int | None) -> None:
        self.batch: int | None = None  # configurations per round; None: everything at once
        self.space, self.budget = space, min(budget, space.size)
        self.rng = random.Random(seed)
        self.seen: set[Genes] = set()
        self.costs: dict[Genes, float] = {}
        self.note = ""

    @abstractmethod
    def ask(self, n: int) -> list[Genes]:
        """The next at most `n` configurations to evaluate (none left: an empty list)."""

    def tell(self, genes: Genes, cost: float) -> None:
        self.costs[genes] = cost

    def _take(self, cands: list[Genes], n: int) -> list[Genes]:
        out = []
        for g in cands:
            if len(out) >= n:
                break
            if g not in self.seen:
                self.seen.add(g)
                out.append(g)
        return out


class _Listed(Strategy):
    """A strategy whose whole list is known up front."""

    def __init__(self, space: Space, budget: int, seed: int | None) -> None:
        super().__init__(space, budget, seed)
        self._list = self._make()
        self._pos = 0

    @abstractmethod
    def _make(self) -> list[Genes]:
        """The whole list of configurations, in the order they are proposed."""

    def ask(self, n: int) -> list[Genes]:
        out = self._take(self._list[self._pos:self._pos + n], n)
        self._pos += n
        return out


class GridSearch(_Listed):
    """Every configuration in row-major order after the default; when the budget is smaller than the
    space, an evenly spaced subset of that order (and the note says so)."""

    def _make(self) -> list[Genes]:
        size, d = self.space.size, self.space.default
        if self.budget >= size:
            flats = range(size)
        else:
            self.note = (f"grid: budget {self.budget} < {size} configurations, so an evenly spaced subset was "
                         "evaluated; raise budget for the full grid, or use strategy='evolutionary'")
            k = max(self.budget - 1, 1)
            flats = sorted({round(i * (size - 1) / max(k - 1, 1)) for i in range(k)})
        return [d, *(g for g in map(self.space.unflatten, flats) if g != d)]


class RandomSearch(_Listed):
    """The default, then configurations drawn uniformly without replacement."""

    def _make(self) -> list[Genes]:
        d = self.space.default
        dflat = self.space.flatten(d)
        k = min(self.budget, self.space.size - 1)
        flats = [f for f in self.rng.sample(range(self.space.size), min(k + 1, self.space.size)) if f != dflat][:k]
        return [d, *map(self.space.unflatten, flats)]


class EvolutionarySearch(Strategy):
    """A model-guided local search with restarts, for small discrete spaces and small budgets (the name
    is historical: the genetic search it replaced stalled on narrow ridges and in second basins).

    1. Start: the first batch is the default configuration and a Latin hypercube over the knobs'
       choice indices (every choice of a knob appears about equally often), as many as fit.
    2. Sweep: take a legal configuration (the parent) and propose all its unseen one-knob neighbours,
       every other choice of one knob at a time, not only +-1 steps (choices such as l1_k_steps act
       like categories: the one that loads all of K is a ridge that a step-by-step walk is not drawn
       to). A sweep is finished before the next starts.
    3. Next parent: basins first. Legal configurations are taken as basin heads in order, the last
       parent first and then fastest first; one that is one knob away from a head belongs to that
       head's basin. The next sweep starts at the fastest head with unseen neighbours, so after a
       sweep the search restarts in another basin (the second-best one) and comes back to the best
       configuration of the first when that is the fastest head again; configurations inside basins
       are parents only when no head is left. After each sweep one more Latin-hypercube point is
       evaluated while they last (at least 2, about one per 20 of budget).
    4. Order within a sweep: a surrogate fit on the legal configurations so far, an additive model of
       log(time) with one effect per knob choice (shrunk toward 0, fit by backfitting). A neighbour is
       predicted at its parent's log time plus the change of the effect of the knob it changes, plus
       FAIL_PENALTY times the fraction of evaluations with its new choice that were illegal (illegal
       configurations cost inf and count against the budget, so choices seen failing come last).
    Batches hold about a tenth of the budget (2 to 8). The seed draws the Latin-hypercube points and
    orders equal predictions; the tuner tells results in proposal order, so a seed gives the same
    proposals whatever the executor."""

    FAIL_PENALTY = 0.3  # log-time units added per unit of a choice's illegal fraction

    def __init__(self, space: Space, budget: int, seed: int | None) -> None:
        super().__init__(space, budget, seed)
        self.batch = max(2, min(8, math.ceil(self.budget / 10)))
        first = self.batch - 1
        points = self._latin(first + max(2, self.budget // 20))
        self._queue = [space.default, *points[:first]]
        self._spare = points[first:]  # restart points
        self._restarted: set[Genes] = set()
        self._parent: Genes | None = None
        self._tiebreak: dict[Genes, float] = {}

    def ask(self, n: int) -> list[Genes]:
        n = min(n, self.batch)
        out: list[Genes] = []
        while self._queue and len(out) < n:
            out += self._take([self._queue.pop(0)], 1)
        if len(out) < n:
            out += self._take(self._ranked(n - len(out)), n - len(out))
        while len(out) < n and len(self.seen) < self.space.size:  # nothing legal to sweep: random ones
            out += self._take([tuple(self.rng.randrange(r) for r in self.space.radices) for _ in range(16)],
                              n - len(out))
        return out

    def _latin(self, n: int) -> list[Genes]:
        """n configurations in which every choice of every knob appears n // r or n // r + 1 times."""
        cols = []
        for r in self.space.radices:
            picks = list(range(r))
            self.rng.shuffle(picks)  # which choices appear once more
            col = [picks[j % r] for j in range(n)]
            self.rng.shuffle(col)
            cols.append(col)
        return [tuple(c[j] for c in cols) for j in range(n)]

    def _effects(self) -> list[list[float]]:
        """Per knob and choice, the additive effect on log(time) over the legal configurations so far."""
        radices = self.space.radices
        eff = [[0.0] * r for r in radices]
        pts = [(g, math.log(c)) for g, c in self.costs.items() if math.isfinite(c) and c > 0]
        if not pts:
            return eff
        mu = sum(y for _, y in pts) / len(pts)
        for _ in range(8):
            for i, r in enumerate(radices):
                tot, cnt = [0.0] * r, [0] * r
                for g, y in pts:
                    tot[g[i]] += y - mu - sum(eff[j][v] for j, v in enumerate(g) if j != i)
                    cnt[g[i]] += 1
                eff[i] = [tot[v] / (cnt[v] + 1.0) for v in range(r)]  # +1: shrunk toward 0
        return eff

    def _parents(self) -> list[tuple[float, Genes]]:
        """Legal configurations in the order they are swept: basin heads, then the rest, each fastest
        first, where the parent of the current or last sweep is the first head (so the next sweep
        after it is finished starts in another basin)."""
        legal = sorted((c, k, g) for k, (g, c) in enumerate(self.costs.items()) if math.isfinite(c))
        legal.sort(key=lambda t: t[2] != self._parent)  # stable
        heads: list[tuple[float, Genes]] = []
        rest: list[tuple[float, Genes]] = []
        in_basin: set[Genes] = set()  # the neighbours of the heads so far
        for c, _, g in legal:
            if g in in_basin:
                rest.append((c, g))
            else:
                heads.append((c, g))
                in_basin.update(self._neighbours(g))
        return heads + rest

    def _neighbours(self, g: Genes) -> list[Genes]:
        """Every configuration that differs from g in one knob's choice."""
        return [(*g[:i], v, *g[i + 1:]) for i, r in enumerate(self.space.radices) for v in range(r) if v != g[i]]

    def _ranked(self, n: int) -> list[Genes]:
        """Up to n unseen configurations: neighbours of the parents in turn, best predicted first."""
        radices = self.space.radices
        fails = [[0] * r for r in radices]
        tried = [[0] * r for r in radices]
        for g, c in self.costs.items():
            for i, v in enumerate(g):
                tried[i][v] += 1
                fails[i][v] += not math.isfinite(c)
        parents = self._parents()
        eff = self._effects()
        out: list[Genes] = []
        for c, p in parents:
            near = [g for g in self._neighbours(p) if g not in self.seen and g not in out]
            if not near:
                if p == parents[0][1] and p not in self._restarted and self._spare:
                    self._restarted.add(p)  # the sweep under way is finished: a restart point
                    out.append(self._spare.pop(0))
                continue
            if not out:
                self._parent = p
            base = math.log(c) if c > 0 else 0.0
            scored = []
            for g in near:
                i = next(j for j, (x, y) in enumerate(zip(g, p, strict=True)) if x != y)
                v = g[i]
                pred = base + eff[i][v] - eff[i][p[i]] + self.FAIL_PENALTY * fails[i][v] / (tried[i][v] + 1)
                scored.append((pred, self._tie(g), g))
            out += [g for _, _, g in sorted(scored)]
            if len(out) >= n:
                break
        return out[:n]

    def _tie(self, g: Genes) -> float:
        """A random number per configuration, drawn once: equal predictions in a seeded order."""
        if g not in self._tiebreak:
            self._tiebreak[g] = self.rng.random()
        return self._tiebreak[g]


STRATEGIES: dict[str, type[Strategy]] = {
    "grid": GridSearch,
    "random": RandomSearch,
    "evolutionary": EvolutionarySearch,
}
