"""Twin checks surface as KernelStudioErrors that name the call, the numbers and a way out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import CodeBundle, TensorSpec
from kernelstudio.core.errors import CompileError, InputError, TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

ERRORS = load_bundle(
    "twin_errors",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (256,), "float16")),
    (TensorSpec("y", (256,), "float16"),),
)
X = np.linspace(-4, 4, 256).astype(np.float16)


def run_mode(mode: int, cache: Path, **kw: object) -> np.ndarray:
    return run(ERRORS, {"mode": np.array([mode], dtype=np.int32), "x": X}, cache_dir=cache, **kw)


@pytest.mark.parametrize("mode", [0, 12])
def test_the_error_kernels_bundle_runs_clean_without_a_fault(mode: int, twin_cache: Path) -> None:
    # mode 12 hands flags AIV -> AIC -> AIV (mode 2) and then meets at a mode-1 AIV barrier
    np.testing.assert_array_equal(run_mode(mode, twin_cache), X * np.float16(2))


@pytest.mark.parametrize(
    ("mode", "fragments"),
    [
        (1, ["capacity:", "InitBuffer(TQue<VECOUT, depth 2>, num=2, len=65536) on AIV of block 0",
             "131072 bytes of UB, which holds 196608 bytes (KS_UB_BYTES) with 131072 already taken",
             "65536 bytes over"]),
        (2, ["alignment:", "DataCopy(VECIN <- GM, count=100)", "200 bytes", "multiple of 16", "DataCopyPad"]),
        (3, ["queue:", "AllocTensor", "TQue<VECIN, depth 2>", "all 2 buffers", "FreeTensor"]),
        (4, ["queue:", "DeQue on AIV of block 0", "TQue<VECOUT, depth 1> is empty", "EnQue"]),
        (5, ["queue:", "FreeTensor", "byte 32 of VECIN", "not one of its buffers"]),
        (6, ["flag:", "deadlock in block 0", "AIV0 waits CrossCoreWaitFlag(5)", "AIV1 waits CrossCoreWaitFlag(5)",
             "CrossCoreSetFlag"]),
        (13, ["flag:", "AIC waits CrossCoreWaitFlag(1) that is never set"]),
        (14, ["sync:", "SyncAll() (the hard sync) in kernel sync_all_direct", "custom-operator project",
              "non-zero workspace", "kernel-direct launch"]),
        (8, ["bounds:", "DataCopy(VECIN <- GM, count=256)", "GM bytes [256, 768)", "512 bytes", "256 bytes past"]),
        (9, ["launch:", "Duplicate", "AIC of block 0", "if ASCEND_IS_AIV"]),
        (10, ["capacity:", "InitBuffer(TBuf<VECCALC>, len=204800) on AIV", "8192 bytes over"]),
        (11, ["launch:", "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2)", "SetKernelMode(KernelMode::MIX_MODE)"]),
    ],
)
def test_twin_checks_raise_twin_error(mode: int, fragments: list[str], twin_cache: Path) -> None:
    with pytest.raises(TwinError) as info:
        run_mode(mode, twin_cache)
    msg = str(info.value)
    assert msg.startswith("kernel 'twin_errors': ")
    assert "\n" not in msg
    for frag in fragments:
        assert frag in msg


def test_endless_kernel_times_out_naming_the_kernel(twin_cache: Path) -> None:
    with pytest.raises(TwinError, match=r"kernel 'twin_errors' did not finish within 1\.5 s"):
        run_mode(7, twin_cache, timeout_s=1.5)


def test_missing_extra_and_misshaped_inputs_are_input_errors(twin_cache: Path) -> None:
    mode = np.array([0], dtype=np.int32)
    with pytest.raises(InputError, match=r"takes inputs \['mode', 'x'\]: missing \['x'\]"):
        run(ERRORS, {"mode": mode}, cache_dir=twin_cache)
    with pytest.raises(InputError, match=r"unexpected \['z'\]"):
        run(ERRORS, {"mode": mode, "x": X, "z": X}, cache_dir=twin_cache)
    with pytest.raises(InputError, match=r"input 'x' has shape \[255\] but placeholder x is \[256\] float16"):
        run(ERRORS, {"mode": mode, "x": X[:255]}, cache_dir=twin_cache)


BROKEN_KERNEL = """#include "kernel_operator.h"

extern "C" __global__ __aicore__ void broken(GM_ADDR x)
{
    AscendC::GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, 16);
    undeclaredTile = xGm.GetValue(0);
}
"""


@pytest.mark.twin
def test_compile_error_quotes_the_generated_line(tmp_path: Path) -> None:
    main = ('#include "tikicpulib.h"\nextern "C" __global__ __aicore__ void broken(GM_ADDR x);\n'
            'int main() { return 0; }\n')
    code = CodeBundle("broken", {"main.cpp": main, "op_kernel/broken.cpp": BROKEN_KERNEL}, (), ())
    with pytest.raises(CompileError) as info:
        run(code, {}, cache_dir=tmp_path)
    msg = str(info.value)
    assert "op_kernel/broken.cpp:7:" in msg
    assert "'undeclaredTile' was not declared" in msg
    assert "7 | undeclaredTile = xGm.GetValue(0);" in msg


def test_bundle_rejects_paths_outside_and_missing_main() -> None:
    with pytest.raises(InputError, match="no main.cpp"):
        CodeBundle("k", {"op_kernel/k.cpp": ""}, (), ())
    with pytest.raises(InputError, match="must be relative"):
        CodeBundle("k", {"main.cpp": "", "../evil.h": ""}, (), ())
    x = TensorSpec("x", (1,), "float16")
    with pytest.raises(InputError, match="used more than once"):
        CodeBundle("k", {"main.cpp": ""}, (x, x), ())
    with pytest.raises(InputError, match="used more than once"):  # an output named as an input of another shape
        CodeBundle("k", {"main.cpp": ""}, (x,), (TensorSpec("x", (2,), "float16"),))
    with pytest.raises(InputError, match="used more than once"):
        CodeBundle("k", {"main.cpp": ""}, (), (x, x))
    in_place = CodeBundle("k", {"main.cpp": ""}, (x,), (x,))  # the input the kernel updates (a scatter's cache)
    assert in_place.inputs == in_place.outputs == (x,)


@pytest.mark.twin
def test_compile_cache_hit_on_second_compile(tmp_path: Path) -> None:
    from kernelstudio.twin import compile_bundle, is_cached

    assert not is_cached(ERRORS, cache_dir=tmp_path)
    first = compile_bundle(ERRORS, cache_dir=tmp_path)
    second = compile_bundle(ERRORS, cache_dir=tmp_path)
    assert (first.cache_hit, second.cache_hit) == (False, True)
    assert first.binary == second.binary and second.binary.is_file()
    assert is_cached(ERRORS, cache_dir=tmp_path)
    edited = CodeBundle(ERRORS.name, {**ERRORS.files, "main.cpp": ERRORS.files["main.cpp"] + "\n"}, ERRORS.inputs,
                        ERRORS.outputs)
    assert not is_cached(edited, cache_dir=tmp_path)
    other_target = CodeBundle(ERRORS.name, ERRORS.files, ERRORS.inputs, ERRORS.outputs, target="ascend310p3")
    assert not is_cached(other_target, cache_dir=tmp_path)  # other capacities, other binary
