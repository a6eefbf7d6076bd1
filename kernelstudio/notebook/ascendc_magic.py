"""`%%ascend_c NAME [--kernel K] [--block-dim N] [--target T] [--args EXPR] [--tiling EXPR] [--reference EXPR]
[--files PATH,...]`: compile the cell's Ascend C on the CPU twin, run it, and show its Studio.

The cell body is the kernel source (`NAME.cpp`); `--files` adds headers or other sources from disk (a tiling
header written with `%%writefile`, say). `--args`, `--tiling` and `--reference` are Python expressions read in
the notebook's namespace: the entry's arguments in order (input arrays and `ks.ascendc.out(shape, dtype)`), the
tiling struct's fields as a dict, and a reference function of the inputs (or the expected arrays). The run
(`ks.ascendc.load`'s AscendCKernel) is stored in the notebook under NAME; the Studio shows its simulated
timeline with the idle causes, the sync checker's findings and the source with those lines marked.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.config import DEFAULT_TARGET
from ..core.errors import KernelStudioError
from .usage import MagicUsageError, check_identifier

__all__ = ["AscendCArgs", "AscendCCellError", "parse_ascend_c_args", "run_ascend_c", "sources_of"]

USAGE = ("%%ascend_c NAME [--kernel K] [--block-dim N] [--target T] [--args EXPR] [--tiling EXPR] "
         "[--reference EXPR] [--files PATH,...]")
_VALUED = {"--kernel": "kernel", "--block-dim": "block_dim", "--target": "target", "--args": "args",
           "--tiling": "tiling", "--reference": "reference", "--files": "files"}


class AscendCCellError(KernelStudioError):
    """The cell's kernel did not compile, run or match its reference: the message is the one line that says why."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[0;31mAscendCCellError\x1b[0m: {self}"]


@dataclass(frozen=True)
class AscendCArgs:
    name: str
    kernel: str | None = None
    block_dim: int = 1
    target: str = DEFAULT_TARGET
    args: str = ""  # Python expressions, comma separated, read in the notebook's namespace
    tiling: str = ""
    reference: str = ""
    files: tuple[str, ...] = field(default=())


def parse_ascend_c_args(line: str) -> AscendCArgs:
    """NAME and options of the magic line; a bad line raises `MagicUsageError` naming the option and the usage."""
    if not isinstance(line, str):
        raise MagicUsageError(f"the magic line must be text, got {type(line).__name__}; usage: {USAGE}")
    try:
        toks = shlex.split(line)
    except ValueError as e:
        raise MagicUsageError(f"cannot read the magic line {line!r} ({e}); put an expression with spaces in "
                              f"quotes; usage: {USAGE}") from None
    name: str | None = None
    got: dict[str, str] = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        opt, eq, value = t.partition("=")
        if opt in _VALUED:
            if not eq:
                if i + 1 >= len(toks):
                    raise MagicUsageError(f"{opt} needs a value; usage: {USAGE}")
                i += 1
                value = toks[i]
            got[_VALUED[opt]] = value
        elif t.startswith("-"):
            raise MagicUsageError(f"unknown option {t!r}; usage: {USAGE}")
        elif name is None:
            name = t
        else:
            raise MagicUsageError(f"one kernel name expected, got {name!r} and {t!r}; usage: {USAGE}")
        i += 1
    if name is None:
        raise MagicUsageError(f"the kernel needs a name (its source becomes NAME.cpp); usage: {USAGE}")
    check_identifier(name, "kernel", "becomes a variable and the source file's name", "add_custom")
    block_dim = got.pop("block_dim", "1")
    if not block_dim.isdigit() or not 1 <= int(block_dim) <= 4096:
        raise MagicUsageError(f"--block-dim takes the number of cores to launch on, a whole number from 1, got "
                              f"{block_dim!r}; e.g. --block-dim 8")
    from ..hw import names

    target = got.pop("target", DEFAULT_TARGET)
    if target not in names():
        raise MagicUsageError(f"unknown target {target!r}; choose one of {', '.join(names())}")
    files = tuple(f for f in got.pop("files", "").split(",") if f.strip())
    return AscendCArgs(name, block_dim=int(block_dim), target=target, files=tuple(f.strip() for f in files), **got)


def _eval(text: str, what: str, ns: dict[str, Any]) -> Any:
    try:
        return eval(compile(text, f"<{what}>", "eval"), ns)  # the user's own expression, in their namespace
    except Exception as e:  # any error in the user's expression is reported as a usage error naming it
        raise MagicUsageError(f"{what} {text!r}: {type(e).__name__}: {e}") from None


def sources_of(args: AscendCArgs, cell: str) -> dict[str, str]:
    """The files the twin compiles: the cell as NAME.cpp and each --files path read from disk."""
    files = {f"{args.name}.cpp": cell}
    for f in args.files:
        p = Path(f)
        try:
            files[p.name] = p.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise MagicUsageError(f"--files {f!r}: cannot read it ({e}); give paths relative to the notebook's "
                                  "folder, comma separated") from None
    return files


def run_ascend_c(args: AscendCArgs, cell: str, ns: dict[str, Any]) -> Any:
    """Compile and run the cell on the twin (`ks.ascendc.load`) with the magic's options read in `ns`."""
    from ..ascendc import load

    call_args = _eval(f"({args.args},)", "--args", ns) if args.args.strip() else ()
    tiling = _eval(args.tiling, "--tiling", ns) if args.tiling.strip() else None
    reference = _eval(args.reference, "--reference", ns) if args.reference.strip() else None
    return load(sources_of(args, cell), kernel=args.kernel, args=list(call_args), tiling=tiling,
                block_dim=args.block_dim, target=args.target, reference=reference)
