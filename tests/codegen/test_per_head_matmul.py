"""matmul(q, w, batch_axis=1): the per-head matmul of MlaProlog, q [T, heads, D] @ w [heads, D, H] -> [T, heads, H],
read and written in place (A's head band at n*D with rows heads*D apart, C's at n*H with rows heads*H apart):
the TileIR's strides, the Matmul API's org shape, three-way numerics with every case in one twin binary, the
simulated traffic and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, generate_files, op_names
from kernelstudio.core.errors import ShapeError, UnsupportedError
from kernelstudio.tileir.program import Copy, Mmad, walk

from .merge import merge
from .reference import TOL, outputs

# (T, heads, D, H): T with a tail (not a multiple of 16); D = 128 (MlaProlog's) and a small 32; H 64 and 512
SHAPES = [(37, 1, 128, 64), (37, 2, 128, 64), (19, 4, 128, 512), (21, 8, 32, 64), (45, 8, 128, 512),
          (37, 4, 32, 512)]


def per_head(t: int, heads: int, d: int, h: int, dtype: str = "float16") -> tuple[ks.Tensor, ks.Tensor, ks.Tensor]:
    q = ks.placeholder((t, heads, d), dtype, name="q")
    w = ks.placeholder((heads, d, h), dtype, name="w")
    return q, w, ks.matmul(q, w, batch_axis=1, name="qn")


def _lower(outs: list[ks.Tensor], splits: tuple[tuple[str, int], ...] = (), fuse: bool | None = None):
    s = ks.create_schedule(outs, fuse=fuse)
    for axis, size in splits:
        s[outs[0]].split(axis, size)
    return s, ks.lower(s, target="ascend910b2")


def _einsum(inp: dict[str, np.ndarray]) -> np.ndarray:
    return np.einsum("tnd,ndh->tnh", inp["q"].astype(np.float64), inp["w"].astype(np.float64))


def test_golden_is_the_per_head_product() -> None:
    _, _, y = per_head(13, 3, 32, 48, "float32")
    assert y.shape == (13, 3, 48)
    inp = ks.random_inputs(y, seed=1)
    np.testing.assert_allclose(ks.evaluate(y, inp), _einsum(inp), rtol=1e-5, atol=1e-5)


def test_plain_matmul_keeps_its_leading_batch() -> None:
    a = ks.placeholder((4, 37, 128), "float16", name="a")
    b = ks.placeholder((4, 128, 64), "float16", name="b")
    y = ks.matmul(a, b)
    assert y.shape == (4, 37, 64) and y.node.attr("batch_axis") is None
    assert ks.matmul(a, b, batch_axis=None).node == y.node


@pytest.mark.parametrize("shape", SHAPES, ids=[f"T{t}_N{n}_D{d}_H{h}" for t, n, d, h in SHAPES])
def test_tileir_reads_and_writes_head_bands_in_place(shape: tuple[int, int, int, int]) -> None:
    t, heads, d, h = shape
    _, prog = _lower([per_head(*shape)[2]])
    (k,) = prog.kernels
    assert k.family == "cube" and dict(k.tiling)["batch"] == heads
    gm_a = {c.src.buf: c.src for c in walk(k.aic) if isinstance(c, Copy) and c.src.gm}
    assert gm_a["q"].stride.value == heads * d  # A's rows: one token's heads side by side
    assert gm_a["w"].stride.value == h  # each head's weight is a dense [D, H] matrix
    (fix,) = [c for c in walk(k.aic) if isinstance(c, Copy) and c.dst.gm]
    assert fix.dst.buf == "qn" and fix.dst.stride.value == heads * h
    assert any(isinstance(s, Mmad) for s in walk(k.aic))


@pytest.mark.parametrize("splits", [(), (("m", 16), ("n", 64), ("k", 32))], ids=["auto", "split"])
@pytest.mark.parametrize("shape", SHAPES, ids=[f"T{t}_N{n}_D{d}_H{h}" for t, n, d, h in SHAPES])
def test_run_tiled_matches_the_plan_aware_golden(shape: tuple[int, int, int, int],
                                                 splits: tuple[tuple[str, int], ...]) -> None:
    """Within matmul's float16 tolerance: k tiles add their float32 partial sums in another order than NumPy."""
    _, _, y = per_head(*shape)
    s, prog = _lower([y], splits)
    inp = ks.random_inputs(y, seed=2)
    got = ks.run_tiled(prog, inp).astype(np.float32)
    want = ks.evaluate(y, inp, schedule=s).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=TOL["float16"][0], atol=TOL["float16"][1])
    np.testing.assert_allclose(got, _einsum(inp), rtol=TOL["float16"][0], atol=TOL["float16"][1])


