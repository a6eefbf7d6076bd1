"""Hypothesis: random one-kernel designs (matmul with or without an epilogue, conv + bias + relu, row
reductions) lowered at one shape, compiled once, and run at other row counts (a conv: other batches) with the
same binary; each run equals the golden model and the interpreter lowered at that shape."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen

from .reference import TOL

Build = Callable[[int], ks.Tensor]


@st.composite
def design(draw: st.DrawFn) -> tuple[str, Build, int, list[int]]:
    """(kind, build(rows), lowered rows, other rows)."""
    kind = draw(st.sampled_from(["matmul", "matmul_gelu", "matmul_rms", "matmul_ln", "conv", "softmax"]))
    k, n = draw(st.integers(1, 96)), draw(st.integers(1, 160))

    def mm(m: int) -> ks.Tensor:
        return ks.matmul(ks.placeholder((m, k), "float16", name="a"), ks.placeholder((k, n), "float16", name="w"))

    if kind == "conv":
        cin, cout, hw = draw(st.integers(1, 40)), draw(st.integers(1, 40)), draw(st.integers(3, 12))

        def build(b: int) -> ks.Tensor:
            x = ks.placeholder((b, cin, hw, hw), "float16", name="x")
            w = ks.placeholder((cout, cin, 3, 3), "float16", name="w")
            return ks.relu(ks.conv2d(x, w, padding="SAME") + ks.placeholder((cout, 1, 1), "float16", name="b"))

        return kind, build, draw(st.integers(1, 2)), draw(st.lists(st.integers(1, 3), min_size=2, max_size=2))
    builds: dict[str, Build] = {
        "matmul": mm,
        "matmul_gelu": lambda m: ks.gelu(mm(m) + ks.placeholder((n,), "float16", name="b")),
        "matmul_rms": lambda m: ks.rms_norm(mm(m)),
        "matmul_ln": lambda m: ks.layer_norm(ks.matmul(
            ks.placeholder((m, k), "float16", name="a"), ks.placeholder((k, max(n, 16)), "float16", name="w"))),
        "softmax": lambda m: ks.softmax(ks.placeholder((m, n), "float16", name="x")),
    }
    rows = st.integers(1, 300)
    return kind, builds[kind], draw(rows), draw(st.lists(rows, min_size=2, max_size=2))


def _close(got, want, what: str) -> None:
    rtol, atol = TOL["float16"]
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=rtol, atol=atol,
                               err_msg=what)


@settings(max_examples=4, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(d=design())
def test_one_binary_runs_other_row_counts(d, twin_cache) -> None:
    kind, build, lowered, others = d
    prog = ks.lower(ks.create_schedule(build(lowered), fuse=True), "ascend910b2")
    code = codegen(prog)
    runtime = len(prog.kernels) == 1 and prog.kernels[0].runtime_rows is not None
    for rows in [lowered, *(others if runtime else [])]:
        out = build(rows)
        inputs = ks.random_inputs(out, seed=rows)
        got = twin.run(code, inputs, cache_dir=twin_cache)
        what = f"{kind} lowered at {lowered}, run at {rows}"
        _close(got, ks.evaluate(out, inputs), f"{what}: twin vs golden")
        _close(got, ks.run_tiled(ks.lower(ks.create_schedule(out, fuse=True), "ascend910b2"), inputs),
               f"{what}: twin vs run_tiled")
