"""Simulator: per-core pipe timelines from a TileIR program and a hardware profile (DESIGN.md §5).

    res = simulate(prog)             # SimResult: time_us, events, metrics, traffic
    t = simulate_time(prog)          # res.time_us alone (the same float), faster: a search's comparisons
    res.to_chrome_trace("t.json")    # open in Perfetto
    print(report_table(fused, unfused, prog_fused, prog_unfused))

Stage 7, one of the three readers of the TileIR. It may import core/, hw/ and tileir/, never interp/ or
codegen/."""

from __future__ import annotations

from .errors import SimulationError
from .report import report_table
from .results import Event, EventTable, SimResult
from .simulate import simulate, simulate_time

__all__ = ["simulate", "simulate_time", "SimResult", "Event", "EventTable", "SimulationError", "report_table"]
