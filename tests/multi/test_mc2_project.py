"""ks.multi.export_project: the CANN project of an MC2 design (the files ks.multi.codegen generates, with
InferShape / InferDataType, CMake, the msOpGen JSON and a README), built with CMake and run on the twin's
ranks, and its refusals."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import InputError, StageError
from kernelstudio.twin.runner import include_dir

M = ks.multi


def _design(devices: int = 2, engine: str = "aicpu", tiles: int = 3):
    x = ks.placeholder((640, 256), "float16", name="x")
    w = ks.placeholder((256, 256), "float16", name="w")
    r = ks.placeholder((640, 256), "float16", name="resid")
    g = ks.placeholder((256,), "float16", name="gamma")
    return M.matmul_allreduce(x, w, cluster=M.Cluster(devices), tiles=tiles, engine=engine, add=r, rms_norm=g)


def test_export_writes_the_generated_files_with_cmake_json_and_readme(tmp_path: Path):
    d = _design(engine="aiv")
    root = M.export_project(d, tmp_path / "mc2")
    code = M.codegen(d)
    for path, text in code.files.items():  # the very code run_twin compiles
        assert (root / path).read_text() == text
    host = (root / "op_host/matmul_all_reduce.cpp").read_text()
    assert "static graphStatus InferShape(gert::InferShapeContext* context)" in host
    assert "this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);" in host
    assert 'this->Input("resid")' in host and 'this->Input("gamma")' in host and 'this->Output("y")' in host
    assert "yOut->SetDim(0, 640);" in host and "context->SetOutputDataType(0, DT_FLOAT16)" in host
    assert "ks_twin::host::check_inference(\"MatmulAllReduce\"" in (root / "main.cpp").read_text()
    [desc] = json.loads((root / "matmul_all_reduce.json").read_text())
    assert desc["op"] == "MatmulAllReduce"
    assert [i["name"] for i in desc["input_desc"]] == ["x", "w", "resid", "gamma"]
    assert [o["name"] for o in desc["output_desc"]] == ["y"] and desc["output_desc"][0]["type"] == ["float16"]
    cmake = (root / "CMakeLists.txt").read_text()
    assert ("add_executable(matmul_all_reduce_cpu main.cpp op_kernel/matmul_all_reduce.cpp "
            "op_host/matmul_all_reduce.cpp op_host/mc2_epilogue.cpp op_host/mc2_tile_matmul.cpp)") in cmake
    assert "-include;${CMAKE_CURRENT_SOURCE_DIR}/op_host/matmul_all_reduce_tiling.h" in cmake
    readme = (root / "README.md").read_text()
    assert "MC2().HcclGroup" in readme and "HCCL_OP_EXPANSION_MODE=AIV" in readme and "rank1/" in readme
    assert "HCCL_OP_EXPANSION_MODE" not in (M.export_project(_design(), tmp_path / "cpu") / "README.md").read_text()


def test_export_refusals_name_the_thing_and_a_way_out(tmp_path: Path):
    d = _design()
    root = M.export_project(d, tmp_path / "mc2")
    with pytest.raises(InputError, match="not empty|exists|overwrite"):
        M.export_project(d, root)
    two = d.with_schedule(tiles=2)
    again = M.export_project(two, root, overwrite=True)  # replaces its own files
    t = M.mc2_tiling(two)
    assert t.tile_m != M.mc2_tiling(d).tile_m
    assert f"tiling.set_tileM({t.tile_m});" in (again / "op_host/matmul_all_reduce.cpp").read_text()
    (root / "README.md").write_text("my own notes")  # a file the user changed since: never replaced
    with pytest.raises(InputError, match="already holds README.md, which kernelstudio did not write"):
        M.export_project(d, root, overwrite=True)
    with pytest.raises(InputError, match="overwrite must be True or False"):
        M.export_project(d, tmp_path / "other", overwrite="yes")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        M.export_project(d, tmp_path / "file")
    with pytest.raises(StageError, match=r"ks.multi.export_project takes a design .* got Tensor .*ks.export_project"):
        M.export_project(d.x, tmp_path / "t")


@pytest.mark.twin
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
@pytest.mark.parametrize("engine", ["aicpu", "aiv"])
def test_the_exported_project_builds_with_cmake_and_its_ranks_equal_golden(tmp_path: Path, engine: str):
    d = _design(devices=2, engine=engine)
    root = M.export_project(d, tmp_path / "op")
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(root), "-B", str(build), f"-DKS_TWIN_INCLUDE={include_dir()}"],
                   check=True, capture_output=True)
    made = subprocess.run(["cmake", "--build", str(build), "-j2"], capture_output=True, text=True)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    inputs = d.random_inputs(seed=7)
    run = tmp_path / "run"
    for r in range(2):
        rank = run / f"rank{r}"
        rank.mkdir(parents=True)
        inputs["x"][r].reshape(640, 256).tofile(rank / "x.bin")
        inputs["w"][r].tofile(rank / "w.bin")
        inputs["resid"].reshape(640, 256).tofile(rank / "resid.bin")
        inputs["gamma"].tofile(rank / "gamma.bin")
    done = subprocess.run([str(build / "matmul_all_reduce_cpu")], cwd=run, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    got = np.stack([np.fromfile(run / f"rank{r}" / "y.bin", np.float16).reshape(640, 256) for r in range(2)])
    want = np.asarray(d.evaluate(inputs), np.float32)
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-3, atol=2e-3)
