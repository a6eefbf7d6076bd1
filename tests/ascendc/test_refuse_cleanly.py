"""No argument of ks.ascendc's entry points lets a builtin exception through: each, given each malformed
value of the fixed set the other entry points are tested with, is accepted or refused with a
KernelStudioError (a value that is accepted runs the small flags kernel from the compile cache)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import KernelStudioError

from .conftest import KERNELS, halves

BAD: list[Any] = [None, "", "  ", -1, 0, 2**70, float("nan"), float("inf"), True, [], {}, (), object(), b"x",
                  "x" * 5000, np.array([1, 2]), np.float32(1.5), 1j]
FLAGS = KERNELS / "add_flags" / "add_flags.cpp"
X = halves(2048)


def _load(cache: Any, **change: Any) -> Any:
    kw: dict[str, Any] = {"sources": FLAGS, "kernel": "add_flags", "args": [X, X, ks.ascendc.out(2048, "float16")],
                          "tiling": {"blockLength": 2048, "tileLength": 512}, "cache_dir": cache, "timeout_s": 20}
    kw.update(change)
    return ks.ascendc.load(**kw)


ENTRY: dict[str, Callable[[Any, Any], Any]] = {
    "load(sources)": lambda c, v: _load(c, sources=v),
    "load(kernel)": lambda c, v: _load(c, kernel=v),
    "load(args)": lambda c, v: _load(c, args=v),
    "load(args[0])": lambda c, v: _load(c, args=[v, X, ks.ascendc.out(2048, "float16")]),
    "load(tiling)": lambda c, v: _load(c, tiling=v),
    "load(tiling field)": lambda c, v: _load(c, tiling={"blockLength": v, "tileLength": 512}),
    "load(tiling_key)": lambda c, v: _load(c, tiling_key=v),
    "load(block_dim)": lambda c, v: _load(c, block_dim=v),
    "load(target)": lambda c, v: _load(c, target=v),
    "load(mode)": lambda c, v: _load(c, mode=v),
    "load(workspace_bytes)": lambda c, v: _load(c, workspace_bytes=v),
    "load(reference)": lambda c, v: _load(c, reference=v),
    "load(rtol)": lambda c, v: _load(c, reference=lambda x, y: x + y, rtol=v),
    "load(timeout_s)": lambda c, v: _load(c, timeout_s=v),
    "out(shape)": lambda c, v: ks.ascendc.out(v, "float16"),
    "out(dtype)": lambda c, v: ks.ascendc.out(4, v),
    "inp(value)": lambda c, v: ks.ascendc.inp(v, "float16"),
    "inp(dtype)": lambda c, v: ks.ascendc.inp(X, v),
    "check_sync(log)": lambda c, v: ks.ascendc.check_sync(v),
    "check_sync(kernel)": lambda c, v: ks.ascendc.check_sync([], kernel=v),
}


@pytest.mark.parametrize("entry", list(ENTRY))
def test_no_ascendc_entry_point_lets_a_builtin_exception_through(entry: str, twin_cache) -> None:
    raw = []
    for bad in BAD:
        try:
            ENTRY[entry](twin_cache, bad)
        except KernelStudioError as e:
            assert str(e), f"{entry}({bad!r}): an empty message"
        except Exception as e:  # noqa: BLE001 - what this test is for
            raw.append(f"{entry}({bad!r:.40}): {type(e).__name__}: {e}"[:300])
    assert not raw, "\n".join(raw)
