"""Benchmark: a Studio knob move on MlaProlog-lite -> every view's data rebuilt (goal: median <= 25 ms,
p95 <= 50 ms; <= 10 ms median with the Passes tab open). Prints numbers.

A move re-runs the cell body with the new knob values, lowers, simulates, generates the Ascend C and
computes the data of every view (cards, what changed, capacity, DAG DOT, memory flow, timeline, idle
breakdown, roofline, code). The unfused baseline does not depend on the knobs and is built once; the
IR after each pass is printed only while the Passes tab is open (timed separately below).

Then the same moves through the Studio widget itself (no front end: the widget messages go nowhere), with
the Passes tab open: to the views in sight drawn (strips, the open tab: what a kernel sends first), and to
every tab drawn (in a kernel the hidden tabs wait for the controls to rest; their data is computed when they
are drawn); then the first visits through the widget the same way.

The moves cycle through six knob settings, so after the first six a move returns to values the Studio has
shown (the session keeps the designs it built lately, and lower() the kernels it emitted). The "first visit"
lines move through the settings of all four knobs once each (those that do not fit skipped), each line in a
fresh process that has built only the cell's default setting and one warm-up move (both left out of the
measured moves): no memo of the compiler, the simulator or the views has seen a measured setting before.

The last lines time the same moves phase by phase (the cell re-run, lower, simulate, codegen), so a
move's time can be read against the compiler's own share of it, and the first visits phase by phase with
the Passes tab's printout (the program after each pass, diffed) and the idle-gap and timeline views.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernelstudio.codegen import codegen  # noqa: E402
from kernelstudio.core.errors import KernelStudioError  # noqa: E402
from kernelstudio.lower.pipeline import lower  # noqa: E402
from kernelstudio.notebook import views  # noqa: E402
from kernelstudio.notebook.cell import run_cell  # noqa: E402
from kernelstudio.notebook.session import StudioSession  # noqa: E402
from kernelstudio.notebook.studio import Studio  # noqa: E402
from kernelstudio.plan.choose import planning_target  # noqa: E402
from kernelstudio.sim import simulate  # noqa: E402
from tests.notebook.cells import MLA_CELL  # noqa: E402

MOVES = [{"tile_m": m, "double_buffer": db} for db in (True, False) for m in (16, 32, 64)]
GRID = [{"tile_m": m, "tile_n": n, "tile_k": k, "double_buffer": db}
        for db in (True, False) for k in (32, 64, 128) for n in (128, 256, 512) for m in (16, 32, 64)]


def _percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def run(n: int = 36, passes: bool = False) -> list[float]:
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    prev = ses.rebuild()
    files = dict(prev.code.files)
    times = []
    for i in range(n):
        t0 = time.perf_counter()
        d = ses.rebuild(MOVES[i % len(MOVES)])
        data = views.studio_data(d, prev, files, passes=passes)
        times.append((time.perf_counter() - t0) * 1e3)
        prev, files = d, data["files"]
    return times


WARM = {"tile_m": 64, "tile_n": 128, "tile_k": 32, "double_buffer": False}  # a fresh process's warm-up move


def _fresh(fn, *args):
    """`fn(*args)` in a new (spawned) process: none of this process's memos, its result sent back."""
    import concurrent.futures as cf
    import multiprocessing as mp

    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        return ex.submit(fn, *args).result()


def _unseen(ses: StudioSession) -> list[dict]:
    """GRID without the settings `ses` has built: the cell's default and WARM, the move it is left at."""
    built = [dict(ses.values), WARM]
    ses.rebuild(WARM)
    return [g for g in GRID if g not in built]


def first_visits(passes: bool) -> list[float]:
    """ms per move to knob values the process has not built before (refused ones skipped); run in `_fresh`."""
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    views.studio_data(ses.design, passes=passes)  # the first call's own costs (imports, first lambdas)
    grid = _unseen(ses)
    prev = ses.design
    data = views.studio_data(prev, passes=passes)
    files, times = data["files"], []
    for values in grid:
        t0 = time.perf_counter()
        try:
            d = ses.rebuild(values)
        except KernelStudioError:  # a setting whose buffers do not fit: the Studio shows why
            continue
        data = views.studio_data(d, prev, files, passes=passes)
        times.append((time.perf_counter() - t0) * 1e3)
        prev, files = d, data["files"]
    return times


def widget(n: int = 36, tab: str = "Passes", first: bool = False) -> tuple[list[float], list[float]]:
    """ms per move through the Studio widget with `tab` open: to the views in sight drawn, to every tab drawn.
    `first`: the settings the process has not built (GRID, refused ones skipped; run in `_fresh`), else MOVES."""
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    st = Studio(ses)
    st.tabs.selected_index = st.tabs.titles.index(tab)
    st._later = lambda: None  # the hidden tabs: drawn below, timed apart
    todo = [MOVES[i % len(MOVES)] for i in range(n + 6)]  # six moves warm up
    if first:
        todo = _unseen(ses)
        move(st, WARM)  # the Studio's own first-call costs
        st._settle()
    sight, every = [], []
    for i, values in enumerate(todo):
        t0 = time.perf_counter()
        move(st, values)
        t1 = time.perf_counter()
        st._settle()
        t2 = time.perf_counter()
        if (first or i >= 6) and st.error is None:
            sight.append((t1 - t0) * 1e3)
            every.append((t2 - t0) * 1e3)
    return sight, every


