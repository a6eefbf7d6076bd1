"""Names in the generated Ascend C: operators named after the design, never a CANN built-in op, no
parameter named like its function, queues and buffers named after their tensors."""

from __future__ import annotations

import json
import re

import pytest

import kernelstudio as ks
from kernelstudio.codegen import generate_files, names_of, op_names
from kernelstudio.codegen.project import project_files
from kernelstudio.core.names import CANN_BUILTIN_OPS, cann_snake

from . import programs, reference
from .test_layout_codegen import CASES as LAYOUT_CASES

_BUILTIN = {n.lower() for n in CANN_BUILTIN_OPS} | {cann_snake(n) for n in CANN_BUILTIN_OPS}
_ENTRY = re.compile(r'extern "C" __global__ __aicore__ void (\w+)\(([^)]*)\)')
_INIT = re.compile(r"__aicore__ inline void Init\(([^)]*)\)")


def _params(text: str) -> list[str]:
    return [p.split()[-1].lstrip("&*") for p in text.split(",") if p.strip()]


def _programs():
    for name, make in reference.REFERENCE.items():
        for fuse in (True, False):
            yield f"{name}-{'fused' if fuse else 'unfused'}", reference.lower(make(), fuse=fuse)
    for name, make in programs.ALL.items():
        yield f"hand-{name}", make()[0]
    for name, make in LAYOUT_CASES.items():
        yield f"layout-{name}", ks.lower(ks.create_schedule(list(make()), fuse=False))
    x = ks.placeholder((8, 32), "float16", name="x")
    for op in ("relu", "exp", "sigmoid", "abs"):  # unnamed outputs named after an op CANN ships
        yield f"op-{op}", ks.lower(ks.create_schedule(getattr(ks, op)(x)))
    # a design whose output shares the design's name, and tensors named like the generated symbols
    yield "out-named-out", ks.lower(ks.create_schedule(ks.relu(x, name="out")), name="out")
    y = ks.placeholder((8, 32), "float16", name="KernelSame")
    yield "tensor-named-class", ks.lower(ks.create_schedule(ks.exp(y, name="same")), name="same")


PROGRAMS = list(_programs())


@pytest.mark.parametrize(("label", "prog"), PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_no_builtin_op_names_and_no_parameter_named_like_its_function(label: str, prog) -> None:
    files = project_files(prog, generate_files(prog))
    entries = [m for path, text in files.items() if path.startswith("op_kernel/") for m in _ENTRY.findall(text)]
    assert len(entries) == len(prog.kernels)
    for fn, params in entries:
        assert fn.lower() not in _BUILTIN, fn
        assert fn not in _params(params), (fn, params)
    for path, text in files.items():
        if not path.startswith("op_kernel/"):
            continue
        cls = re.search(r"class (\w+) \{", text).group(1)
        tiling = re.search(r"const (\w+)& tiling\)", text).group(1)
        for p in _params(_INIT.search(text).group(1)):
            assert p not in (cls, tiling), (path, p)
    op_types = [d["op"] for d in json.loads(next(t for p, t in files.items() if p.endswith(".json")))]
    op_types += re.findall(r"OP_ADD\((\w+)\);", "".join(files.values()))
    op_types += re.findall(r"class (\w+) : public OpDef", "".join(files.values()))
    assert op_types and not any(t.lower() in _BUILTIN for t in op_types), op_types
    assert len({t.lower() for t in op_types}) == len(prog.kernels)  # one op type per kernel


def test_build_names_the_operator_after_the_design() -> None:
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    out = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True)))
    d = ks.build(out, name="attn_prolog", compare=False)
    files = d.code.files
    assert {"op_kernel/attn_prolog.cpp", "op_host/attn_prolog.cpp", "op_host/attn_prolog_tiling.h"} <= set(files)
    host, kernel = files["op_host/attn_prolog.cpp"], files["op_kernel/attn_prolog.cpp"]
    assert "class AttnProlog : public OpDef" in host and "OP_ADD(AttnProlog);" in host
    assert "class KernelAttnProlog {" in kernel and "void attn_prolog(GM_ADDR x, GM_ADDR w, GM_ADDR " in kernel
    assert "REGISTER_TILING_DATA_CLASS(AttnProlog, AttnPrologTilingData)" in files["op_host/attn_prolog_tiling.h"]
    assert "ICPU_RUN_KF(attn_prolog, " in files["main.cpp"]
    # lower's name= and the output's own name do the same
    lowered = ks.lower(ks.create_schedule(out), name="attn_prolog")
    assert names_of(lowered, lowered.kernels[0]).op_type == "AttnProlog"
    named = ks.gelu(ks.layer_norm(ks.matmul(x, w, transpose_b=True)), name="attn_out")
    assert [n.op_type for n in op_names(ks.lower(ks.create_schedule(named))).values()] == ["AttnOut"]


