"""Kernels build as their own translation units, as in a CANN project: main.cpp declares the entries and is
linked with every op_kernel/*.cpp, so header code that is not ODR-safe fails to link here too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import CodeBundle, TensorSpec, codegen
from kernelstudio.codegen.project import project_files
from kernelstudio.core.errors import CompileError
from kernelstudio.twin import run
from kernelstudio.twin.runner import compile_command, sources

from ..reference_kernels import mla_prolog_lite
from .conftest import load_bundle

M, N, K = 32, 48, 64
TWO_MATMULS = load_bundle(
    "two_matmuls",
    (TensorSpec("a", (M, K), "float16"), TensorSpec("b", (K, N), "float16")),
    (TensorSpec("c1", (M, N), "float32"), TensorSpec("c2", (M, N), "float32")),
)


def test_cube_only_and_mix_matmul_kernels_link_into_one_program(twin_cache: Path) -> None:
    """mm_cube.cpp defines ASCENDC_CUBE_ONLY and mm_mix.cpp does not, with the same Matmul types. Were the
    macro read inside an inline member function, the linker would keep one unit's definition for both and
    the MIX kernel's AIV would fail the cube-only check (or the cube-only kernel lose it)."""
    assert sources(TWO_MATMULS) == ["main.cpp", "op_kernel/mm_cube.cpp", "op_kernel/mm_mix.cpp"]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c1, c2 = run(TWO_MATMULS, {"a": a, "b": b}, cache_dir=twin_cache)
    want = a.astype(np.float32) @ b.astype(np.float32)
    np.testing.assert_allclose(c1, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(c2, want, rtol=1e-5, atol=1e-4)


def test_the_unfused_plan_compiles_each_kernel_as_its_own_unit(twin_cache: Path) -> None:
    import kernelstudio as ks

    out = mla_prolog_lite(m=32, k=64, n=64)
    prog = ks.lower(ks.create_schedule(out, fuse=False), target="ascend910b2")
    assert len(prog.kernels) == 4
    code = codegen(prog)
    units = sources(code)
    assert units[0] == "main.cpp" and len(units) == 9  # main.cpp, 4 kernels, 4 host sources (TilingFunc)
    assert all(u.startswith("op_kernel/") and u.endswith(".cpp") for u in units[1:5])
    assert all(u.startswith("op_host/") and u.endswith(".cpp") for u in units[5:])
    cmd = compile_command(code, "out")
    # g++ gets main.cpp, each kernel in a unit that first includes its tiling header (the struct a CANN
    # build generates from it), and each host source; main.cpp includes none of them
    compiled = [c for c in cmd if c.endswith(".cpp")]
    assert compiled == ["main.cpp", *(f"ks_unit_{Path(u).stem}.cpp" for u in units[1:5]), *units[5:]]
    assert "#include \"op_kernel/" not in code.files["main.cpp"]
    cmake = project_files(prog, dict(code.files))["CMakeLists.txt"]
    line = next(x for x in cmake.splitlines() if x.startswith("add_executable(out_cpu "))
    assert sorted(line.removesuffix(")").split()[1:]) == sorted(units)  # the exported CPU build: the same units
    inputs = ks.random_inputs(out, seed=3)
    got = run(code, inputs, cache_dir=twin_cache)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(ks.evaluate(out, inputs), np.float32),
                               rtol=2e-2, atol=2e-2)


PROBE_KERNEL = """#include "kernel_operator.h"
#include "probe.h"
extern "C" __global__ __aicore__ void {name}(GM_ADDR out)
{{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::GlobalTensor<int32_t> outGm;
    outGm.SetGlobalBuffer((__gm__ int32_t*)out, 8);
    outGm.SetValue({slot}, ks_probe_value() + {slot});
}}
"""
PROBE_MAIN = """#include "data_utils.h"
#include "tikicpulib.h"
extern "C" __global__ __aicore__ void probe_a(GM_ADDR out);
extern "C" __global__ __aicore__ void probe_b(GM_ADDR out);
int32_t main()
{
    uint8_t* out = (uint8_t*)AscendC::GmAlloc(8 * sizeof(int32_t));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(probe_a, 1, out);
    ICPU_RUN_KF(probe_b, 1, out);
    WriteFile("out.bin", out, 8 * sizeof(int32_t));
    AscendC::GmFree(out);
    return 0;
}
"""


