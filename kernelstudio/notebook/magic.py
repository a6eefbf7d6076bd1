"""`%%ascend_kernel NAME [--target T] [--no-compare] [--no-panel]`: run a design cell and show its Studio.
(`%%ascend_c NAME ...`, a user's own Ascend C run on the twin, is registered here too: ascendc_magic.py.)

The cell body is Python with every DSL name preloaded; see `kernelstudio.notebook.cell`. The built
design (graph, schedule, program, simulation, code, unfused comparison) is stored in the notebook
namespace under NAME and follows every knob move. A cell whose output is a ks.multi design gets the
multi-device Studio (`multi_studio.py`) and stores that design. Errors print as one short message.
"""

from __future__ import annotations

import shlex
import types
from dataclasses import dataclass
from typing import Any

from IPython.core.magic import Magics, cell_magic, magics_class

from ..core.config import DEFAULT_TARGET
from ..core.errors import KernelStudioError
from .cell import CellError
from .session import StudioSession
from .usage import MagicUsageError, check_identifier

__all__ = ["AscendKernelMagics", "MagicArgs", "load", "parse_args"]

USAGE = "%%ascend_kernel NAME [--target T] [--no-compare] [--no-panel]"


@dataclass(frozen=True)
class MagicArgs:
    name: str
    target: str = DEFAULT_TARGET
    compare: bool = True
    panel: bool = True


def parse_args(line: str) -> MagicArgs:
    """NAME and flags of the magic line; a bad line raises `MagicUsageError` with the usage."""
    if not isinstance(line, str):
        raise MagicUsageError(f"the magic line must be text, got {type(line).__name__}; usage: {USAGE}")
    try:
        toks = shlex.split(line)
    except ValueError as e:
        raise MagicUsageError(f"cannot read the magic line {line!r} ({e}); usage: {USAGE}") from None
    name = None
    target, compare, panel = DEFAULT_TARGET, True, True
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "--target" or t.startswith("--target="):
            if "=" in t:
                target = t.split("=", 1)[1]
            elif i + 1 < len(toks):
                i += 1
                target = toks[i]
            else:
                raise MagicUsageError(f"--target needs a value; usage: {USAGE}")
        elif t == "--no-compare":
            compare = False
        elif t == "--no-panel":
            panel = False
        elif t.startswith("-"):
            raise MagicUsageError(f"unknown option {t!r}; usage: {USAGE}")
        elif name is None:
            name = t
        else:
            raise MagicUsageError(f"one design name expected, got {name!r} and {t!r}; usage: {USAGE}")
        i += 1
    if name is None:
        raise MagicUsageError(f"the design needs a name; usage: {USAGE}")
    check_identifier(name, "design", "becomes a variable and names the generated files", "mla_prolog_lite")
    from ..hw import names

    if target not in names():
        raise MagicUsageError(f"unknown target {target!r}; choose one of {', '.join(names())}")
    return MagicArgs(name, target, compare, panel)


def _check_not_shadowing(name: str, ns: dict[str, Any]) -> None:
    """The design is stored in the notebook under its name: a name that would replace a module (`ks`, `np`) or
    a name the cell body sees preloaded (`matmul`, `knob`, ...) is refused, since both would be lost."""
    from .cell import dsl_namespace

    if isinstance(ns.get(name), types.ModuleType):
        raise MagicUsageError(f"design name {name!r} is the notebook's module {ns[name].__name__}; storing the "
                              f"design under it would replace the module: name the design otherwise, e.g. "
                              f"{name}_design")
    if name in dsl_namespace():
        raise MagicUsageError(f"design name {name!r} is a kernelstudio name the cell preloads; storing the design "
                              f"under it would hide it: name the design otherwise, e.g. my_{name}")


@magics_class
class AscendKernelMagics(Magics):
    """Holds the live Studio of every design the notebook defined."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.studios: dict[str, Any] = {}

    @cell_magic
    def ascend_kernel(self, line: str, cell: str) -> None:
        args = parse_args(line)
        ns = self.shell.user_ns
        _check_not_shadowing(args.name, ns)
        session = StudioSession(args.name, cell, target=args.target, compare=args.compare, user_ns=ns)
        try:
            design = session.rebuild()
        except CellError:
            raise
        except KernelStudioError as e:
            raise CellError(f"{type(e).__name__}: {e}", kind=type(e).__name__, cause=e, lineno=None,
                            line="") from None
        ns[args.name] = design
        if session.multi:  # a ks.multi design: the per-device Studio
            from .multi_studio import MultiStudio as Studio
        else:
            from .studio import Studio
        if type(self.shell).__name__ == "TerminalInteractiveShell":
            print(Studio(session).summary())
            return
        from IPython.display import display

        from . import panel

        listeners = [lambda st: ns.__setitem__(args.name, st.session.design)]
        if args.panel and not session.multi:  # the side panel follows this Studio; --no-panel keeps it out
            listeners.append(panel.studio_listener(args.name, panel.cell_id(self.shell)))
        else:  # (a multi-device design has no generated Ascend C yet: the panel drops an older one of this name)
            panel.withdraw(args.name)
        studio = Studio(session, listeners=listeners)
        self.studios[args.name] = studio
        display(studio)


    @cell_magic
    def ascend_c(self, line: str, cell: str) -> None:
        """Compile and run the cell's Ascend C on the twin and show its timeline, sync findings and source."""
        from .ascendc_magic import AscendCCellError, parse_ascend_c_args, run_ascend_c, sources_of
        from .ascendc_view import AscendCStudio

        args = parse_ascend_c_args(line)
        ns = self.shell.user_ns
        _check_not_shadowing(args.name, ns)
        try:
            k = run_ascend_c(args, cell, ns)
            studio = AscendCStudio(k, sources=sources_of(args, cell), checked=bool(args.reference.strip()),
                                   title=args.name)
        except MagicUsageError:
            raise
        except KernelStudioError as e:
            raise AscendCCellError(f"{type(e).__name__}: {e}") from None
        ns[args.name] = k
        self.studios[args.name] = studio
        if type(self.shell).__name__ == "TerminalInteractiveShell":
            print(studio.summary())
            return
        from IPython.display import display

        display(studio)


def load(ipython: Any) -> None:
    """Register the magic in `ipython`."""
    ipython.register_magics(AscendKernelMagics)
