"""Rows longer than one UB tile (lower/sort_merge.py): tiles sorted by TopK, odd-even merge-split stages of a
two-run MrgSort through a GM workspace, SyncAll between phases. With the tile forced down to 32 elements (rows
over 64 merged) so the cases stay small: golden == run_tiled == twin bit for bit for argsort / sort with many ties
in both directions and every key dtype, rows that are not a multiple of the tile, several rows, and
moe_init_routing (both of its sorts and the chunked histogram) with an expert that gets no pair and one that gets
all of them; every case in one twin binary. Also: the merge itself, the simulator's price growing with the
merges, the kernel's shape in the code (the merge is Ascend C's MrgSort, no scalar loop), and the refusal of rows
of too many tiles."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen import generate_files, op_names
from kernelstudio.core.errors import UnsupportedError
from kernelstudio.core.merge import merge_runs
from kernelstudio.lower import sort as sort_mod
from kernelstudio.lower import sort_merge

from .reference import cases_three_way

TILE, ROW = 32, 64


@pytest.fixture
def small_tiles(monkeypatch):
    """Rows over 64 elements are merged from tiles of 32 (the kernel cache is cleared around the test, so no
    kernel lowered with the real tile size is reused, nor leaks out)."""
    emitted = importlib.import_module("kernelstudio.lower.pipeline")._EMITTED
    emitted.clear()
    monkeypatch.setattr(sort_mod, "SORT_MAX_ROW", ROW)
    monkeypatch.setattr(sort_merge, "SORT_TILE", TILE)
    yield
    emitted.clear()


def _sorting(rows: int, cols: int, dtype: str, descending: bool):
    x = ks.placeholder((rows, cols), dtype, name="x")
    outs = (ks.argsort(x, descending=descending, name="i"), ks.sort(x, descending=descending, name="v"))
    keys = np.random.default_rng(cols).integers(-4, 5, size=(rows, cols))  # nine values: many ties
    return outs, {"x": (keys * (1 if dtype == "int32" else 0.25)).astype(np.float32)}


def _routing(tokens: int, k: int, experts: int, ids):
    x = ks.placeholder((tokens, 16), "float32", name="x")
    e = ks.placeholder((tokens, k), "int32", name="ids")
    outs = ks.moe_init_routing(x, e, experts, name="r")
    inp = ks.random_inputs(outs, seed=tokens)
    inp["ids"] = ids(inp["ids"]).astype(np.int32)
    return outs, inp


CASES = {
    "i32_up_100": lambda: _sorting(2, 100, "int32", False),  # 4 tiles, the last of 4 elements
    "f16_down_96": lambda: _sorting(1, 96, "float16", True),  # 3 tiles, odd count
    "bf16_up_77": lambda: _sorting(3, 77, "bfloat16", False),
    "f32_down_256": lambda: _sorting(1, 256, "float32", True),  # 8 tiles
    "routing_empty": lambda: _routing(50, 3, 8, lambda ids: np.where(ids == 5, 2, ids)),  # 150 pairs
    "routing_all_to_one": lambda: _routing(40, 2, 4, lambda ids: np.full_like(ids, 3)),  # 80 equal keys
}


def test_long_rows_sort_three_way_bit_for_bit(small_tiles, twin_cache) -> None:
    def took_the_merge_path(name: str, prog) -> None:
        merged = [k for k in prog.kernels if any("odd-even" in n for n in k.notes)]
        assert merged, f"{name}: no kernel took the merge path: {[k.notes for k in prog.kernels]}"

    golden = cases_three_way(CASES, twin_cache, took_the_merge_path)
    # the cases mean what they say: a stable sort (numpy's), an empty expert, every pair to one expert
    x = CASES["i32_up_100"]()[1]["x"]
    np.testing.assert_array_equal(golden[0]["i"], np.argsort(x, axis=-1, kind="stable"))
    assert golden[4]["r_count"][5] == 0 and golden[4]["r_count"].sum() == 150
    assert golden[5]["r_count"].tolist() == [0, 0, 0, 80]
    np.testing.assert_array_equal(golden[5]["r_row_idx"], np.arange(80))  # equal keys keep the pair order


def test_merge_runs_is_a_stable_two_way_merge() -> None:
    keys = np.array([[1.0, 3.0, 3.0, 7.0, 0.0, 3.0, 3.0, 9.0]], np.float32)
    idx = np.array([[4, 1, 6, 0, 5, 2, 7, 3]], np.int32)
    k, i = merge_runs(keys, idx, 4)
    assert k.tolist() == [[0.0, 1.0, 3.0, 3.0, 3.0, 3.0, 7.0, 9.0]]
    assert i.tolist() == [[5, 4, 1, 2, 6, 7, 0, 3]]  # equal keys by index, whichever run holds them
    kd, idd = merge_runs(-keys, idx, 4, largest=True)
    assert idd.tolist() == i.tolist() and (kd == -k).all()


def test_the_merge_kernel_in_the_code_and_the_simulator(small_tiles) -> None:
    outs, _ = _sorting(1, 256, "float32", False)
    prog = ks.lower(ks.create_schedule(outs), target="ascend910b2")
    (k,) = [k for k in prog.kernels if k.name == "v"] or prog.kernels[-1:]
    assert dict(k.tiling)["n_tiles"] == 8 and k.kernel_type == "AIV_ONLY"
    ws = {t.name: t for t in prog.tensors if t.role == "workspace"}
    assert {t.shape for t in ws.values()} == {(1, 256)} and {t.dtype for t in ws.values()} == {"float32", "int32"}
    files = generate_files(prog)
    src = "\n".join(files[n.kernel_file] for n in op_names(prog).values())
    for line in ("AscendC::SyncAll();", "AscendC::PipeBarrier<PIPE_ALL>();", "for (int32_t s = 0; s < 8; ++s)"):
        assert line in src, line
    # the merge is Ascend C's MrgSort of two packed lists (Gather packs, Extract unpacks), not a scalar loop:
    # the only scalar accesses left write Gather's offset table
    for call in ("AscendC::MrgSort(", "AscendC::MrgSort4Info", "0b11", "AscendC::Gather(", "AscendC::Extract("):
        assert call in src, call
    scalar = [ln.strip() for ln in src.splitlines() if ".GetValue(" in ln or ".SetValue(" in ln]
    assert scalar and all(ln.startswith("offsets.SetValue(") for ln in scalar), scalar
    # the merges are priced: a row of 16 tiles (16 stages) takes longer than one of 8
    t8 = ks.simulate(prog).time_us
    outs16, _ = _sorting(1, 512, "float32", False)
    t16 = ks.simulate(ks.lower(ks.create_schedule(outs16), target="ascend910b2")).time_us
    assert t16 > 1.3 * t8, (t8, t16)


def test_rows_of_too_many_tiles_are_refused_naming_the_numbers(small_tiles, monkeypatch) -> None:
    monkeypatch.setattr(sort_merge, "SORT_MAX_TILES", 4)
    x = ks.placeholder((1, 200), "float32", name="x")
    with pytest.raises(UnsupportedError, match=r"rows of 200 elements: 7 tiles of 32.*up to 4 tiles \(128 elements"):
        ks.lower(ks.create_schedule(ks.argsort(x)), target="ascend910b2")
