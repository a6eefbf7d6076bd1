"""Run the body of an `%%ascend_kernel` cell: DSL names preloaded, knobs recorded, output and schedule found.

The body is plain Python. It defines the output (`out`, or the cell's last expression; a tuple for
several outputs, or a multi-device design made with `ks.multi`) and optionally a schedule `s`. Every
`knob(...)` it calls is recorded, so a Studio learns its controls from one run. Errors come back as
`CellError`: kind, message and the cell line, never a 40-frame traceback.
"""

from __future__ import annotations

import ast
import functools
import operator
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import KernelStudioError
from ..multi.design import Mc2Design
from ..schedule.knobs import Knob, knob_values
from ..schedule.schedule import Schedule

__all__ = ["CellError", "CellResult", "dsl_namespace", "run_cell"]


class CellError(KernelStudioError):
    """The cell body raised (or does not parse): `kind`, the original `cause`, the cell `line`."""

    def __init__(self, message: str, *, kind: str, cause: BaseException | None, lineno: int | None,
                 line: str) -> None:
        super().__init__(message)
        self.kind, self.cause, self.lineno, self.line = kind, cause, lineno, line

    def _render_traceback_(self) -> list[str]:
        """What IPython prints instead of a traceback: one line, the kind in red."""
        return [f"\x1b[0;31m{self.kind}\x1b[0m{str(self)[len(self.kind):]}"]


@dataclass(frozen=True)
class CellResult:
    """What one run of a cell body produced."""

    outputs: tuple[Any, ...]  # output tensors (or graph nodes when the body returned a schedule)
    schedule: Schedule | None  # the body's schedule `s`, if it made one
    knobs: dict[str, Knob]  # every knob the body declared, in declaration order
    values: dict[str, Any]  # the value each knob had in this run
    multi: Any = None  # a multi-device design (ks.multi) when the cell's output is one; `outputs` is then empty


def dsl_namespace() -> dict[str, Any]:
    """The names a cell body sees without importing: every public kernelstudio name, and `ks`.

    The public API (kernelstudio/__init__.py) composes this stage, so it is read from `sys.modules`, where
    Python put it before loading any module under it, rather than imported back from below."""
    ks = sys.modules[__name__.split(".")[0]]
    names = tuple(ks.__all__)
    values = operator.attrgetter(*names)(ks) if len(names) > 1 else tuple(getattr(ks, n) for n in names)
    ns = dict(zip(names, values, strict=True))  # every name's current value, read in one C call
    ns["ks"] = ks
    return ns


@functools.lru_cache(maxsize=64)
def _compile(source: str, filename: str) -> tuple[Any, Any]:
    """(code of the body, code of its last expression or None), compiled once per source text."""
    tree = ast.parse(source, filename, "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        last = compile(last, filename, "eval")
    return compile(tree, filename, "exec"), last


def run_cell(source: str, *, name: str, user_ns: Mapping[str, Any] | None = None,
             values: Mapping[str, Any] | None = None, strict: bool = True) -> CellResult:
    """Run `source` with the DSL preloaded over `user_ns` (DSL names win), knobs set to `values`.

    `strict=False` tolerates values for knobs this run does not reach (a knob inside an `if`)."""
    if not isinstance(source, str):
        raise CellError(f"design {name}: the cell body must be text (Python source), got {type(source).__name__}",
                        kind="TypeError", cause=None, lineno=None, line="")
    filename = f"<ascend_kernel {name}>"
    # the notebook's variables (an earlier cell's `out` or `s` would be taken for this cell's)
    ns: dict[str, Any] = {k: v for k, v in (user_ns or {}).items()
                          if not k.startswith("_") and k not in ("out", "s")}
    ns.update(dsl_namespace())
    try:
        body, last = _compile(source, filename)
    except SyntaxError as e:
        raise _cell_error(e, source, filename, e.lineno) from None
    with knob_values(values, strict=strict) as ctx:
        try:
            exec(body, ns)
            value = eval(last, ns) if last is not None else None
        except (Exception, SystemExit) as e:  # noqa: BLE001 - every error of user code becomes a short CellError
            # (sys.exit() in a cell would otherwise stop the Studio's rebuild, or the kernel)
            raise _cell_error(e, source, filename, _cell_lineno(e, filename)) from None
    known = {k: v for k, v in ctx.values.items() if k in ctx.seen}
    used = {k: known.get(k, kn.default) for k, kn in ctx.seen.items()}
    out = ns.get("out", value if not isinstance(value, Schedule) else None)
    if isinstance(out, Mc2Design):  # a multi-device design: the Studio shows its devices, not one chip
        return CellResult((), None, dict(ctx.seen), used, multi=out)
    sched = ns.get("s")
    if isinstance(value, Schedule):
        sched = value
    if sched is not None and not isinstance(sched, Schedule):
        sched = None  # `s` is some other variable of the user's
    if out is None and sched is not None:
        outputs = tuple(sched.graph.outputs)
    else:
        outputs = _as_outputs(out, name)
    return CellResult(outputs, sched, dict(ctx.seen), used)


def _as_outputs(out: Any, name: str) -> tuple[Any, ...]:
    from ..dsl.tensor import Tensor

    items = out if isinstance(out, (tuple, list)) else (out,)
    if out is None or not items or not all(isinstance(t, Tensor) for t in items):
        got = "nothing" if out is None else type(out).__name__
        raise CellError(
            f"cell {name} defines no output tensor (got {got}): assign the result to `out` "
            "(e.g. out = gelu(y + b)) or end the cell with it", kind="NoOutput", cause=None, lineno=None,
            line="")
    return tuple(items)


def _cell_lineno(e: BaseException, filename: str) -> int | None:
    """Line of the innermost frame that ran cell code (the user's line, not ours)."""
    lineno = None
    for fs in traceback.extract_tb(e.__traceback__):
        if fs.filename == filename:
            lineno = fs.lineno
    return lineno


def _cell_error(e: BaseException, source: str, filename: str, lineno: int | None) -> CellError:
    lines = source.splitlines()
    line = lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""
    kind = type(e).__name__
    msg = e.msg if isinstance(e, SyntaxError) else str(e)
    where = f" (cell line {lineno}: {line})" if lineno else ""
    return CellError(f"{kind}: {msg}{where}", kind=kind, cause=e, lineno=lineno, line=line)
