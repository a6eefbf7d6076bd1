"""Every schedule validation rule raises a KernelStudioError naming kernel, numbers and a way out."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import CapacityError, KnobError, ScheduleError
from tests.reference_kernels import REFERENCE


def _mla():
    # the fused kernel in its row-block plan (the default plan takes sync_all here: tests/codegen/test_sync_all.py)
    out = REFERENCE["mla_prolog_lite"]()
    return out, ks.create_schedule(out, fuse=True)


def test_unknown_axis():
    out, s = _mla()
    with pytest.raises(ScheduleError, match="no axis 'q'"):
        s[out].split("q", 16)


def test_factor_must_be_positive_int():
    out, s = _mla()
    with pytest.raises(ScheduleError, match=">= 1"):
        s[out].split("m", 0)
    with pytest.raises(ScheduleError, match=">= 1"):
        s[out].split("m", 2.5)


def test_cube_tiles_multiple_of_16():
    out, s = _mla()
    s[out].split("m", 20)
    with pytest.raises(ScheduleError, match="multiple of 16"):
        ks.lower(s, "ascend910b2")


def test_too_many_cores_names_the_target():
    out, s = _mla()
    s[out].parallel("m", cores=30)
    with pytest.raises(ScheduleError, match="ascend910b2 has 24"):
        ks.lower(s, "ascend910b2")


def test_reorder_rules():
    out, s = _mla()
    with pytest.raises(ScheduleError, match="cannot move 'k'"):
        s[out].reorder("k", "m")
    with pytest.raises(ScheduleError, match="twice"):
        s[out].reorder("m", "m")
    s[out].reorder("n", "m")  # legal


def test_parallel_over_k_is_refused():
    out, s = _mla()
    with pytest.raises(ScheduleError, match="parallelise 'm' or 'n'"):
        s[out].parallel("k")


def test_vector_axis_out_of_range():
    out = REFERENCE["softmax"]()
    s = ks.create_schedule(out)
    with pytest.raises(ScheduleError, match="out of range"):
        s[out].split(2, 8)


def test_vector_tile_not_whole_blocks():
    out = REFERENCE["softmax"]()
    s = ks.create_schedule(out)
    s[out].split(-1, 100)
    with pytest.raises(ScheduleError, match="32-byte blocks"):
        ks.lower(s, "ascend910b2")


def test_capacity_error_names_buffer_bytes_and_way_out():
    out, s = _mla()
    s[out].split("m", 256).split("n", 512).split("k", 256)
    with pytest.raises(CapacityError) as e:
        ks.lower(s, "ascend910b2")
    msg = str(e.value)
    assert "needs" in msg and "ascend910b2 has" in msg and "B" in msg and "lower split" in msg


def test_ub_capacity_error_suggests_double_buffer():
    out = REFERENCE["softmax"](rows=64, cols=30000, dtype="float32")
    s = ks.create_schedule(out)
    s[out].split(0, 64).split(-1, 30000)
    with pytest.raises(CapacityError, match="UB needs"):
        ks.lower(s, "ascend910b2")


def test_unknown_target():
    out, s = _mla()
    with pytest.raises(ks.TargetError, match="ascend910b2"):
        ks.lower(s, "ascend999")


def test_double_buffer_takes_bool():
    out, s = _mla()
    with pytest.raises(ScheduleError, match="True or False"):
        s[out].double_buffer("yes")


def test_directives_are_data_and_replay():
    out, s = _mla()
    s[out].split("m", 32).double_buffer(False)
    text = s.to_json()
    out2 = REFERENCE["mla_prolog_lite"]()
    s2 = ks.create_schedule(out2, fuse=True)  # the same plan as `s`
    s2.replay(text)
    assert s2.directives == s.directives
    assert hash(s.directives) == hash(s2.directives)
    p1, p2 = ks.lower(s, "ascend910b2"), ks.lower(s2, "ascend910b2")
    assert p1.kernels == p2.kernels


def test_keep_out_splits_the_kernel():
    x = ks.placeholder((64, 128), "float16", name="x")
    a = ks.exp(x)
    out = ks.relu(a)
    s = ks.create_schedule(out)
    assert len(s.kernels) == 1
    s.keep_out_of_fusion(out)
    assert len(s.kernels) == 2
    assert ks.create_schedule(out, keep_out=[out]).kernels[-1].reasons[0][1].name == "kept_out"


def test_keep_out_refuses_a_directive_the_replanned_kernel_of_the_same_name_refuses():
    x = ks.placeholder((64, 128), "float16", name="x")
    w = ks.placeholder((256, 128), "float16", name="w")
    mm = ks.matmul(x, w, transpose_b=True)
    out = ks.relu(mm)
    s = ks.create_schedule(out, fuse=True)
    name = s.kernels[0].name
    s[out].split("m", 16).double_buffer(True)  # written for the fused matmul + relu kernel
    before = (s.directives, [k.name for k in s.kernels])
    with pytest.raises(ScheduleError, match=r"keep_out_of_fusion\(matmul\).*split\('m', 16\).*drop_refused=True"):
        s.keep_out_of_fusion(mm)
    assert (s.directives, [k.name for k in s.kernels]) == before  # refused: the schedule is as it was
    dropped = s.keep_out_of_fusion(mm, drop_refused=True)
    assert [k.family for k in s.kernels] == ["cube", "vector"] and s.kernels[1].name == name
    assert [d.kind for d in dropped] == ["split"] and [d.kind for d in s.directives] == ["double_buffer"]
    ks.lower(s, "ascend910b2")  # what is left lowers: no misread 'm' axis on the vector kernel


def test_knobs():
    assert ks.knob("tile_m", 64, [16, 32, 64]) == 64
    with ks.knob_values({"tile_m": 32}) as ctx:
        assert ks.knob("tile_m", 64, [16, 32, 64]) == 32
    assert "tile_m" in ctx.seen
    with pytest.raises(KnobError, match="not among its choices"):
        ks.knob("tile_m", 48, [16, 32])
    with pytest.raises(KnobError, match="identifier"):
        ks.knob("tile m", 16, [16])
    with ks.knob_values({"tile_m": 7}), pytest.raises(KnobError, match="value 7"):
        ks.knob("tile_m", 16, [16, 32])


def test_passes_are_named_and_recorded():
    out, s = _mla()
    prog = ks.lower(s, "ascend910b2")
    names = [n for n, _ in prog.passes]
    assert names == [n for n, _ in ks.PASSES]
    assert {"normalize_loop", "inline_injection", "split_loop", "vectorize_loop", "storage_align",
            "double_buffer", "parallel_loop", "plan_memory"} <= set(names)
    text = dict(prog.passes)
    for before, after in [("normalize_loop", "inline_injection"), ("inline_injection", "split_loop"),
                          ("storage_align", "double_buffer"), ("double_buffer", "parallel_loop")]:
        assert text[before] != text[after], f"{after} changed nothing"
    assert "cross_wait" in text["plan_memory"] and "MIX_AIC_1_2" in text["plan_memory"]
    sm = ks.lower(ks.create_schedule(REFERENCE["softmax"](cols=300)), "ascend910b2")
    t = dict(sm.passes)
    assert "in_x[3,300]f16" in t["split_loop"] and "in_x[3,304]f16" in t["storage_align"]  # 32-byte rows
    out = REFERENCE["softmax"](cols=1000)
    s2 = ks.create_schedule(out)
    s2[out].split(-1, 128)
    t = dict(ks.lower(s2, "ascend910b2").passes)
    assert "multi-pass" not in t["split_loop"] and "multi-pass" in t["vectorize_loop"]


def test_auto_schedule_uses_cores_and_double_buffers():
    out, s = _mla()
    prog = ks.lower(s, "ascend910b2")
    k = prog.kernels[0]
    assert k.block_dim == 4  # 64 rows in row blocks of 16: every row block on its own core
    # every queue double-buffered but L0A/L0B: its 16x256x128 tiles do not fit those twice
    assert all(b.depth == 2 for b in k.buffers if b.queue is not None and b.tier.value not in ("L0A", "L0B", "L0C"))
    assert {b.depth for b in k.buffers if b.tier.value in ("L0A", "L0B")} == {1}


def test_coupled_chip_refuses_cube_kernels_but_runs_vector_ones():
    with pytest.raises(ks.UnsupportedError, match="coupled chip"):
        ks.lower(ks.create_schedule(REFERENCE["mla_prolog_lite"]()), "ascend310p3")
    out = REFERENCE["softmax"]()
    prog = ks.lower(ks.create_schedule(out), "ascend310p3")
    assert prog.target == "ascend310p3" and prog.kernels[0].family == "vector"


@pytest.mark.parametrize("target", ["ascend910b1", "ascend910b3", "ascend910b4", "ascend950"])
def test_every_separated_target_builds_mla(target):
    d = ks.build(REFERENCE["mla_prolog_lite"](), target=target)
    assert d.sim.time_us < d.unfused_sim.time_us


def test_gather_orders_scalar_reads_with_explicit_flags():
    from kernelstudio.tileir.program import Pipe, SetFlag, WaitFlag, walk

    tbl = ks.placeholder((16, 128), "float16", name="table")
    idx = ks.placeholder((40,), "int32", name="idx")
    prog = ks.lower(ks.create_schedule(ks.gather(tbl, idx)), "ascend910b2")
    stmts = list(walk(prog.kernels[0].aiv))
    pairs = [(s.src, s.dst) for s in stmts if isinstance(s, SetFlag)]
    assert (Pipe.MTE2, Pipe.S) in pairs and (Pipe.MTE2, Pipe.MTE3) in pairs
    assert sum(isinstance(s, WaitFlag) for s in stmts) == len(pairs)
    assert "wait_flag(MTE2->S" in prog.passes[-1][1]


@pytest.mark.parametrize("call", [lambda st: st.parallel("n"), lambda st: st.reorder("n", "m")])
def test_order_directive_refused_on_row_reduction_epilogue(call):
    # the layer_norm epilogue keeps whole rows on one core: 'n' cannot lead; saying so beats ignoring it
    out, s = _mla()
    call(s[out])
    with pytest.raises(ScheduleError, match=r"kernel out: (parallel\('n'\)|reorder\('n', 'm'\)) cannot apply.*"
                                            r"whole rows.*sync_all\(True\).*keep_out"):
        ks.lower(s, "ascend910b2")


def test_order_directive_that_matches_the_plan_is_accepted():
    out, s = _mla()
    s[out].parallel("m")
    ks.lower(s, "ascend910b2")


def _relu(cols: int):
    x = ks.placeholder((64, cols), "float16", name="x")
    return ks.relu(x, name="y")


def test_vector_reorder_refused_when_rows_are_the_only_loop():
    y = _relu(256)
    s = ks.create_schedule(y)
    s[y].reorder("cols", "rows")
    with pytest.raises(ScheduleError, match=r"kernel y: reorder\('cols', 'rows'\) cannot apply: its 256-wide rows "
                                            r"fit one 256-column tile.*split\(-1"):
        ks.lower(s, "ascend910b2")


def test_vector_reorder_changes_the_tile_walk():
    # with columns tiled, reorder decides which tiles consecutive loop steps (and so cores) take
    import numpy as np

    y = _relu(1024)

    def lowered(*order):
        s = ks.create_schedule(y)
        s[y].split(-1, 128)
        if order:
            s[y].reorder(*order)
        return ks.lower(s, "ascend910b2")

    rows_first, cols_first = lowered(), lowered("cols", "rows")
    from kernelstudio.tileir.printer import format_kernel

    walk = [format_kernel(p.kernels[0]) for p in (rows_first, cols_first)]
    assert "r0 = ((t // 8) * 2)" in walk[0] and "r0 = ((t % 32) * 2)" in walk[1]
    x = np.random.default_rng(0).standard_normal((64, 1024)).astype(np.float16)
    for prog in (rows_first, cols_first):
        np.testing.assert_array_equal(ks.run_tiled(prog, {"x": x}), np.maximum(x, 0))
