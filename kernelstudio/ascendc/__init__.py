"""Your own Ascend C on the CPU twin: `load` compiles and runs a hand-written kernel (a CANN sample, your
operator) and checks its outputs; `check_sync` reads the twin's call log for races, lost signals, hangs,
deadlocks, redundant barriers and queue misuse, with the file and line of each call; `k.sim` is the run's
call log simulated call by call by the simulator that times designed kernels (timeline.py).

    k = ks.ascendc.load("add_custom.cpp", kernel="add_custom", args=[x, y, ks.ascendc.out(x.shape, "float16")],
                        tiling={"totalLength": x.size, "blockLength": x.size // 8, "tileLength": 512},
                        block_dim=8, reference=lambda x, y: x + y)
    k.outputs["z"], k.log, k.check_sync(), k.sim.time_us
    ks.ascendc.compare_measured(k, "OPPROF_.../").table()   # msprof's measurement of it next to k.sim

Stage 10 (a sibling of multi/, which it does not import), above twin/ (whose runner and call log it
uses) and below tune/. It may import core/, hw/, tileir/ and sim/ (the program a trace becomes and the
simulator that runs it), codegen/ (the CodeBundle it builds) and twin/.
"""

from __future__ import annotations

from .load import TOLERANCES, AscendCKernel, In, MismatchError, Out, inp, load, out
from .measured import MeasuredComparison, PipeComparison, compare_measured
from .msprof import (
    MeasuredTrace,
    MsprofFormatError,
    MsprofRun,
    OpBasicInfo,
    PipeUtilization,
    SubCoreTimes,
    TraceSpan,
    read_msprof,
    read_op_basic_info,
    read_pipe_utilization,
    read_trace,
)
from .sync import KINDS, CallSite, Finding, check_sync, format_findings
from .timeline import TraceError, simulate_log

__all__ = ["load", "out", "inp", "AscendCKernel", "Out", "In", "MismatchError", "TOLERANCES",
           "check_sync", "format_findings", "Finding", "CallSite", "KINDS", "simulate_log", "TraceError",
           "compare_measured", "MeasuredComparison", "PipeComparison", "read_msprof", "read_op_basic_info",
           "read_pipe_utilization", "read_trace", "MsprofRun", "OpBasicInfo", "PipeUtilization", "SubCoreTimes",
           "MeasuredTrace", "TraceSpan", "MsprofFormatError"]
