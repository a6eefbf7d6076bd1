"""The evolutionary search strategy on synthetic cost tables (no simulator): ask/tell as the tuner does it."""

from __future__ import annotations

import math

import pytest

from kernelstudio.schedule.knobs import Knob
from kernelstudio.tune.space import Space
from kernelstudio.tune.strategies import EvolutionarySearch


def drive(space, cost, budget, seed):
    """Ask in batches, tell in proposal order; the (genes, cost) history."""
    s = EvolutionarySearch(space, budget, seed)
    hist = []
    while len(hist) < s.budget:
        want = s.budget - len(hist)
        batch = s.ask(want if s.batch is None else min(s.batch, want))
        if not batch:
            break
        costs = [cost(space.config(g)) for g in batch]
        hist += zip(batch, costs, strict=True)
        for g, c in zip(batch, costs, strict=True):
            s.tell(g, c)
    return hist


def every(space, cost):
    return {space.unflatten(f): cost(space.config(space.unflatten(f))) for f in range(space.size)}


def neighbours(space, g):
    return [(*g[:i], v, *g[i + 1:]) for i, r in enumerate(space.radices) for v in range(r) if v != g[i]]


# A matmul-like table: big tiles overflow (inf), and keeping all of K in L1 (tile_k * k_steps == 512) is 30 %
# faster: a narrow ridge, at tile_k 64 three k_steps steps from the default with nothing gained in between.
RIDGE = Space((Knob("tile_m", 32, (16, 32, 64, 128)), Knob("tile_n", 128, (64, 128, 256, 512)),
               Knob("tile_k", 64, (32, 64, 128, 256)), Knob("k_steps", 1, (1, 2, 4, 8)),
               Knob("double_buffer", True, (False, True))))


def ridge(c):
    if c["tile_m"] * c["tile_n"] > 32768 or c["tile_k"] * c["k_steps"] > 512:
        return math.inf
    t = (10 + 3 * abs(math.log2(c["tile_m"] / 64)) + 2 * abs(math.log2(c["tile_n"] / 256))
         + abs(math.log2(c["tile_k"] / 64)) + (0 if c["double_buffer"] else 2))
    return t * 0.7 if c["tile_k"] * c["k_steps"] == 512 else t


# Two basins: the default is the bottom of a shallow one (every one-knob move is slower); a deeper one is far away.
BASINS = Space(tuple(Knob(n, 1, tuple(range(6))) for n in "abxy"))


def two_basins(c):
    near = 20 + sum((c[n] - 1) ** 2 for n in "abxy")
    far = 15 + 0.25 * ((c["a"] - 5) ** 2 + (c["b"] - 5) ** 2 + (c["x"] - 4) ** 2 + (c["y"] - 5) ** 2)
    return float(min(near, far))


# One knob has a choice that is always illegal.
FAILING = Space((Knob("a", 0, tuple(range(5))), Knob("b", 0, tuple(range(5))), Knob("c", 0, tuple(range(4))),
                 Knob("w", 1, (1, 2, 4, 8))))


def failing(c):
    if c["w"] == 8:
        return math.inf
    return 10.0 + (c["a"] - 3) ** 2 + (c["b"] - 2) ** 2 + (c["c"] - 2) ** 2 - 0.1 * c["w"]


@pytest.mark.parametrize("budget", [1, 2, 7, 51, RIDGE.size])
def test_default_first_no_repeats_and_the_budget(budget):
    hist = drive(RIDGE, ridge, budget, seed=0)
    genes = [g for g, _ in hist]
    assert genes[0] == RIDGE.default
    assert len(genes) == budget and len(set(genes)) == budget  # the full budget covers the whole space once


def test_no_repeats_when_nothing_is_legal():
    hist = drive(RIDGE, lambda c: math.inf, 40, seed=1)
    assert len(hist) == 40 and len({g for g, _ in hist}) == 40


def test_deterministic_per_seed():
    a = [g for g, _ in drive(RIDGE, ridge, 51, seed=3)]
    assert a == [g for g, _ in drive(RIDGE, ridge, 51, seed=3)]
    assert all(a != [g for g, _ in drive(RIDGE, ridge, 51, seed=s)] for s in (4, 5))


def test_finds_a_narrow_ridge_with_a_tenth_of_the_space():
    table = every(RIDGE, ridge)
    best = min(table, key=table.get)
    d = RIDGE.default
    assert (best[2], best[3]) == (d[2], 3) and d[3] == 0  # tile_k as the default, k_steps 1 -> 8
    for g in table:
        if g[2] == d[2] and g[3] in (1, 2):  # at tile_k 64, k_steps 2 and 4 bring nothing over 1
            assert table[g] >= table[(*g[:3], 0, *g[4:])]
    for seed in range(5):
        hist = drive(RIDGE, ridge, RIDGE.size // 10, seed)
        assert min(c for _, c in hist) == table[best], seed


def test_restarts_out_of_the_default_basin():
    table = every(BASINS, two_basins)
    d = BASINS.default
    assert all(table[g] > table[d] for g in neighbours(BASINS, d))  # a search that stays there ends at 20
    best = min(table.values())
    assert best < table[d]
    for seed in range(5):
        hist = drive(BASINS, two_basins, BASINS.size // 10, seed)
        assert min(c for _, c in hist) == best, seed


def test_learns_to_avoid_an_always_illegal_choice():
    assert sum(math.isinf(c) for c in every(FAILING, failing).values()) == FAILING.size // 4
    for seed in range(5):
        hist = drive(FAILING, failing, 40, seed)
        assert sum(math.isinf(c) for _, c in hist) <= 4, seed  # a quarter of the space; uniform draws: 10 of 40
