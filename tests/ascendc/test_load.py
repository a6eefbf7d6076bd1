"""ks.ascendc.load on official-sample-like kernels (outputs equal NumPy) and every way it refuses input."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.ascendc import MismatchError
from kernelstudio.core.errors import CompileError, DTypeError, InputError, KernelStudioError, TargetError, TwinError

from .conftest import KERNELS, TWIN_KERNELS, halves, line_of, seeded

ADD = TWIN_KERNELS / "add_custom" / "op_kernel" / "add_custom.cpp"
FLAGS = KERNELS / "add_flags" / "add_flags.cpp"
ADD_TILING = {"totalLength": 10037, "blockLength": 1264, "tileLength": 512}


def _add(path=ADD, **kw):
    x, y = halves(10037, 0), halves(10037, 1)
    kw.setdefault("tiling", ADD_TILING)
    kw.setdefault("block_dim", 8)
    return x, y, ks.ascendc.load(path, kernel="add_custom", args=[x, y, ks.ascendc.out(x.shape, "float16")], **kw)


# ---- samples ---------------------------------------------------------------------------------------
def test_add_custom_equals_numpy_with_tails_on_eight_cores(twin_cache):
    x, y, k = _add(cache_dir=twin_cache, reference=lambda x, y: x + y)
    assert k.name == "add_custom" and k.block_dim == 8 and list(k.outputs) == ["z"]
    np.testing.assert_array_equal(k.output, x + y)
    assert sorted(k.log.counts(core="AIV")) and {c.block for c in k.log.select(api="Add")} == set(range(8))
    assert k.files["op_kernel/add_custom.cpp"] == str(ADD)
    assert "ICPU_RUN_KF(add_custom, 8," in k.code.files["main.cpp"]


def test_tiling_as_the_structs_bytes(twin_cache):
    blob = np.array([10037, 1264, 512], dtype=np.uint32).tobytes()
    x, y, k = _add(cache_dir=twin_cache, tiling=blob)
    np.testing.assert_array_equal(k.output, x + y)


def test_matmul_leakyrelu_equals_numpy(twin_cache):
    m, n, kk = 128, 96, 64
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, kk)).astype(np.float16)
    b = rng.standard_normal((kk, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    cube = dict(usedCoreNum=4, M=m, N=n, Ka=kk, Kb=kk, singleCoreM=m // 2, singleCoreN=n // 2, singleCoreK=kk,
                baseM=32, baseN=16, baseK=32, depthA1=2, depthB1=2, isBias=1)

    def ref(a, b, bias):
        c = a.astype(np.float32) @ b.astype(np.float32) + bias
        return np.where(c >= 0, c, c * np.float32(0.1))

    k = ks.ascendc.load(TWIN_KERNELS / "matmul_leakyrelu", args=[a, b, bias, ks.ascendc.out((m, n), "float32")],
                        tiling={"alpha": 0.1, "cubeTilingData": cube}, block_dim=2, cache_dir=twin_cache,
                        reference=ref, rtol=1e-4, atol=1e-4)
    assert "MIX_MODE" in k.code.files["main.cpp"]
    assert {c.core for c in k.log.select(api="LeakyRelu")} == {"AIV0", "AIV1"}
    np.testing.assert_allclose(k.outputs["c"], ref(a, b, bias), rtol=1e-4, atol=1e-4)


def test_matmul_rowreduce_cross_core_equals_numpy(twin_cache):
    m, n, kk, blocks = 96, 80, 64, 2
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, kk)).astype(np.float16)
    b = rng.standard_normal((n, kk)).astype(np.float16)
    cube = dict(usedCoreNum=blocks, M=m, N=n, Ka=kk, Kb=kk, singleCoreM=m // blocks, singleCoreN=n,
                singleCoreK=kk, baseM=32, baseN=48, baseK=64, isBias=0)
    c = a.astype(np.float32) @ b.astype(np.float32).T
    k = ks.ascendc.load(TWIN_KERNELS / "matmul_rowreduce", args=[a, b, ks.ascendc.out(m, "float32"),
                                                                  ks.ascendc.out(m, "float32")],
                        tiling={"rowsPerVector": m // blocks // 2, "cubeTilingData": cube}, block_dim=blocks,
                        cache_dir=twin_cache, reference=(c.sum(axis=1), c.max(axis=1)), rtol=1e-4, atol=1e-4)
    assert list(k.outputs) == ["rowSum", "rowMax"]
    assert k.log.counts(core="AIC")["CrossCoreSetFlag"] == blocks


@pytest.mark.parametrize("how", ["file", "folder", "mapping"])
def test_own_kernels_from_a_file_a_folder_or_text(twin_cache, how):
    x, y = halves(8 * 2048, 2), halves(8 * 2048, 3)
    folder = KERNELS / ("add_flags" if how != "folder" else "add_prefetch")
    sources = {p.name: p.read_text() for p in folder.iterdir()} if how == "mapping" else (
        FLAGS if how == "file" else folder)
    k = ks.ascendc.load(sources, args=[x, y, ks.ascendc.out(x.shape, "float16")],
                        tiling={"blockLength": 2048, "tileLength": 512}, block_dim=8, cache_dir=twin_cache,
                        reference=lambda x, y: x + y)
    np.testing.assert_array_equal(k.output, x + y)
    assert k.name == folder.name


# ---- results that are wrong -------------------------------------------------------------------------
def test_a_mismatch_names_the_first_bad_index_and_both_values(twin_cache):
    with pytest.raises(MismatchError) as e:
        _add(cache_dir=twin_cache, reference=lambda x, y: x - y)
    msg = str(e.value)
    assert "output 'z'" in msg and "first at index [0]" in msg and "got" in msg and "expected" in msg
    assert e.value.kernel.outputs["z"].shape == (10037,)  # the run stays inspectable


def test_a_reference_of_the_wrong_shape_is_refused(twin_cache):
    with pytest.raises(InputError, match=r"reference for output 'z' has shape \[10\]"):
        _add(cache_dir=twin_cache, reference=np.zeros(10))
    with pytest.raises(InputError, match="gives 2 array"):
        _add(cache_dir=twin_cache, reference=(np.zeros(10037), np.zeros(10037)))


def test_a_compile_error_names_the_users_file_and_line(tmp_path, twin_cache):
    path, text = seeded(tmp_path, KERNELS / "add_flags", "add_flags.cpp", "Add(z, x, y,", "Addd(z, x, y,")
    with pytest.raises(CompileError) as e:
        ks.ascendc.load(path, args=[halves(64), halves(64), ks.ascendc.out(64, "float16")],
                        tiling={"blockLength": 64, "tileLength": 64}, cache_dir=twin_cache)
    assert f"{path}:{line_of(text, 'Addd(')}" in str(e.value) and "Addd" in str(e.value)


def test_an_input_smaller_than_the_kernel_reads_is_a_twin_bounds_error(twin_cache):
    small = halves(16)
    with pytest.raises(TwinError, match="bounds") as e:
        ks.ascendc.load(FLAGS, args=[small, small, ks.ascendc.out(16, "float16")],
                        tiling={"blockLength": 2048, "tileLength": 512}, cache_dir=twin_cache)
    assert e.value.calls is not None and e.value.findings == []


# ---- refusals before anything compiles ----------------------------------------------------------------
def _args(n=64):
    return [halves(n), halves(n), ks.ascendc.out(n, "float16")]


@pytest.mark.parametrize("kwargs, error, words", [
    ({"sources": "no/such/add_custom.cpp"}, InputError, "does not exist"),
    ({"sources": 42}, InputError, "must be a file or folder path"),
    ({"sources": {"k.cpp": "int main() {}"}}, InputError, "no kernel entry"),
    ({"kernel": "add_customm"}, InputError, "no kernel 'add_customm'"),
    ({"args": _args()[:2]}, InputError, "takes 3 argument(s) ['x', 'y', 'z'] but args has 2"),
    ({"args": [halves(4), halves(4), halves(4)]}, InputError, "no argument is an output"),
    ({"args": [np.zeros(64), halves(64), ks.ascendc.out(64, "float16")]}, InputError, "dtype float64"),
    ({"args": [np.zeros(64, bool), halves(64), ks.ascendc.out(64, "float16")]}, InputError, "array of numbers"),
    ({"args": [np.zeros(0, np.float16), halves(64), ks.ascendc.out(64, "float16")]}, InputError, "no elements"),
    ({"args": ["x", halves(64), ks.ascendc.out(64, "float16")]}, InputError, "array of numbers"),
    ({"args": "xyz"}, InputError, "args must be a list"),
    ({"target": "ascend999"}, TargetError, "ascend999"),
    ({"block_dim": 0}, InputError, "block_dim 0 must be a whole number from 1 to 65535"),
    ({"block_dim": -3}, InputError, "block_dim -3"),
    ({"block_dim": 2.5}, InputError, "block_dim 2.5"),
    ({"block_dim": True}, InputError, "block_dim True"),
    ({"block_dim": 70000}, InputError, "block_dim 70000"),
    ({"tiling": {"tileLen": 512}}, InputError, "tiling field 'tileLen' is not in AddCustomTilingData"),
    ({"tiling": {"tileLength": "512"}}, InputError, "give a whole number"),
    ({"tiling": [1, 2, 3]}, InputError, "tiling must be a dict"),
    ({"tiling": b""}, InputError, "tiling blob is empty"),
    ({"mode": "gpu"}, InputError, "mode 'gpu'"),
    ({"workspace_bytes": -1}, InputError, "workspace_bytes -1"),
    ({"timeout_s": 0}, InputError, "timeout_s"),
])
def test_load_refuses(kwargs, error, words):
    call = {"sources": ADD, "kernel": "add_custom", "args": _args(), "tiling": ADD_TILING, **kwargs}
    if "sources" in kwargs and kwargs["sources"] is not ADD:
        call.pop("kernel")
    with pytest.raises(error) as e:
        ks.ascendc.load(**call)
    assert isinstance(e.value, KernelStudioError)
    assert words in str(e.value)


def test_out_and_inp_refuse_bad_specs():
    with pytest.raises(InputError, match="no elements"):
        ks.ascendc.out((0, 4), "float16")
    with pytest.raises(DTypeError, match="float64"):
        ks.ascendc.out((4,), "float64")
    with pytest.raises(InputError, match="negative"):
        ks.ascendc.out((-1,), "float16")
    with pytest.raises(DTypeError):
        ks.ascendc.inp(np.zeros(4), "complex64")


def test_tiling_for_a_kernel_without_a_tiling_parameter_is_refused():
    src = {"k.cpp": '#include "kernel_operator.h"\n'
                    'extern "C" __global__ __aicore__ void k(GM_ADDR x, GM_ADDR y) {}\n'}
    with pytest.raises(InputError, match="takes no tiling parameter"):
        ks.ascendc.load(src, args=[halves(16), ks.ascendc.out(16, "float16")], tiling={"a": 1})


def test_several_entries_need_a_kernel_name():
    src = {"k.cpp": 'extern "C" __global__ __aicore__ void a(GM_ADDR x) {}\n'
                    'extern "C" __global__ __aicore__ void b(GM_ADDR x) {}\n'}
    with pytest.raises(InputError, match=r"define kernels \['a', 'b'\]; pass kernel=<name>"):
        ks.ascendc.load(src, args=[ks.ascendc.out(16, "float16")])


def test_a_tiling_blob_of_another_size_stops_before_the_kernel_reads_it(twin_cache):
    with pytest.raises(TwinError, match=r"tiling: the tiling blob has 8 bytes but AddCustomTilingData .* has 12"):
        _add(cache_dir=twin_cache, tiling=b"\0" * 8)


def test_the_twin_logs_the_users_lines(twin_cache):
    _, _, k = _add(cache_dir=twin_cache)
    text = ADD.read_text()
    [add] = {c.site for c in k.log.select(api="Add")}
    assert add == f"op_kernel/add_custom.cpp:{line_of(text, 'Add(zLocal')}"
    dq = k.log.select(api="DeQue")[0]
    assert dict(dq.refs)["q"].startswith("VECIN:") and dq.line == line_of(text, "inQueueX.DeQue")
    assert ("w", "VECOUT:4096+1024") in k.log.select(api="Add")[0].refs


COPY_BF16 = r"""
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void copy_bf16(GM_ADDR x, GM_ADDR z)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GlobalTensor<bfloat16_t> xGm, zGm;
    xGm.SetGlobalBuffer((__gm__ bfloat16_t*)x, 256);
    zGm.SetGlobalBuffer((__gm__ bfloat16_t*)z, 256);
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256 * sizeof(bfloat16_t));
    LocalTensor<bfloat16_t> t = buf.Get<bfloat16_t>();
    DataCopy(t, xGm, 256);
    SetFlag<HardEvent::MTE2_MTE3>(0);
    WaitFlag<HardEvent::MTE2_MTE3>(0);
    DataCopy(zGm, t, 256);
}
"""


def test_bfloat16_arrays_go_in_and_come_out_and_a_bfloat16_reference_is_compared(twin_cache):
    import ml_dtypes

    x = np.random.default_rng(0).standard_normal(256).astype(ml_dtypes.bfloat16)
    k = ks.ascendc.load({"copy_bf16.cpp": COPY_BF16}, args=[x, ks.ascendc.out(256, "bfloat16")],
                        reference=[x], cache_dir=twin_cache)  # the expected array itself, in bfloat16
    assert k.output.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(k.output.view(np.uint16), x.view(np.uint16))
    wrong = x.copy()
    wrong[7] = wrong[7] + ml_dtypes.bfloat16(1.0)
    with pytest.raises(ks.ascendc.MismatchError, match=r"\(7,\)|index 7|\[7\]"):
        ks.ascendc.load({"copy_bf16.cpp": COPY_BF16}, args=[x, ks.ascendc.out(256, "bfloat16")],
                        reference=[wrong], cache_dir=twin_cache)
