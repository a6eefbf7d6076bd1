"""FRACTAL_NZ weights (`placeholder(..., format="NZ")`): the storage order, the DSL's checks of who may read
one, the cube's block copy of an NZ B (no ND -> NZ conversion) in the TileIR and the simulator, the Matmul
code's CubeFormat::NZ, and three-way numerics (golden == run_tiled == twin) with every case in one binary."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import hw, twin
from kernelstudio.codegen import codegen, generate_files, op_names
from kernelstudio.codegen.project import op_json
from kernelstudio.core.errors import DTypeError, ShapeError, UnsupportedError
from kernelstudio.core.formats import from_nz, to_nz
from kernelstudio.tileir.program import Copy, walk

from .merge import merge
from .reference import TOL, outputs


def nz_matmul(m: int, k: int, n: int, fmt: str = "NZ", epilogue: str = "", dtype: str = "bfloat16") -> ks.Tensor:
    x = ks.placeholder((m, k), dtype, name="x")
    w = ks.placeholder((k, n), dtype, name="w", format=fmt)
    y = ks.matmul(x, w, name="y")
    if epilogue == "silu":
        return ks.silu(y)
    if epilogue == "bias_rms":
        return ks.rms_norm(y + ks.placeholder((n,), dtype, name="b"))
    return y


def _lower(out: ks.Tensor, splits: tuple[tuple[str, int], ...] = (), fuse: bool | None = None):
    s = ks.create_schedule(out, fuse=fuse)
    for axis, size in splits:
        s[out].split(axis, size)
    return s, ks.lower(s, target="ascend910b2")


# --- the storage order ------------------------------------------------------------------------------


def test_to_nz_puts_each_16_column_band_down_the_rows() -> None:
    """Element (k, n) of a [K, N] matrix at (n // 16) * K * 16 + k * 16 + n % 16: storage (N/16, K/16, 16, 16)."""
    k, n = 48, 64
    a = np.arange(k * n, dtype=np.int64).reshape(k, n)
    z = to_nz(a)
    assert z.shape == (n // 16, k // 16, 16, 16)
    flat = z.reshape(-1)
    for kk, nn in [(0, 0), (1, 0), (0, 15), (0, 16), (47, 63), (17, 33)]:
        assert flat[(nn // 16) * k * 16 + kk * 16 + nn % 16] == a[kk, nn]
    np.testing.assert_array_equal(from_nz(z), a)


@pytest.mark.parametrize(("call", "words"), [
    (lambda: to_nz(np.zeros((40, 32))), ["K=40", "[48, 32]"]),
    (lambda: to_nz(np.zeros((16, 16, 16))), ["[16, 16, 16]", "one [K, N] matrix"]),
    (lambda: from_nz(np.zeros((2, 16, 16))), ["[2, 16, 16]", "to_nz"]),
])
def test_nz_helpers_name_the_shape(call, words) -> None:
    with pytest.raises(ShapeError) as e:
        call()
    for word in words:
        assert word in str(e.value), (word, str(e.value))


# --- the DSL -----------------------------------------------------------------------------------------


def test_placeholder_keeps_the_logical_shape_and_evaluates_the_logical_matrix() -> None:
    y = nz_matmul(5, 32, 48, dtype="float16")
    w = y.node.inputs[1]
    assert w.shape == (32, 48) and w.attr("format") == "NZ"
    x_t = ks.placeholder((5, 32), "float16", name="x")
    assert ks.placeholder((32, 48), "float16", name="w", format="fractal_nz").format == "NZ"
    assert x_t.format == "ND" and "format" not in dict(x_t.node.attrs)  # ND graphs are unchanged
    inp = ks.random_inputs(y, seed=3)
    assert inp["w"].shape == (32, 48)
    want = inp["x"].astype(np.float32) @ inp["w"].astype(np.float32)
    np.testing.assert_allclose(ks.evaluate(y, inp).astype(np.float32), want, rtol=1e-2, atol=1e-2)


def _w(shape=(64, 32), dtype="bfloat16") -> ks.Tensor:
    return ks.placeholder(shape, dtype, name="w", format="NZ")


@pytest.mark.parametrize(("build", "words"), [
    (lambda: ks.add(_w(), 1.0), ["add", "w[64,32] bfloat16", "FRACTAL_NZ", "format='ND'"]),
    (lambda: ks.silu(_w()), ["w[64,32]", "FRACTAL_NZ", "format='ND'"]),
    (lambda: ks.matmul(ks.placeholder((8, 32), "bfloat16", name="x"), _w(), transpose_b=True),
     ["transposed or per-head", "w[64,32]"]),
    (lambda: ks.matmul(_w(), ks.placeholder((32, 16), "bfloat16", name="v")), ["A operand of matmul", "w[64,32]"]),
    (lambda: ks.matmul(ks.placeholder((8, 64), "float16", name="x"), _w()), ["cast", "w[64,32]"]),
])
def test_a_reader_that_cannot_take_nz_is_named(build, words) -> None:
    with pytest.raises(UnsupportedError) as e:
        build()
    for word in words:
        assert word in str(e.value), (word, str(e.value))


@pytest.mark.parametrize(("shape", "dtype", "err", "words"), [
    ((60, 32), "bfloat16", ShapeError, ["[60,32]", "K=60", "[64, 32]", "format='ND'"]),
    ((64, 40), "float16", ShapeError, ["N=40", "[64, 48]"]),
    ((4, 64, 32), "float16", ShapeError, ["[4, 64, 32]", "one [K, N] matrix"]),
    ((64, 32), "float32", DTypeError, ["float32", "float16 or bfloat16"]),
    ((64, 32), "int8", DTypeError, ["int8"]),
])
def test_nz_shapes_and_dtypes_the_layout_cannot_hold(shape, dtype, err, words) -> None:
    with pytest.raises(err) as e:
        ks.placeholder(shape, dtype, name="w", format="NZ")
    for word in words:
        assert word in str(e.value), (word, str(e.value))
    with pytest.raises(ShapeError, match="'ND', 'NZ'"):
        ks.placeholder((64, 32), "float16", name="w", format="ZZ")


# --- lowering, simulator, code ------------------------------------------------------------------------


@pytest.mark.parametrize("splits", [(), (("m", 16), ("n", 32), ("k", 64))], ids=["auto", "split"])
def test_b_reaches_l1_as_a_block_copy(splits) -> None:
    _, prog = _lower(nz_matmul(37, 256, 128), splits)
    assert prog.tensor("w").format == "NZ" and prog.tensor("x").format == "ND"
    (k,) = prog.kernels
    gm_l1 = [c for c in walk(k.aic) if isinstance(c, Copy) and c.src.gm and not c.dst.gm]
    assert {c.src.buf for c in gm_l1} == {"x", "w"}
    assert all(c.nd2nz == (c.src.buf == "x") for c in gm_l1)


def test_simulator_prices_the_nz_copy_on_the_plain_curve() -> None:
    """msKPP's GM -> L1 curves: the ND -> NZ converting copy is slower than a plain one of the same bytes, so
    an NZ weight spends less time on MTE2 where the copies are latency-bound (small tiles); where they are
    HBM-bound (a 7168 x 1536 weight) the bandwidth share prices both alike and the format changes nothing."""
    costs = hw.get("ascend910b2").costs
    assert costs.move_cycles("GM", "L1", 32768) < costs.move_cycles("GM", "L1", 32768, nd2nz=True)

    def sim(m: int, k: int, n: int) -> dict[str, ks.SimResult]:
        return {fmt: ks.simulate(_lower(nz_matmul(m, k, n, fmt))[1]) for fmt in ("ND", "NZ")}

    small, big = sim(200, 256, 512), sim(1, 7168, 1536)
    mte2 = {f: r.metrics["pipes"]["MTE2"]["busy_us"] for f, r in small.items()}
    assert small["NZ"].traffic["HBM->L2"] == small["ND"].traffic["HBM->L2"]
    assert 0.6 < mte2["NZ"] / mte2["ND"] < 0.72  # "falls by a third" (README)
    assert small["NZ"].time_us < small["ND"].time_us
    assert big["NZ"].time_us == pytest.approx(big["ND"].time_us, rel=1e-9)


def test_code_declares_b_nz_and_points_at_its_column_band() -> None:
    _, prog = _lower(nz_matmul(37, 256, 128), (("n", 32),))
    src = "\n".join(generate_files(prog)[n.kernel_file] for n in op_names(prog).values())
    assert "MatmulType<AscendC::TPosition::GM, CubeFormat::NZ, bfloat16_t, false>" in src
    assert "CubeFormat::ND, bfloat16_t, false>;" in src  # A stays ND
    assert "* 256], false);" in src  # column band n0 / 16 starts n0 * K elements in
    host = "\n".join(v for f, v in generate_files(prog).items() if f.endswith(".cpp") and "op_host" in f)
    assert 'Input("w").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_FRACTAL_NZ});' in host
    assert 'Input("x").ParamType(REQUIRED).DataType({ge::DT_BF16}).Format({ge::FORMAT_ND});' in host
    (desc,) = op_json(prog)  # what msOpGen reads
    assert {d["name"]: d["format"] for d in desc["input_desc"]} == {"x": ["ND"], "w": ["FRACTAL_NZ"]}


# --- numerics ----------------------------------------------------------------------------------------


def _cases() -> list[tuple[str, ks.Tensor, tuple[tuple[str, int], ...], bool | None]]:
    return [
        ("plain_tail_m", nz_matmul(37, 256, 128), (), None),
        ("split_tiles", nz_matmul(45, 256, 96), (("m", 16), ("n", 32), ("k", 64)), None),
        ("float16_decode", nz_matmul(1, 128, 512, dtype="float16"), (), None),
        ("silu_fused", nz_matmul(21, 128, 64, epilogue="silu"), (), True),
        ("bias_rms_fused", nz_matmul(19, 128, 256, epilogue="bias_rms"), (), True),
        ("silu_unfused", nz_matmul(21, 128, 64, epilogue="silu"), (), False),
    ]


def test_nz_matmul_three_way(twin_cache) -> None:
    """golden == run_tiled == the generated Ascend C on the twin (the run packs each NZ input with to_nz)."""
    cases = _cases()
    progs, golden, tiled, inputs = [], [], [], {}
    for i, (_, out, splits, fuse) in enumerate(cases):
        _, prog = _lower(out, splits, fuse)
        inp = ks.random_inputs(out, seed=20 + i)
        progs.append(prog)
        golden.append(outputs(prog, ks.evaluate(out, inp)))
        tiled.append(outputs(prog, ks.run_tiled(prog, inp)))
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    code = codegen(merge(progs))
    assert {t.name for t in code.inputs if t.format == "NZ"} == {f"c{i}_w" for i in range(len(cases))}
    got, log = twin.run(code, inputs, cache_dir=twin_cache, by_name=True, log_calls=True)
    # the Matmul's L1 loads: A converted on the way (Nd2Nz), the NZ B copied as it is
    loads = {(c.args.get("dst"), c.args.get("format")) for c in log.select(core="AIC", api="DataCopy")
             if c.args.get("src") == "GM"}
    assert loads == {("A1", "Nd2Nz"), ("B1", "NZ")}, loads
    for i, ((name, _, _splits, fuse), prog) in enumerate(zip(cases, progs, strict=True)):
        for out in prog.outputs:
            rtol, atol = TOL[prog.tensor(out).dtype]
            g = np.asarray(got[f"c{i}_{out}"], dtype=np.float32)
            np.testing.assert_allclose(tiled[i][out], golden[i][out], rtol=rtol, atol=atol, err_msg=f"{name} tiled")
            np.testing.assert_allclose(g, golden[i][out], rtol=rtol, atol=atol, err_msg=f"{name} twin")
            if fuse is None:  # the matmul alone: the twin sums k tiles in run_tiled's order, bit for bit
                np.testing.assert_array_equal(g, tiled[i][out], err_msg=f"{name} twin vs run_tiled")
