"""No entry point of hw/, codegen/, tune/ and notebook/ lets a builtin exception through: every argument of
each, given each value of a fixed set of malformed ones, is either accepted or refused with a
KernelStudioError. (What each refusal says is tested case by case in test_bad_input.py and beside each part.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import KernelStudioError
from kernelstudio.notebook import magic, messages
from kernelstudio.notebook.cell import run_cell

BAD: list[Any] = [None, "", "  ", -1, 0, 2**70, float("nan"), float("inf"), True, [], {}, (), object(), b"x",
                  "x" * 5000, np.array([1, 2]), np.float32(1.5), 1j]


def _prog():
    return ks.lower(ks.create_schedule(ks.exp(ks.placeholder((64, 128), "float16", name="x"))), "ascend910b2")


def _design():
    x = ks.placeholder((64, 128), "float16", name="x")
    s = ks.create_schedule(ks.exp(x))
    s[s.kernels[0].name].split(0, ks.knob("rows", 2, [1, 2]))
    return s


def _rows(rows, cols):
    s = ks.create_schedule(ks.relu(ks.placeholder((rows, cols), "float16", name="x")))
    s[s.kernels[0].name].split(0, ks.knob("tile_rows", 2, [1, 2]))
    return s


def _message():
    return messages.message_from_design("d", ks.build(ks.exp(ks.placeholder((64, 128), "float16", name="x")),
                                                      compare=False), knobs={})


_MSG = None


def _msg_with(field: str, bad: Any) -> dict:
    global _MSG
    if _MSG is None:
        _MSG = _message()
    m = dict(_MSG)
    m[field] = bad
    return m


# name -> a call taking one malformed value
ENTRY: dict[str, Callable[[Any], Any]] = {
    "hw.get": lambda v: ks.hw.get(v),
    "hw.profile_from_toml(text)": lambda v: ks.hw.profile_from_toml(v, "t.toml"),
    "profile.with_overrides(ub_bytes)": lambda v: ks.hw.get("ascend910b2").with_overrides(ub_bytes=v),
    "profile.with_overrides(hbm_bytes_per_s)": lambda v: ks.hw.get("ascend910b2").with_overrides(hbm_bytes_per_s=v),
    "profile.with_overrides(aiv_cores)": lambda v: ks.hw.get("ascend910b2").with_overrides(aiv_cores=v),
    "codegen(prog)": lambda v: ks.codegen(v),
    "codegen(high_level)": lambda v: ks.codegen(_prog(), high_level=v),
    "simulate(prog)": lambda v: ks.simulate(v),
    "simulate(l2_hit_ratio)": lambda v: ks.simulate(_prog(), l2_hit_ratio=v),
    "lower(target)": lambda v: ks.lower(ks.create_schedule(ks.exp(ks.placeholder((8, 16), "float16"))), v),
    "tune(build_fn)": lambda v: ks.tune(v, budget=1, executor="inline", db=False, progress=False),
    "tune(target)": lambda v: ks.tune(_design, v, budget=1, executor="inline", db=False, progress=False),
    "tune(budget)": lambda v: ks.tune(_design, budget=v, executor="inline", db=False, progress=False),
    "tune(strategy)": lambda v: ks.tune(_design, budget=1, strategy=v, executor="inline", db=False, progress=False),
    "tune(seed)": lambda v: ks.tune(_design, budget=1, seed=v, executor="inline", db=False, progress=False),
    "tune(executor)": lambda v: ks.tune(_design, budget=1, executor=v, db=False, progress=False),
    "tune(name)": lambda v: ks.tune(_design, budget=1, executor="inline", db=False, name=v, progress=False),
    "DynamicKernel(build_fn)": lambda v: ks.DynamicKernel(v),
    "DynamicKernel(buckets)": lambda v: ks.DynamicKernel(_rows, v),
    "DynamicKernel(target)": lambda v: ks.DynamicKernel(_rows, target=v).design(rows=8, cols=16),
    "DynamicKernel.bucket_of(dim)": lambda v: ks.DynamicKernel(_rows).bucket_of(rows=v, cols=16),
    "DynamicKernel.design(dim)": lambda v: ks.DynamicKernel(_rows).design(rows=8, cols=v),
    "DynamicKernel.explore(values)": lambda v: ks.DynamicKernel(_rows).explore("rows", v, cols=16),
    "panel.check_message(file)": lambda v: messages.check_message(_msg_with("files", v)),
    "panel.check_message(time_us)": lambda v: messages.check_message(_msg_with("time_us", v)),
    "panel.check_message(design)": lambda v: messages.check_message(_msg_with("design", v)),
    "panel.check_message(whole)": lambda v: messages.check_message(v),
    "magic.parse_args": lambda v: magic.parse_args(v),
    "run_cell(source)": lambda v: run_cell(v, name="c"),
}


@pytest.mark.parametrize("entry", list(ENTRY))
def test_no_entry_point_lets_a_builtin_exception_through(entry: str) -> None:
    raw = []
    for bad in BAD:
        try:
            ENTRY[entry](bad)
        except KernelStudioError as e:
            assert str(e), f"{entry}({bad!r}): an empty message"
        except Exception as e:  # noqa: BLE001 - what this test is for
            raw.append(f"{entry}({bad!r:.40}): {type(e).__name__}: {e}"[:300])
    assert not raw, "\n".join(raw)
