"""ks.argsort / ks.sort and ks.moe_init_routing in generated Ascend C: golden == run_tiled == twin bit for bit (64
tokens top-2 over 8 experts with H = 256 in bfloat16, an expert with no tokens, every token to one expert, rows of
random keys with ties in every dtype and both directions), every case in one twin binary; the code sorts with one
TopK per row (isLargest false for ascending, rows padded with the value that sorts last) and gathers each token row
by its pair index // k."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen import generate_files, op_names

from .reference import cases_three_way

Case = Callable[[], tuple[tuple[ks.Tensor, ...], dict[str, np.ndarray]]]


def _routing(ids: Callable[[np.ndarray], np.ndarray] | None = None, tokens=64, k=2, experts=8, hidden=256,
             dtype="bfloat16") -> Case:
    def build():
        x = ks.placeholder((tokens, hidden), dtype, name="x")
        e = ks.placeholder((tokens, k), "int32", name="ids")
        outs = ks.moe_init_routing(x, e, experts, name="r")
        inp = ks.random_inputs(outs, seed=tokens + experts)
        if ids is not None:
            inp["ids"] = ids(inp["ids"]).astype(np.int32)
        return outs, inp
    return build


def _no_expert_5(ids: np.ndarray) -> np.ndarray:
    return np.where(ids == 5, 2, ids)  # expert 5 gets no token (a token may name 2 twice: still routed twice)


def _sorting(rows: int, cols: int, dtype: str, descending: bool) -> Case:
    def build():
        x = ks.placeholder((rows, cols), dtype, name="x")
        outs = (ks.argsort(x, descending=descending), ks.sort(x, descending=descending))
        keys = np.random.default_rng(cols).integers(-4, 5, size=(rows, cols))  # nine values: many ties
        return outs, {"x": (keys * (1 if dtype == "int32" else 0.25)).astype(np.float32)}
    return build


CASES: dict[str, Case] = {
    "routing_bf16": _routing(),
    "routing_empty_expert": _routing(_no_expert_5, tokens=40, k=3, hidden=48, dtype="float16"),
    "routing_all_to_one": _routing(lambda ids: np.full_like(ids, 6), tokens=24, hidden=64, dtype="float32"),
    "sort_f32_up": _sorting(3, 100, "float32", False),
    "sort_f16_down": _sorting(4, 64, "float16", True),
    "sort_bf16_up": _sorting(2, 37, "bfloat16", False),
    "sort_i32_down": _sorting(5, 256, "int32", True),
}


def test_routing_and_sort_kernels_golden_run_tiled_and_twin_agree_bit_for_bit(twin_cache) -> None:
    golden = cases_three_way(CASES, twin_cache)
    counts = golden[1]["r_count"]
    assert counts[5] == 0 and counts.sum() == 40 * 3
    assert golden[2]["r_count"].tolist() == [0] * 6 + [24 * 2, 0]


def _src(name: str) -> str:
    outs, _ = CASES[name]()
    prog = ks.lower(ks.create_schedule(outs), target="ascend910b2")
    files = generate_files(prog)
    return "\n".join(files[n.kernel_file] for n in op_names(prog).values())


@pytest.mark.parametrize(("name", "lines"), [
    # ascending: the smallest first, a row of 100 padded to 128 with +inf (sorts after every key)
    ("sort_f32_up", ("AscendC::TopK<float, true, false, false, AscendC::TopKMode::TOPK_NORMAL>(",
                     ", 100, topkTiling, topkInfo, false);", "AscendC::Duplicate(topkRow, INFINITY, 128);")),
    ("sort_f16_down", ("AscendC::TopK<half, true, false, false, AscendC::TopKMode::TOPK_NORMAL>(",
                       ", 64, topkTiling, topkInfo, true);")),
    # int32 keys are sorted as float32, cast on the way in
    ("sort_i32_down", ("AscendC::Cast(sortKeys", "AscendC::RoundMode::CAST_NONE")),
    # the token row of sorted pair r: its pair index // k read on the scalar
    ("routing_bf16", ("const int32_t e = rSortedRowIdxLocal.GetValue(r) / 2;", "xGm[(e * 256) + c0]")),
])
def test_the_code_sorts_with_one_topk_per_row_and_gathers_rows_by_pair_index(name: str, lines) -> None:
    src = _src(name)
    for line in lines:
        assert line in src, f"{name}: {line!r} not in\n{src}"
