"""DynamicKernel.export_project: the multi-bucket operator as a CANN custom-operator project. Its files are
written, its CMake build compiles them against the twin, and the one binary runs shapes of two buckets (the
host tiling picks the key from the run-time rows) with golden outputs; its argument errors are named."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen.launcher import RUNTIME_DIMS_FILE
from kernelstudio.core.errors import InputError, KernelStudioError, UnsupportedError
from kernelstudio.tune.errors import TuneError
from kernelstudio.twin.runner import include_dir

from .test_dynamic_kernel_keys import CONFIGS, softmax_design


def _dk() -> ks.DynamicKernel:
    dk = ks.DynamicKernel(softmax_design, name="softmax_rows")
    dk.configs = {b: dict(c) for b, c in CONFIGS.items()}  # as dk.tune(...) leaves them, without the search
    return dk


def test_the_project_holds_every_bucket_and_its_key_choice(tmp_path: Path) -> None:
    dk = _dk()
    root = dk.export_project(tmp_path / "op", cols=48, probe=4096)
    assert root == tmp_path / "op"
    code = dk.codegen(cols=48, probe=4096)
    for rel, text in code.files.items():  # the bundle's sources, as codegen writes them
        assert (root / rel).read_text() == text
    kernel = (root / "op_kernel/softmax_rows.cpp").read_text()
    host = (root / "op_host/softmax_rows.cpp").read_text()
    for key, bucket in enumerate(("small", "tall_skinny", "general")):  # keys in the buckets' order
        assert f"TILING_KEY_IS({key})" in kernel and f"ks_{bucket}::KernelSoftmaxRows op;" in kernel
        assert f"key = {key};" in host
    assert "if (rows <= 64)" in host and "if (rows <= 1023)" in host and "context->SetTilingKey(key);" in host
    assert "this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);" in host
    (desc,) = json.loads((root / "softmax_rows.json").read_text())
    assert desc["op"] == "SoftmaxRows" and [d["name"] for d in desc["input_desc"]] == ["x"]
    readme = (root / "README.md").read_text()
    assert "## Shape buckets" in readme and "## Graph mode" in readme
    for key, bucket, span in ((0, "small", "1..64"), (2, "general", "65..1023"), (1, "tall_skinny", "1024..4096+")):
        assert f"- key {key}: bucket {bucket}, rows in {span}, configuration {CONFIGS[bucket]}" in readme
    assert (root / "CMakeLists.txt").exists() and (root / "main.cpp").exists()


@pytest.mark.twin
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_the_project_builds_and_runs_two_buckets(tmp_path: Path) -> None:
    root = _dk().export_project(tmp_path / "op", cols=48, probe=4096)
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(root), "-B", str(build), f"-DKS_TWIN_INCLUDE={include_dir()}"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "-j2"], check=True, capture_output=True)
    exe = build / "softmax_rows_cpu"
    for rows, bucket in [(37, "small"), (301, "general")]:  # 301: a tail of the general bucket's 4-row tiles
        run_dir = tmp_path / f"run{rows}"
        run_dir.mkdir()
        x = np.random.default_rng(rows).standard_normal((rows, 48)).astype(np.float16)
        x.tofile(run_dir / "x.bin")
        (run_dir / RUNTIME_DIMS_FILE).write_text(f"{rows}\n")
        subprocess.run([str(exe)], check=True, capture_output=True, cwd=run_dir,
                       env={"KS_TWIN_TILING_DUMP": str(run_dir), "PATH": "/usr/bin:/bin"})
        (out,) = [p for p in run_dir.glob("*.bin") if p.name not in ("x.bin", "SoftmaxRows.tiling.bin")]
        got = np.fromfile(out, np.float16).reshape(rows, 48)
        want = ks.evaluate(ks.softmax(ks.placeholder((rows, 48), "float16", name="x")), {"x": x})
        np.testing.assert_allclose(got.astype(np.float32), np.asarray(want, np.float32), rtol=2e-2, atol=2e-2,
                                   err_msg=f"rows={rows} ({bucket})")
        # the host tiling chose the bucket: its tile rows are in the blob the kernel read
        names = [n for n, _ in _dk().design(rows=rows, cols=48).program.kernels[0].tiling]
        fields = np.fromfile(run_dir / "SoftmaxRows.tiling.bin", dtype=np.uint32)
        assert fields[names.index("rows")] == rows
        assert fields[names.index("tile_rows")] == CONFIGS[bucket]["tile_rows"]


def test_export_refuses_a_directory_it_did_not_write(tmp_path: Path) -> None:
    dk = _dk()
    (tmp_path / "op").mkdir()
    (tmp_path / "op" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"DynamicKernel.export_project: .*op.* is not empty"):
        dk.export_project(tmp_path / "op", cols=48, probe=256)
    dk.export_project(tmp_path / "op", cols=48, probe=256, overwrite=True)  # beside the file, not over it
    assert (tmp_path / "op" / "notes.txt").read_text() == "mine"
    (tmp_path / "op" / "README.md").write_text("edited")  # a file it wrote, changed since
    with pytest.raises(InputError, match=r"DynamicKernel.export_project: .*README.md"):
        dk.export_project(tmp_path / "op", cols=48, probe=256, overwrite=True)
    assert (tmp_path / "op" / "README.md").read_text() == "edited"


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"overwrite": "yes", "cols": 48}, TuneError, r"export_project: overwrite must be True or False, got 'yes'"),
    ({"probe": 0, "cols": 48}, TuneError, r"export_project: probe=0 must be a positive int"),
    ({"dim": "depth", "cols": 48}, TuneError, r"'depth' is not a dimension of softmax_rows"),
    ({}, TuneError, r"give every dimension but 'rows' a value \(missing \['cols'\]\)"),
])
def test_export_argument_errors(tmp_path: Path, kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        _dk().export_project(tmp_path / "op", **kwargs)
    assert not (tmp_path / "op").exists()


def test_a_design_of_several_kernels_cannot_be_one_keyed_operator(tmp_path: Path) -> None:
    def two_kernels(rows: int, cols: int):
        x = ks.placeholder((rows, cols), "float16", name="x")
        return ks.create_schedule(ks.softmax(ks.relu(x)), fuse=False)

    dk = ks.DynamicKernel(two_kernels, name="two")
    with pytest.raises(UnsupportedError, match=r"lowers to 2 kernels"):
        dk.export_project(tmp_path / "op", cols=48, probe=128)
    assert issubclass(UnsupportedError, KernelStudioError) and not (tmp_path / "op").exists()
