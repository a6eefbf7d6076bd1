"""The twin's API-call log: what a run of generated Ascend C executed, call by call, per core.

`ks.twin.run(code, inputs, log_calls=True)` returns `(outputs, log)`; `log` is a `CallLog`. Running a
twin binary by hand with `KS_TWIN_LOG=<path>` writes the same file, which `CallLog.read(path)` parses.

    log.counts(kernel="rms_norm", core="AIV", block=0)   # Counter of API names on that block's AIVs
    log.flags(kernel="rms_norm")                          # Counter of (SetFlag|WaitFlag, HardEvent name)
    log.sequence(kernel="rms_norm", core="AIV", block=0)  # the API names of one core, in program order

File format (tab-separated, one line each, `#` lines are comments):
  `L <kernel> <mode> <blockDim>` per ICPU_RUN_KF launch;
  `C <kernel> <block> <core> <GetBlockIdx> <api> <args> <site> <refs>` per call, `args` being `key=value`
  pairs split by spaces. `core` is AIC, AIV (AIV_MODE), AIV0 / AIV1 (the two AIVs of a MIX block) or host
  (calls outside a kernel, such as SetKernelMode, with kernel `-` and block -1). `site` is the `file:line`
  of the user's call (`-` when the API does not record one); `refs` what the call touched on chip, as
  `key=value` tokens (`w=` / `r=` a written / read operand `POSITION:byte_offset+bytes`, `q=` the queue by
  its first buffer `POSITION:byte_offset`, `slot=` the queue buffer, `to=` a TQueBind's destination, `gm=`
  the GM side of a copy as `<kernel parameter index>:<byte offset from that argument>+<bytes moved>`, or
  `?+<bytes>` outside every argument's GmAlloc buffer, `gmrows=` its strided rows as
  `<rows>x<row bytes>/<pitch bytes>`), `-` for none. Version 1 logs (`# ks_twin call log 1`)
  end at `args`; they parse with no site and no refs.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from ..core.errors import TwinError

__all__ = ["Call", "Launch", "CallLog", "CORE_KINDS", "FLAG_APIS"]

# What `core=` accepts: a core kind (AIV matches the AIV of an AIV_MODE launch and both AIVs of a MIX block).
CORE_KINDS: dict[str, frozenset[str]] = {
    "AIC": frozenset({"AIC"}),
    "AIV": frozenset({"AIV", "AIV0", "AIV1"}),
    "AIV0": frozenset({"AIV0"}),
    "AIV1": frozenset({"AIV1"}),
    "host": frozenset({"host"}),
}
# The intra-core pipe flag calls `CallLog.flags` counts by their HardEvent.
FLAG_APIS = ("SetFlag", "WaitFlag")


def _number(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


@dataclass(frozen=True)
class Call:
    """One executed API call: which launch, block and core issued it, the API name and its arguments
    (integers where the value is a number, else text, e.g. `{"event": "V_MTE3", "id": 0}`)."""

    kernel: str
    launch: int  # index of the ICPU_RUN_KF launch in the run (-1 for host calls before the first)
    block: int  # AI Core index (the block); -1 on the host
    core: str  # AIC, AIV, AIV0, AIV1 or host
    block_idx: int  # what GetBlockIdx() returns on that core
    api: str
    args: Mapping[str, int | str] = field(default_factory=dict)
    site: str | None = None  # `file:line` of the user's call, where the API records it
    refs: tuple[tuple[str, str], ...] = ()  # on-chip operands and queue buffers, e.g. ("w", "VECOUT:0+2048")

    @property
    def file(self) -> str | None:
        """The source file of the user's call (relative to the build directory), if recorded."""
        return None if self.site is None else self.site.rpartition(":")[0]

    @property
    def line(self) -> int | None:
        """The source line of the user's call, if recorded."""
        return None if self.site is None else int(self.site.rpartition(":")[2])

    @property
    def event(self) -> str | None:
        """The HardEvent of a SetFlag / WaitFlag / AllocEventID call, else None."""
        ev = self.args.get("event")
        return ev if isinstance(ev, str) else None


@dataclass(frozen=True)
class Launch:
    """One ICPU_RUN_KF: the kernel entry function, the KernelMode it ran in and its blockDim."""

    kernel: str
    mode: str
    block_dim: int


