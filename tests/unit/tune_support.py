"""Shared pieces of the tuner tests: the target, a small MlaProlog-lite search space and an in-process
`tune` (the fresh design database per test is the `fresh_db` fixture in conftest.py)."""

from __future__ import annotations

import kernelstudio as ks
from tests.reference_kernels import mla_prolog_lite

TARGET = "ascend910b2"


def mla_design():
    """MlaProlog-lite with tile_m x tile_k x double_buffer (18 configurations; tile_k=128 with double
    buffering overflows L0B)."""
    out = mla_prolog_lite()
    s = ks.create_schedule(out)
    s[out].split("m", ks.knob("tile_m", 16, [16, 32, 64]))
    s[out].split("n", 256)
    s[out].split("k", ks.knob("tile_k", 64, [32, 64, 128]))
    s[out].double_buffer(ks.knob("double_buffer", True, [False, True]))
    return s


def tune_inline(fn, **kw):
    """ks.tune in this process, without a progress bar (both overridable)."""
    kw.setdefault("executor", "inline")
    kw.setdefault("progress", False)
    return ks.tune(fn, TARGET, **kw)
