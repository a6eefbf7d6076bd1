"""ks.tune on a design holding a fused attention kernel searches its blocks (s1, s2) and slots without the build
function declaring them; their stops fit the chip; a combination that overflows is refused with the buffer and
bytes; a knob of the build function that already sets a directive keeps it."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.schedule.knobs import Knob
from kernelstudio.tune.attention_knobs import apply_attention_knobs, directives_text
from kernelstudio.tune.evaluate import discover, evaluate_config
from kernelstudio.tune.feasibility import short_reason

TARGET = "ascend910b2"


def _attention(s_q: int, s_kv: int, d: int = 128):
    def build():
        q = ks.placeholder((1, 1, s_q, d), "float16", name="query")
        k, v = (ks.placeholder((1, 1, s_kv, d), "float16", name=n) for n in ("key", "value"))
        return ks.ops.flash_attention(q, k, v)
    build.__name__ = f"attention_{s_q}x{s_kv}"
    return build


def _knobs(build) -> dict[str, Knob]:
    return {k.name: k for k in discover(build, TARGET).knobs}


def test_an_attention_design_declares_its_blocks_and_slots_as_knobs():
    knobs = _knobs(_attention(2048, 2048))
    assert list(knobs) == ["attention_out.s1", "attention_out.s2", "attention_out.slots"]
    assert knobs["attention_out.s1"].choices == (64, 128, 256) and knobs["attention_out.s1"].default == 128
    assert knobs["attention_out.s2"].choices == (128, 256, 384, 512, 768, 1024, 1536, 2048)
    assert knobs["attention_out.s2"].default == 512
    assert knobs["attention_out.slots"].choices == (1, 2, 3, 4) and knobs["attention_out.slots"].default == 3


def test_the_stops_stay_within_the_sequence_and_what_fits():
    short = _knobs(_attention(100, 200))  # S1 pads to 112 rows, S2 to 208 columns
    assert short["attention_out.s1"].choices == (64, 112)  # 128 and 256 are past the query rows; 112 is the default
    assert short["attention_out.s2"].choices == (128, 208)
    wide = _knobs(_attention(512, 512, d=192))  # a 256-row block of Q at D = 192 is 98,304 B: L0A holds 65,536
    assert wide["attention_out.s1"].choices == (64, 128)


@pytest.mark.parametrize("s", [512, 2048])
def test_the_tuner_finds_a_faster_setting_than_the_default(s):
    r = ks.tune(_attention(s, s), TARGET, budget=16, executor="inline", db=False, progress=False)
    assert r.history[0].config == {"attention_out.s1": 128, "attention_out.s2": 512, "attention_out.slots": 3}
    assert r.best_time_us < r.default.time_us  # 512: 17.06 -> 11.74 us (s1 64, s2 128, 4 slots); 2048: 4 slots
    best = r.best.design  # the best configuration rebuilt: its directives reach the kernel
    tiling = dict(best.program.kernels[0].tiling)
    cfg = r.best.config
    assert (tiling["s1_block"], tiling["s2_block"], tiling["ws_slots"]) == (
        cfg["attention_out.s1"], cfg["attention_out.s2"], cfg["attention_out.slots"])
    assert best.sim.time_us == pytest.approx(r.best_time_us, rel=1e-9)


def test_a_combination_that_overflows_is_refused_with_the_buffer_and_bytes():
    build = _attention(512, 12288)
    knobs = _knobs(build)
    assert 12288 in knobs["attention_out.s2"].choices  # fits with 128-row S1 blocks
    out = evaluate_config(build, {"attention_out.s1": 256, "attention_out.s2": 12288}, TARGET)
    assert not out.ok and out.kind == "CapacityError: UB"
    assert out.info == {"kernel": "attention_out", "tier": "UB", "need": 217_952, "have": 196_608}
    assert "acc 128x128 float32 x1 = 65,536 B" in out.error and "sx 1x12288 float32 x2 = 98,304 B" in out.error
    assert short_reason(out.kind, out.error, out.info) == "UB over by 21,344 B (217,952 B needed, 196,608 B available)"


def test_a_build_function_that_sets_a_block_keeps_its_own_knob():
    def build():
        q, k, v = (ks.placeholder((1, 1, 512, 128), "float16", name=n) for n in ("query", "key", "value"))
        out = ks.ops.flash_attention(q, k, v)
        s = ks.create_schedule(out)
        s[out].slots(ks.knob("slots", 2, [1, 2]))
        return s
    knobs = _knobs(build)
    assert list(knobs) == ["slots", "attention_out.s1", "attention_out.s2"]


def test_designs_without_an_attention_kernel_get_no_such_knobs():
    def build():
        return ks.relu(ks.placeholder((64, 64), "float16", name="x"))
    with pytest.raises(ks.TuneError, match="declares no knobs"):
        discover(build, TARGET)


def test_knob_values_become_the_kernels_directives():
    out = _attention(512, 512)()
    s = ks.create_schedule(out)
    moved = apply_attention_knobs(s, {"attention_out.s1": 64, "attention_out.slots": 4, "tile_m": 16,
                                      "other.s1": 64})
    assert moved.directives == (ks.Directive("split", "attention_out", "s1", 64),
                                ks.Directive("slots", "attention_out", None, 4))
    assert s.directives == ()  # the schedule given is left as it is
    assert apply_attention_knobs(s, {"tile_m": 16}) is s


def _decode(heads: int, s_kv: int, causal: bool = False, s_q: int = 1):
    def build():
        q = ks.placeholder((1, heads, s_q, 128), "float16", name="query")
        k, v = (ks.placeholder((1, heads, s_kv, 128), "float16", name=n) for n in ("key", "value"))
        return ks.create_schedule([ks.ops.flash_attention(q, k, v, causal=causal)], fuse=True)
    build.__name__ = f"decode_{heads}x{s_kv}"
    return build


def test_a_decode_design_declares_its_kv_split_and_the_tuner_beats_the_auto_split():
    build = _decode(32, 4096)  # 32 heads of one query row over 8 S2 blocks of 512 columns, 24 cube cores
    knobs = _knobs(build)
    kv = knobs["attention_out.kv"]
    assert kv.choices == (1, 2, 3, 4, 5, 6, 7, 8) and kv.default == 2  # the auto split's cost model picks 2 parts
    r = ks.tune(build, TARGET, budget=24, executor="inline", db=False, progress=False)
    auto, best = r.default.time_us, r.best_time_us
    print(f"auto split ({r.default.config}): {auto:.2f} us; tuned ({r.best.config}): {best:.2f} us")
    assert best <= auto and r.best.config["attention_out.kv"] != 2  # 84.03 -> 76.25 us (3 parts, s2 384)
    tiling = dict(r.best.design.program.kernels[0].tiling)
    assert tiling["kv_splits"] == r.best.config["attention_out.kv"]
    assert directives_text({"attention_out.kv": 3}) == "s['attention_out'].split('kv', 3)"


def test_no_kv_knob_above_decode_rows_nor_on_a_causal_kernel():
    above = _knobs(_decode(4, 4096, s_q=32))  # S_q = 32, above one 16-row fractal: the auto split leaves it whole
    assert "attention_out.kv" not in above and "attention_out.s2" in above
    causal = _knobs(_decode(4, 4096, causal=True))  # a causal kernel refuses split('kv', n > 1): KvSplitError
    assert "attention_out.kv" not in causal and "attention_out.slots" in causal


def test_a_build_function_that_sets_the_kv_split_keeps_it():
    def build():
        s = _decode(32, 4096)()
        (att,) = [k for k in s.kernels if k.family == "attention"]
        s[att.name].split("kv", 4)
        return s
    knobs = _knobs(build)
    assert "attention_out.kv" not in knobs  # S2 blocks wider than 1024 leave fewer than 4 blocks to split
    assert knobs["attention_out.s2"].choices == (128, 256, 384, 512, 768, 1024)