class CallLog:
    """Every API call of one twin run, with counting by API name and by pipe-flag event."""

    def __init__(self, calls: Iterable[Call], launches: Iterable[Launch] = ()):
        self.calls: tuple[Call, ...] = tuple(calls)
        self.launches: tuple[Launch, ...] = tuple(launches)

    # --- reading -------------------------------------------------------------------------------------
    @classmethod
    def parse(cls, text: str, *, source: str = "call log") -> CallLog:
        """A CallLog from the text the twin wrote; a malformed line is a TwinError naming it."""
        calls: list[Call] = []
        launches: list[Launch] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            try:
                if parts[0] == "L" and len(parts) == 4:
                    launches.append(Launch(_kernel(parts[1]), parts[2], int(parts[3])))
                    continue
                if parts[0] == "C" and len(parts) in (7, 9):
                    args = {key: _number(value) for key, value in _pairs(parts[6])}
                    site, refs = (_site(parts[7]), tuple(_pairs(parts[8]))) if len(parts) == 9 else (None, ())
                    calls.append(Call(_kernel(parts[1]), len(launches) - 1, int(parts[2]), parts[3], int(parts[4]),
                                      parts[5], MappingProxyType(args), site, refs))
                    continue
            except ValueError:
                pass
            raise TwinError(f"{source} line {lineno} is not a twin call-log line: {line[:120]!r}; the log is "
                            f"written by the twin headers (KS_TWIN_LOG); pass CallLog.read the file they wrote")
        return cls(calls, launches)

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> CallLog:
        """Parse the file a twin binary wrote with KS_TWIN_LOG=<path>."""
        p = Path(path)
        try:
            text = p.read_text()
        except OSError as e:
            raise TwinError(f"cannot read the twin call log {str(p)!r}: {e.strerror}; run the binary with "
                            f"KS_TWIN_LOG={p} (or ks.twin.run(..., log_calls=True))") from None
        return cls.parse(text, source=str(p))

    # --- queries -------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.calls)

    def __iter__(self) -> Iterator[Call]:
        return iter(self.calls)

    def __repr__(self) -> str:
        kernels = ", ".join(dict.fromkeys(launch.kernel for launch in self.launches))
        return f"CallLog({len(self.calls)} calls, {len(self.launches)} launches: {kernels})"

    @property
    def kernels(self) -> tuple[str, ...]:
        """Kernel entry names in launch order (each once)."""
        return tuple(dict.fromkeys(launch.kernel for launch in self.launches))

    def select(self, *, kernel: str | None = None, core: str | None = None, block: int | None = None,
               block_idx: int | None = None, api: str | None = None) -> list[Call]:
        """The calls matching every filter given, in log order (each core's calls in program order).

        `core` is a kind: AIC, AIV (every AIV), AIV0, AIV1 or host; `block` the AI Core index;
        `block_idx` what GetBlockIdx() returns (on a MIX block the AIVs have 2b and 2b + 1)."""
        if kernel is not None and kernel not in self.kernels and not any(c.kernel == kernel for c in self.calls):
            raise TwinError(f"the call log has no kernel {kernel!r}; it launched {list(self.kernels)}")
        cores = None
        if core is not None:
            if core not in CORE_KINDS:
                raise TwinError(f"core={core!r} is not a core kind; use one of {sorted(CORE_KINDS)}")
            cores = CORE_KINDS[core]
        return [c for c in self.calls
                if (kernel is None or c.kernel == kernel) and (cores is None or c.core in cores)
                and (block is None or c.block == block) and (block_idx is None or c.block_idx == block_idx)
                and (api is None or c.api == api)]

    def counts(self, *, kernel: str | None = None, core: str | None = None, block: int | None = None,
               block_idx: int | None = None) -> Counter[str]:
        """How many times each API ran, over the calls matching the filters (see `select`)."""
        return Counter(c.api for c in self.select(kernel=kernel, core=core, block=block, block_idx=block_idx))

    def flags(self, *, kernel: str | None = None, core: str | None = None, block: int | None = None,
              block_idx: int | None = None) -> Counter[tuple[str, str]]:
        """SetFlag / WaitFlag calls counted by (API, HardEvent name), e.g. `("SetFlag", "V_MTE3")`."""
        return Counter((c.api, c.event or "?")
                       for c in self.select(kernel=kernel, core=core, block=block, block_idx=block_idx)
                       if c.api in FLAG_APIS)

    def sequence(self, *, kernel: str | None = None, core: str | None = None, block: int | None = None,
                 block_idx: int | None = None) -> list[str]:
        """API names in program order, for filters that pick one core (else the cores' calls interleave)."""
        return [c.api for c in self.select(kernel=kernel, core=core, block=block, block_idx=block_idx)]


def _pairs(text: str) -> list[tuple[str, str]]:
    """`key=value` tokens split by spaces (`-` alone: none); a token without `=` is a ValueError."""
    out = []
    for item in text.split():
        if item == "-" and len(text.split()) == 1:
            break
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(item)
        out.append((key, value))
    return out


def _site(text: str) -> str | None:
    """A `file:line` site, or None for `-`; anything else is a ValueError."""
    if text == "-":
        return None
    file, sep, line = text.rpartition(":")
    if not sep or not file or not line.isdigit():
        raise ValueError(text)
    return text


def _kernel(name: str) -> str:
    """The entry function without the namespace a multi-kernel launcher wraps it in (`k0::rms_norm`)."""
    return name.rsplit("::", 1)[-1]
