"""The advisor on the fused attention kernel: the cube waiting for vec1's P asks for more slots, idle cores for
smaller S1 blocks, a walk of one S2 block for smaller S2 blocks; each move simulated, its cause stated with
numbers, its gain what applying it gives; the greedy rounds move the knobs ks.tune adds."""

from __future__ import annotations

import re

import kernelstudio as ks
from kernelstudio.tune.greedy import advise_greedy

TARGET = "ascend910b2"


def _attention(heads: int, s: int):
    q, k, v = (ks.placeholder((1, heads, s, 128), "float16", name=n) for n in ("query", "key", "value"))
    return ks.ops.flash_attention(q, k, v)


def _design(heads: int, s: int, **blocks: int) -> ks.Design:
    out = _attention(heads, s)
    sched = ks.create_schedule(out)
    st = sched[out]
    for axis in ("s1", "s2"):
        if axis in blocks:
            st.split(axis, blocks[axis])
    if "slots" in blocks:
        st.slots(blocks["slots"])
    return ks.build(out, schedule=sched, compare=False)


def test_one_slot_on_the_notebooks_design_asks_for_more_slots_with_the_gain_applying_gives():
    d = _design(3, 2048, s1=128, s2=512, slots=1)  # notebook 10's design, its slots slider at 1
    moves = d.advise()
    top = moves[0]
    assert top.rule == "attention_slots" and top.directives[0].kind == "slots" and top.directives[0].value > 1
    assert top.gain_us > 0 and top.apply(d).sim.time_us == top.time_us
    assert top.gain_us == d.sim.time_us - top.time_us
    m = re.match(r"MTE2 of the cube core idle (\d+) % waiting for vec1's P \(flag 1, ([\d.]+) us\) with 1 slot\(s\)",
                 top.cause)
    assert m and int(m.group(1)) >= 30 and float(m.group(2)) > 0.3 * d.sim.time_us
    slot_moves = {a.directives[0].value: a for a in moves if a.rule == "attention_slots"}
    assert sorted(slot_moves) == [2, 3, 4] and all(a.gain_us > 0 for a in slot_moves.values())
    assert not any(a.directives and a.directives[0].kind == "parallel" for a in moves)  # 24 cube cores, all busy


def test_idle_cores_and_a_single_s2_block_ask_for_smaller_blocks():
    d = _design(1, 512)  # 4 tasks of 128 rows for 24 cores; S2 in one block of 512 for 3 slots
    moves = d.advise()
    by = {(a.directives[0].axis, a.directives[0].value): a for a in moves if a.rule.startswith("attention_s")}
    assert not [a for a in moves if a.rule == "attention_slots"]  # one S2 block: nothing for more slots to hold
    s1, s2 = by[("s1", 64)], by[("s2", 256)]
    assert s1.cause == "4 tasks of 128 query rows for 24 cores (4 busy): blocks of 64 rows make 8 tasks in 1 wave(s)"
    assert s2.cause.startswith("S2 in 1 block(s) of 512 columns for 3 slots: the four stages of a task cannot overlap")
    for a in (s1, s2):
        assert a.fits and a.gain_us > 0 and a.apply(d).sim.time_us == a.time_us


def test_a_kernel_with_every_slot_in_use_gets_no_slot_move():
    d = _design(1, 512, slots=4)
    assert not [a for a in d.advise() if a.rule == "attention_slots"]


def test_greedy_rounds_move_the_attention_knobs_the_tuner_adds():
    def design():
        return _attention(1, 512)
    g = advise_greedy(design, TARGET, rounds=5, executor="inline", per_round=2, patience=1)
    assert set(g.config) == {"attention_out.s1", "attention_out.s2", "attention_out.slots"}
    assert g.steps and all(set(a.knobs) <= set(g.config) and a.knobs for a in g.steps)
    assert g.config["attention_out.s1"] == 64 and g.time_us < 0.75 * g.default_us  # 17.06 -> 12.15 us
    assert g.evaluations <= 10



def test_idle_cores_and_several_s2_blocks_per_task_ask_for_a_kv_split_with_the_gain_applying_gives():
    q = ks.placeholder((1, 4, 1, 128), "float16", name="query")  # decode: one query row per head
    k, v = (ks.placeholder((1, 4, 4096, 128), "float16", name=n) for n in ("key", "value"))
    out = ks.ops.flash_attention(q, k, v)
    s = ks.create_schedule([out], fuse=True)
    s[out].split("kv", 1)  # one part per head: the auto split (4 parts) turned off
    d = ks.build(out, schedule=s, compare=False)
    top = d.advise()[0]
    assert top.rule == "attention_kv" and top.directives == (ks.Directive("split", "attention_out", "kv", 4),)
    assert top.cause == ("4 tasks for 24 cube cores (4 busy), each walking 8 S2 block(s) of 512 columns: "
                         "split('kv', 4) makes 16 tasks of at most 2 block(s), combined by log-sum-exp")
    applied = top.apply(d).sim.time_us
    assert top.gain_us > 0.5 * d.sim.time_us and applied == top.time_us  # 47.53 -> 18.46 us
    assert top.gain_us == d.sim.time_us - applied
    assert {a.directives[0].value for a in d.advise() if a.rule == "attention_kv"} == set(range(2, 9))


def test_no_kv_split_is_proposed_above_decode_rows():
    q = ks.placeholder((1, 4, 32, 128), "float16", name="query")  # 32 query rows: S1 blocks of 32
    k, v = (ks.placeholder((1, 4, 4096, 128), "float16", name=n) for n in ("key", "value"))
    out = ks.ops.flash_attention(q, k, v)
    d = ks.build(out, schedule=ks.create_schedule([out], fuse=True), compare=False)
    assert not [a for a in d.advise() if a.rule == "attention_kv"]
