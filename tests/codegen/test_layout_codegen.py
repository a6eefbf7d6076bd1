"""select (ks.where), transpose, topk, gather and reshape / broadcast_to chains as Ascend C: the code's
shape, and three-way numerics (golden == run_tiled == twin), every case merged into one twin binary."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, generate_files, op_names

from .merge import merge
from .reference import TOL, outputs

Case = Callable[[], tuple[ks.Tensor, ...]]


def where_chain() -> tuple[ks.Tensor, ...]:
    """where fused with elementwise ops, a row vector and a column vector (cond holds 0/1)."""
    x = ks.placeholder((37, 75), "float16", name="x")
    cond = ks.placeholder((37, 75), "float16", name="cond")
    g = ks.placeholder((75,), "float16", name="g")
    c = ks.placeholder((37, 1), "float16", name="c")
    return (ks.relu(ks.where(cond, ks.exp(x) * g, x - c)) + 1.0,)


def where_broadcasts() -> tuple[ks.Tensor, ...]:
    """A per-row condition, a per-row branch and a constant branch."""
    x = ks.placeholder((21, 40), "float32", name="x")
    cond = ks.placeholder((21, 1), "float32", name="cond")
    c = ks.placeholder((21, 1), "float32", name="c")
    g = ks.placeholder((40,), "float32", name="g")
    return (ks.where(cond, c, x * 2.0) + ks.where(cond, g, 1.5),)


def transpose_f16() -> tuple[ks.Tensor, ...]:
    return (ks.transpose(ks.placeholder((6, 40, 30), "float16", name="x"), (0, 2, 1)) * 2.0,)


def transpose_f32() -> tuple[ks.Tensor, ...]:
    """4-byte data: the per-element fallback."""
    return (ks.transpose(ks.placeholder((3, 20, 13), "float32", name="x"), (0, 2, 1)) * 2.0,)


def topk_f32() -> tuple[ks.Tensor, ...]:
    return ks.topk(ks.placeholder((20, 50), "float32", name="scores"), 4)


def topk_f16() -> tuple[ks.Tensor, ...]:
    return ks.topk(ks.placeholder((9, 64), "float16", name="scores"), 4)


def gather_rows() -> tuple[ks.Tensor, ...]:
    table = ks.placeholder((16, 128), "float16", name="table")
    return (ks.gather(table, ks.placeholder((40,), "int32", name="idx")) * 2.0,)


def reshape_chain() -> tuple[ks.Tensor, ...]:
    x = ks.placeholder((6, 40, 32), "float16", name="x")
    g = ks.placeholder((32,), "float16", name="g")
    c = ks.placeholder((240,), "float16", name="c")
    y = ks.reshape(x, (240, 32)) * 2.0 + ks.broadcast_to(ks.reshape(g, (1, 32)), (240, 32))
    return (ks.reshape(y - ks.broadcast_to(ks.reshape(c, (240, 1)), (240, 32)), (6, 40, 32)),)


CASES: dict[str, Case] = {
    "where_chain": where_chain, "where_broadcasts": where_broadcasts, "transpose_f16": transpose_f16,
    "transpose_f32": transpose_f32, "topk_f32": topk_f32, "topk_f16": topk_f16, "gather": gather_rows,
    "reshape_chain": reshape_chain,
}


def _lower(outs: tuple[ks.Tensor, ...], fuse: bool):
    return ks.lower(ks.create_schedule(list(outs), fuse=fuse), target="ascend910b2")


def _inputs(name: str, outs: tuple[ks.Tensor, ...], seed: int) -> dict[str, np.ndarray]:
    inp = ks.random_inputs(list(outs), seed=seed)
    if name.startswith("topk"):  # ties: a constant row and values on a coarse grid
        s = np.round(inp["scores"].astype(np.float32) * 2) / 2
        s[1] = 0.5
        inp["scores"] = s.astype(inp["scores"].dtype)
    return inp


def _src(name: str, fuse: bool = True) -> str:
    prog = _lower(CASES[name](), fuse)
    files = generate_files(prog)
    names = op_names(prog).values()
    return "\n".join(files[n.kernel_file] for n in names) + files["main.cpp"] + "".join(
        files[n.tiling_file] + files[n.host_file] for n in names)


def test_select_is_compare_and_select() -> None:
    src = _src("where_chain")
    for piece in ("AscendC::CompareScalar(selMask", "AscendC::CMPMODE::NE", "selMaskBuf.Get<uint8_t>()",
                  "AscendC::SELMODE::VSEL_TENSOR_TENSOR_MODE"):
        assert piece in src, piece
    src = _src("where_broadcasts")
    for piece in ("AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE", "AscendC::CMPMODE::EQ", "AscendC::Duplicate(selCond",
                  "HardEvent::V_S"):
        assert piece in src, piece


def test_transpose_uses_the_api_for_half_and_scalar_moves_otherwise() -> None:
    src = _src("transpose_f16")
    first_kernel = "class Kernel".join(src.split("class Kernel")[:2])
    assert "AscendC::Transpose(blockOut, blockIn);" in src and "GetValue" not in first_kernel
    src = _src("transpose_f32")
    assert "AscendC::Transpose(" not in src
    pre, post = src.index("HardEvent::MTE2_S"), src.index("HardEvent::S_MTE3")
    assert pre < src.index(".SetValue(") < post


def test_topk_uses_the_high_level_api_with_its_tiling() -> None:
    src = _src("topk_f32")
    for piece in ("AscendC::TopK<float, true, false, false, AscendC::TopKMode::TOPK_NORMAL>(",
                  "AscendC::ArithProgression<int32_t>(topkIndex, 0, 1, 64);", "topkTiling = tiling.topkTilingData;",
                  "TILING_DATA_FIELD_DEF_STRUCT(TopkTiling, topkTilingData);",
                  "AscendC::TopKTilingFunc(ascendcPlatform, 64, 1, 4, 4, true,",
                  "AscendC::Duplicate(topkRow, -INFINITY, 64);", "pipe.InitBuffer(topkTmpBuf, "):
        assert piece in src, piece
    assert "topkRow" not in _src("topk_f16")  # rows of 64 need no padding


def test_gather_index_read_waits_for_its_copy() -> None:
    src = _src("gather")
    body = src[src.index("void ProcessVector()"):]
    wait = body.index("WaitFlag<AscendC::HardEvent::MTE2_S>")
    assert body.index("inQueueIdx.DeQue<int32_t>()") < wait < body.index("idxLocal.GetValue(r)")
    assert body.index("WaitFlag<AscendC::HardEvent::MTE2_MTE3>") < body.index("CopyOut(")


@pytest.mark.parametrize("fuse", [True, False])
def test_layout_kernels_three_way(fuse: bool, twin_cache) -> None:
    progs, golden, tiled, inputs = [], [], [], {}
    for i, (name, build) in enumerate(CASES.items()):
        outs = build()
        prog = _lower(outs, fuse)
        inp = _inputs(name, outs, seed=i)
        progs.append(prog)
        golden.append(outputs(prog, tuple(ks.evaluate(list(outs), inp))))
        tiled.append(outputs(prog, ks.run_tiled(prog, inp)))
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, (name, prog) in enumerate(zip(CASES, progs, strict=True)):
        for out in prog.outputs:
            dt = prog.tensor(out).dtype
            rtol, atol = TOL.get(dt, (0.0, 0.0))
            g = np.asarray(got[f"c{i}_{out}"], dtype=np.float32)
            np.testing.assert_allclose(tiled[i][out], golden[i][out], rtol=rtol, atol=atol,
                                       err_msg=f"{name} {out} run_tiled")
            np.testing.assert_allclose(g, golden[i][out], rtol=rtol, atol=atol, err_msg=f"{name} {out} twin")
