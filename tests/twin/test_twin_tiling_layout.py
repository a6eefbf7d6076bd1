"""TCubeTiling has CANN's fields in CANN's order: the kernel copies the host's tiling blob into it word by
word, so a field out of place reads another field's value on the chip. As on CANN there are two: the plain
kernel struct (kernel_tiling/kernel_tiling.h) and the host class optiling::TCubeTiling (tiling/tiling_api.h)
the tiling API fills, pinned to the same layout."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from kernelstudio.codegen import generate_files, names_of
from kernelstudio.codegen.cube import TCUBE_TILING_FIELDS, cube_tiling
from kernelstudio.codegen.scope import Scope
from kernelstudio.codegen.tiling_func import API_CUBE_FIELDS
from kernelstudio.twin.runner import CXX, chip_flags, include_dir

from ..codegen import programs

# CANN 8.x kernel-side TCubeTiling (kernel_tiling.h; the host class in adv_api/matmul/matmul_tilingdata.h lists
# the same fields in the same order): 50 int32 fields. CANN 8.1 calls the last one `reserved`.
CANN_ORDER = (
    "usedCoreNum", "M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN", "baseK",
    "depthA1", "depthB1", "stepM", "stepN", "isBias", "transLength", "iterateOrder", "shareMode", "shareL1Size",
    "shareL0CSize", "shareUbSize", "batchM", "batchN", "singleBatchM", "singleBatchN", "stepKa", "stepKb",
    "depthAL1CacheUB", "depthBL1CacheUB", "dbL0A", "dbL0B", "dbL0C", "ALayoutInfoB", "ALayoutInfoS", "ALayoutInfoN",
    "ALayoutInfoG", "ALayoutInfoD", "BLayoutInfoB", "BLayoutInfoS", "BLayoutInfoN", "BLayoutInfoG", "BLayoutInfoD",
    "CLayoutInfoB", "CLayoutInfoS1", "CLayoutInfoN", "CLayoutInfoG", "CLayoutInfoS2", "BatchNum", "mxTypePara",
)
HEADER = include_dir() / "kernel_tiling" / "kernel_tiling.h"
HOST_HEADER = include_dir() / "tiling" / "tiling_api.h"


def _header_fields() -> list[tuple[str, str]]:
    text = HEADER.read_text()
    body = re.search(r"struct TCubeTiling \{(?P<body>.*?)\n\};", text, re.S)
    assert body is not None, "no struct TCubeTiling in kernel_tiling/kernel_tiling.h"
    return re.findall(r"^\s*(\w+)\s+(\w+)\s*=\s*0;", body["body"], re.M)


def test_header_lists_cann_fields_in_cann_order_all_int32_zero() -> None:
    fields = _header_fields()
    assert [name for _, name in fields] == list(CANN_ORDER)
    assert {t for t, _ in fields} == {"int32_t"}


def test_host_class_lists_the_same_fields_and_is_its_own_type() -> None:
    text = HOST_HEADER.read_text()
    listing = re.search(r"#define KS_TWIN_TCUBE_FIELDS\(X\)(?P<body>(?:.*\\\n)*.*)", text)
    assert listing is not None, "no KS_TWIN_TCUBE_FIELDS in tiling_api.h"
    assert tuple(re.findall(r"X\((\w+)\)", listing["body"])) == CANN_ORDER
    assert "class TCubeTiling" in text and "struct TCubeTiling" not in text  # the kernel struct lives elsewhere


@pytest.mark.twin
def test_offsets_compiled_match_cann_order(tmp_path: Path) -> None:
    """The compiler's view: every field of the kernel struct at 4 x its CANN index, 200 bytes in all; the host
    class (private fields, as CANN's) the same size, and each set_<field> lands on the kernel struct's field."""
    checks = "\n".join(f"static_assert(offsetof(TCubeTiling, {f}) == {4 * i}, \"{f}\");"
                       for i, f in enumerate(CANN_ORDER))
    sets = "\n".join(f"    h.set_{f}({i + 1});" for i, f in enumerate(CANN_ORDER))
    reads = " ||\n".join(f"        k.{f} != {i + 1} || h.get_{f}() != {i + 1}" for i, f in enumerate(CANN_ORDER))
    src = tmp_path / "layout.cpp"
    src.write_text(f'#include <cstddef>\n#include <cstring>\n#include <type_traits>\n#include "tiling/tiling_api.h"\n'
                   f"{checks}\n"
                   "static_assert(sizeof(TCubeTiling) == 200, \"size\");\n"
                   "static_assert(sizeof(optiling::TCubeTiling) == 200, \"host size\");\n"
                   "static_assert(!std::is_same<TCubeTiling, optiling::TCubeTiling>::value, \"two types\");\n"
                   "static_assert(std::is_trivially_copyable<optiling::TCubeTiling>::value, \"a blob\");\n"
                   f"int main()\n{{\n    optiling::TCubeTiling h;\n{sets}\n    TCubeTiling k;\n"
                   f"    h.SaveToBuffer(&k, sizeof k);\n    return ({reads}) ? 1 : 0;\n}}\n")
    exe = tmp_path / "layout"
    proc = subprocess.run([CXX, "-std=c++17", *chip_flags("ascend910b2"), f"-I{include_dir()}", str(src), "-o",
                           str(exe)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(exe)], timeout=60).returncode == 0


def test_code_generator_sets_fields_by_name_in_cann_order() -> None:
    assert TCUBE_TILING_FIELDS == CANN_ORDER
    prog, _ = programs.mla_prolog_lite()
    k = prog.kernels[0]
    t = cube_tiling(Scope(prog, k))
    assert list(t) == [f for f in CANN_ORDER if f in t]  # a subset, in CANN's order
    files = generate_files(prog)
    host = files[names_of(prog, k).host_file]
    # the Matmul tiling API derives the shape fields from the shapes and the fixed split ...
    for call in (f"SetShape({t['M']}, {t['N']}, {t['Ka']})", f"SetOrgShape({t['M']}, {t['N']}, {t['Ka']}, {t['Kb']})",
                 f"SetSingleShape({t['singleCoreM']}, {t['singleCoreN']}, {t['singleCoreK']})",
                 f"SetFixSplit({t['baseM']}, {t['baseN']}, {t['baseK']})"):
        assert f"cubeTiling.{call};" in host, call
    # ... and TilingFunc sets the rest through the host class's setters, in CANN's order (baseK again first)
    rest = [f for f in t if f not in API_CUBE_FIELDS]
    assert re.findall(r"cubeTilingData\.set_(\w+)\(", host) == ["baseK", *rest]
    for f in rest:
        assert f"tiling.cubeTilingData.set_{f}({t[f]});" in host, f
    assert "cubeTilingData" not in files["main.cpp"]  # main.cpp runs TilingFunc; it fills nothing itself


# CANN's SoftMaxTiling (kernel_tiling.h / the host tiling-data definition): 16 uint32 fields in this order.
SOFTMAX_ORDER = ("srcM", "srcK", "srcSize", "outMaxM", "outMaxK", "outMaxSize", "splitM", "splitK", "splitSize",
                 "reduceM", "reduceK", "reduceSize", "rangeM", "tailM", "tailSplitSize", "tailReduceSize")


def _compile(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    src = tmp_path / "probe.cpp"
    src.write_text('#include <cstddef>\n#include <type_traits>\n#include "register/tilingdata_base.h"\n'
                   '#include "tiling/tiling_api.h"\n' + body)
    return subprocess.run([CXX, "-std=c++17", *chip_flags("ascend910b2"), f"-I{include_dir()}", str(src), "-o",
                           str(tmp_path / "probe")], capture_output=True, text=True, timeout=120)


@pytest.mark.twin
def test_host_softmax_tiling_is_private_behind_set_get_and_is_the_kernel_struct_s_blob(tmp_path: Path) -> None:
    """As on CANN: inside a host tiling-data definition (namespace optiling) SoftMaxTiling is the tiling-data
    class, whose fields only set_/get_ reach; SoftMaxTilingFunc fills it; its blob is the plain kernel struct."""
    checks = "\n".join(f"static_assert(offsetof(SoftMaxTiling, {f}) == {4 * i}, \"{f}\");"
                       for i, f in enumerate(SOFTMAX_ORDER))
    body = (f"{checks}\n"
            "namespace optiling {\nBEGIN_TILING_DATA_DEF(ProbeTiling)\nTILING_DATA_FIELD_DEF(uint32_t, rows);\n"
            "TILING_DATA_FIELD_DEF_STRUCT(SoftMaxTiling, softmaxTilingData);\nEND_TILING_DATA_DEF;\n}\n"
            "static_assert(std::is_same<decltype(optiling::ProbeTiling{}.softmaxTilingData), "
            "optiling::SoftMaxTiling>::value, \"the host field is the class\");\n"
            "static_assert(!std::is_same<optiling::SoftMaxTiling, SoftMaxTiling>::value, \"two types\");\n"
            "static_assert(std::is_same<AscendC::tiling::SoftMaxTiling, SoftMaxTiling>::value, \"plain\");\n"
            "int main()\n{\n    optiling::ProbeTiling h;\n"
            "    AscendC::SoftMaxTilingFunc(ge::Shape({100, 64}), 2, 20 * 576, h.softmaxTilingData);\n"
            "    SoftMaxTiling k, want;\n    AscendC::SoftMaxTilingFunc(ge::Shape({100, 64}), 2, 20 * 576, want);\n"
            "    h.softmaxTilingData.SaveToBuffer(&k, sizeof k);\n"
            "    return (std::memcmp(&k, &want, sizeof k) != 0 || k.splitM == 0 || "
            "h.softmaxTilingData.get_splitM() != want.splitM || h.softmaxTilingData.get_srcM() != 100) ? 1 : 0;\n}\n")
    proc = _compile(tmp_path, body)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run([str(tmp_path / "probe")], timeout=60).returncode == 0
    direct = _compile(tmp_path, "int main()\n{\n    optiling::SoftMaxTiling h;\n    h.splitM = 8;\n"
                                "    return static_cast<int>(h.get_splitM());\n}\n")
    assert direct.returncode != 0 and "private" in direct.stderr  # written directly: CANN does not compile it
