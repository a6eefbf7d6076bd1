"""Graph mode: every generated operator registers InferShape and InferDataType, and the twin's host API runs
them as CANN's graph engine would. Output shapes follow the input shapes where the operator takes its rows at
run time (another M than the lowered one included) and equal the lowered ones otherwise; inputs the operator
does not take fail."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import kernelstudio as ks
from kernelstudio.codegen import generate_files
from kernelstudio.codegen.naming import names_of
from kernelstudio.codegen.tiling_func import GE_DTYPES, io_params
from kernelstudio.core.errors import TwinError
from kernelstudio.tileir.program import Program
from kernelstudio.twin import run
from kernelstudio.twin.runner import CXX, chip_flags, include_dir
from tests.codegen.reference import layer_norm, mla_prolog_lite

# ge::DataType values of the twin's register/op_def_registry.h (CANN's numbering)
GE_VALUES = {0: "float32", 1: "float16", 2: "int8", 3: "int32", 27: "bfloat16", 28: "undefined"}


def _chain(rows: int = 37, cols: int = 75) -> ks.Tensor:
    """Two inputs that take the rows (x and c), one that does not (g)."""
    x = ks.placeholder((rows, cols), "float16", name="x")
    g = ks.placeholder((cols,), "float16", name="g")
    c = ks.placeholder((rows, 1), "float16", name="c")
    return ks.relu(x * g - c)


def _probe(prog: Program, k_index: int, cases: list[tuple[list[list[int]], list[str]]], tmp: Path) -> list[tuple]:
    """Compile the kernel's op_host source with a main that runs its InferShape and InferDataType through the
    twin's host API for each (input shapes, input dtypes) case; (shape status, shapes, dtype status, dtypes)."""
    k = prog.kernels[k_index]
    names = names_of(prog, k)
    files = generate_files(prog)
    for rel in (names.host_file, names.tiling_file):
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(files[rel])
    n_out = len(io_params(prog, k)[1])
    body = []
    for shapes, dtypes in cases:
        sh = "{" + ", ".join("{" + ", ".join(map(str, s)) + "}" for s in shapes) + "}"
        dt = "{" + ", ".join(GE_DTYPES[d] for d in dtypes) + "}"
        body.append(f"""    {{
        std::vector<std::vector<int64_t>> shapes;
        std::vector<ge::DataType> types;
        unsigned s = ks_twin::host::infer_shape("{names.op_type}", {sh}, {n_out}, shapes);
        unsigned t = ks_twin::host::infer_data_type("{names.op_type}", {dt}, {n_out}, types);
        std::printf("%u %u", s == ge::GRAPH_SUCCESS ? 0u : 1u, t == ge::GRAPH_SUCCESS ? 0u : 1u);
        for (const auto& v : shapes) {{
            std::printf(" [");
            for (int64_t d : v) std::printf(" %lld", static_cast<long long>(d));
            std::printf(" ]");
        }}
        for (ge::DataType d : types) std::printf(" %d", static_cast<int>(d));
        std::printf("\\n");
    }}""")
    (tmp / "probe.cpp").write_text('#include <cstdio>\n#include "ks_twin/host.h"\nint main() {\n'
                                   + "\n".join(body) + "\n    return 0;\n}\n")
    exe = tmp / "probe"
    subprocess.run([CXX, "-std=c++17", *chip_flags(prog.target), f"-I{include_dir()}", f"-I{tmp / 'op_host'}",
                    str(tmp / names.host_file), str(tmp / "probe.cpp"), "-o", str(exe), "-pthread"],
                   check=True, capture_output=True, text=True)
    lines = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines()
    out = []
    for line in lines:
        head, *rest = line.split("[", 1)
        s, t, *dts = head.split()
        text = "[" + rest[0] if rest else ""
        shape_part, _, tail = text.rpartition("]")
        shapes = [[int(d) for d in grp.split()] for grp in shape_part.replace("]", "").split("[")[1:]]
        dts = dts + tail.split()
        out.append((s == "0", shapes, t == "0", [GE_VALUES[int(d)] for d in dts]))
    return out


@pytest.mark.twin
def test_row_block_vector_operator_infers_rows_from_its_input(tmp_path: Path) -> None:
    prog = ks.lower(ks.create_schedule(layer_norm(rows=30, cols=200)), "ascend910b2")
    assert prog.kernels[0].runtime_rows is not None
    got = _probe(prog, 0, [([[30, 200]], ["float16"]), ([[61, 200]], ["float16"]), ([[-1, 200]], ["float16"]),
                           ([[61, 199]], ["float16"]), ([[2, 30, 200]], ["float16"]), ([[0, 200]], ["float16"]),
                           ([[30, 200]], ["float32"])], tmp_path)
    assert got[0] == (True, [[30, 200]], True, ["float16"])
    assert got[1] == (True, [[61, 200]], True, ["float16"])  # another row count than the lowered 30
    assert got[2] == (True, [[-1, 200]], True, ["float16"])  # rows the graph does not know yet
    assert [ok for ok, *_ in got[3:6]] == [False, False, False]  # a fixed dim, the rank, no rows
    assert got[6][2] is False  # a data type the operator does not take


