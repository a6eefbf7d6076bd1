"""Malformed input at every stage, table-driven: each case names the call, the KernelStudioError
subclass it must raise and words its message must hold (the thing, the numbers, a way out).
Files, the CLI and the twin: test_bad_input_files.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.codegen.bundle import CodeBundle, TensorSpec
from kernelstudio.core.errors import (
    CapacityError,
    DTypeError,
    InputError,
    KernelStudioError,
    KnobError,
    ScheduleError,
    ShapeError,
    StageError,
    TargetError,
    UnsupportedError,
)


# --- small designs, built fresh for each case ---------------------------------------------------------
def x_(shape=(64, 128), dtype="float16", name="x"):
    return ks.placeholder(shape, dtype, name=name)


def ew():
    return ks.exp(x_())


def sched(out=None, **kw):
    return ks.create_schedule(out if out is not None else ew(), **kw)


def prog(out=None, target="ascend910b2"):
    return ks.lower(sched(out), target)


def mm():
    a = ks.placeholder((64, 128), "float16", name="a")
    b = ks.placeholder((128, 256), "float16", name="b")
    return ks.relu(ks.matmul(a, b))


def inputs(out=None):
    return ks.random_inputs(out if out is not None else ew())


def code():
    return ks.codegen(prog())


def profile(**kw):
    return ks.hw.get("ascend910b2").with_overrides(**kw)


def knob_run(values, body):
    with ks.knob_values(values):
        body()


def replay(text):
    s = sched()
    s.replay(text)


def replay_atomic():
    s = sched()
    s[s.outputs[0]].split(0, 16)
    before = s.directives
    text = '[{"kind": "split", "kernel": "exp", "axis": 0, "value": 8}, {"kind": "split", "kernel": "exp", "axis": 9}]'
    try:
        s.replay(text)
    finally:
        assert s.directives == before  # nothing of a bad replay is applied
    return s


def two_xs():
    a = ks.placeholder((4, 4), "float32", name="x")
    b = ks.placeholder((8, 8), "float32", name="x")
    return [ks.relu(a), ks.relu(b)]


def stage(out=None):
    out = out if out is not None else ew()
    s = ks.create_schedule(out)
    return s[out]


def gather_prog():
    t = ks.placeholder((10, 16), "float32", name="table")
    i = ks.placeholder((5,), "int32", name="ids")
    out = ks.gather(t, i)
    return ks.lower(ks.create_schedule(out))


GOOD_X = np.zeros((64, 128), np.float16)
Case = tuple[str, Callable[[], Any], type[KernelStudioError], tuple[str, ...]]

# --- a skipped step: the message names the call to make first -------------------------------------------
SKIPPED: list[Case] = [
    ("lower_tensor", lambda: ks.lower(ew()), StageError, ("lower takes a Schedule", "ks.create_schedule(out)")),
    ("lower_program", lambda: ks.lower(prog()), StageError, ("a later stage", "Schedule it was made from")),
    ("lower_str", lambda: ks.lower("s"), StageError, ("lower takes a Schedule", "got str")),
    ("lower_none", lambda: ks.lower(None), StageError, ("got NoneType",)),
    ("run_tiled_schedule", lambda: ks.run_tiled(sched(), {}), StageError, ("run_tiled", "ks.lower(s")),
    ("run_tiled_tensor", lambda: ks.run_tiled(ew(), {}), StageError,
     ("ks.create_schedule(out) then prog = ks.lower",)),
    ("run_tiled_bundle", lambda: ks.run_tiled(code(), {}), StageError, ("a later stage",)),
    ("simulate_schedule", lambda: ks.simulate(sched()), StageError, ("simulate takes a Program", "ks.lower")),
    ("simulate_tensor", lambda: ks.simulate(ew()), StageError, ("create_schedule",)),
    ("format_program_schedule", lambda: ks.format_program(sched()), StageError, ("format_program", "ks.lower")),
    ("simulate_exact_str", lambda: ks.simulate(prog(), exact="yes"), InputError, ("exact must be True or False",)),
    ("trace_max_events", lambda: ks.simulate(prog()).to_chrome_trace(max_events=-1), InputError,
     ("max_events must be an int >= 0",)),
    ("simulate_design", lambda: ks.simulate(ks.build(ew())), StageError, ("Design", "d.program")),
    ("codegen_schedule", lambda: ks.codegen(sched()), StageError, ("codegen takes a Program", "ks.lower")),
    ("codegen_tensor", lambda: ks.codegen(ew()), StageError, ("create_schedule",)),
    ("codegen_list", lambda: ks.codegen([1]), StageError, ("got list",)),
    ("export_schedule", lambda: ks.export_project(sched(), "/tmp/ks-never"), StageError, ("export_project",)),
    ("twin_program", lambda: ks.twin.run(prog(), inputs()), StageError, ("twin.run", "ks.codegen(prog)")),
    ("twin_schedule", lambda: ks.twin.run(sched(), {}), StageError, ("ks.lower", "ks.codegen")),
    ("twin_tensor", lambda: ks.twin.run(ew(), {}), StageError, ("create_schedule",)),
    ("build_schedule_str", lambda: ks.build(ew(), schedule="x"), StageError, ("build(schedule=...)", "got str")),
    ("build_schedule_prog", lambda: ks.build(ew(), schedule=prog()), StageError, ("a later stage",)),
    ("build_other_schedule", lambda: ks.build(ew(), schedule=sched(ks.relu(x_((8, 8), name="y")))),
     ScheduleError, ("the schedule computes relu", "outputs passed are exp")),
]

# --- inputs: one validator for evaluate, run_tiled and twin.run ----------------------------------------
INPUT_CALLS: dict[str, Callable[[Any], Any]] = {
    "evaluate": lambda inp: ks.evaluate(ew(), inp),
    "run_tiled": lambda inp: ks.run_tiled(prog(), inp),
    "twin": lambda inp: ks.twin.run(code(), inp),
}
BAD_INPUTS: list[tuple[str, Any, tuple[str, ...]]] = [
    ("list", [GOOD_X], ("mapping name -> array", "got list", "x[64,128] float16")),
    ("missing", {}, ("missing ['x']", "x[64,128] float16")),
    ("unexpected", {"x": GOOD_X, "y": GOOD_X}, ("unexpected ['y']",)),
    ("string", {"x": "abc"}, ("input 'x' has dtype <U3", "expected numbers")),
    ("none", {"x": None}, ("input 'x' has dtype None",)),
    ("ragged", {"x": [[1, 2], [3]]}, ("input 'x' is not a rectangular array", "[64,128]")),
    ("list_of_arrays", {"x": [GOOD_X, GOOD_X[:3]]}, ("not a rectangular array",)),
    ("complex", {"x": np.ones((64, 128), complex)}, ("complex128", "imaginary part", "x.real")),
    ("object", {"x": np.array([object()] * 3)}, ("dtype object",)),
    ("shape", {"x": np.zeros((128, 64))}, ("has shape [128,64] but placeholder x is [64,128] float16",
                                          "reshape the array")),
    ("scalar", {"x": 1.0}, ("has shape [] but placeholder x is [64,128]",)),
]
INPUTS: list[Case] = [
    (f"{call}_{cid}", (lambda c=call, v=value: INPUT_CALLS[c](v)), InputError, frags)
    for call in INPUT_CALLS for cid, value, frags in BAD_INPUTS
]
INPUTS += [
    ("run_tiled_gather_index", lambda: ks.run_tiled(gather_prog(), {"table": np.zeros((10, 16)),
                                                                    "ids": np.array([1, 2, 30, 4, 5])}),
     InputError, ("gather", "index 30 from ids", "[0, 10)", "table [10, 16]")),
    ("run_tiled_gather_negative", lambda: ks.run_tiled(gather_prog(), {"table": np.zeros((10, 16)),
                                                                       "ids": np.array([1, -1, 2, 3, 4])}),
     InputError, ("index -1 from ids",)),
    ("twin_timeout_negative", lambda: ks.twin.run(code(), inputs(), timeout_s=-1), InputError,
     ("timeout_s", "must be > 0", "-1")),
    ("twin_timeout_nan", lambda: ks.twin.run(code(), inputs(), timeout_s=float("nan")), InputError,
     ("timeout_s", "finite")),
    ("twin_timeout_str", lambda: ks.twin.run(code(), inputs(), timeout_s="10"), InputError,
     ("timeout_s", "must be a number", "str")),
    ("random_inputs_seed", lambda: ks.random_inputs(ew(), seed=-1), InputError, ("seed must be an int >= 0",)),
]

# --- schedules, knobs, replay -----------------------------------------------------------------------------
SCHEDULES: list[Case] = [
    ("fuse_str", lambda: sched(fuse="no"), ScheduleError, ("fuse must be True, False or None", "'no'")),
    ("fuse_int", lambda: sched(fuse=1), ScheduleError, ("fuse must be True, False or None",)),
    ("no_outputs", lambda: ks.create_schedule([]), ScheduleError, ("no outputs given",)),
    ("outputs_str", lambda: ks.create_schedule("out"), ScheduleError, ("expected a tensor of the graph", "str")),
    ("keep_out_str", lambda: sched(keep_out="x"), ScheduleError, ("keep_out must be a list of tensors",)),
    ("keep_out_foreign", lambda: sched(keep_out=[x_((3,), name="z")]), ScheduleError,
     ("not part of this schedule's graph",)),
    ("keep_out_of_fusion_foreign", lambda: sched().keep_out_of_fusion(ks.relu(x_((8, 8), name="y"))),
     ScheduleError, ("keep_out_of_fusion", "relu [8, 8]", "not part of this schedule's graph")),
    ("dup_placeholder_names", lambda: ks.create_schedule(two_xs()), InputError,
     ("both named 'x'", "[4,4] float32 and [8,8] float32", "unique name")),
    ("index_unknown_kernel", lambda: sched()["nokernel"], ScheduleError, ("no kernel named 'nokernel'", "exp")),
    ("index_foreign_tensor", lambda: sched()[x_() * 2], ScheduleError, ("not part of this schedule's graph",)),
    ("split_zero", lambda: stage().split(0, 0), ScheduleError, ("split factor must be a whole number >= 1", "0")),
    ("split_float", lambda: stage().split(0, 16.0), ScheduleError, ("split factor", "16.0")),
    ("split_bool", lambda: stage().split(0, True), ScheduleError, ("split factor", "True")),
    ("split_axis_range", lambda: stage().split(5, 16), ScheduleError, ("axis 5 is out of range", "[64, 128]")),
    ("split_axis_name", lambda: stage().split("q", 16), ScheduleError, ("has no axis 'q'",)),
    ("split_axis_float", lambda: stage().split(0.5, 16), ScheduleError, ("split axis 0.5",)),
    ("split_np_float", lambda: stage().split(0, np.float32(16)), ScheduleError, ("split factor",)),
    ("vectorize_k", lambda: stage(mm()).vectorize("k", 16), ScheduleError,
     ("vectorize('k', ...) has no meaning", "vectorize('n', ...)")),
    ("vectorize_zero", lambda: stage().vectorize(-1, 0), ScheduleError, ("vectorize factor",)),
    ("reorder_k", lambda: stage(mm()).reorder("k", "m"), ScheduleError, ("cannot move 'k'",)),
    ("reorder_twice", lambda: stage(mm()).reorder("m", "m"), ScheduleError, ("names an axis twice",)),
    ("reorder_empty", lambda: stage(mm()).reorder(), ScheduleError, ("at least one axis",)),
    ("parallel_k", lambda: stage(mm()).parallel("k"), ScheduleError, ("parallel over 'k'",)),
    ("parallel_cores_zero", lambda: stage().parallel(0, cores=0), ScheduleError, ("parallel cores", "0")),
    ("double_buffer_str", lambda: stage().double_buffer("yes"), ScheduleError, ("double_buffer takes True or False",)),
    ("double_buffer_int", lambda: stage().double_buffer(1), ScheduleError, ("double_buffer takes True or False",)),
    ("apply_not_directive", lambda: sched().apply("split"), ScheduleError, ("apply takes a Directive", "str")),
    ("apply_unknown_kind", lambda: sched().apply(ks.Directive("tile", "exp", 0, 4)), ScheduleError,
     ("unknown directive 'tile'", "split")),
    ("replay_not_json", lambda: replay("{"), ScheduleError, ("not valid JSON", "line 1", "Schedule.to_json()")),
    ("replay_bytes_garbage", lambda: replay(b"\xff\xfe"), ScheduleError, ("not valid JSON",)),
    ("replay_dict", lambda: replay('{"kind": "split"}'), ScheduleError, ("must be a JSON list", "dict")),
    ("replay_entry_int", lambda: replay("[1]"), ScheduleError, ("directive 0 must be an object", "got 1")),
    ("replay_missing_kernel", lambda: replay('[{"kind": "split"}]'), ScheduleError, ("missing keys ['kernel']",)),
    ("replay_unknown_key", lambda: replay('[{"kind": "split", "kernel": "exp", "factor": 2}]'), ScheduleError,
     ("unknown keys ['factor']",)),
    ("replay_kind_int", lambda: replay('[{"kind": 3, "kernel": "exp"}]'), ScheduleError,
     ("kind and kernel must be strings",)),
    ("replay_axis_dict", lambda: replay('[{"kind": "split", "kernel": "exp", "axis": {}, "value": 2}]'),
     ScheduleError, ("axis {} must be",)),
    ("replay_value_list", lambda: replay('[{"kind": "split", "kernel": "exp", "axis": 0, "value": [2]}]'),
     ScheduleError, ("split factor must be a whole number", "(2,)")),
    ("replay_value_dict", lambda: replay('[{"kind": "split", "kernel": "exp", "axis": 0, "value": {"a": 1}}]'),
     ScheduleError, ("must be a number, a list of numbers",)),
    ("replay_value_list_of_text", lambda: replay('[{"kind": "split", "kernel": "exp", "axis": 0, "value": ["2"]}]'),
     ScheduleError, ("must be a number, a list of numbers",)),
    ("replay_unknown_kernel", lambda: replay('[{"kind": "split", "kernel": "nope", "axis": 0, "value": 2}]'),
     ScheduleError, ("no kernel named 'nope'",)),
    ("replay_not_text", lambda: replay(5), ScheduleError, ("replay takes the JSON text", "int")),
    ("replay_atomic", replay_atomic, ScheduleError, ("split axis 9 is out of range", "[64, 128]")),
    ("knob_misspelt", lambda: knob_run({"tile_mm": 16}, lambda: ks.knob("tile_m", 16, [16, 32])), KnobError,
     ("no knob named 'tile_mm'", "did you mean 'tile_m'", "strict=False")),
    ("knob_float_for_int", lambda: knob_run({"tile_m": 16.0}, lambda: ks.knob("tile_m", 16, [16, 32, 64])),
     KnobError, ("value 16.0 is not among its choices [16, 32, 64]",)),
    ("knob_bool_for_int", lambda: knob_run({"tile_m": True}, lambda: ks.knob("tile_m", 1, [1, 2])), KnobError,
     ("value True is not among its choices",)),
    ("knob_value_missing", lambda: knob_run({"tile_m": 7}, lambda: ks.knob("tile_m", 16, [16, 32])), KnobError,
     ("value 7",)),
    ("knob_values_list", lambda: knob_run([("tile_m", 16)], lambda: None), KnobError,
     ("knob_values takes a mapping", "list")),
    ("knob_bad_name", lambda: ks.knob("tile m", 1, [1]), KnobError, ("must be an identifier",)),
    ("knob_no_choices", lambda: ks.knob("t", 1, []), KnobError, ("choices must be a non-empty list",)),
    ("knob_default_not_choice", lambda: ks.knob("t", 3, [1, 2]), KnobError, ("default 3 is not among",)),
]

# --- lowering, names, profiles ----------------------------------------------------------------------------
LOWERING: list[Case] = [
    ("name_path", lambda: ks.lower(sched(), name="../escape"), UnsupportedError,
     ("name '../escape' is not a C identifier",)),
    ("name_absolute", lambda: ks.lower(sched(), name="/tmp/x"), UnsupportedError, ("not a C identifier",)),
    ("name_newline", lambda: ks.lower(sched(), name="x\n#error hi"), UnsupportedError, ("not a C identifier",)),
    ("name_space", lambda: ks.lower(sched(), name="my op"), UnsupportedError, ("not a C identifier",)),
    ("name_int", lambda: ks.lower(sched(), name=123), DTypeError, ("name must be a str", "int 123")),
    ("name_digit", lambda: ks.lower(sched(), name="1op"), UnsupportedError, ("not starting with a digit",)),
    ("name_unicode", lambda: ks.lower(sched(), name="opé"), UnsupportedError, ("ASCII",)),
    ("name_long", lambda: ks.lower(sched(), name="a" * 65), UnsupportedError, ("65 characters", "at most 64")),
    ("placeholder_name_long", lambda: x_(name="b" * 100), UnsupportedError, ("100 characters",)),
    ("placeholder_name_path", lambda: x_(name="a/b"), UnsupportedError, ("not a C identifier",)),
    ("op_name_dash", lambda: ks.relu(x_(), name="re-lu"), UnsupportedError, ("not a C identifier",)),
    ("target_unknown", lambda: ks.lower(sched(), "nochip"), TargetError, ("unknown hardware target 'nochip'",)),
    ("target_int", lambda: ks.lower(sched(), 5), TargetError, ("target must be a profile name", "int 5")),
    ("huge_graph", lambda: prog(ks.exp(ks.placeholder((2**31, 2**31), "float16", name="big"))), CapacityError,
     ("GM tensors need", "device memory", "big [2147483648, 2147483648]")),
    ("coupled_chip_matmul", lambda: prog(mm(), "ascend310p3"), UnsupportedError, ("coupled chip",)),
    ("ub_too_small", lambda: prog(ks.softmax(x_((8, 4096), "float32")), profile(ub_bytes=256)), CapacityError,
     ("kernel softmax_div: UB needs 512 B", "has 256 B", "scratch workBuf = 256 B")),
    ("override_unknown", lambda: profile(ub_size=1), TargetError, ("cannot override 'ub_size'",)),
    ("override_hbm_zero", lambda: profile(hbm_bytes_per_s=0), TargetError, ("hbm_bytes_per_s must be positive",)),
    ("override_clock_inf", lambda: profile(clock_mhz=float("inf")), TargetError, ("clock_mhz", "finite", "inf")),
    ("override_clock_nan", lambda: profile(clock_mhz=float("nan")), TargetError, ("clock_mhz", "nan")),
    ("override_clock_negative", lambda: profile(clock_mhz=-5.0), TargetError, ("clock_mhz",)),
    ("override_ub_zero", lambda: profile(ub_bytes=0), TargetError, ("ub_bytes must be positive",)),
    ("override_l2_rate_zero", lambda: profile(l2_read_bytes_per_cycle=0), TargetError,
     ("l2_read_bytes_per_cycle must be positive",)),
    ("override_ub_float", lambda: profile(ub_bytes=1.5), TargetError, ("ub_bytes must be a non-negative int",)),
    ("override_launch_negative", lambda: profile(launch_overhead_us=-1.0), TargetError, ("launch_overhead_us",)),
    ("override_cores_str", lambda: profile(aic_cores="24"), TargetError, ("aic_cores",)),
    ("simulate_profile_int", lambda: ks.simulate(prog(), profile=3), TargetError,
     ("profile must be a HardwareProfile",)),
    ("hw_get_unknown", lambda: ks.hw.get("ascend9"), TargetError, ("unknown hardware target", "did you mean")),
    ("tensorspec_float_dim", lambda: TensorSpec("a", (2.7, 3), "float32"), InputError,
     ("shape (2.7, 3) must hold whole numbers",)),
    ("tensorspec_bool_dim", lambda: TensorSpec("a", (True, 3), "float32"), InputError, ("whole numbers",)),
    ("tensorspec_negative", lambda: TensorSpec("a", (-1, 3), "float32"), InputError, ("negative dimension",)),
    ("tensorspec_name", lambda: TensorSpec("a b", (3,), "float32"), InputError, ("must be a C identifier",)),
    ("tensorspec_shape_str", lambda: TensorSpec("a", "3x3", "float32"), InputError, ("whole numbers",)),
    ("bundle_name_path", lambda: CodeBundle("../x", {"main.cpp": ""}, (), ()), UnsupportedError,
     ("not a C identifier",)),
    ("bundle_workspace_float", lambda: CodeBundle("k", {"main.cpp": ""}, (), (), workspace_bytes=1.5), InputError,
     ("workspace_bytes must be an int",)),
    ("bundle_path_outside", lambda: CodeBundle("k", {"main.cpp": "", "../a.cpp": ""}, (), ()), InputError,
     ("must be relative",)),
]

# --- DSL (the layer was already good: a sample stays pinned) ----------------------------------------------
DSL: list[Case] = [
    ("placeholder_float_dim", lambda: ks.placeholder((2.7, 3), "float32"), ShapeError, ("dimension 2.7",)),
    ("placeholder_zero_dim", lambda: ks.placeholder((0, 3), "float32"), ShapeError, ("int >= 1",)),
    ("placeholder_dtype", lambda: ks.placeholder((3,), "float64"), DTypeError, ("float64",)),
    ("add_shapes", lambda: ks.add(x_((3, 4)), x_((5, 4), name="y")), ShapeError, ("[3,4]", "[5,4]")),
    ("matmul_k", lambda: ks.matmul(x_((3, 4)), x_((5, 6), name="w")), ShapeError, ("matmul",)),
    ("evaluate_outputs_str", lambda: ks.evaluate("y", {}), InputError, ("outputs must be Tensors",)),
]

_PROFILE_TOML = (Path(ks.hw.__file__).parent / "profiles" / "ascend910b2.toml").read_text()


def toml(old: str, new: str) -> Any:
    """ascend910b2's profile with one piece of its TOML replaced, read as a user's profile file."""
    assert old in _PROFILE_TOML, old
    return ks.hw.profile_from_toml(_PROFILE_TOML.replace(old, new, 1), "my.toml")


# round two: hardware profiles a user writes or picks (TOML and targets), DSL leftovers
ROUND_TWO: list[Case] = [
    ("toml_not_text", lambda: ks.hw.profile_from_toml(5, "my.toml"), TargetError, ("my.toml", "as text", "int")),
    ("toml_bytes_not_utf8", lambda: ks.hw.profile_from_toml(b"name = \xff", "my.toml"), TargetError,
     ("not UTF-8",)),
    ("toml_mmad_no_curve", lambda: toml('curve = "MMAD_FP16_FP16_FP32_1_core_910b1"\n', ""), TargetError,
     ("[mmad] needs curve = ... and source = ...", "no curve")),
    ("toml_vector_no_chip", lambda: toml('chip = "Ascend910B1"\n', ""), TargetError,
     ("[vector] needs chip = ... and source = ...", "no chip")),
    ("toml_vector_chip_unknown", lambda: toml('chip = "Ascend910B1"', 'chip = "Ascend9"'), TargetError,
     ("[vector] chip 'Ascend9' has no measured vector curves", "known chips: Ascend")),
    ("toml_mmad_curve_unknown", lambda: toml('curve = "MMAD_FP16_FP16_FP32_1_core_910b1"', 'curve = "FAST"'),
     TargetError, ("[mmad] curve 'FAST' is not a measured Mmad curve", "known: MMAD_")),
    ("toml_move_curve_unknown", lambda: toml('curve = "UB_TO_UB_910b1"', 'curve = "NOPE"'), TargetError,
     ("UB->UB 'NOPE': no such measured move curve",)),
    ("toml_scale_str", lambda: toml("bandwidth_scale = 2.0", 'bandwidth_scale = "fast"'), TargetError,
     ("moves.'L0C->L1' bandwidth_scale must be a positive number", "'fast'")),
    ("toml_scale_negative", lambda: toml("bandwidth_scale = 2.0", "bandwidth_scale = -2"), TargetError,
     ("bandwidth_scale must be a positive number", "-2")),
    ("toml_name_int", lambda: toml('name = "ascend910b2"', "name = 5"), TargetError,
     ("name must be a non-empty string", "5")),
    ("toml_name_empty", lambda: toml('name = "ascend910b2"', 'name = "  "'), TargetError,
     ("name must be a non-empty string",)),
    ("hw_get_list", lambda: ks.hw.get(["ascend910b2"]), TargetError,
     ("a target is a profile name (a str), got list", "known: ascend")),
    ("hw_get_none", lambda: ks.hw.get(None), TargetError, ("got NoneType",)),
    ("gelu_approximate_array", lambda: ks.gelu(x_(), approximate=np.array(["tanh"])), UnsupportedError,
     ("gelu: approximate=array(['tanh']", "is not one of 'none', 'tanh'")),
]

ALL: list[Case] = SKIPPED + INPUTS + SCHEDULES + LOWERING + DSL + ROUND_TWO


def test_there_are_enough_cases() -> None:
    assert len(ALL) >= 120
    assert len({cid for cid, *_ in ALL}) == len(ALL)


@pytest.mark.parametrize("call,error,fragments", [c[1:] for c in ALL], ids=[c[0] for c in ALL])
def test_bad_input_is_refused_with_a_clear_message(call, error, fragments) -> None:
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error  # the exact subclass, not just any KernelStudioError
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, f"{frag!r} not in {msg!r}"


# --- what used to be rejected or lost, and is now accepted ------------------------------------------------
def test_numpy_scalars_are_accepted_like_python_numbers() -> None:
    st = stage()
    st.split(0, np.int64(16)).double_buffer(np.True_).vectorize(-1, np.int32(64))
    s = st.schedule
    assert all(type(d.value) in (int, bool) for d in s.directives)
    again = sched()
    again.replay(s.to_json())  # saved and replayed: plain JSON numbers
    assert again.directives == s.directives
    with ks.knob_values({"tile_m": np.int64(32)}):
        assert type(ks.knob("tile_m", 16, [16, 32])) is int
    assert profile(ub_bytes=np.int64(65536)).ub_bytes == 65536
    assert TensorSpec("a", (np.int64(3), 4), "float32").shape == (3, 4)


def test_knob_values_for_skipped_knobs_pass_when_not_strict() -> None:
    with ks.knob_values({"tile_m": 32, "gone": 1}, strict=False) as ctx:
        assert ks.knob("tile_m", 16, [16, 32]) == 32
    assert set(ctx.seen) == {"tile_m"}


def test_a_good_replay_applies_everything() -> None:
    s = sched()
    s[s.outputs[0]].split(0, 16)
    t = sched()
    t.replay(s.to_json())
    assert t.directives == s.directives


def test_the_program_carries_its_profile_through_simulate_codegen_and_twin() -> None:
    p = profile(ub_bytes=65536, hbm_bytes_per_s=1e11)
    pr = prog(target=p)
    assert pr.profile == p and pr.target == "ascend910b2"
    slow = ks.simulate(pr).time_us
    assert slow > ks.simulate(prog()).time_us  # the lower HBM rate was kept
    bundle = ks.codegen(pr)
    from kernelstudio.twin.runner import compile_flags

    assert "-DKS_UB_BYTES=65536" in compile_flags(bundle)
    assert "-DKS_UB_BYTES=196608" in compile_flags(ks.codegen(prog()))


def test_a_profile_read_from_bytes_equals_the_one_read_from_text() -> None:
    assert ks.hw.profile_from_toml(_PROFILE_TOML.encode(), "x") == ks.hw.profile_from_toml(_PROFILE_TOML, "x")
