"""The twin's sorted-list APIs (ks_twin/sort.h): MrgSort of two or three packed (score, index) lists, scores
descending, equal scores to the lower-numbered list, until every list is exhausted or (ifExhaustedSuspension)
the first one is; GetMrgSortResult; Extract; a Gather that packs scores and indices again; and their misuse."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelstudio.codegen import TensorSpec
from kernelstudio.core.errors import TwinError
from kernelstudio.twin import run

from .conftest import load_bundle

LEN, LISTS = 32, 3
SORT = load_bundle(
    "sort_apis",
    (TensorSpec("mode", (1,), "int32"), TensorSpec("lists", (2 * LISTS * LEN,), "float32")),
    (TensorSpec("vals", (LISTS * LEN,), "float32"), TensorSpec("idx", (LISTS * LEN,), "int32"),
     TensorSpec("taken", (8,), "int32"), TensorSpec("repacked", (2 * LISTS * LEN,), "float32")),
)


def _lists() -> tuple[np.ndarray, np.ndarray]:
    """Three lists of 32, each sorted descending with many equal scores across the lists; list l's indices are
    100 * l + position, so the index says which list a structure came from."""
    rng = np.random.default_rng(5)
    keys = -np.sort(rng.integers(-3, 4, size=(LISTS, LEN)), axis=1).astype(np.float32)  # descending
    idx = (100 * np.arange(LISTS)[:, None] + np.arange(LEN)[None, :]).astype(np.int32)
    return keys, idx


def _run(mode: int, cache: Path) -> dict[str, np.ndarray]:
    keys, idx = _lists()
    packed = np.empty((LISTS, LEN, 2), np.float32)
    packed[..., 0] = keys
    packed[..., 1] = idx.view(np.float32)
    inputs = {"mode": np.array([mode], np.int32), "lists": packed.reshape(-1)}
    return run(SORT, inputs, cache_dir=cache, by_name=True)


def _merge(lengths: list[int]) -> tuple[np.ndarray, np.ndarray]:
    keys, idx = _lists()
    k = np.concatenate([keys[i, :n] for i, n in enumerate(lengths)])
    i = np.concatenate([idx[i, :n] for i, n in enumerate(lengths)])
    order = np.lexsort((i, -k))  # score descending, then list (100 * list + position: list first)
    return k[order], i[order]


@pytest.mark.parametrize(("mode", "lengths"), [(0, [LEN, LEN]), (1, [LEN, LEN, LEN])])
def test_mrgsort_merges_descending_ties_to_the_lower_list(mode: int, lengths: list[int], twin_cache: Path) -> None:
    out = _run(mode, twin_cache)
    k, i = _merge(lengths)
    n = len(k)
    np.testing.assert_array_equal(out["vals"][:n], k)
    np.testing.assert_array_equal(out["idx"][:n], i)
    assert out["taken"][:4].tolist() == [*lengths, *[0] * (4 - len(lengths))]
    assert (np.diff(k) <= 0).all() and len(set(k.tolist())) < n  # descending, with ties that met
    packed = out["repacked"].reshape(-1, 2)[:n]  # the Gather packs what Extract split
    np.testing.assert_array_equal(packed[:, 0], k)
    np.testing.assert_array_equal(packed[:, 1].view(np.int32), i)


def test_mrgsort_with_exhausted_suspension_stops_at_the_first_empty_list(twin_cache: Path) -> None:
    out = _run(2, twin_cache)
    t0, t1 = out["taken"][:2].tolist()
    assert t1 == 8 and 0 < t0 < LEN, (t0, t1)  # the short list ran out first
    k, i = _merge([t0, t1])
    np.testing.assert_array_equal(out["vals"][:t0 + t1], k)
    np.testing.assert_array_equal(out["idx"][:t0 + t1], i)
    assert (out["vals"][t0 + t1:] == -1.0).all()  # past the stop: dst untouched


@pytest.mark.parametrize(
    ("mode", "fragments"),
    [
        (3, ["bounds:", "MrgSort", "validBit=0x5", "0b11"]),
        (4, ["bounds:", "MrgSort", "4096 structures", "4095"]),
        (5, ["bounds:", "MrgSort", "overlaps list 2"]),
        (6, ["bounds:", "Gather", "element 1 reads byte 768 of a 768-byte src"]),
    ],
)
def test_sort_api_misuse_is_reported(mode: int, fragments: list[str], twin_cache: Path) -> None:
    with pytest.raises(TwinError) as info:
        _run(mode, twin_cache)
    for f in fragments:
        assert f in str(info.value), (f, str(info.value))
