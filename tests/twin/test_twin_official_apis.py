"""Kernel APIs official Ascend C code calls that the twin runs as CANN documents them: SoftMax on another
shape than its tiling's (recomputed, as CANN does) with CANN's minimum temporary space, AdjustSoftMaxRes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen import CodeBundle, TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run
from kernelstudio.twin.runner import CXX, chip_flags, include_dir

from .conftest import load_bundle

pytestmark = pytest.mark.twin

SOFTMAX = load_bundle(
    "softmax_custom", (TensorSpec("x", (64, 32), "float16"),),
    (TensorSpec("y", (64, 32), "float16"), TensorSpec("adjusted", (2,), "int32")),
)


def _softmax_input() -> np.ndarray:
    x = np.random.default_rng(7).standard_normal((64, 32)).astype(np.float16)
    x[32:] = np.minimum(x[32:], np.float16(1.5))  # core 1: no row's max is 2.0
    x[5] = -1.0
    x[5, 3] = 2.0  # row 5's max is exactly 2.0 (and row 1's, by chance): AdjustSoftMaxRes sets them to 0
    return x


def test_softmax_on_a_core_s_rows_recomputes_the_whole_tensor_s_tiling(twin_cache: Path) -> None:
    x = _softmax_input()
    y, adjusted = run(SOFTMAX, {"x": x}, cache_dir=twin_cache)
    xf = x.astype(np.float32)
    e = np.exp(xf - xf.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    hit = x.max(axis=1) == np.float16(2.0)
    assert hit.nonzero()[0].tolist() == [1, 5]
    want[hit] = 0.0
    np.testing.assert_allclose(y.astype(np.float32), want, rtol=2e-3, atol=1e-4)
    assert adjusted.tolist() == [1, 0]


def test_softmax_refuses_a_tmp_buffer_below_cann_s_minimum(twin_cache: Path) -> None:
    files = dict(SOFTMAX.files)
    files["main.cpp"] = files["main.cpp"].replace("tiling->set_tmpBytes(tmpBytes);",
                                                  "tiling->set_tmpBytes(tmpBytes - 32);")
    small = CodeBundle(SOFTMAX.name, files, SOFTMAX.inputs, SOFTMAX.outputs)
    # one 32-wide half row: (32 / 2 + 32 + 64) float32 = 448 bytes
    with pytest.raises(TwinError, match=r"bounds: SoftMax on AIV of block 0: sharedTmpBuffer holds 416 bytes but "
                                        r"the API needs at least 448 .*GetSoftMaxMinTmpSize"):
        run(small, {"x": _softmax_input()}, cache_dir=twin_cache)


SIZES_PROBE = r"""
#include <cstdio>
#include "tiling/tiling_api.h"
int main() {
    SoftMaxTiling t;
    std::printf("min %u %u\n", AscendC::GetSoftMaxMinTmpSize(ge::Shape({2, 256}), 2, false),
                AscendC::GetSoftMaxMinTmpSize(ge::Shape({2, 256}), 4, false));
    std::printf("max %u\n", AscendC::GetSoftMaxMaxTmpSize(ge::Shape({2, 256}), 2, false));
    AscendC::SoftMaxTilingFunc(ge::Shape({100, 64}), 2, 20 * 576, t);
    std::printf("split %u %u %u\n", t.splitM, t.rangeM, t.tailM);
    AscendC::SoftMaxTilingFunc(ge::Shape({100, 64}), 2, 500, t);
    std::printf("none %u\n", t.splitM);
    return 0;
}
"""


def test_softmax_temporary_sizes_follow_cann_s_rule(tmp_path: Path) -> None:
    src = tmp_path / "sizes.cpp"
    src.write_text(SIZES_PROBE)
    subprocess.run([CXX, "-std=c++17", *chip_flags("ascend910b2"), f"-I{include_dir()}", str(src), "-o",
                    str(tmp_path / "sizes")], check=True, capture_output=True)
    out = subprocess.run([str(tmp_path / "sizes")], check=True, capture_output=True, text=True).stdout
    lines = {line.split(" ", 1)[0]: line.split()[1:] for line in out.splitlines()}
    assert lines["min"] == ["1344", "1312"]  # (16 + 256 + 64) x 4 for half, (8 + 256 + 64) x 4 for float
    assert lines["max"] == ["2688"]          # every row
    # 20 rows of (16 + 64 + 64) x 4 = 576 bytes fit: 16 rows a pass (a multiple of 8), 6 passes, 4 left
    assert lines["split"] == ["16", "6", "4"]
    assert lines["none"] == ["0"]


ATOMIC = load_bundle(
    "add_atomic", (TensorSpec("x", (4, 2048), "float32"), TensorSpec("y", (4, 2048), "float32")),
    (TensorSpec("z", (2048,), "float32"), TensorSpec("w", (2048,), "float32")), workspace_bytes=1024,
)


def _atomic_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    return {"x": rng.standard_normal((4, 2048)).astype(np.float32),
            "y": rng.standard_normal((4, 2048)).astype(np.float32)}


def test_atomic_add_accumulates_every_core_into_gm_and_init_global_memory_fills(twin_cache: Path) -> None:
    inputs = _atomic_inputs()
    z, w = run(ATOMIC, inputs, cache_dir=twin_cache)
    want = (inputs["x"] + inputs["y"]).sum(axis=0)
    np.testing.assert_allclose(z, want, rtol=1e-6, atol=1e-5)  # the cores' order of float sums is the twin's
    assert (w == np.float32(1.0)).all()


def _atomic_with(old: str, new: str) -> CodeBundle:
    files = dict(ATOMIC.files)
    path = "op_kernel/add_atomic.cpp"
    assert old in files[path]
    files[path] = files[path].replace(old, new)
    return CodeBundle(ATOMIC.name, files, ATOMIC.inputs, ATOMIC.outputs, workspace_bytes=1024)


def test_without_atomic_add_the_last_core_s_store_wins(twin_cache: Path) -> None:
    inputs = _atomic_inputs()
    z, _ = run(_atomic_with("SetAtomicAdd<float>();", ""), inputs, cache_dir=twin_cache)
    rows = inputs["x"] + inputs["y"]
    assert any(np.array_equal(z, rows[b]) for b in range(4))  # one core's row, not the sum


def test_an_atomic_mode_of_another_type_is_refused(twin_cache: Path) -> None:
    with pytest.raises(TwinError, match=r"launch: DataCopy\(GM <- VECOUT, count=2048\) on AIV of block \d: atomic add "
                                        r"is set for half .* but the move stores float"):
        run(_atomic_with("SetAtomicAdd<float>();", "SetAtomicAdd<half>();"), _atomic_inputs(), cache_dir=twin_cache)


def test_a_failed_assert_names_its_condition_line_and_core(twin_cache: Path) -> None:
    bad = _atomic_with("ASSERT(length % (GetBlockNum() * 8) == 0);", "ASSERT(length % 3 == 0);")
    with pytest.raises(TwinError, match=r"assert: ASSERT\(length % 3 == 0\) failed at .*add_atomic\.cpp:11 on AIV "
                                        r"of block \d"):
        run(bad, _atomic_inputs(), cache_dir=twin_cache)


ABS_PAD = load_bundle("abs_pad", (TensorSpec("x", (16, 15), "float16"),), (TensorSpec("y", (16, 16), "float16"),))


def test_pad_widens_rows_to_whole_blocks_before_abs(twin_cache: Path) -> None:
    x = np.random.default_rng(3).standard_normal((16, 15)).astype(np.float16)
    y = run(ABS_PAD, {"x": x}, cache_dir=twin_cache)
    want = np.zeros((16, 16), np.float16)
    want[:, :15] = np.abs(x)
    np.testing.assert_array_equal(y, want)


def _abs_pad_with(path: str, old: str, new: str) -> CodeBundle:
    files = dict(ABS_PAD.files)
    assert old in files[path]
    files[path] = files[path].replace(old, new)
    return CodeBundle(ABS_PAD.name, files, ABS_PAD.inputs, ABS_PAD.outputs)


@pytest.mark.parametrize(("path", "old", "new", "error"), [
    ("main.cpp", "tiling->set_tmpBytes(minTmp);", "tiling->set_tmpBytes(minTmp - 32);",
     r"bounds: Pad on AIV of block 0: sharedTmpBuffer holds 992 bytes but the API needs at least 1024 "
     r"\(GetPadMaxMinTmpSize\)"),
    ("op_kernel/abs_pad.cpp", "PadParams params{0, static_cast<uint16_t>(paddedWidth - width), 0};",
     "PadParams params{0, 2, 0};", r"bounds: Pad on AIV of block 0: leftPad 0 \+ valid width 15 \+ rightPad 2 = 17, "
                                   r"but a padded row is 16 elements"),
], ids=["tmp-below-minimum", "pad-past-the-row"])
def test_pad_refuses_what_cann_documents_against(path: str, old: str, new: str, error: str, twin_cache: Path) -> None:
    x = np.zeros((16, 15), np.float16)
    with pytest.raises(TwinError, match=error):
        run(_abs_pad_with(path, old, new), {"x": x}, cache_dir=twin_cache)


ADD_BROADCAST = load_bundle(
    "add_broadcast",
    (TensorSpec("x", (16, 64), "float16"), TensorSpec("y", (1, 64), "float16"), TensorSpec("s", (16, 1), "float16")),
    (TensorSpec("z", (16, 64), "float16"),),
)


def test_broadcast_along_rows_and_columns_then_add(twin_cache: Path) -> None:
    rng = np.random.default_rng(4)
    x, y, s = (rng.standard_normal(shape).astype(np.float16) for shape in ((16, 64), (1, 64), (16, 1)))
    z = run(ADD_BROADCAST, {"x": x, "y": y, "s": s}, cache_dir=twin_cache)
    want = ((x + y).astype(np.float16) + s).astype(np.float16)  # two half adds, each rounded
    np.testing.assert_array_equal(z, want)


def test_broadcast_refuses_a_tmp_buffer_below_cann_s_minimum(twin_cache: Path) -> None:
    files = dict(ADD_BROADCAST.files)
    files["main.cpp"] = files["main.cpp"].replace("tiling->set_tmpBytes(rowMin > colMin ? rowMin : colMin);",
                                                  "tiling->set_tmpBytes(rowMin);")
    small = CodeBundle(ADD_BROADCAST.name, files, ADD_BROADCAST.inputs, ADD_BROADCAST.outputs)
    x, y, s = np.zeros((16, 64), np.float16), np.zeros((1, 64), np.float16), np.zeros((16, 1), np.float16)
    # [16, 1] -> [16, 64] half: one 16 x 16 block of brcb results (512 B); [1, 64] -> [16, 64] needs 32 B
    with pytest.raises(TwinError, match=r"bounds: Broadcast on AIV of block 0: sharedTmpBuffer holds 32 bytes but the "
                                        r"API needs at least 512 for \[16, 1\] -> \[16, 64\]"):
        run(small, {"x": x, "y": y, "s": s}, cache_dir=twin_cache)


def _kernel_sources(name: str) -> dict[str, str]:
    root = Path(__file__).parent / "kernels" / name
    return {p.name: p.read_text() for p in (root / "op_kernel" / f"{name}.cpp", root / "op_host" / f"{name}_tiling.h")}


def test_the_trace_front_end_times_the_new_calls() -> None:
    """Each new call logs its operands and count, so a loaded kernel's simulation prices it (as one
    elementwise pass where the cost model has no curve of its own, named in the trace notes)."""
    rng = np.random.default_rng(5)
    x, y, s = (rng.standard_normal(shape).astype(np.float16) for shape in ((16, 64), (1, 64), (16, 1)))
    brc = ks.ascendc.load(_kernel_sources("add_broadcast"), args=(x, y, s, ks.ascendc.out((16, 64), "float16")),
                          tiling={"rows": 16, "cols": 64, "tmpBytes": 512},
                          reference=lambda x, y, s: (x + y).astype(np.float16) + s)
    assert [c.api for c in brc.log.select(api="Broadcast")] == ["Broadcast", "Broadcast"]
    assert "Broadcast x2" in " ".join(brc.sim.stats["trace_notes"]) and brc.sim.time_us > 0
    xa, ya = rng.standard_normal((4, 2048)).astype(np.float32), rng.standard_normal((4, 2048)).astype(np.float32)
    atomic = ks.ascendc.load(_kernel_sources("add_atomic"), block_dim=4,
                             args=(xa, ya, ks.ascendc.out(2048, "float32"), ks.ascendc.out(2048, "float32")),
                             tiling={"length": 2048, "initValue": 2.0})
    assert {c.api for c in atomic.log.calls} >= {"SetAtomicAdd", "SetAtomicNone", "InitGlobalMemory"}
    assert atomic.sim.time_us > 0
    np.testing.assert_allclose(atomic.outputs["z"], (xa + ya).sum(axis=0), rtol=1e-6, atol=1e-5)
    assert (atomic.outputs["w"] == 2.0).all()


LN_GRAD = load_bundle(
    "layer_norm_grad",
    (TensorSpec("dy", (1, 8, 32), "float32"), TensorSpec("x", (1, 8, 32), "float32"),
     TensorSpec("variance", (1, 8), "float32"), TensorSpec("mean", (1, 8), "float32"),
     TensorSpec("gamma", (32,), "float32")),
    (TensorSpec("pd_x", (1, 8, 32), "float32"), TensorSpec("res_for_gamma", (1, 8, 32), "float32"),
     TensorSpec("pd_gamma", (32,), "float32"), TensorSpec("pd_beta", (32,), "float32")),
)


def test_layer_norm_grad_and_grad_beta_follow_cann_s_formulas(twin_cache: Path) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((1, 8, 32)).astype(np.float32)
    dy = rng.standard_normal((1, 8, 32)).astype(np.float32)
    gamma = rng.standard_normal(32).astype(np.float32)
    mean, var = x.mean(axis=-1), x.var(axis=-1)
    pd_x, res, pd_gamma, pd_beta = run(LN_GRAD, {"dy": dy, "x": x, "variance": var, "mean": mean, "gamma": gamma},
                                       cache_dir=twin_cache)
    # the documented formulas, in float64
    x64, dy64, g64, eps, h = x.astype(np.float64), dy.astype(np.float64), gamma.astype(np.float64), 1e-5, 32
    m, v = mean.astype(np.float64)[..., None], var.astype(np.float64)[..., None]
    x1, x2, rstd = dy64 * g64, x64 - m, (v + eps) ** -0.5
    pd_var = (-0.5 * x1 * x2 * rstd ** 3).sum(-1, keepdims=True)
    pd_mean = (-x1 * rstd).sum(-1, keepdims=True) + pd_var / h * (-2.0 * x2).sum(-1, keepdims=True)
    want_x = x1 * rstd + pd_var * 2.0 / h * x2 + pd_mean / h
    np.testing.assert_allclose(pd_x, want_x, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(res, x2 * rstd, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(pd_gamma, (dy64 * x2 * rstd).sum(axis=(0, 1)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(pd_beta, dy64.sum(axis=(0, 1)), rtol=1e-5, atol=1e-5)


def test_layer_norm_grad_refuses_a_tmp_buffer_below_its_minimum(twin_cache: Path) -> None:
    files = dict(LN_GRAD.files)
    files["main.cpp"] = files["main.cpp"].replace("tiling->set_tmpBytes(tmp);", "tiling->set_tmpBytes(tmp - 32);")
    small = CodeBundle(LN_GRAD.name, files, LN_GRAD.inputs, LN_GRAD.outputs)
    z8, z32 = np.zeros((1, 8, 32), np.float32), np.zeros(32, np.float32)
    inputs = {"dy": z8, "x": z8, "variance": np.ones((1, 8), np.float32), "mean": np.zeros((1, 8), np.float32),
              "gamma": z32}
    # one float row of 32: 6 float32 rows of H = 768 bytes
    with pytest.raises(TwinError, match=r"bounds: LayerNormGrad on AIV of block 0: sharedTmpBuffer holds 736 bytes but "
                                        r"the API needs at least 768 .*GetLayerNormGradMaxMinTmpSize"):
        run(small, inputs, cache_dir=twin_cache)


MMAD = load_bundle("mmad_custom", (TensorSpec("a", (32, 64), "float16"), TensorSpec("b", (64, 32), "float16")),
                   (TensorSpec("c", (32, 32), "float32"),))
BARE_MIX = load_bundle("bare_mix", (TensorSpec("a", (32, 64), "float16"), TensorSpec("b", (64, 32), "float16")),
                       (TensorSpec("c", (32, 32), "float32"), TensorSpec("y", (32, 32), "float32")))


def _ab() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(8)
    return {"a": rng.standard_normal((32, 64)).astype(np.float16),
            "b": rng.standard_normal((64, 32)).astype(np.float16)}


def test_mmad_on_the_cube_basic_api_is_the_matmul(twin_cache: Path) -> None:
    ab = _ab()
    c = run(MMAD, ab, cache_dir=twin_cache)
    # fp16 products are exact in fp32; the twin sums k in order, as a float32 dot product does
    want = ab["a"].astype(np.float32) @ ab["b"].astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-5)


def test_bare_mix_vector_cores_wait_for_the_cube_s_flag(twin_cache: Path) -> None:
    ab = _ab()
    c, y = run(BARE_MIX, ab, cache_dir=twin_cache)
    want = ab["a"].astype(np.float32) @ ab["b"].astype(np.float32)
    np.testing.assert_allclose(c, want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(y, np.where(c >= 0, c, c * np.float32(0.1)))  # LeakyReLU of what the AIC wrote
    assert (c < 0).any()


def test_bare_mix_without_the_cube_s_set_is_a_hang_the_twin_names(twin_cache: Path) -> None:
    files = dict(BARE_MIX.files)
    path = "op_kernel/bare_mix.cpp"
    files[path] = files[path].replace("CrossCoreSetFlag<2, PIPE_FIX>(C_READY);", "")
    with pytest.raises(TwinError, match=r"flag: .*CrossCoreWaitFlag"):
        run(CodeBundle(BARE_MIX.name, files, BARE_MIX.inputs, BARE_MIX.outputs), _ab(), cache_dir=twin_cache)
