"""Evaluate one configuration: run the build function with its knob values, lower, simulate.

This is what runs on a worker (a process of the local pool or a Dask worker): it takes the build
function as cloudpickle bytes (or the function itself in-process) and returns a small `Outcome`:
the predicted time, or the kind and message of the `KernelStudioError` that made the configuration
illegal. Any other exception is a bug in the build function: it stops the sweep as a TuneError naming it.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config import VERSION
from ..core.errors import CapacityError, KernelStudioError
from ..ir.graph import as_nodes
from ..plan.choose import planning_target
from ..plan.create import create_schedule
from ..schedule.knobs import Knob, knob_values
from ..schedule.schedule import Schedule
from .attention_knobs import apply_attention_knobs, attention_knobs
from .errors import TuneError

__all__ = ["Outcome", "Discovery", "discover", "evaluate_config", "evaluate_payload", "error_kind",
           "error_info", "model_fingerprint"]


@dataclass(frozen=True)
class Outcome:
    """The result of one configuration: `time_us`, or `kind` + `error` (+ `info` numbers) when illegal."""

    time_us: float | None
    kind: str | None = None  # e.g. "CapacityError: L0B"
    error: str | None = None  # the error's message
    info: dict[str, Any] = field(default_factory=dict)  # tier/need/have of a CapacityError
    seconds: float = 0.0  # wall time of the evaluation on its worker

    @property
    def ok(self) -> bool:
        return self.time_us is not None


_NUM = re.compile(r"(?<![A-Za-z_\d])(?:\d{1,3}(?:,\d{3})+|\d+)")  # 65,536 or 4; not the 1 of l1_k_steps


def _cause(e: BaseException) -> BaseException:
    """The error a Studio cell raised, when `e` wraps it (a CellError keeps it as `.cause`)."""
    cause = getattr(e, "cause", None)
    return cause if isinstance(cause, KernelStudioError) else e


def error_kind(e: BaseException) -> str:
    """A short grouping key for an illegal configuration: the class and the buffer, or the rule."""
    e = _cause(e)
    name = type(e).__name__
    tier = getattr(e, "tier", None)
    if isinstance(e, CapacityError) and tier:
        return f"{name}: {tier}"
    msg = str(e).splitlines()[0] if str(e) else ""
    m = re.match(r"(?:kernel|program) \w+: (.*)", msg)
    body = (m.group(1) if m else msg).split(";")[0]
    m2 = re.match(r"(\w+) needs", body)
    if isinstance(e, CapacityError) and m2:
        return f"{name}: {m2.group(1)}"
    body = _NUM.sub("N", body).strip()
    return f"{name}: {body[:80]}" if body else name


def error_info(e: BaseException) -> dict[str, Any]:
    """The numbers of a capacity overflow, when the error carries them."""
    e = _cause(e)
    info: dict[str, Any] = {}
    for a in ("kernel", "tier", "need", "have"):
        v = getattr(e, a, None)
        if isinstance(v, (str, int)):
            info[a] = v
    if "need" not in info:
        m = re.search(r"(\w+) needs ([\d,]+) B but \w+ has ([\d,]+) B", str(e))
        if m:
            info.update(tier=m.group(1), need=int(m.group(2).replace(",", "")),
                        have=int(m.group(3).replace(",", "")))
    return info


def _outputs(ret: Any, build_fn: Callable[[], Any]) -> tuple[Any, Schedule | None]:
    if isinstance(ret, Schedule):
        return ret.graph.outputs, ret
    try:
        nodes, _ = as_nodes(ret)
    except KernelStudioError:
        name = getattr(build_fn, "__name__", repr(build_fn))
        raise TuneError(f"tune: {name}() returned {type(ret).__name__}, not the output tensor(s) or a Schedule; "
                        "end it with `return out` (or `return s`, the schedule)") from None
    return nodes, None


def _multi_design(ret: Any, build_fn: Callable[[], Any], target: Any, allow: bool) -> Any:
    """`ret` when it is a multi-device design (ks.multi) on `target`'s chip, else None."""
    from ..multi.design import Mc2Design

    if not isinstance(ret, Mc2Design):
        return None
    name = getattr(build_fn, "__name__", repr(build_fn))
    if not allow:
        raise TuneError(f"{name}() returned a multi-device design ({ret.kind}); here only single-chip designs are "
                        "built: tune it with ks.tune and read result.best.design")
    chip = getattr(target, "name", target)
    if ret.cluster.target != str(chip).strip().lower():
        raise TuneError(f"tune: {name}() builds {ret.kind} on a cluster of {ret.cluster.target} but the tuner's target "
                        f"is {chip}; pass target={ret.cluster.target!r} to ks.tune")
    return ret


def run_build_fn(build_fn: Callable[[], Any], config: Mapping[str, Any], target: Any, *, allow_multi: bool = False,
                 ) -> tuple[Any, Schedule | None, dict[str, Knob]]:
    """(outputs, schedule, knobs met) of the build function at this configuration, planned for `target`; with
    `allow_multi`, a multi-device design (ks.multi) comes back as (design, None, knobs)."""
    with planning_target(target):
        with knob_values(dict(config), strict=False) as ctx:
            ret = build_fn()
        if _multi_design(ret, build_fn, target, allow_multi) is not None:
            return ret, None, dict(ctx.seen)
        outs, sched = _outputs(ret, build_fn)
        if sched is None:
            sched = create_schedule(list(outs), target=target)
        sched = apply_attention_knobs(sched, config)  # the fused attention kernels' knobs (tune/attention_knobs.py)
    return outs, sched, dict(ctx.seen)