def test_builtin_named_design_gets_custom_suffix_with_a_comment() -> None:
    x = ks.placeholder((8, 32), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(x)), name="relu")
    files = generate_files(prog)
    assert set(files) == {"op_kernel/relu_custom.cpp", "op_host/relu_custom.cpp", "op_host/relu_custom_tiling.h",
                          "main.cpp"}
    for path in ("op_kernel/relu_custom.cpp", "op_host/relu_custom.cpp"):
        assert "Relu (from 'relu') is a CANN built-in operator" in files[path]
    assert "OP_ADD(ReluCustom);" in files["op_host/relu_custom.cpp"]


def test_output_named_like_the_design_is_not_the_function_parameter() -> None:
    x = ks.placeholder((8, 32), "float16", name="x")
    src = generate_files(ks.lower(ks.create_schedule(ks.relu(x, name="out"))))["op_kernel/out.cpp"]
    assert "void out(GM_ADDR x, GM_ADDR out_gm, GM_ADDR workspace, GM_ADDR tiling)" in src
    assert "op.Init(x, out_gm, workspace, tilingData);" in src


def test_queues_and_buffers_are_named_after_their_tensors() -> None:
    prog = reference.lower(reference.REFERENCE["mla_prolog_lite"]())
    src = generate_files(prog)[names_of(prog, prog.kernels[0]).kernel_file]
    for piece in ("AscendC::TQue<AscendC::QuePosition::VECIN, BUFFER_NUM> inQueueBias;",
                  "AscendC::LocalTensor<half> biasLocal = inQueueBias.AllocTensor<half>();",
                  "AscendC::TBuf<AscendC::QuePosition::VECCALC> tmpBufBiasRow;",  # the bias kept per row
                  "AscendC::TBuf<AscendC::QuePosition::VECCALC> tmpBufFull1;",
                  "AscendC::TQue<AscendC::QuePosition::VECOUT, BUFFER_NUM> outQueue"):
        assert piece in src, piece
    assert "InQue" not in src and "OutQue" not in src


def test_exported_project_is_named_after_the_operator(tmp_path) -> None:
    x = ks.placeholder((8, 32), "float16", name="x")
    prog = ks.lower(ks.create_schedule(ks.relu(x)), name="my_relu")
    root = ks.export_project(prog, tmp_path / "p")
    assert (root / "my_relu.json").is_file() and (root / "op_kernel/my_relu.cpp").is_file()
    readme = (root / "README.md").read_text()
    assert "msopgen gen -i my_relu.json" in readme and "-out my_relu_op" in readme and "aclnnMyRelu" in readme
    cmake = (root / "CMakeLists.txt").read_text()
    assert "add_executable(my_relu_cpu main.cpp op_kernel/my_relu.cpp op_host/my_relu.cpp)" in cmake
    assert "set_source_files_properties(op_kernel/my_relu.cpp PROPERTIES COMPILE_OPTIONS" in cmake
    clash = ks.lower(ks.create_schedule(ks.relu(x)), name="relu")
    root = ks.export_project(clash, tmp_path / "q")
    assert (root / "relu_custom.json").is_file()
    assert "aclnnReluCustom" in (root / "README.md").read_text()
