"""Conv+Bias+ReLU through the cube basic API: the generated Ascend C reads like a hand-written conv
kernel and golden == run_tiled == twin, fused and unfused, single and double buffered, with tails."""

from __future__ import annotations

import time

import pytest

import kernelstudio as ks
from kernelstudio.codegen import generate_files, names_of
from kernelstudio.tileir.program import Copy, Img2Col, walk

from . import reference


def conv_bias_relu(n: int = 1, cin: int = 16, hw: int | tuple[int, int] = 20, cout: int = 32, k: int = 3,
                   stride: int = 1, padding: str | int = "SAME") -> ks.Tensor:
    """relu(conv2d(x, w) + bias) with bias [cout, 1, 1], as tests/reference_kernels.py builds it."""
    h, w_ = (hw, hw) if isinstance(hw, int) else hw
    x = ks.placeholder((n, cin, h, w_), "float16", name="x")
    w = ks.placeholder((cout, cin, k, k), "float16", name="w")
    b = ks.placeholder((cout, 1, 1), "float16", name="bias")
    return ks.relu(ks.conv2d(x, w, stride=stride, padding=padding) + b)


def _sources(prog) -> tuple[str, str]:
    files = generate_files(prog)
    n = names_of(prog, prog.kernels[0])
    return files[n.kernel_file], files[n.tiling_file]


def test_conv_kernel_uses_the_cube_basic_api() -> None:
    src, tiling = _sources(reference.lower(conv_bias_relu()))
    for piece in ("AscendC::TQue<AscendC::QuePosition::B1, 2> slabQue;",
                  "AscendC::TQue<AscendC::QuePosition::CO1, 2> cQue;",
                  "AscendC::DataCopyParams fmCopy;", "AscendC::DataCopy(slabLocal, xGm[",
                  "AscendC::DataCopyParams wCopy;", "AscendC::DataCopy(a1Local, wGm[",
                  "AscendC::LoadData2DParams load2d;",
                  "AscendC::LoadData3DParamsV2<half> load3d;", "load3d.channelSize = 16;", "load3d.filterH = 3;",
                  "load3d.padList[2] = fmPadTop;  // top", "AscendC::LoadData(b2Local, slabLocal, load3d);",
                  "AscendC::MmadParams(mlen, nlen, klen, 0, false, ko == 0)", "AscendC::FixpipeParamsV220 fixParams;",
                  "AscendC::Fixpipe<", "// img2col: patches of this pixel tile",
                  "// L1: 2 k tiles of the weights from k tile kx: GM (FRACTAL_Z) -> L1 (NZ)",
                  "KERNEL_TYPE_MIX_AIC_1_2", "AscendC::CrossCoreSetFlag<0x2, PIPE_FIX>(0);", "if ASCEND_IS_AIC {"):
        assert piece in src, piece
    assert "matmulObj" not in src and "REGIST_MATMUL_OBJ" not in src
    assert "Nd2NzParams" not in src  # the weights arrive in FRACTAL_Z, already the NZ of their matrix
    assert "TCubeTiling" not in tiling  # the basic API needs no Matmul tiling
    assert src.count("{") == src.count("}")


def test_unfused_conv_writes_float16_through_fixpipe() -> None:
    prog = reference.lower(conv_bias_relu(), fuse=False)
    src, _ = _sources(prog)
    assert prog.kernels[0].kernel_type == "AIC_ONLY"
    for piece in ("KERNEL_TYPE_AIC_ONLY", "fixParams.quantPre = QuantMode_t::F322F16;",
                  "AscendC::Fixpipe<half, float, AscendC::CFG_ROW_MAJOR>(", "fixParams.dstStride = 400;"):
        assert piece in src, piece


PADDED = {
    # input channels padded with zeros to whole C0 blocks of 16, as NC1HWC0 / FRACTAL_Z hold them
    "rgb": dict(cin=3, hw=12, cout=16),  # K = 16 * 9 = 144 of which 27 hold data
    "cin20": dict(cin=20, hw=(9, 11), cout=24),  # two C1 blocks, the second 4/16 full
    "cin5_k5_batch2": dict(n=2, cin=5, hw=9, cout=16, k=5),
}


