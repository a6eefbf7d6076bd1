"""The reference kernels as DSL graphs, and the three-way check golden == run_tiled == twin."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen

TOL = {"float16": (2e-2, 2e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-4), "int32": (0, 0), "int8": (0, 0)}


def mla_prolog_lite(m: int = 64, k: int = 256, n: int = 512) -> ks.Tensor:
    x = ks.placeholder((1, m, k), "float16", name="x")
    w = ks.placeholder((n, k), "float16", name="w")
    b = ks.placeholder((n,), "float16", name="bias")
    return ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True)) + b)


def softmax(rows: int = 45, cols: int = 100) -> ks.Tensor:
    return ks.softmax(ks.placeholder((rows, cols), "float16", name="x"))


def layer_norm(rows: int = 30, cols: int = 200) -> ks.Tensor:
    return ks.layer_norm(ks.placeholder((rows, cols), "float16", name="x"))


def chain(rows: int = 37, cols: int = 75) -> ks.Tensor:
    """Elementwise chain with broadcasting: a row vector, a column vector and a scalar."""
    x = ks.placeholder((rows, cols), "float16", name="x")
    g = ks.placeholder((cols,), "float16", name="g")
    c = ks.placeholder((rows, 1), "float16", name="c")
    return ks.relu(ks.exp(x * g - c) * 0.5 + ks.sigmoid(x))


def conv_bias_relu() -> ks.Tensor:
    x = ks.placeholder((1, 16, 20, 20), "float16", name="x")
    w = ks.placeholder((32, 16, 3, 3), "float16", name="w")
    b = ks.placeholder((1, 32, 1, 1), "float16", name="b")
    return ks.relu(ks.conv2d(x, w, padding=1) + b)


REFERENCE: dict[str, Callable[[], ks.Tensor]] = {
    "mla_prolog_lite": mla_prolog_lite, "softmax": softmax, "layer_norm": layer_norm, "chain": chain,
    # sizes that divide no tile: m, k, n tails in the cube part and row tails in the epilogue
    "mla_prolog_lite_tails": lambda: mla_prolog_lite(50, 200, 300),
}


def lower(out: ks.Tensor, fuse: bool = True, double_buffer: bool | None = None,
          split: tuple[int | str, int] | None = None) -> ks.lower.__class__:
    s = ks.create_schedule(out, fuse=fuse)
    if double_buffer is not None:
        for k in s.kernels:  # every kernel of the plan, unfused ones included
            s[k.name].double_buffer(double_buffer)
    if split is not None:
        s[out].split(*split)
    return ks.lower(s, target="ascend910b2")


def outputs(prog, value) -> dict[str, np.ndarray]:
    vals = value if isinstance(value, tuple) else (value,)
    return {n: np.asarray(v, dtype=np.float32) for n, v in zip(prog.outputs, vals, strict=True)}


def three_way(out: ks.Tensor, prog, cache: Path, seed: int = 0) -> None:
    """golden (ks.evaluate) == ks.run_tiled == the generated Ascend C on the twin, within dtype tolerance."""
    inputs = ks.random_inputs(out, seed=seed)
    golden = outputs(prog, ks.evaluate(out, inputs))
    tiled = outputs(prog, ks.run_tiled(prog, inputs))
    got = outputs(prog, twin.run(codegen(prog), inputs, cache_dir=cache))  # the same form as the other two
    for name in prog.outputs:
        rtol, atol = TOL[prog.tensor(name).dtype]
        np.testing.assert_allclose(tiled[name], golden[name], rtol=rtol, atol=atol, err_msg=f"run_tiled {name}")
        np.testing.assert_allclose(np.asarray(got[name], dtype=np.float32), golden[name], rtol=rtol, atol=atol,
                                   err_msg=f"twin vs golden {name}")
        np.testing.assert_allclose(np.asarray(got[name], dtype=np.float32), tiled[name], rtol=rtol, atol=atol,
                                   err_msg=f"twin vs run_tiled {name}")


def cases_three_way(cases: dict[str, Callable[[], tuple]], cache: Path, check: Callable | None = None
                    ) -> list[dict[str, np.ndarray]]:
    """Each case (name -> () -> (outputs, inputs)) lowered for 910B2: run_tiled == golden bit for bit, then all of
    them merged into one twin binary == golden bit for bit. `check(name, prog)` may assert on each program first.
    Returns each case's golden outputs by output name."""
    from .merge import merge

    progs, golden, inputs = [], [], {}
    for i, (name, build) in enumerate(cases.items()):
        outs, inp = build()
        prog = ks.lower(ks.create_schedule(outs), target="ascend910b2")
        if check is not None:
            check(name, prog)
        want = outputs(prog, ks.evaluate(outs, inp))
        got = outputs(prog, ks.run_tiled(prog, inp))
        for out in prog.outputs:
            np.testing.assert_array_equal(got[out], want[out], err_msg=f"{name} run_tiled {out}")
        progs.append(prog)
        golden.append(want)
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=cache, by_name=True)
    for i, name in enumerate(cases):
        for out, want in golden[i].items():
            np.testing.assert_array_equal(np.asarray(got[f"c{i}_{out}"], np.float32), want, err_msg=f"{name} {out}")
    return golden