@pytest.mark.twin
def test_matmul_operator_infers_m_from_a_and_keeps_n(tmp_path: Path) -> None:
    prog = ks.lower(ks.create_schedule(mla_prolog_lite(m=48, k=64, n=96), fuse=True), "ascend910b2")
    assert prog.kernels[0].runtime_rows is not None
    f16 = ["float16"] * 3
    got = _probe(prog, 0, [([[1, 48, 64], [96, 64], [96]], f16), ([[3, 20, 64], [96, 64], [96]], f16),
                           ([[3, 20, 60], [96, 64], [96]], f16), ([[3, 20, 64], [96, 60], [96]], f16)], tmp_path)
    (out,) = prog.outputs
    assert prog.tensor(out).shape == (1, 48, 96)
    assert got[0] == (True, [[1, 48, 96]], True, ["float16"])
    assert got[1] == (True, [[3, 20, 96]], True, ["float16"])  # M = 60 at run time, lowered at 48
    assert got[2][0] is False and got[3][0] is False  # K of A, K of B not as lowered


@pytest.mark.twin
def test_inputs_that_disagree_on_the_rows_fail(tmp_path: Path) -> None:
    prog = ks.lower(ks.create_schedule(_chain()), "ascend910b2")
    rt = prog.kernels[0].runtime_rows
    assert rt is not None and {"x", "c"} <= set(rt.tensors)
    order = io_params(prog, prog.kernels[0])[0]
    shapes = {"x": [12, 75], "g": [75], "c": [12, 1]}
    bad = {**shapes, "c": [13, 1]}
    f16 = ["float16"] * len(order)
    got = _probe(prog, 0, [([shapes[p] for p in order], f16), ([bad[p] for p in order], f16)], tmp_path)
    assert got[0] == (True, [[12, 75]], True, ["float16"])
    assert got[1][0] is False


@pytest.mark.twin
def test_fixed_shape_operators_of_an_unfused_program(tmp_path: Path) -> None:
    """Each kernel of an unfused program is an operator with fixed shapes: its outputs (the intermediate
    included) as lowered, int8 in and int32 out for an int8 matmul, other shapes refused."""
    a = ks.placeholder((32, 64), "int8", name="a")
    b = ks.placeholder((64, 48), "int8", name="b")
    prog = ks.lower(ks.create_schedule(ks.relu(ks.matmul(a, b)), fuse=False), "ascend910b2")
    assert len(prog.kernels) == 2
    mm = next(i for i, k in enumerate(prog.kernels) if k.aic)
    got = _probe(prog, mm, [([[32, 64], [64, 48]], ["int8", "int8"]), ([[33, 64], [64, 48]], ["int8", "int8"]),
                            ([[32, 64], [64, 48]], ["float16", "int8"])], tmp_path / "mm")
    inter = io_params(prog, prog.kernels[mm])[1]
    assert got[0] == (True, [list(prog.tensor(p).shape) for p in inter], True,
                      [prog.tensor(p).dtype for p in inter])
    assert got[0][3] == ["int32"]
    assert got[1][0] is False and got[2][2] is False


def test_every_operator_registers_both_functions() -> None:
    out = mla_prolog_lite(m=48, k=64, n=96)
    for fuse in (True, False):
        prog = ks.lower(ks.create_schedule(out, fuse=fuse), "ascend910b2")
        files = generate_files(prog)
        for k in prog.kernels:
            src = files[names_of(prog, k).host_file]
            assert "this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);" in src
            assert "static graphStatus InferShape(gert::InferShapeContext* context)" in src
            assert "static graphStatus InferDataType(gert::InferDataTypeContext* context)" in src


@pytest.mark.twin
def test_the_launch_checks_inference_against_its_buffers(twin_cache: Path) -> None:
    """main.cpp runs the operator's InferShape before each launch and refuses a buffer shape it does not give."""
    import dataclasses

    out = layer_norm(rows=30, cols=200)
    prog = ks.lower(ks.create_schedule(out), "ascend910b2")
    code = ks.codegen(prog)
    host = names_of(prog, prog.kernels[0]).host_file
    src = code.files[host]
    wrong = src.replace("SetDim(1, 200);", "SetDim(1, 100);")
    assert wrong != src
    bad = dataclasses.replace(code, files={**code.files, host: wrong})
    op = names_of(prog, prog.kernels[0]).op_type
    with pytest.raises(TwinError, match=rf"infer: the InferShape of {op} gives output shapes \[30, 100\] for input "
                                        r"shapes \[30, 200\]; the launch uses \[30, 200\]"):
        run(bad, ks.random_inputs(out, seed=0), cache_dir=twin_cache)
    missing = dataclasses.replace(code, files={**code.files, host: src.replace(
        "this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);", "")})
    with pytest.raises(TwinError, match=rf"operator {op} has no InferShape: graph mode needs one"):
        run(missing, ks.random_inputs(out, seed=0), cache_dir=twin_cache)
