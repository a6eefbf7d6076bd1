"""The generated MC2 operators run on the CPU twin, one process per device on the twin's in-memory HCCL, and
equal the golden model on 2, 4 and 8 devices; a rank that breaks HCCL's protocol fails with a TwinError that
says what it did, within a bounded wait."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import TwinError

M = ks.multi
K = N = 256  # k at MC2's minimum; n = 256 puts a 128-row tile at HCCL's 64 KB minimum


def _design(kind: str, devices: int, rows: int, tiles: int, tail: str = "auto", dtype: str = "float16",
            engine: str = "aicpu"):
    m = rows * devices if kind == "matmul_reduce_scatter" else rows
    x = ks.placeholder((m, K), dtype, name="x")
    w = ks.placeholder((K, N), dtype, name="w")
    return getattr(M, kind)(x, w, cluster=M.Cluster(devices), tiles=tiles, tail=tail, engine=engine)


def _f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


CASES = [  # kind, devices, rows (per rank block for ReduceScatter), tiles, tail
    ("matmul_allreduce", 2, 640, 3, "front"),
    ("matmul_allreduce", 4, 640, 3, "back"),
    ("matmul_allreduce", 8, 512, 2, "auto"),
    ("matmul_reduce_scatter", 2, 384, 2, "back"),
    ("matmul_reduce_scatter", 4, 384, 3, "front"),
    ("matmul_reduce_scatter", 8, 256, 1, "auto"),
    ("all_gather_matmul", 2, 640, 3, "back"),
    ("all_gather_matmul", 4, 512, 2, "front"),
    ("all_gather_matmul", 8, 256, 1, "auto"),
]


AIV_CASES = [  # the AIV engine: HCCL's client on vector core 0
    ("matmul_allreduce", 2, 640, 3, "back", "aiv"),
    ("matmul_reduce_scatter", 4, 384, 2, "front", "aiv"),
    ("all_gather_matmul", 4, 512, 2, "back", "aiv"),
    ("matmul_allreduce", 8, 512, 2, "auto", "aiv"),
]


@pytest.mark.parametrize(("kind", "devices", "rows", "tiles", "tail", "engine"),
                         [(*c, "aicpu") for c in CASES] + AIV_CASES,
                         ids=[f"{c[0]}-{c[1]}dev-{c[3]}tiles-{c[4]}" for c in CASES]
                         + [f"{c[0]}-{c[1]}dev-{c[3]}tiles-{c[4]}-aiv" for c in AIV_CASES])
def test_generated_operator_equals_golden(kind, devices, rows, tiles, tail, engine, twin_cache: Path):
    d = _design(kind, devices, rows, tiles, tail, engine=engine)
    inputs = d.random_inputs(seed=devices)
    got, want = M.run_twin(d, inputs, cache_dir=twin_cache), d.evaluate(inputs)
    if kind == "all_gather_matmul":
        (y, gathered), (y_ref, gathered_ref) = got, want
        np.testing.assert_array_equal(_f32(gathered), _f32(gathered_ref))  # the gather moves bits
        got, want = y, y_ref
    assert got.shape == want.shape == (devices, *d.out_shape)
    # the twin's Matmul sums k products in its own order; the reduce adds the ranks' fp16 partials in float and
    # rounds once, as golden does: equal up to the last bit of a partial
    np.testing.assert_allclose(_f32(got), _f32(want), rtol=2e-3, atol=2e-3)
    assert np.mean(_f32(got) == _f32(want)) > 0.99
    if kind == "matmul_allreduce":  # every rank holds the same sum
        assert all(np.array_equal(got[0], got[r]) for r in range(devices))


def test_per_rank_inputs_and_bf16(twin_cache: Path):
    d = _design("matmul_allreduce", 2, 384, 2, dtype="bfloat16")
    inputs = d.random_inputs(seed=5)
    per_rank = [{"x": inputs["x"][r], "w": inputs["w"][r]} for r in range(2)]
    got = M.run_twin(d, per_rank, cache_dir=twin_cache)
    np.testing.assert_allclose(_f32(got), _f32(d.evaluate(inputs)), rtol=1e-2, atol=1e-2)


def _broken(d, old: str, new: str):
    """The design's code with one line of its kernel replaced (a kernel author's mistake)."""
    code = M.codegen(d)
    path = next(p for p in code.files if p.startswith("op_kernel/") and p.endswith(".cpp"))
    assert old in code.files[path]
    return replace(code, files={**code.files, path: code.files[path].replace(old, new)})


COMMIT = "hccl_.Commit(tail ? tailHandle_ : tileHandle_);"


def test_wait_before_commit_fails_naming_it(twin_cache: Path):
    d = _design("matmul_allreduce", 2, 384, 2, "back")
    code = _broken(d, COMMIT, "(void)0;  // no commit")
    with pytest.raises(TwinError, match=r"hccl: Wait\(0\) on rank \d before Commit: AllReduce handle 0 is committed "
                                        r"0 time\(s\) and waited 0 time\(s\)"):
        M.run_twin(d, d.random_inputs(), code=code, cache_dir=twin_cache)


def test_a_rank_that_never_commits_fails_its_run(twin_cache: Path):
    d = _design("matmul_allreduce", 4, 384, 2, "back")
    code = _broken(d, COMMIT, "if (rank_ != 2) " + COMMIT)
    with pytest.raises(TwinError, match=r"on rank 2 before Commit: AllReduce handle 0 is committed 0 time"):
        M.run_twin(d, d.random_inputs(), code=code, cache_dir=twin_cache)


def test_peers_of_a_rank_that_hangs_stop_at_the_bounded_wait(twin_cache: Path):
    d = _design("matmul_allreduce", 2, 384, 2, "back")
    stall = "if (rank_ == 1) { for (;;) { std::this_thread::sleep_for(std::chrono::milliseconds(50)); } } " + COMMIT
    code = _broken(d, COMMIT, stall)
    with pytest.raises(TwinError, match=r"rank\(s\) 1 never committed repeat 0 of AllReduce handle 0 \(waited 1.0 s\)"):
        M.run_twin(d, d.random_inputs(), code=code, cache_dir=twin_cache, hccl_timeout_s=1.0, timeout_s=60)


def test_finalize_with_a_repeat_left_uncommitted(twin_cache: Path):
    d = _design("matmul_allreduce", 2, 640, 3, "back")  # 2 long tiles + 1 short: drop the last long tile's commit
    code = _broken(d, COMMIT, "if (i != 1) " + COMMIT)
    kernel = code.files["op_kernel/matmul_all_reduce.cpp"]
    once = kernel.replace("for (uint32_t i = 0; i < tiling_.tileCnt; ++i) hccl_.Wait(tileHandle_);",
                          "hccl_.Wait(tileHandle_);")  # waits only for what was committed
    code = replace(code, files={**code.files, "op_kernel/matmul_all_reduce.cpp": once})
    with pytest.raises(TwinError, match=r"Finalize on rank \d: AllReduce handle 0 is committed 1 of the 2 times"):
        M.run_twin(d, d.random_inputs(), code=code, cache_dir=twin_cache)


EPILOGUES = [  # kind, devices, rows, tiles, epilogue: b = bias, a = residual add, g = RmsNorm with gamma, n = without;
    # then the engine (tile by tile: a short tile's epilogue has a tiling of its own)
    ("matmul_allreduce", 2, 640, 3, "b", "aicpu"),
    ("matmul_allreduce", 4, 640, 2, "bag", "aicpu"),
    ("matmul_allreduce", 8, 512, 1, "an", "aicpu"),
    ("matmul_reduce_scatter", 4, 384, 3, "b", "aicpu"),
    ("all_gather_matmul", 2, 640, 3, "b", "aicpu"),
    ("matmul_allreduce", 2, 640, 3, "bag", "aiv"),
    ("matmul_allreduce", 4, 640, 5, "ag", "aicpu"),
]


@pytest.mark.parametrize(("kind", "devices", "rows", "tiles", "epi", "engine"), EPILOGUES,
                         ids=[f"{c[0]}-{c[1]}dev-{c[3]}tiles-{c[4]}-{c[5]}" for c in EPILOGUES])
def test_epilogue_after_the_collective_equals_golden(kind, devices, rows, tiles, epi, engine, twin_cache: Path):
    m = rows * devices if kind == "matmul_reduce_scatter" else rows
    x, w = ks.placeholder((m, K), "float16", name="x"), ks.placeholder((K, N), "float16", name="w")
    kw = {}
    if "b" in epi:
        kw["bias"] = ks.placeholder((N,), "float16", name="bias")
    if "a" in epi:
        kw["add"] = ks.placeholder((m, N), "float16", name="resid")
    if "g" in epi or "n" in epi:
        kw["rms_norm"] = ks.placeholder((N,), "float16", name="gamma") if "g" in epi else True
    d = getattr(M, kind)(x, w, cluster=M.Cluster(devices), tiles=tiles, engine=engine, **kw)
    inputs = d.random_inputs(seed=devices)
    got, want = M.run_twin(d, inputs, cache_dir=twin_cache), d.evaluate(inputs)
    if kind == "all_gather_matmul":
        got, want = got[0], want[0]
    # golden adds the bias to the float sum and rounds once; the code rounds the collective's result, then the
    # epilogue rounds again: within 2 ulp of fp16
    np.testing.assert_allclose(_f32(got), _f32(want), rtol=2e-3, atol=2e-3)


def test_a_client_declared_on_a_vector_core_ignores_the_other_cores(twin_cache: Path):
    """Hccl<..., HcclServerConfig{ON_AIV, 0}>: the calls of every other core do nothing, so a kernel that does
    not gate them itself still runs each collective once per rank."""
    d = _design("matmul_allreduce", 2, 384, 2, "back", engine="aiv")
    code = _broken(d, "if (notify_) {", "if (true) {")
    assert "if (notify_)" not in next(v for k, v in code.files.items() if k.endswith("all_reduce.cpp"))
    inputs = d.random_inputs(seed=3)
    np.testing.assert_allclose(_f32(M.run_twin(d, inputs, code=code, cache_dir=twin_cache)), _f32(d.evaluate(inputs)),
                               rtol=2e-3, atol=2e-3)