@pytest.mark.parametrize("shape", [(45, 8, 128, 512), (1, 128, 128, 512), (1024, 128, 128, 512)],
                         ids=["small", "decode", "prefill"])
def test_simulated_gm_traffic_is_a_plus_b_plus_c(shape: tuple[int, int, int, int]) -> None:
    """No transpose kernel and no round trip: HBM reads A and B once, FixPipe writes C once (MlaProlog's
    N = 128 heads, D = 128, Hckv = 512 included: each head's A panels are their own in the L2 model)."""
    t, heads, d, h = shape
    _, prog = _lower([per_head(t, heads, d, h)[2]])
    r = ks.simulate(prog)
    a, b, c = t * heads * d * 2, heads * d * h * 2, t * heads * h * 2
    assert r.traffic["HBM->L2"] == a + b
    assert r.traffic["L0C->GM"] == c
    assert len(prog.kernels) == 1


def test_code_sets_the_org_shape_only_for_strided_heads() -> None:
    def src(heads: int) -> str:
        _, prog = _lower([per_head(37, heads, 128, 64)[2]])
        files = generate_files(prog)
        return "\n".join(files[n.kernel_file] for n in op_names(prog).values())

    assert "matmulObj.SetOrgShape(37, 64, 512, 128, 256);" in src(4)  # orgKa = heads*D, orgKc = heads*H
    assert "SetOrgShape" not in src(1)  # one head: the plain layout the tiling's M, N, Ka, Kb describe


def _epilogues() -> dict[str, list[ks.Tensor]]:
    """Epilogues fused after the per-head matmul (cube_vector): they read and write its head bands."""
    _, _, y1 = per_head(21, 2, 128, 64)
    _, _, y2 = per_head(37, 4, 32, 64)
    _, _, y3 = per_head(19, 8, 128, 512)
    _, _, y4 = per_head(37, 4, 32, 64)
    return {"cast_scale": [ks.cast(y1 * 0.125, "float32")],
            "bias_relu": [ks.relu(y2 + ks.placeholder((64,), "float16", name="b"))],
            "rms_norm": [ks.rms_norm(y3)],  # a row reduction over each head's Hckv, as MlaProlog's norms
            "residual": [y4 * ks.placeholder((37, 4, 64), "float16", name="r")]}


def _cases() -> list[tuple[str, list[ks.Tensor], tuple[tuple[str, int], ...], bool | None]]:
    cases: list[tuple[str, list[ks.Tensor], tuple[tuple[str, int], ...], bool | None]] = [
        (f"T{t}_N{n}_D{d}_H{h}", [per_head(t, n, d, h)[2]], (), None) for t, n, d, h in SHAPES]
    cases.append(("split_tiles", [per_head(37, 4, 128, 64)[2]], (("m", 16), ("n", 32), ("k", 64)), None))
    cases.append(("bfloat16", [per_head(19, 4, 128, 512, "bfloat16")[2]], (), None))  # MlaProlog's dtype
    cases += [(name, outs, (), True) for name, outs in _epilogues().items()]
    _, _, y = per_head(21, 2, 128, 64)  # the unfused plan: the epilogue in a vector kernel of its own
    cases.append(("unfused", [ks.cast(y * 0.125, "float32")], (), False))
    return cases


@pytest.mark.parametrize("name", sorted(_epilogues()))
def test_fused_epilogue_runs_on_the_head_bands(name: str) -> None:
    outs = _epilogues()[name]
    s, prog = _lower(outs, fuse=True)
    assert [k.family for k in prog.kernels] == ["cube_vector"]
    inp = ks.random_inputs(outs, seed=4)
    np.testing.assert_array_equal(ks.run_tiled(prog, inp), ks.evaluate(outs[0], inp, schedule=s))