def evaluate_config(build_fn: Callable[[], Any], config: Mapping[str, Any], target: Any) -> Outcome:
    """Predicted time of the design at `config` on `target`, or why it is illegal."""
    from ..plan.depth import lower
    from ..sim import simulate

    t0 = time.perf_counter()
    try:
        ret, sched, _ = run_build_fn(build_fn, config, target, allow_multi=True)
        t = ret.time_us if sched is None else simulate(lower(sched, target)).time_us  # ks.multi times itself
    except TuneError:
        raise
    except KernelStudioError as e:
        return Outcome(None, error_kind(e), str(e), error_info(e), time.perf_counter() - t0)
    return Outcome(float(t), seconds=time.perf_counter() - t0)


_FN_CACHE: dict[str, Callable[[], Any]] = {}


def evaluate_payload(payload: bytes, config: dict[str, Any], target: Any) -> Outcome:
    """`evaluate_config` on a worker: the build function arrives as cloudpickle bytes (unpickled once)."""
    digest = hashlib.sha256(payload).hexdigest()
    fn = _FN_CACHE.get(digest)
    if fn is None:
        import cloudpickle

        fn = cloudpickle.loads(payload)
        if len(_FN_CACHE) > 16:
            _FN_CACHE.clear()
        _FN_CACHE[digest] = fn
    return evaluate_config(fn, config, target)


@dataclass(frozen=True)
class Discovery:
    """What one run of the build function at its defaults tells: the knobs and the structure to key on."""

    knobs: tuple[Knob, ...]
    graph_text: str  # ks.format_graph of the outputs
    schedule_json: str  # the directives at the default knob values
    default_error: str | None  # the message if the default configuration's schedule is illegal


def _check_no_arguments(build_fn: Callable[..., Any], name: str) -> None:
    """The tuner calls the build function with no arguments: one that needs some is refused up front."""
    try:
        sig = inspect.signature(build_fn)
    except (TypeError, ValueError):  # a builtin or C callable: nothing to read, call it and see
        return
    need = [p.name for p in sig.parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if need:
        raise TuneError(f"tune: {name}({', '.join(need)}) needs {len(need)} argument(s), but the tuner calls it with "
                        "none; read each choice with ks.knob(name, default, choices) inside it (e.g. "
                        f"{need[0]} = ks.knob({need[0]!r}, 64, [32, 64, 128])), or pass "
                        "functools.partial(f, ...) for fixed ones")


def discover(build_fn: Callable[[], Any], target: Any) -> Discovery:
    """Run `build_fn` once inside `knob_values({})` to learn its knobs and graph."""
    from ..ir.printer import format_graph

    if not callable(build_fn):
        raise TuneError(f"tune: build_fn must be a function taking no arguments that returns the output tensor(s) "
                        f"or a Schedule, got {type(build_fn).__name__}; wrap the design in `def design(): ...`")
    name = getattr(build_fn, "__name__", repr(build_fn))
    _check_no_arguments(build_fn, name)
    err = None
    with planning_target(target):
        with knob_values({}) as ctx:
            try:
                ret = build_fn()
            except KernelStudioError:
                raise
            except Exception as e:  # a bug in the build function, as the workers report it
                raise TuneError(f"tune: {name}() raised {type(e).__name__}: {e} at its defaults; this is not a "
                                "KernelStudioError (an illegal schedule is pruned, other errors stop the sweep): fix "
                                "the build function") from e
        multi = _multi_design(ret, build_fn, target, True)
        if multi is None:
            outs, sched = _outputs(ret, build_fn)
            if sched is None:
                try:
                    sched = create_schedule(list(outs), target=target)
                except KernelStudioError as e:
                    err = str(e)
    knobs = tuple(ctx.seen.values())
    if multi is None and sched is not None and err is None:
        knobs += attention_knobs(sched, target)  # s1, s2, slots (and kv at decode) of each attention kernel
    if not knobs:
        raise TuneError(f"tune: {name}() declares no knobs, so there is nothing to search; declare each choice "
                        "with ks.knob(name, default, choices), e.g. s[out].split('m', ks.knob('tile_m', 16, "
                        "[16, 32, 64]))")
    if multi is not None:
        return Discovery(knobs, multi.describe(), multi.schedule_json(), None)
    return Discovery(knobs, format_graph(list(outs)), sched.to_json() if sched is not None else "", err)


@functools.lru_cache(maxsize=1)
def model_fingerprint() -> str:
    """A digest of the code and data that decide a predicted time (fusion, schedule, lowering, simulator,
    hardware profiles): cached results from another version of them are not reused."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(VERSION.encode())
    for sub in ("core", "hw", "ir", "dsl", "fusion", "schedule", "tileir", "lower", "sim", "plan", "multi"):
        for p in sorted((root / sub).rglob("*")):
            if p.is_file() and p.suffix in (".py", ".toml", ".json", ".csv"):
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]