def _probe_bundle(definition: str, main: str = PROBE_MAIN) -> CodeBundle:
    files = {
        "main.cpp": main,
        "op_kernel/probe.h": f"#ifndef PROBE_H\n#define PROBE_H\n{definition}\n#endif\n",
        "op_kernel/probe_a.cpp": PROBE_KERNEL.format(name="probe_a", slot=0),
        "op_kernel/probe_b.cpp": PROBE_KERNEL.format(name="probe_b", slot=1),
    }
    return CodeBundle("probe", files, (), (TensorSpec("out", (8,), "int32"),))


def test_a_non_inline_function_in_a_shared_header_fails_to_link(twin_cache: Path) -> None:
    with pytest.raises(CompileError, match=r"does not link: multiple definition of `ks_probe_value\(\)`.*inline"):
        run(_probe_bundle("int ks_probe_value() { return 40; }"), {}, cache_dir=twin_cache)
    out = run(_probe_bundle("inline int ks_probe_value() { return 40; }"), {}, cache_dir=twin_cache)
    assert out.tolist() == [40, 41, 0, 0, 0, 0, 0, 0]


def test_main_that_includes_a_kernel_source_is_refused(twin_cache: Path) -> None:
    main = PROBE_MAIN.replace('extern "C" __global__ __aicore__ void probe_a(GM_ADDR out);',
                              '#include "op_kernel/probe_a.cpp"')
    with pytest.raises(CompileError, match=r"main.cpp #includes op_kernel/probe_a.cpp.*declare the kernel entry"):
        run(_probe_bundle("inline int ks_probe_value() { return 40; }", main), {}, cache_dir=twin_cache)


def test_a_declared_kernel_nobody_defines_is_a_link_error(twin_cache: Path) -> None:
    main = PROBE_MAIN.replace("ICPU_RUN_KF(probe_b, 1, out);", "ICPU_RUN_KF(probe_b, 1, out);\n"
                              "    ICPU_RUN_KF(probe_c, 1, out);").replace(
        "int32_t main()", 'extern "C" __global__ __aicore__ void probe_c(GM_ADDR out);\nint32_t main()')
    with pytest.raises(CompileError, match=r"does not link: undefined reference to `probe_c`"):
        run(_probe_bundle("inline int ks_probe_value() { return 40; }", main), {}, cache_dir=twin_cache)


@pytest.mark.twin
def test_every_twin_header_links_from_two_units(tmp_path: Path) -> None:
    """Every header of the twin included by two translation units links: no non-inline function or variable
    is defined in a header (a kernel file and main.cpp both include them)."""
    import subprocess

    from kernelstudio.twin.runner import CXX, compile_flags, include_dir

    root = include_dir()
    headers = sorted(str(p.relative_to(root)) for p in root.rglob("*.h") if p.parent.name != "ks_twin")
    assert {"kernel_operator.h", "lib/matmul_intf.h", "tikicpulib.h", "data_utils.h"} <= set(headers)
    includes = "".join(f'#include "{h}"\n' for h in headers)
    (tmp_path / "a.cpp").write_text(includes + "int ks_unit_a() { return AscendC::GetBlockNum() > 0 ? 1 : 0; }\n")
    (tmp_path / "b.cpp").write_text(includes + "int ks_unit_a();\nint main() { return ks_unit_a() + 0; }\n")
    flags = compile_flags(CodeBundle("units", {"main.cpp": ""}, (), ()))
    proc = subprocess.run([CXX, *flags, f"-I{root}", "a.cpp", "b.cpp", "-o", "units"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
