"""MoE gating and finalize on the twin: golden == run_tiled == the generated Ascend C, every case in one twin
binary (64 tokens x 8 experts top-2; 32 experts in 4 groups, 2 kept, top-4; DeepSeek-V3's 256 / 8 / 4 / top-8
with route scale 2.5; bfloat16 logits; ties; a bias steering every token to one expert and none to another;
the softmax gate and the finalize composites). The ids agree exactly, the weights within float32 rounding
(the row sum's order). Also: the code the selection becomes, and the simulator pricing its scalar loops."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, generate_files, op_names
from kernelstudio.core.dtypes import numpy_dtype

from ..golden.test_moe_gating import finalize_case, finalize_graph
from .merge import merge

Case = Callable[[], tuple[list[ks.Tensor], ks.Schedule, dict[str, np.ndarray]]]


def _gating(tokens, experts, k, dtype="float32", tile=16, feed=None, **kw) -> Case:
    def build():
        x = ks.placeholder((tokens, experts), dtype, name="logits")
        b = ks.placeholder((experts,), dtype, name="bias")
        outs = list(ks.moe_gating_topk(x, b, k, name="gate", **kw))
        s = ks.create_schedule(outs)
        s[outs[0]].split(0, tile)
        rng = np.random.default_rng(tokens + experts + k)
        f = feed() if feed else {"logits": rng.standard_normal((tokens, experts)),
                                 "bias": rng.standard_normal(experts) * 0.1}
        return outs, s, {n: np.asarray(v).astype(numpy_dtype(dtype)) for n, v in f.items()}
    return build


def _steered() -> dict[str, np.ndarray]:
    bias = np.zeros(8)
    bias[5], bias[2] = 10.0, -10.0
    return {"logits": np.random.default_rng(4).standard_normal((64, 8)), "bias": bias}


def _softmax_gate() -> tuple[list[ks.Tensor], ks.Schedule, dict[str, np.ndarray]]:
    x = ks.placeholder((64, 8), "float32", name="logits")
    outs = list(ks.moe_gating_topk_softmax(x, 2, renorm=True, name="mix"))
    return outs, ks.create_schedule(outs), {"logits": np.random.default_rng(6).standard_normal((64, 8))
                                             .astype(np.float32)}


def _finalize(dtype: str) -> Case:
    def build():
        out = finalize_graph(24, 2, 40, dtype)
        feed, _ = finalize_case(24, 2, 40, dtype=dtype)
        return [out], ks.create_schedule(out), feed
    return build


def _finalize_token_major() -> tuple[list[ks.Tensor], ks.Schedule, dict[str, np.ndarray]]:
    feed, _ = finalize_case(24, 2, 40)
    feed["row_idx"] = feed["row_idx"].reshape(2, 24).T.reshape(-1).copy()  # pair t * k + j
    eo = ks.placeholder((48, 40), "float32", name="expert_out")
    w = ks.placeholder((24, 2), "float32", name="weights")
    idx = ks.placeholder((48,), "int32", name="row_idx")
    sh = ks.placeholder((24, 40), "float32", name="shared")
    out = ks.moe_finalize_routing(eo, w, idx, shared=sh, row_order="token_major", name="moe_out")
    return [out], ks.create_schedule(out), feed


CASES: dict[str, Case] = {
    "top2_of_8": _gating(64, 8, 2),
    "groups_32_4_keep2_top4": _gating(64, 32, 4, groups=4, topk_groups=2),
    "deepseek_v3": _gating(48, 256, 8, "bfloat16", tile=8, groups=8, topk_groups=4, route_scale=2.5),
    "bf16_groups": _gating(64, 32, 4, "bfloat16", tile=24, groups=4, topk_groups=2, renorm=False),
    "ties": _gating(16, 32, 4, tile=5, groups=4, topk_groups=2,
                    feed=lambda: {"logits": np.zeros((16, 32)), "bias": np.zeros(32)}),
    "steered": _gating(64, 8, 2, renorm=False, feed=_steered),
    "softmax_gate": _softmax_gate,
    "finalize_f32": _finalize("float32"),
    "finalize_f16": _finalize("float16"),
    "finalize_token_major": _finalize_token_major,
}


def test_gating_and_finalize_golden_run_tiled_and_twin_agree(twin_cache) -> None:
    progs, golden, tiled, inputs = [], [], [], {}
    for i, build in enumerate(CASES.values()):
        outs, s, feed = build()
        prog = ks.lower(s, target="ascend910b2")
        want = ks.evaluate(outs, feed)
        progs.append(prog)
        golden.append(dict(zip(prog.outputs, want if isinstance(want, tuple) else (want,), strict=True)))
        got = ks.run_tiled(prog, feed)
        tiled.append(dict(zip(prog.outputs, got if isinstance(got, tuple) else (got,), strict=True)))
        inputs.update({f"c{i}_{n}": v for n, v in feed.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, name in enumerate(CASES):
        for out, want in golden[i].items():
            tw, rt = np.asarray(got[f"c{i}_{out}"]), np.asarray(tiled[i][out])
            if want.dtype == np.int32:  # expert ids: exactly
                np.testing.assert_array_equal(rt, want, err_msg=f"{name} run_tiled {out}")
                np.testing.assert_array_equal(tw, want, err_msg=f"{name} twin {out}")
            else:
                tol = 2e-3 if name == "finalize_f16" else 1e-5
                np.testing.assert_allclose(rt.astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol,
                                           err_msg=f"{name} run_tiled {out}")
                np.testing.assert_allclose(tw.astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol,
                                           err_msg=f"{name} twin {out}")
    steered = golden[list(CASES).index("steered")]["gate_ids"]
    assert (steered[:, 0] == 5).all() and not (steered == 2).any()
    _, want = finalize_case(24, 2, 40)
    np.testing.assert_allclose(golden[list(CASES).index("finalize_token_major")]["moe_out"], want, rtol=1e-5,
                               atol=1e-5)
    ties = golden[list(CASES).index("ties")]["gate_ids"]
    assert (ties == np.arange(4)).all()


def _src(name: str) -> str:
    _, s, _ = CASES[name]()
    prog = ks.lower(s, target="ascend910b2")
    files = generate_files(prog)
    return "\n".join(files[n.kernel_file] for n in op_names(prog).values())


def test_the_selection_is_scalar_loops_between_vector_events() -> None:
    src = _src("groups_32_4_keep2_top4")
    order = [src.index(x) for x in (
        "AscendC::Sigmoid(", "AscendC::SetFlag<AscendC::HardEvent::V_S>", "groupScore[group] = first + second;",
        "gateSelectLocal.GetValue(row * 32 + expert)", "gateIdsLocal.SetValue(row * 8 + pick, best);",
        "AscendC::SetFlag<AscendC::HardEvent::S_V>", "AscendC::WholeReduceSum<float>", "AscendC::Div(")]
    assert order == sorted(order)
    # group "max" scores a group by its best expert only
    _, s, _ = _gating(16, 16, 2, groups=4, group_select="max")()
    files = generate_files(ks.lower(s, target="ascend910b2"))
    assert "groupScore[group] = first;" in "\n".join(files.values())


def test_the_simulator_prices_each_scalar_visit_of_the_selection() -> None:
    def s_busy(k: int) -> float:
        _, s, _ = _gating(48, 256, k, "bfloat16", tile=8, groups=8, topk_groups=4, route_scale=2.5)()
        return ks.simulate(ks.lower(s, target="ascend910b2")).metrics["pipes"]["S"]["busy_us"]
    prof = ks.hw.get("ascend910b2")
    # six more picks per token, each a walk over the 256 experts plus an id and a weight written
    extra = 48 * 6 * (256 + 2) * prof.scalar_issue_cycles / prof.clock_mhz
    assert s_busy(8) - s_busy(2) == pytest.approx(extra, rel=1e-6)