def test_per_head_matmul_three_way(twin_cache) -> None:
    """golden == run_tiled == the generated Ascend C on the twin, every case in one binary."""
    cases = _cases()
    progs, golden, tiled, inputs = [], [], [], {}
    for i, (_, outs, splits, fuse) in enumerate(cases):
        _, prog = _lower(outs, splits, fuse)
        inp = ks.random_inputs(outs, seed=10 + i)
        progs.append(prog)
        golden.append(outputs(prog, ks.evaluate(outs, inp)))
        tiled.append(outputs(prog, ks.run_tiled(prog, inp)))
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, ((name, _, splits, fuse), prog) in enumerate(zip(cases, progs, strict=True)):
        for out in prog.outputs:
            rtol, atol = TOL[prog.tensor(out).dtype]
            g = np.asarray(got[f"c{i}_{out}"], dtype=np.float32)
            np.testing.assert_allclose(tiled[i][out], golden[i][out], rtol=rtol, atol=atol, err_msg=f"{name} tiled")
            np.testing.assert_allclose(g, golden[i][out], rtol=rtol, atol=atol, err_msg=f"{name} twin")
            if not splits and fuse is None:  # the matmul alone on the auto-schedule's tiles: bit for bit (split
                # k tiles may add in another order, a vector epilogue's rsqrt may round apart by an ulp)
                np.testing.assert_array_equal(g, tiled[i][out], err_msg=f"{name} twin vs run_tiled")


# --- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("qs", "ws", "kw", "words"), [
    ((37, 4, 128), (2, 128, 64), {}, ["4 heads", "(axis 1)", "has 2"]),
    ((37, 4, 128), (4, 64, 64), {}, ["inner dimensions differ", "128 != 64"]),
    ((37, 512), (4, 128, 64), {}, ["3 dims each", "q[37,512]", "reshape"]),
    ((37, 4, 128), (4, 128, 64), {"transpose_b": True}, ["transpose_a/transpose_b", "[heads, K, N]"]),
    ((37, 4, 128), (4, 128, 64), {"batch_axis": 0}, ["batch_axis=0", "batch_axis=1"]),
    ((37, 4, 128), (4, 128, 64), {"batch_axis": True}, ["batch_axis=True"]),
])
def test_bad_shapes_name_the_numbers(qs, ws, kw, words) -> None:
    q = ks.placeholder(qs, "float16", name="q")
    w = ks.placeholder(ws, "float16", name="w")
    with pytest.raises(ShapeError) as e:
        ks.matmul(q, w, **({"batch_axis": 1} | kw))
    for word in words:
        assert word in str(e.value), (word, str(e.value))


def test_int8_heads_follow_matmul_dtypes() -> None:
    q = ks.placeholder((5, 2, 32), "int8", name="q")
    w = ks.placeholder((2, 32, 16), "int8", name="w")
    y = ks.matmul(q, w, batch_axis=1)
    assert y.dtype == "int32"
    inp = ks.random_inputs(y, seed=0)
    np.testing.assert_array_equal(ks.evaluate(y, inp), _einsum(inp).astype(np.int32))
    with pytest.raises(ks.KernelStudioError, match="int32"):
        ks.matmul(q, w, batch_axis=1, out_dtype="float16")


def test_sync_all_names_the_head_bands_and_the_way_out() -> None:
    _, _, y = per_head(21, 2, 32, 64)
    z = ks.rms_norm(y)
    s = ks.create_schedule(z, fuse=True)
    s[z].sync_all(True)
    with pytest.raises(UnsupportedError) as e:
        ks.lower(s, target="ascend910b2")
    for word in ("sync_all", "qn", "2 heads of 21x32 @ 32x64", "128 elements apart", "drop sync_all(True)",
                 "keep_out=[qn]"):
        assert word in str(e.value), (word, str(e.value))


def test_epilogue_tensor_of_another_shape_names_it_and_the_way_out() -> None:
    _, _, y = per_head(21, 2, 32, 64)
    z = y * ks.placeholder((21, 2, 1), "float16", name="c")  # one value per token and head
    with pytest.raises(UnsupportedError) as e:
        ks.lower(ks.create_schedule(z, fuse=True), target="ascend910b2")
    for word in ("c[21, 2, 1]", "qn[21, 2, 64]", "broadcast it to [21, 2, 64]", "keep_out=[qn]"):
        assert word in str(e.value), (word, str(e.value))
    s = ks.create_schedule(z, fuse=True, keep_out=[y])  # the way out it names
    assert [k.family for k in s.kernels] == ["cube", "vector"]
    inp = ks.random_inputs(z, seed=0)
    np.testing.assert_array_equal(ks.run_tiled(ks.lower(s, target="ascend910b2"), inp),
                                  ks.evaluate(z, inp, schedule=s))
    assert [k.family for k in ks.create_schedule(z).kernels] == ["cube", "vector"]  # the cost-aware plan
