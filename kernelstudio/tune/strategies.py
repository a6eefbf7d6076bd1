"""Search strategies over a `Space`, as ask/tell objects: `ask(n)` proposes up to n new configurations
(choice-index tuples, never one proposed before), `tell(genes, cost)` reports a cost (inf: illegal).

All are seeded and deterministic: the tuner tells results in proposal order, whatever order the
workers finish in. Every strategy proposes the default configuration first, so a tuned design is
never worse than the default one.
"""

from __future__ import annotations

import math
import random

from .space import Genes, Space

__all__ = ["STRATEGIES", "Strategy", "GridSearch", "RandomSearch", "EvolutionarySearch"]


class Strategy:
    """Base: remembers what was proposed and what it cost."""

    def __init__(self, space: Space, budget: int, seed: int | None) -> None:
        self.batch: int | None = None  # configurations per round; None: everything at once
        self.space, self.budget = space, min(budget, space.size)
        self.rng = random.Random(seed)
        self.seen: set[Genes] = set()
        self.costs: dict[Genes, float] = {}
        self.note = ""

    def ask(self, n: int) -> list[Genes]:
        raise NotImplementedError

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

    def _make(self) -> list[Genes]:
        raise NotImplementedError

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
    """A generational genetic search over choice indices: tournament selection among the fastest legal
    configurations, uniform crossover, and mutation that moves a knob one step along its choices (or to
    a random one); the first generation is the default and random configurations. From the second
    generation on, up to half of each generation is untried one-step neighbours of the fastest
    configuration so far (a local search that finishes what the crossover found)."""

    def __init__(self, space: Space, budget: int, seed: int | None) -> None:
        super().__init__(space, budget, seed)
        self.pop = max(4, min(16, math.ceil(self.budget / 4)))
        self.batch = self.pop

    def ask(self, n: int) -> list[Genes]:
        n = min(n, self.pop)
        if not self.seen:
            first = [self.space.default]
            first += [self._random() for _ in range(8 * n)]
            return self._take(first, n)
        ranked = sorted((c, i, g) for i, (g, c) in enumerate(self.costs.items()) if math.isfinite(c))
        elite = [g for _, _, g in ranked[:self.pop]]
        out: list[Genes] = []
        if elite:
            near = [g for g in self._neighbours(elite[0]) if g not in self.seen]
            self.rng.shuffle(near)
            out += self._take(near, max(1, n // 2))
        tries = 0
        while len(out) < n and tries < 60 * n and len(self.seen) < self.space.size:
            tries += 1
            if len(elite) >= 2:
                child = self._mutate(self._crossover(self._tournament(elite), self._tournament(elite)))
            elif elite:
                child = self._mutate(elite[0], force=True)
            else:
                child = self._random()
            out += self._take([child], 1)
        while len(out) < n and len(self.seen) < self.space.size:  # crowded: fill with unseen random ones
            out += self._take([self._random() for _ in range(16)], n - len(out))
        return out

    def _random(self) -> Genes:
        return tuple(self.rng.randrange(r) for r in self.space.radices)

    def _neighbours(self, g: Genes) -> list[Genes]:
        """Every configuration one step away along one knob's choices."""
        return [(*g[:i], g[i] + d, *g[i + 1:]) for i, r in enumerate(self.space.radices) for d in (-1, 1)
                if 0 <= g[i] + d < r]

    def _tournament(self, elite: list[Genes]) -> Genes:
        a, b = self.rng.randrange(len(elite)), self.rng.randrange(len(elite))
        return elite[min(a, b)]  # elite is sorted fastest first

    def _crossover(self, a: Genes, b: Genes) -> Genes:
        return tuple(x if self.rng.random() < 0.5 else y for x, y in zip(a, b, strict=True))

    def _mutate(self, g: Genes, force: bool = False) -> Genes:
        radices = self.space.radices
        p = 1.0 / len(g)
        out = list(g)
        changed = False
        for i, r in enumerate(radices):
            if r > 1 and (self.rng.random() < p):
                out[i] = self._move(out[i], r)
                changed = True
        if (force or tuple(out) in self.seen) and not changed:
            i = self.rng.choice([j for j, r in enumerate(radices) if r > 1] or [0])
            out[i] = self._move(out[i], radices[i])
        return tuple(out)

    def _move(self, x: int, r: int) -> int:
        if r <= 1:
            return x
        if self.rng.random() < 0.7:
            step = self.rng.choice((-1, 1))
            return min(max(x + step, 0), r - 1) if 0 <= x + step < r else x - step
        return self.rng.randrange(r)


STRATEGIES: dict[str, type[Strategy]] = {
    "grid": GridSearch,
    "random": RandomSearch,
    "evolutionary": EvolutionarySearch,
}
