"""Hypothesis: random shapes of a few program templates, all cases compiled into one twin binary and
checked three ways (golden == run_tiled == twin)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen

from .merge import merge
from .reference import TOL, outputs

CASES = 32  # per example; 3 examples (the first is hypothesis's simplest) -> 96 cases, 3 binaries

dims = st.integers(min_value=1, max_value=70)


@st.composite
def case(draw: st.DrawFn) -> tuple[ks.Tensor, bool, bool]:
    """One random graph: an elementwise chain with broadcasts, a row reduction, or a matmul epilogue."""
    kind = draw(st.sampled_from(["chain", "softmax", "layer_norm", "matmul"]))
    rows, cols = draw(dims), draw(st.integers(min_value=1, max_value=160))
    x = ks.placeholder((rows, cols), "float16", name="x")
    if kind == "chain":
        g = ks.placeholder((cols,), "float16", name="g")
        op = draw(st.sampled_from([ks.relu, ks.exp, ks.abs, ks.sigmoid, ks.tanh]))
        out = op(x * g + draw(st.floats(-2, 2, width=16)))
        if draw(st.booleans()):
            out = ks.maximum(out, ks.placeholder((rows, 1), "float16", name="c"))
    elif kind == "softmax":
        out = ks.softmax(x)
    elif kind == "layer_norm":  # a row of a few values makes the normalisation ill-conditioned
        x = ks.placeholder((rows, max(cols, 16)), "float16", name="x")
        out = ks.layer_norm(x)
    else:
        k = draw(st.integers(min_value=1, max_value=96))
        a = ks.placeholder((rows, k), "float16", name="a")
        w = ks.placeholder((k, cols), "float16", name="w")
        out = ks.relu(ks.matmul(a, w) + ks.placeholder((cols,), "float16", name="b"))
    return out, draw(st.booleans()), draw(st.booleans())


@settings(max_examples=3, deadline=None, derandomize=True, phases=[Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(cases=st.lists(case(), min_size=CASES, max_size=CASES))
def test_random_cases_three_way(cases: list, twin_cache) -> None:
    progs, golden, tiled, inputs = [], [], [], {}
    for i, (out, fuse, double) in enumerate(cases):
        s = ks.create_schedule(out, fuse=fuse)
        s[out].double_buffer(double)
        prog = ks.lower(s, target="ascend910b2")
        inp = ks.random_inputs(out, seed=i)
        progs.append(prog)
        golden.append(outputs(prog, ks.evaluate(out, inp)))
        tiled.append(outputs(prog, ks.run_tiled(prog, inp)))
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, prog in enumerate(progs):
        for name in prog.outputs:
            rtol, atol = TOL[prog.tensor(name).dtype]
            g = np.asarray(got[f"c{i}_{name}"], dtype=np.float32)
            np.testing.assert_allclose(tiled[i][name], golden[i][name], rtol=rtol, atol=atol,
                                       err_msg=f"case {i} ({prog.name}) run_tiled")
            np.testing.assert_allclose(g, golden[i][name], rtol=rtol, atol=atol,
                                       err_msg=f"case {i} ({prog.name}) twin vs golden")
