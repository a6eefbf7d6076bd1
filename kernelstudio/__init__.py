"""kernelstudio: design fused Cube+Vector operators for Ascend NPUs.

    import kernelstudio as ks
    x = ks.placeholder((64, 256), "float16", name="x")
    ...
    s = ks.create_schedule(out); prog = ks.lower(s, target="ascend910b2")
    ks.run_tiled(prog, ks.random_inputs(out))
"""

from __future__ import annotations

from . import ascendc, hw, multi, ops, twin
from .codegen import ANALYSES, codegen, export_project
from .core import errors
from .core.config import VERSION
from .core.errors import *  # noqa: F403
from .core.formats import from_nz, to_nz
from .dsl import (
    Tensor,
    abs,
    add,
    broadcast_to,
    cast,
    concat,
    conv2d,
    div,
    erf,
    exp,
    gather,
    gelu,
    grouped_matmul,
    layer_norm,
    leaky_relu,
    log,
    matmul,
    maximum,
    minimum,
    moe_finalize_routing,
    moe_gating_topk,
    moe_gating_topk_softmax,
    mul,
    neg,
    placeholder,
    reciprocal,
    reduce_max,
    reduce_mean,
    reduce_sum,
    relu,
    reshape,
    rms_norm,
    rope,
    rsqrt,
    scatter,
    sigmoid,
    silu,
    softmax,
    split,
    sqrt,
    square,
    sub,
    tanh,
    topk,
    transpose,
    where,
)
from .dsl.routing import argsort, moe_init_routing, sort
from .hw.whatif import WhatIfError, what_if
from .interp import run_tiled
from .ir import format_graph, random_inputs, to_dot
from .lower.pipeline import PASSES
from .plan.advise import Advice, AdviceError, advise
from .plan.build import Design, build
from .plan.compare import PlanReport, compare_plans
from .plan.create import create_schedule
from .plan.debug import debug
from .plan.depth import lower
from .plan.grouped_load import GroupedLoad, grouped_load
from .schedule.knobs import knob, knob_values
from .schedule.rounding import evaluate
from .schedule.schedule import Directive, Schedule
from .sim import SimResult, simulate
from .tileir.printer import format_program
from .tune import Bucket, DesignDBError, DynamicKernel, TuneError, TuneResult, designs, save_design, tune
from .tune.greedy import GreedyResult, advise_greedy
from .tune.whatif import DEFAULT_TARGETS as _COMPARE_TARGETS
from .tune.whatif import TargetComparison, what_if_sweep

__all__ = [
    *errors.__all__,
    "hw", "multi", "ops", "Tensor", "placeholder",
    "add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal",
    "square", "erf", "tanh", "sigmoid", "relu", "leaky_relu", "gelu", "silu", "cast", "where",
    "reduce_sum", "reduce_mean", "reduce_max", "softmax", "layer_norm", "rms_norm",
    "reshape", "transpose", "broadcast_to", "split", "concat", "rope", "conv2d", "matmul", "topk", "gather", "scatter",
    "grouped_matmul", "grouped_load", "GroupedLoad",
    "argsort", "sort", "moe_init_routing",
    "moe_gating_topk", "moe_gating_topk_softmax", "moe_finalize_routing",
    "evaluate", "random_inputs", "format_graph", "to_dot", "to_nz", "from_nz",
    "create_schedule", "Schedule", "Directive", "knob", "knob_values",
    "lower", "PASSES", "ANALYSES", "format_program", "run_tiled", "debug",
    "simulate", "SimResult", "codegen", "export_project", "twin", "ascendc", "build", "Design",
    "compare_plans", "PlanReport",
    "tune", "DynamicKernel", "Bucket", "TuneResult", "TuneError", "designs", "save_design", "DesignDBError",
    "advise", "Advice", "AdviceError", "advise_greedy", "GreedyResult",
    "what_if", "WhatIfError", "compare_targets", "what_if_sweep",
]
__version__ = VERSION


def compare_targets(design: object, targets: tuple = _COMPARE_TARGETS, **kwargs: object) -> TargetComparison:
    """One design on several chips: `rows` (time, TFLOPS, GB/s, bound, efficiency, or why not), `table()` and
    `figure` (the timelines on one time axis); see kernelstudio.notebook.render.compare.compare_targets."""
    from .notebook.render.compare import compare_targets as _compare  # plotly is imported only when called

    return _compare(design, targets, **kwargs)


def load_ipython_extension(ipython) -> None:  # noqa: ANN001 - IPython's InteractiveShell, imported lazily
    """`%load_ext kernelstudio`: registers the `%%ascend_kernel` magic (the Studio loads on first use)."""
    from .notebook import panel
    from .notebook.magic import load

    load(ipython)
    panel.install(ipython)