def move(st: Studio, values: dict) -> None:
    """Set the knobs as a user moves them (the observers only count the moves), then redraw the views in sight."""
    for name, v in values.items():
        st._hold = True
        st._knob_widgets[name].value = v
        st._hold = False
    st._seq += 1
    st._flush()


def phases(n: int = 36, target: str = "ascend910b2") -> dict[str, list[float]]:
    """ms per phase of each move: the cell re-run (graph and schedule), lower, simulate, codegen."""
    out: dict[str, list[float]] = {"cell": [], "lower": [], "simulate": [], "codegen": []}
    for i in range(n):
        t0 = time.perf_counter()
        with planning_target(target):
            res = run_cell(MLA_CELL, name="mla_prolog_lite", values=MOVES[i % len(MOVES)])
        t1 = time.perf_counter()
        prog = lower(res.schedule, target, name="mla_prolog_lite")
        t2 = time.perf_counter()
        simulate(prog)
        t3 = time.perf_counter()
        codegen(prog)
        t4 = time.perf_counter()
        for key, a, b in (("cell", t0, t1), ("lower", t1, t2), ("simulate", t2, t3), ("codegen", t3, t4)):
            out[key].append((b - a) * 1e3)
    return out


def first_visit_phases(target: str = "ascend910b2") -> dict[str, list[float]]:
    """ms per phase of each first visit (run in `_fresh`; refused settings skipped): the cell re-run, lower,
    simulate, codegen, the Passes tab's data (every pass's program printed and diffed), idle gaps and
    timeline."""
    ses = StudioSession("mla_prolog_lite", MLA_CELL)
    ses.rebuild()
    views.studio_data(ses.design, passes=True)  # the first call's own costs
    keys = ("cell", "lower", "simulate", "codegen", "passes", "idle+timeline")
    out: dict[str, list[float]] = {k: [] for k in keys}
    for values in _unseen(ses):
        t = [time.perf_counter()]
        try:
            with planning_target(target):
                res = run_cell(MLA_CELL, name="mla_prolog_lite", values=values)
            t.append(time.perf_counter())
            prog = lower(res.schedule, target, name="mla_prolog_lite")
        except KernelStudioError:
            continue
        t.append(time.perf_counter())
        sim = simulate(prog)
        t.append(time.perf_counter())
        codegen(prog)
        t.append(time.perf_counter())
        views.passes_data(prog)
        t.append(time.perf_counter())
        views.timeline_data(sim, gaps=views.idle_gaps(sim, cores=None))
        t.append(time.perf_counter())
        for key, a, b in zip(keys, t[:-1], t[1:], strict=True):
            out[key].append((b - a) * 1e3)
    return out


def main() -> None:
    for passes, label in ((False, "every view's data"), (True, "... with the Passes tab open")):
        t = run(passes=passes)
        print(f"knob move -> {label}, MlaProlog-lite: median {statistics.median(t):.1f} ms, "
              f"p95 {_percentile(t, 0.95):.1f} ms (n={len(t)}; goal median <= 25 ms, p95 <= 50 ms"
              + ("; <= 10 ms median with the Passes tab open)" if passes else ")"))
    for passes, label in ((False, "every view's data"), (True, "... with the Passes tab open")):
        t = _fresh(first_visits, passes)
        print(f"first visits (knob values not built before) -> {label}: median {statistics.median(t):.1f} ms, "
              f"p95 {_percentile(t, 0.95):.1f} ms (n={len(t)})")
    sight, every = widget()
    print(f"knob move -> the Studio widget redrawn (Python side, Passes tab open), MlaProlog-lite: views in sight "
          f"median {statistics.median(sight):.1f} ms, p95 {_percentile(sight, 0.95):.1f} ms; every tab median "
          f"{statistics.median(every):.1f} ms, p95 {_percentile(every, 0.95):.1f} ms (n={len(sight)})")
    sight, every = _fresh(widget, 36, "Passes", True)
    print(f"first visits -> the Studio widget redrawn (Python side, Passes tab open): views in sight median "
          f"{statistics.median(sight):.1f} ms, p95 {_percentile(sight, 0.95):.1f} ms; every tab median "
          f"{statistics.median(every):.1f} ms, p95 {_percentile(every, 0.95):.1f} ms (n={len(sight)})")
    ph = phases()
    med = {k: statistics.median(v) for k, v in ph.items()}
    core = statistics.median([a + b + c for a, b, c in zip(ph["lower"], ph["simulate"], ph["codegen"], strict=True)])
    print("the same moves by phase, median ms: " + ", ".join(f"{k} {v:.1f}" for k, v in med.items())
          + f"; lower + simulate + codegen {core:.1f}")
    fp = _fresh(first_visit_phases)
    print("first visits by phase, median ms: " + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in fp.items())
          + f" (n={len(fp['cell'])})")


if __name__ == "__main__":
    main()
