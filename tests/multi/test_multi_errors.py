"""Every refusal of ks.multi: the error class, and a message that names the thing, the numbers and a way out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.core.errors import KernelStudioError

M = ks.multi


def _xw(m=1024, k=512, n=1024, dtype="float16", wdtype=None):
    return ks.placeholder((m, k), dtype, name="x"), ks.placeholder((k, n), wdtype or dtype, name="w")


C8 = M.Cluster(8)


@pytest.mark.parametrize("devices", [3, 16, 0, "8", None, 8.5, True])
def test_device_counts(devices):
    with pytest.raises(M.ClusterError, match=r"devices=.*use one of 1, 2, 4, 8"):
        M.Cluster(devices)


def test_unknown_target_and_link():
    with pytest.raises(ks.TargetError, match="unknown hardware target"):
        M.Cluster(2, target="ascend9000")
    with pytest.raises(ks.TargetError, match=r"unknown link model 'nvlink'; known: hccs_910b"):
        M.Cluster(2, link="nvlink")


def test_more_devices_than_the_link_joins():
    small = M.get_link("hccs_910b").with_overrides(max_devices=4)
    with pytest.raises(M.ClusterError, match=r"8 devices, but link hccs_910b joins at most 4 .*use devices <= 4"):
        M.Cluster(8, link=small)


def test_link_figures():
    link = M.get_link("hccs_910b")
    with pytest.raises(M.LinkError, match=r"cannot set 'hccs_gbps'; settable figures: mesh_alpha_us"):
        link.with_overrides(hccs_gbps=1)
    with pytest.raises(M.LinkError, match=r"mesh_alpha_us must be > 0, got -1"):
        link.with_overrides(mesh_alpha_us=-1)
    with pytest.raises(M.LinkError, match=r"aiv_comm_cores must be a whole number, got 2.5"):
        link.with_overrides(aiv_comm_cores=2.5)
    with pytest.raises(M.LinkError, match=r"unknown algorithm 'tree'; HCCL algorithms modelled: mesh, ring"):
        link.params("tree")
    with pytest.raises(M.LinkError, match=r"no field 'bandwidth'; fields: mesh_alpha_us"):
        link.source("bandwidth")


def test_inputs_must_be_placeholders_of_fp16_or_bf16():
    x, w = _xw()
    with pytest.raises(ks.StageError, match="x must be a tensor made with ks.placeholder, got ndarray"):
        M.matmul_allreduce(np.zeros((4, 4)), w, cluster=C8)
    with pytest.raises(ks.ShapeError, match=r"x is .* computed by exp; .*make x a ks.placeholder"):
        M.matmul_allreduce(ks.exp(x), w, cluster=C8)
    xf, wf = _xw(dtype="float32")
    with pytest.raises(ks.DTypeError, match=r"x is x\[1024,512\] float32; MC2 takes float16 or bfloat16; cast"):
        M.matmul_allreduce(xf, wf, cluster=C8)
    xh, wb = _xw(dtype="float16", wdtype="bfloat16")
    with pytest.raises(ks.DTypeError, match="x is float16 but w is bfloat16; .*cast one of them"):
        M.matmul_allreduce(xh, wb, cluster=C8)


def test_shapes_that_do_not_multiply():
    x = ks.placeholder((1024, 512), "float16", name="x")
    w = ks.placeholder((256, 1024), "float16", name="w")
    with pytest.raises(ks.ShapeError, match=r"x x\[1024,512\] float16 and w w\[256,1024\] float16 do not multiply"):
        M.matmul_allreduce(x, w, cluster=C8)
    x3 = ks.placeholder((2, 512, 512), "float16", name="x")
    with pytest.raises(ks.ShapeError, match=r"x is \(m, k\) and w \(k, n\)"):
        M.all_gather_matmul(x3, ks.placeholder((512, 256), "float16", name="w"), cluster=C8)


@pytest.mark.parametrize("k,way", [(128, "pad k up to 256"), (65535, "split k and add the partial results")])
def test_k_range(k, way):
    x, w = _xw(k=k)
    with pytest.raises(ks.ShapeError, match=rf"k = {k:,}; MC2 takes k in \[256, 65535\) .*{way}"):
        M.matmul_allreduce(x, w, cluster=C8)


def test_reduce_scatter_needs_m_a_multiple_of_the_ranks():
    x, w = _xw(m=1001)
    with pytest.raises(ks.ShapeError, match=r"m = 1,001 rows do not split over 8 devices; MatmulReduceScatter needs "
                                            r"m a multiple of the rank count: pad m to 1,008"):
        M.matmul_reduce_scatter(x, w, cluster=C8)


def test_epilogue_tensors():
    x, w = _xw()
    with pytest.raises(ks.ShapeError, match=r"bias is b\[512\] float16; it must be \[1024\] float16"):
        M.matmul_allreduce(x, w, cluster=C8, bias=ks.placeholder((512,), "float16", name="b"))
    with pytest.raises(ks.ShapeError, match=r"add is r\[1024,512\] float16; it must be \[1024, 1024\] float16"):
        M.matmul_allreduce(x, w, cluster=C8, add=ks.placeholder((1024, 512), "float16", name="r"))
    with pytest.raises(ks.ScheduleError, match="only ks.multi.matmul_allreduce has them"):
        M.Mc2Design("matmul_reduce_scatter", x, w, cluster=C8, schedule=M.Mc2Schedule(), rms_norm=True)


@pytest.mark.parametrize("knob,value", [("engine", "gpu"), ("algorithm", "tree"), ("tail", "middle"),
                                        ("engine", None), ("algorithm", ["mesh"])])
def test_knob_choices(knob, value):
    x, w = _xw()
    with pytest.raises(ks.ScheduleError, match=rf"{knob}=.*; choose one of"):
        M.matmul_allreduce(x, w, cluster=C8, **{knob: value})


@pytest.mark.parametrize("tiles", [0, 17, -1, 2.5, "4", None])
def test_tile_count_range(tiles):
    x, w = _xw(4096, 512, 4096)
    with pytest.raises(M.TilingError, match=r"tiles=.*1 to 16 tiles \(MAX_TILE_CNT\); use a whole number in 1..16"):
        M.matmul_allreduce(x, w, cluster=C8, tiles=tiles)


def test_tile_counts_off_the_128_row_grid():
    x, w = _xw(4096, 512, 4096)
    with pytest.raises(M.TilingError, match=r"4,096 rows do not split into 9 tiles of whole 128-row blocks and a "
                                            r"shorter one \(8 x 512 rows already cover 4,096\); tile counts that "
                                            r"work here: 1, 2, 3, 4, 5, 6, 7, 8, 11, 16"):
        M.matmul_allreduce(x, w, cluster=C8, tiles=9)


def test_too_little_per_communication():
    x, w = _xw(1024, 512, 128)  # a 128-row tile moves 128 x 128 x 2 = 32 KB
    with pytest.raises(M.TilingError, match=r"tiles=8 leaves a tile of 128 rows that communicates 32,768 B, under "
                                            r"HCCL's minimum of 65,536 B per communication; use fewer tiles "
                                            r"\(1, 2, 3, 4 work here\)"):
        M.matmul_allreduce(x, w, cluster=C8, tiles=8)


def test_aiv_mode_needs_vector_cores_left():
    greedy = M.Cluster(8).with_link(aiv_comm_cores=48)
    x, w = _xw()
    with pytest.raises(M.ClusterError, match=r"takes 48 vector cores but ascend910b2 has 48; set the link's "
                                             r"aiv_comm_cores lower or use engine='aicpu'"):
        M.matmul_allreduce(x, w, cluster=greedy, engine="aiv")


def test_cluster_eps_and_knob_names():
    x, w = _xw()
    with pytest.raises(M.ClusterError, match=r"cluster must be a ks.multi.Cluster\(devices=..., target=...\)"):
        M.matmul_allreduce(x, w, cluster="8 x 910b")
    with pytest.raises(ks.ScheduleError, match="eps must be > 0"):
        M.matmul_allreduce(x, w, cluster=C8, rms_norm=True, eps=0.0)
    with pytest.raises(ks.ScheduleError, match=r"no knob 'tile_m'; knobs: tiles, tail, engine, algorithm"):
        M.matmul_allreduce(x, w, cluster=C8).with_schedule(tile_m=2)


def test_evaluate_checks_its_inputs():
    x, w = _xw(256, 256, 256)
    d = M.matmul_allreduce(x, w, cluster=M.Cluster(2))
    inputs = d.random_inputs()
    assert inputs["x"].shape == (2, 256, 256)
    with pytest.raises(ks.InputError, match=r"input 'x' has shape \[256,256\] but placeholder x is \[2,256,256\]"):
        d.evaluate({**inputs, "x": inputs["x"][0]})
    with pytest.raises(ks.InputError, match=r"missing \['w'\]"):
        d.evaluate({"x": inputs["x"]})


BAD: list[Any] = [None, "", "  ", -1, 0, 2**70, float("nan"), float("inf"), True, [], {}, (), object(), b"x",
                  "x" * 5000, np.array([1, 2]), np.float32(1.5), 1j]


def _entries():
    x, w = _xw()
    c = M.Cluster(2)
    return {
        "Cluster(devices)": lambda v: M.Cluster(v),
        "Cluster(target)": lambda v: M.Cluster(2, target=v),
        "Cluster(link)": lambda v: M.Cluster(2, link=v),
        "get_link": lambda v: M.get_link(v),
        "with_link(mesh_alpha_us)": lambda v: c.with_link(mesh_alpha_us=v),
        "with_link(aiv_comm_cores)": lambda v: c.with_link(aiv_comm_cores=v),
        "matmul_allreduce(x)": lambda v: M.matmul_allreduce(v, w, cluster=c),
        "matmul_allreduce(cluster)": lambda v: M.matmul_allreduce(x, w, cluster=v),
        "matmul_allreduce(tiles)": lambda v: M.matmul_allreduce(x, w, cluster=c, tiles=v),
        "matmul_allreduce(tail)": lambda v: M.matmul_allreduce(x, w, cluster=c, tail=v),
        "matmul_allreduce(engine)": lambda v: M.matmul_allreduce(x, w, cluster=c, engine=v),
        "matmul_allreduce(algorithm)": lambda v: M.matmul_allreduce(x, w, cluster=c, algorithm=v),
        "matmul_allreduce(bias)": lambda v: M.matmul_allreduce(x, w, cluster=c, bias=v),
        "matmul_allreduce(add)": lambda v: M.matmul_allreduce(x, w, cluster=c, add=v),
        "matmul_allreduce(rms_norm)": lambda v: M.matmul_allreduce(x, w, cluster=c, rms_norm=v),
        "matmul_allreduce(eps)": lambda v: M.matmul_allreduce(x, w, cluster=c, rms_norm=True, eps=v),
        "all_gather_matmul(w)": lambda v: M.all_gather_matmul(x, v, cluster=c),
        "matmul_reduce_scatter(tiles)": lambda v: M.matmul_reduce_scatter(x, w, cluster=c, tiles=v),
        "evaluate(inputs)": lambda v: M.matmul_allreduce(x, w, cluster=c).evaluate(v),
        "evaluate(x)": lambda v: M.matmul_allreduce(x, w, cluster=c).evaluate({"x": v, "w": np.zeros((2, 512, 1024))}),
    }


@pytest.mark.parametrize("entry", sorted(_entries()))
def test_no_builtin_exception_escapes(entry):
    call = _entries()[entry]
    for bad in BAD:
        try:
            call(bad)
        except KernelStudioError:
            pass


def test_malformed_link_tables():
    from kernelstudio.multi.link import Link, link_from_toml

    figures = {f: {"value": 1.0, "source": "assumed: test"} for f in M.LINK_FIELDS if f != "max_devices"}
    figures["aiv_comm_cores"] = {"value": 2, "source": "assumed: test"}
    table = {"max_devices": {"value": 8, "source": "assumed: test"}, "link": figures}
    with pytest.raises(M.LinkError, match=r"ring_alpha_us must be a positive finite number, got 0.0"):
        link_from_toml("t", {**table, "link": {**figures, "ring_alpha_us": {"value": 0, "source": "assumed"}}})
    with pytest.raises(M.LinkError, match=r"aiv_comm_cores must be a positive whole number, got 0"):
        link_from_toml("t", {**table, "link": {**figures, "aiv_comm_cores": {"value": 0, "source": "assumed"}}})
    with pytest.raises(M.LinkError, match=r"links.toml \[t\].link: mesh_alpha_us must be \{ value = ..., source"):
        link_from_toml("t", {**table, "link": {**figures, "mesh_alpha_us": 3.0}})
    good = link_from_toml("t", table)
    with pytest.raises(M.LinkError, match=r"no source for mesh_alpha_us, .*every figure says where it comes from"):
        Link(**{f: getattr(good, f) for f in ("name", "display_name", *M.LINK_FIELDS)})


def test_internal_misuse_is_still_named():
    from kernelstudio.multi import tiling

    x, w = _xw()
    with pytest.raises(ks.ScheduleError, match="schedule must be a Mc2Schedule, got dict"):
        M.Mc2Design("matmul_allreduce", x, w, cluster=C8, schedule={"tiles": 2})
    with pytest.raises(ks.ScheduleError, match=r"kind='matmul'; choose one of 'matmul_allreduce', "):
        M.Mc2Design("matmul", x, w, cluster=C8, schedule=M.Mc2Schedule())
    with pytest.raises(ks.ScheduleError, match="only ks.multi.matmul_allreduce has them"):
        M.Mc2Design("all_gather_matmul", x, w, cluster=C8, schedule=M.Mc2Schedule(), rms_norm=np.ones(3))
    with pytest.raises(M.TilingError, match=r"tail='auto'; the short tile goes 'back'"):
        tiling.tile_rows(1024, 2, "auto", 4096, what="t")


def test_inputs_with_one_name_twice():
    x = ks.placeholder((256, 256), "float16", name="t")
    w = ks.placeholder((256, 256), "float16", name="t")
    d = M.matmul_allreduce(x, w, cluster=M.Cluster(2))
    with pytest.raises(ks.InputError, match=r"two inputs share the name \['t', 't'\]; name the placeholders apart"):
        d.evaluate({"t": np.zeros((2, 256, 256))})