@pytest.mark.parametrize("name", list(PADDED))
def test_channels_not_a_multiple_of_c0_are_padded_three_way(name: str, twin_cache) -> None:
    out = conv_bias_relu(**PADDED[name])
    prog = reference.lower(out)
    cin, k = PADDED[name]["cin"], PADDED[name].get("k", 3)
    conv = next(kk for kk in prog.kernels if kk.aic)
    assert dict(conv.tiling)["K"] == -(-cin // 16) * 16 * k * k  # the cube's K counts the padded channels
    (img,) = [s for s in walk(conv.aic) if isinstance(s, Img2Col)]
    assert img.cin_valid == cin and img.cin % 16 == 0
    reference.three_way(out, prog, twin_cache, seed=7)


def test_padded_channels_with_l1_weight_slabs_three_way(twin_cache) -> None:
    # the weights stream into L1 in slabs of 2 k tiles; the slab past the real channels reads zeros
    out = conv_bias_relu(cin=20, hw=8, cout=16)
    s = ks.create_schedule(out, fuse=True)
    st = s[s.kernels[0].name]
    st.split("k", 64).l1_k_steps(2, 1)
    prog = ks.lower(s, "ascend910b2")
    assert dict(prog.kernels[0].tiling)["step_ka"] == 2
    copies = [c for c in walk(prog.kernels[0].aic) if isinstance(c, Copy) and c.valid_cols is not None]
    assert copies  # the weight slab copy knows where the real channels end
    reference.three_way(out, prog, twin_cache, seed=8)


@pytest.mark.parametrize(("fuse", "double"), [(True, True), (True, False), (False, True), (False, False)])
def test_conv_bias_relu_three_way(fuse: bool, double: bool, twin_cache) -> None:
    out = conv_bias_relu()
    reference.three_way(out, reference.lower(out, fuse=fuse, double_buffer=double), twin_cache)


TAILS = {
    # Cout 20 (m tail), 13x11 map: 143 pixels (n tail), K = 144 in tiles of 64 (k tail)
    "tails": dict(cin=16, hw=(13, 11), cout=20),
    "stride2": dict(cin=16, hw=15, cout=24, stride=2),
    "valid": dict(cin=32, hw=(9, 14), cout=16, padding="VALID"),
    "k5": dict(cin=16, hw=10, cout=16, k=5),
}


@pytest.mark.parametrize("name", list(TAILS))
@pytest.mark.parametrize("fuse", [True, False])
def test_conv_bias_relu_with_tails_three_way(name: str, fuse: bool, twin_cache) -> None:
    out = conv_bias_relu(**TAILS[name])
    reference.three_way(out, reference.lower(out, fuse=fuse, double_buffer=name != "valid"), twin_cache, seed=3)


def test_batched_conv_relu_three_way(twin_cache) -> None:
    """Two images: the slab copy offsets by batch (a per-channel bias over a batch does not lower yet)."""
    x = ks.placeholder((2, 16, 9, 9), "float16", name="x")
    w = ks.placeholder((16, 16, 3, 3), "float16", name="w")
    out = ks.relu(ks.conv2d(x, w, padding="SAME"))
    reference.three_way(out, reference.lower(out), twin_cache, seed=5)


def test_conv_bias_relu_reference_size_three_way(twin_cache) -> None:
    """[1, 64, 112, 112] x 3x3 -> 64 channels: about 5 s with a cold compile cache."""
    out = conv_bias_relu(cin=64, hw=112, cout=64)
    start = time.perf_counter()
    reference.three_way(out, reference.lower(out), twin_cache)
    assert time.perf_counter() - start < 60


@pytest.mark.parametrize("fuse", [True, False])
def test_batched_conv_with_per_channel_bias_three_way(fuse: bool, twin_cache) -> None:
    # the [Cout,1,1] bias repeats every Cout rows of the [N*Cout, H*W] space
    out = conv_bias_relu(n=2, hw=(10, 9), cout=24)
    reference.three_way(out, reference.lower(out, fuse=fuse), twin_cache, seed=7)


def test_the_layout_transform_is_a_host_step() -> None:
    """The OpDef and the msOpGen JSON declare NC1HWC0 / FRACTAL_Z for the conv operands (CANN inserts
    TransData for them); main.cpp converts the logical buffers before the conv launch and passes those."""
    from kernelstudio.codegen.project import op_json

    prog = reference.lower(conv_bias_relu(cout=20), fuse=False)
    files = generate_files(prog)
    conv, add = prog.kernels[0], prog.kernels[1]
    host = files[names_of(prog, conv).host_file]
    assert 'this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_NC1HWC0});' in host
    assert 'this->Input("w").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_FRACTAL_Z});' in host
    assert "GetInputShape(0)->GetOriginShape();  // stored as NC1HWC0" in host
    assert "ge::FORMAT_NC1HWC0" not in files[names_of(prog, add).host_file]
    desc = {d["op"]: d for d in op_json(prog)}
    formats = {i["name"]: i["format"] for i in desc[names_of(prog, conv).op_type]["input_desc"]}
    assert formats == {"x": ["NC1HWC0"], "w": ["FRACTAL_Z"]}
    assert all(i["format"] == ["ND"] for i in desc[names_of(prog, add).op_type]["input_desc"])
    main = files["main.cpp"]
    for piece in ('#include "ks_twin/transdata.h"',
                  "ks_twin::host::nchw_to_nc1hwc0(xGm, xNc1hwc0Gm, xNc1hwc0GmBytes, 1, 16, 20, 20, 2);",
                  "ks_twin::host::weights_to_fractal_z(wGm, wFractalZGm, wFractalZGmBytes, 20, 16, 3, 3, 2);",
                  "launch.block_dim, xNc1hwc0Gm, wFractalZGm, conv2dGm, workspace, tiling);",
                  "AscendC::GmFree(wFractalZGm);"):
        assert piece in main, piece
    # the kernel's GM view of the weights: Cout 20 padded to 32 rows, K = 144
    kernel = files[names_of(prog, conv).kernel_file]
    assert "wGm.SetGlobalBuffer((__gm__ half*)(w), 4608);  // FRACTAL_Z" in kernel
    assert "wCopy.srcStride = 32 - mlen;  // FRACTAL_Z blocks hold 32 rows" in kernel


def test_conv_of_an_intermediate_three_way(twin_cache) -> None:
    """Unfused, the conv input is written by an earlier kernel in NCHW: main.cpp converts it between the
    launches."""
    x = ks.placeholder((1, 32, 7, 9), "float16", name="x")
    w = ks.placeholder((16, 32, 3, 3), "float16", name="w")
    out = ks.conv2d(ks.relu(x), w, padding="SAME")
    prog = reference.lower(out, fuse=False)
    assert [k.family for k in prog.kernels][-1] == "cube"
    main = generate_files(prog)["main.cpp"]
    conv_at = main.index("ks_twin::host::nchw_to_nc1hwc0(reluGm,")
    assert main.index("ICPU_RUN_KF(") < conv_at  # after the relu kernel's launch
    reference.three_way(out, prog, twin_cache, seed=9)


def test_tiling_func_sees_the_storage_shapes_transdata_leaves(twin_cache) -> None:
    """run_tiling hands TilingFunc the origin shape and, for the conv operands, the NC1HWC0 / FRACTAL_Z
    storage shape: a TilingFunc checking the feature map's storage shape against NCHW fails, as on CANN."""
    import dataclasses

    from kernelstudio import twin
    from kernelstudio.codegen import codegen
    from kernelstudio.core.errors import TwinError

    out = conv_bias_relu(hw=6, cout=20)
    prog = reference.lower(out, fuse=False)
    code = codegen(prog)
    assert ('run_tiling("' + names_of(prog, prog.kernels[0]).op_type + '", {{1, 16, 6, 6}, {20, 16, 3, 3}}, '
            '{{1, 20, 6, 6}}, platform, {{1, 1, 6, 6, 16}, {9, 2, 16, 16}});') in code.files["main.cpp"]
    host = names_of(prog, prog.kernels[0]).host_file
    files = dict(code.files)
    files[host] = files[host].replace("GetInputShape(0)->GetOriginShape()", "GetInputShape(0)->GetStorageShape()")
    with pytest.raises(TwinError, match=r"tiling: the TilingFunc of \w+ returned GRAPH_FAILED for input shapes "
                                        r"\[1, 16, 6, 6\], \[20, 16, 3, 3\]"):
        twin.run(dataclasses.replace(code, files=files), ks.random_inputs(out), cache_dir=twin_cache)
