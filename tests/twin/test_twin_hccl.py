"""The twin's in-memory HCCL on a hand-written kernel: 4 ranks, one process each; the collectives' data on
float input, and misuses of the client as `hccl` TwinErrors that say what was done."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import InputError, TwinError
from kernelstudio.twin.ranks import run_ranks

from .conftest import load_bundle

RANKS = 4
PROBE = load_bundle("hccl_probe", (TensorSpec("mode", (1,), "int32"), TensorSpec("x", (32,), "float32")),
                    (TensorSpec("y", (32,), "float32"),))
X = [np.arange(32, dtype=np.float32) * (r + 1) + r / 8 for r in range(RANKS)]


def run_mode(mode: int, cache: Path) -> list[np.ndarray]:
    inputs = [{"mode": np.array([mode], np.int32), "x": X[r]} for r in range(RANKS)]
    return [o["y"] for o in run_ranks(PROBE, inputs, cache_dir=cache, hccl_timeout_s=5)]


def test_all_reduce_sums_every_rank(twin_cache: Path) -> None:
    ys = run_mode(0, twin_cache)
    for y in ys:
        np.testing.assert_array_equal(y, sum(X))


def test_reduce_scatter_keeps_this_ranks_block_of_the_sum(twin_cache: Path) -> None:
    ys = run_mode(1, twin_cache)
    total = sum(X)  # rank block j: repeat i at j * 8 + i * 4, 4 floats; lands at recv + i * 4
    for r, y in enumerate(ys):
        np.testing.assert_array_equal(y[:8], total[r * 8:r * 8 + 8])
        assert not y[8:].any()


def test_all_gather_places_each_rank_at_its_stride(twin_cache: Path) -> None:
    for y in run_mode(2, twin_cache):
        np.testing.assert_array_equal(y, np.concatenate([X[r][:8] for r in range(RANKS)]))


@pytest.mark.parametrize(("mode", "message"), [
    (3, r"hccl: Commit\(0\) on rank \d: AllReduce handle 0 was prepared with repeat 1 and is committed 1 times"),
    (4, r"hccl: AllReduce on AIV of block 1 \(block index 1\) of rank \d: HCCL's client works on core 0 only"),
    (5, r"hccl: Wait\(0\) on rank \d: rank \d prepared handle 0 as AllReduce count (8|16) repeat 1, this rank as "
        r"AllReduce count (8|16)"),
    (6, r"hccl: AllReduce on rank \d before Hccl::Init"),
    (7, r"bounds: ReduceScatter on AIV of block 0 touches GM bytes \[0, 208\) of a GmAlloc buffer of 128 bytes"),
])
def test_misuse_is_named(mode: int, message: str, twin_cache: Path) -> None:
    with pytest.raises(TwinError, match=message):
        run_mode(mode, twin_cache)


def test_one_input_dict_per_rank() -> None:
    with pytest.raises(InputError, match=r"rank 1: kernel 'hccl_probe' takes inputs \['mode', 'x'\]: missing \['x'\]"):
        run_ranks(PROBE, [{"mode": np.array([0], np.int32), "x": X[0]}, {"mode": np.array([0], np.int32)}])
    with pytest.raises(InputError, match="inputs must be a list of one dict per rank, got dict"):
        run_ranks(PROBE, {"mode": np.array([0], np.int32), "x": X[0]})
