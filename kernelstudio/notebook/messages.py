"""The messages between the kernel and the JupyterLab "Ascend C" side panel.

Mirrored by `labextension/src/messages.ts`: change both together and bump `VERSION`. The kernel pushes
a `CodeMessage` after every rebuild (and a `WithdrawMessage` for a `--no-panel` re-run); the front end
sends a `SyncRequest` after every (re)connection and the kernel replays its latest messages. A setting that
does not build re-sends the last good code with `error` set: the panel marks it "last valid setting".
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from ..codegen.naming import op_names
from ..core.errors import KernelStudioError

if TYPE_CHECKING:
    from ..plan.build import Design

__all__ = [
    "VERSION", "PUSH_TARGET", "SYNC_TARGET", "MAX_MESSAGE_CHARS", "MAX_FILES", "MAX_NAME_CHARS",
    "MAX_ERROR_CHARS", "CodeMessage", "WithdrawMessage", "SyncRequest", "PanelMessageError",
    "message_from_design", "withdraw_message", "why_invalid", "check_message", "is_sync_request",
    "error_line",
]

VERSION = 2                            # 2: CodeMessage.error
PUSH_TARGET = "kernelstudio.codegen"   # registered by the front end; the kernel opens comms to it
SYNC_TARGET = "kernelstudio.sync"      # registered by the kernel; the front end asks it for a replay
MAX_MESSAGE_CHARS = 2_000_000          # JSON characters; larger messages are never sent or shown
MAX_FILES = 512                        # about 170 kernels of 3 files; MAX_MESSAGE_CHARS is the real guard
MAX_NAME_CHARS = 200
MAX_ERROR_CHARS = 300                  # the first line of the error, cut to this


class CodeMessage(TypedDict):
    """The generated code of one design after one rebuild."""

    version: int
    kind: Literal["code"]
    design: str              # the %%ascend_kernel NAME
    cell: str                # the notebook cell id, "" when unknown
    seq: int                 # grows with every message this kernel sends
    target: str              # hardware profile name
    kernels: list[str]       # operators in launch order, as their files spell them: op_kernel/<k>.cpp
    time_us: float           # predicted time of the fused program
    knobs: dict[str, Any]    # knob name -> value (str, int, float, bool or None)
    files: dict[str, str]    # relative path -> text: op_kernel/<k>.cpp, op_host/<k>_tiling.h, ...
    error: str               # "" when the code is of the Studio's current setting; else the first line of
                             # the error that keeps the Studio at this, its last valid setting


class WithdrawMessage(TypedDict):
    """Drop a design from the panel."""

    version: int
    kind: Literal["withdraw"]
    design: str
    seq: int


class SyncRequest(TypedDict):
    """From the front end: replay the latest message of every design."""

    version: int
    kind: Literal["sync"]


class PanelMessageError(KernelStudioError, ValueError):
    """A message for the side panel that is malformed or too large to send."""


def _is_name(x: object) -> bool:
    return isinstance(x, str) and 0 < len(x) <= MAX_NAME_CHARS


def _is_scalar(x: object) -> bool:
    if isinstance(x, float):
        return math.isfinite(x)
    return x is None or isinstance(x, (str, bool, int))


def _knob_value(value: Any) -> Any:
    """Knob values as JSON scalars (tuples and other objects become their text)."""
    if _is_scalar(value):
        return value
    if hasattr(value, "item"):  # a NumPy scalar
        return _knob_value(value.item())
    return str(value)


def _unserialisable(data: dict, e: BaseException) -> str:
    """Which field of `data` JSON refuses, and why (a NaN, an object, a circular or too deep a nesting)."""
    why = ("nested too deep" if isinstance(e, RecursionError) else
           "a circular reference" if "ircular" in str(e) else
           "NaN or infinity" if "float" in str(e) and "JSON" in str(e) else str(e))
    for key, value in data.items():
        try:
            json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError, RecursionError):
            return f"field {str(key)[:80]!r}: {why}"
    return why


def why_invalid(data: object) -> str | None:
    """Why `data` is not a message the panel accepts, or None when it is one (same rules as the .ts)."""
    if not isinstance(data, dict):
        return f"not a mapping but {type(data).__name__}"
    try:
        size = len(json.dumps(data, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError, RecursionError) as e:
        return f"not JSON-serialisable ({_unserialisable(data, e)})"
    if size > MAX_MESSAGE_CHARS:
        return f"{size:,} characters, more than the {MAX_MESSAGE_CHARS:,} allowed"
    if data.get("version") != VERSION:
        return f"version {data.get('version')!r}, expected {VERSION}"
    if not _is_name(data.get("design")):
        d = data.get("design")
        if isinstance(d, str) and d:
            return f"design is not a non-empty string of at most {MAX_NAME_CHARS} characters ({len(d)})"
        return "design is not a non-empty string"
    seq = data.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        return "seq is not a non-negative integer"
    kind = data.get("kind")
    if kind == "withdraw":
        return None
    if kind != "code":
        return f"unknown kind {kind!r}"
    if not isinstance(data.get("cell"), str) or not _is_name(data.get("target")):
        return "cell or target is not a string"
    kernels = data.get("kernels")
    if not isinstance(kernels, list) or not kernels or not all(_is_name(k) for k in kernels):
        return "kernels is not a list of names"
    t = data.get("time_us")
    if not isinstance(t, (int, float)) or isinstance(t, bool) or not math.isfinite(t) or t < 0:
        return "time_us is not a non-negative number"
    knobs = data.get("knobs")
    if not isinstance(knobs, dict) or not all(isinstance(k, str) and _is_scalar(v) for k, v in knobs.items()):
        return "knobs is not a mapping of names to plain values"
    files = data.get("files")
    if not isinstance(files, dict):
        return "files is not a mapping"
    if not 0 < len(files) <= MAX_FILES:
        return f"{len(files)} files (expected 1 to {MAX_FILES})"
    for path, text in files.items():
        if not _is_name(path) or not isinstance(text, str):
            what = (f"holds {type(text).__name__}, not text" if _is_name(path) else
                    f"has a path that is not a string of 1 to {MAX_NAME_CHARS} characters")
            return f"file {str(path)[:80]!r} is not path -> text (it {what})"
    error = data.get("error")
    if not isinstance(error, str) or len(error) > MAX_ERROR_CHARS or "\n" in error:
        return f"error is not one line of at most {MAX_ERROR_CHARS} characters"
    return None


def check_message(data: object) -> CodeMessage | WithdrawMessage:
    """`data` if it is a valid panel message, else PanelMessageError naming what is wrong."""
    why = why_invalid(data)
    if why is not None:
        design = data.get("design") if isinstance(data, dict) else None
        raise PanelMessageError(f"side-panel message for design {design!r} is invalid: {why}; "
                                "build it with message_from_design(...) (the Studio's own Ascend C tab "
                                "still shows the code)")
    return data  # type: ignore[return-value]


def is_sync_request(data: object) -> bool:
    """True for a well-formed SyncRequest; anything else is ignored by the kernel."""
    return (isinstance(data, dict) and data.get("version") == VERSION and data.get("kind") == "sync"
            and set(data) <= {"version", "kind"})


def error_line(message: str | None) -> str:
    """The first non-empty line of an error message, cut to MAX_ERROR_CHARS ("" for no error)."""
    line = next((ln.strip() for ln in (message or "").splitlines() if ln.strip()), "")
    return line if len(line) <= MAX_ERROR_CHARS else line[:MAX_ERROR_CHARS - 1] + "\u2026"


def message_from_design(design_name: str, d: Design, knobs: dict[str, Any], cell: str = "",
                        seq: int = 0, error: str | None = None) -> CodeMessage:
    """The CodeMessage of a built design: its generated files, kernels, target, time and knob values.

    `seq` is normally left at 0: `panel.publish` numbers the messages it sends. `error` is the Studio's
    error when a newer setting failed to build (its first line is sent) and `d` is the last good design."""
    return CodeMessage(
        version=VERSION,
        kind="code",
        design=design_name,
        cell=cell,
        seq=seq,
        target=str(d.program.target),
        kernels=[n.snake for n in op_names(d.program).values()],
        time_us=float(d.sim.time_us),
        knobs={str(k): _knob_value(v) for k, v in knobs.items()},
        files=dict(d.code.files),
        error=error_line(error),
    )


def withdraw_message(design_name: str, seq: int = 0) -> WithdrawMessage:
    """The message that drops `design_name` from the panel."""
    return WithdrawMessage(version=VERSION, kind="withdraw", design=design_name, seq=seq)
