"""`ks.debug`: clean reference kernels are within tolerance of the plan-aware golden model, tile by tile; seeded
faults are found at the right tile and the right instruction.

What "right" means, per fault (the report's `first_instruction`):
- a wrong tail bound (`rlen = min(tile, extent - t*tile)` one row short): the tail tile, and the store of that
  tile (the bound is a `Let`, not an instruction: the store is the instruction it feeds, and it wrote too little);
- a ping/pong slot read from the wrong buffer: the first tile the consumer computes, and the instruction that
  reads the wrong slot (the workspace copy-in whose `slot` is swapped; the vector op reading a queue buffer
  whose DeQue became an Alloc);
- a float16 buffer where the plan keeps float32: the first tile, and the first instruction writing the demoted
  buffer (its values are off the golden value of the graph node it computes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.interp.checkpoints import instruction_table
from kernelstudio.plan.debug import _sid_table
from kernelstudio.tileir.expr import Bin, Const, Var
from kernelstudio.tileir.program import Alloc, Copy, DeQue, If, Let, Loop, Program, Stmt, VecOp
from tests.reference_kernels import REFERENCE, layer_norm, mla_prolog_lite, softmax


def _design(make: Callable, fuse: bool = True, **kw):
    out = make(**kw)
    s = ks.create_schedule(out, fuse=fuse)
    return s, ks.lower(s), ks.random_inputs(out)


def _mutate(prog: Program, side: str, fn: Callable[[Stmt], tuple[Stmt, ...]], kernel: int = 0
            ) -> tuple[Program, int]:
    """`prog` with every statement of kernel `kernel`'s `side` replaced by fn(statement); how many fn changed."""
    changed = [0]

    def go(stmts: tuple[Stmt, ...]) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, (Loop, If)):
                s = replace(s, body=go(s.body))
            new = fn(s)
            changed[0] += new != (s,)
            out.extend(new)
        return tuple(out)

    ks_ = list(prog.kernels)
    ks_[kernel] = replace(ks_[kernel], **{side: go(getattr(ks_[kernel], side))})
    return replace(prog, kernels=tuple(ks_)), changed[0]


def _index(prog: Program, side: str, pred: Callable[[Stmt], bool], kernel: int = 0) -> int:
    """The index (as the report counts) of the only instruction of kernel `kernel`'s `side` that `pred` picks."""
    _, stmts, _ = instruction_table(prog)
    hits = [key.index for key, (s, _) in stmts.items() if key.kernel == kernel and key.side == side and pred(s)]
    assert len(hits) == 1, hits
    return hits[0]


# ---- clean programs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_clean_reference_kernels_are_ok_tile_by_tile(name: str, fuse: bool) -> None:
    s, prog, inputs = _design(REFERENCE[name], fuse)
    r = ks.debug(prog, inputs, schedule=s)
    assert r.ok, r.summary()
    assert r.first_tile is None and r.first_instruction is None
    assert r.tiles == sum(t.bad.size for t in r.tensors) > 1
    for t in r.tensors:
        assert not t.bad.any() and np.isfinite(t.max_abs).all()
        assert (t.max_abs <= r.atol + r.rtol * 8).all()  # |golden| stays below 8 in these kernels
        if name in ("softmax", "layer_norm", "elementwise_chain"):  # vector kernels: bit for bit
            assert t.max_abs.max() == 0
    assert {t.tensor for t in r.tensors} >= set(prog.outputs)


def test_tails_are_tiles_of_their_own() -> None:
    s, prog, inputs = _design(layer_norm, rows=51)  # 25 tiles of 2 rows and a tail of 1
    r = ks.debug(prog, inputs, schedule=s)
    assert r.ok
    t = r.tensor_errors()
    assert t.tile_shape == (2, 200) and t.max_abs.shape == (26, 1)


def test_a_design_of_build_carries_its_schedule() -> None:
    out = softmax()
    d = ks.build(out, compare=False)
    r = ks.debug(d, ks.random_inputs(out))
    assert r.ok and r.program == d.program.name


# ---- seeded faults ------------------------------------------------------------------------------------------

def test_a_tail_bound_one_row_short_names_the_tail_tile_and_its_store() -> None:
    s, prog, inputs = _design(softmax)  # 100 rows in tiles of 3: tile 33 is the one-row tail

    def shorten(st: Stmt) -> tuple[Stmt, ...]:
        if isinstance(st, Let) and st.var == "rlen":
            v = st.value
            assert isinstance(v, Bin) and v.op == "min"
            return (replace(st, value=Bin("min", v.a, Bin("-", v.b, Const(1)))),)
        return (st,)

    bad, n = _mutate(prog, "aiv", shorten)
    assert n == 1
    r = ks.debug(bad, inputs, schedule=s)
    assert not r.ok
    ft = r.first_tile
    assert (ft.tensor, ft.tile, ft.rows, ft.cols) == ("softmax_div", (33, 0), (99, 100), (0, 300))
    assert (ft.block, ft.core, ft.loops) == (33, "aiv0", (("t", 33),))
    assert ft.unwritten == ft.bad == ft.elements == 300 and ft.max_abs == np.inf
    store = _index(bad, "aiv", lambda st: isinstance(st, Copy) and st.dst.gm)
    assert r.first_instruction == ft.store
    assert (r.first_instruction.kernel, r.first_instruction.side, r.first_instruction.index) == \
        ("softmax_div", "aiv", store)
    assert "the store of the tile: it wrote 0x300" in r.why
    grid = r.errors()
    assert grid.shape == (34, 1) and grid[:33].max() == 0  # every other tile is exact


def test_a_swapped_workspace_slot_names_the_copy_that_reads_it() -> None:
    s, prog, inputs = _design(mla_prolog_lite)

    def swap(st: Stmt) -> tuple[Stmt, ...]:
        if isinstance(st, Let) and st.var == "slot":
            return (replace(st, value=Bin("%", Bin("+", Var("j"), Const(1)), Const(2))),)
        return (st,)

    bad, n = _mutate(prog, "aiv", swap)
    assert n == 1
    r = ks.debug(bad, inputs, schedule=s)
    ft = r.first_tile
    assert (ft.tensor, ft.tile, ft.rows, ft.cols, ft.block, ft.core) == ("out", (0, 0), (0, 8), (0, 512), 0, "aiv0")
    copy_in = _index(bad, "aiv", lambda st: isinstance(st, Copy) and st.src.gm and st.src.buf == "out_ws")
    assert (r.first_instruction.side, r.first_instruction.index) == ("aiv", copy_in)
    assert "of gm.out_ws that no instruction wrote" in r.why
    assert r.first_instruction in ft.writers and ft.store in ft.writers
    sim = ks.simulate(bad)
    texts = sim.events.instr_text
    assert r.first_instruction.sids and texts[r.first_instruction.sids[0]].startswith("copy in_out_ws <- gm.out_ws")
    on = r.on_timeline(sim)  # where the timeline draws that copy: on MTE2, on the vector cores that ran it
    assert len(on) > 0 and {e.instr for e in on} == {texts[r.first_instruction.sids[0]]}
    assert {e.pipe for e in on} == {"MTE2"} and all("veccore" in e.core for e in on)
    assert len(on) == int(np.isin(sim.events.columns["instr"], r.first_instruction.sids).sum())
    tiny = ks.relu(ks.placeholder((8,), "float16", name="t"))
    with pytest.raises(ks.InputError, match="pass the simulation of the program debugged"):
        r.on_timeline(ks.simulate(ks.lower(ks.create_schedule(tiny))))


def test_a_queue_slot_bound_by_alloc_instead_of_deque_names_its_reader() -> None:
    s, prog, inputs = _design(softmax)
    bad, n = _mutate(prog, "aiv", lambda st: (Alloc(st.buf),) if isinstance(st, DeQue) and st.buf == "in_x" else (st,))
    assert n == 1
    r = ks.debug(bad, inputs, schedule=s)
    assert r.first_tile.tile == (0, 0) and r.first_tile.loops == (("t", 0),)
    reader = _index(bad, "aiv", lambda st: isinstance(st, VecOp) and any(x.buf == "in_x" for x in st.srcs))
    assert r.first_instruction.index == reader
    assert "elements of in_x that no instruction wrote since the slot was last allocated" in r.why


def test_a_float16_scratch_where_the_plan_keeps_float32_names_its_first_writer() -> None:
    s, prog, inputs = _design(layer_norm)
    k = prog.kernels[0]
    assert k.buffer("tmp2_full").dtype == "float32"
    bufs = tuple(replace(b, dtype="float16") if b.name == "tmp2_full" else b for b in k.buffers)
    bad = replace(prog, kernels=(replace(k, buffers=bufs),))
    r = ks.debug(bad, inputs, schedule=s)
    assert not r.ok and r.first_tile.tile == (0, 0) and r.first_tile.tensor == "layer_norm_add_1"
    writer = _index(bad, "aiv", lambda st: isinstance(st, VecOp) and st.dst.buf == "tmp2_full" and st.op == "sub")
    assert r.first_instruction.index == writer
    assert r.why.startswith("its values of layer_norm_sub are off that node's golden value")
    assert ks.debug(bad, inputs, schedule=s, atol=1.0, rtol=0).ok  # the tolerance decides


def test_in_an_unfused_plan_the_kernel_that_went_wrong_is_named_not_the_ones_after_it() -> None:
    s, prog, inputs = _design(REFERENCE["elementwise_chain"], fuse=False)
    assert [k.name for k in prog.kernels][:2] == ["add", "mul"]
    bad, n = _mutate(prog, "aiv", lambda st: (Alloc(st.buf),) if isinstance(st, DeQue) and st.buf == "in_add"
                     else (st,), kernel=1)
    assert n == 1
    r = ks.debug(bad, inputs, schedule=s)
    assert (r.first_tile.tensor, r.first_tile.kernel, r.first_tile.tile) == ("mul", "mul", (0, 0))
    reader = _index(bad, "aiv", lambda st: isinstance(st, VecOp) and any(x.buf == "in_add" for x in st.srcs), 1)
    assert (r.first_instruction.kernel, r.first_instruction.index) == ("mul", reader)
    assert r.tensor_errors("add").max_abs.max() == 0 and r.tensor_errors("add_1").bad.all()


# ---- instructions link to the simulator's ----------------------------------------------------------------

@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_every_instruction_has_its_simulator_ids(name: str, fuse: bool) -> None:
    _, prog, _ = _design(REFERENCE[name], fuse)
    _, stmts, _ = instruction_table(prog)
    sids = _sid_table(prog)
    assert set(sids) == set(stmts)
    texts = ks.simulate(prog).events.instr_text
    for key, (st, _) in stmts.items():
        if isinstance(st, Copy):
            assert len(sids[key]) == 1 and texts[sids[key][0]].startswith("copy "), (key, st)
        if isinstance(st, (Alloc, DeQue)):
            assert sids[key] == ()


def test_heatmap_outlines_the_first_tile() -> None:
    pytest.importorskip("plotly")
    s, prog, inputs = _design(softmax)
    bad, _ = _mutate(prog, "aiv", lambda st: (Alloc(st.buf),) if isinstance(st, DeQue) and st.buf == "in_x"
                     else (st,))
    r = ks.debug(bad, inputs, schedule=s)
    fig = r.heatmap()
    assert np.asarray(fig.data[0].z).shape == (34, 1)
    (rect,) = fig.layout.shapes
    assert (rect.x0, rect.y0) == (-0.5, -0.5)
    assert "softmax_div" in fig.layout.title.text


# ---- bad input ------------------------------------------------------------------------------------------------

def test_bad_input_names_the_thing_and_a_way_out() -> None:
    s, prog, inputs = _design(softmax)
    with pytest.raises(ks.StageError, match=r"debug takes"):
        ks.debug("prog", inputs, schedule=s)
    with pytest.raises(ks.InputError, match=r"pass schedule=s .* or pass the Design ks.build returned"):
        ks.debug(prog, inputs)
    with pytest.raises(ks.StageError, match=r"debug\(schedule=\.\.\.\)"):
        ks.debug(prog, inputs, schedule="s")
    other = ks.create_schedule(layer_norm())
    with pytest.raises(ks.InputError, match=r"the schedule computes layer_norm_add_1 but the program stores "
                                            r"softmax_div; pass the schedule the program was lowered from"):
        ks.debug(prog, inputs, schedule=other)
    with pytest.raises(ks.InputError, match=r"debug\(softmax\).*'x'"):
        ks.debug(prog, {}, schedule=s)
    with pytest.raises(ks.KernelStudioError, match=r"debug\(softmax\).*x.*\[100,300\]"):
        ks.debug(prog, {"x": np.zeros((3, 3), np.float16)}, schedule=s)
    for what, value, shown in [("atol", -1.0, "-1.0"), ("rtol", float("nan"), "nan"), ("atol", "1e-3", "str '1e-3'"),
                               ("rtol", True, "bool True"), ("atol", float("inf"), "inf")]:
        with pytest.raises(ks.InputError, match=rf"debug\(softmax\): {what} must be a finite number >= 0, got "
                                                rf"{shown}; pass e\.g\. {what}=0\.004"):
            ks.debug(prog, inputs, schedule=s, **{what: value})
    r = ks.debug(prog, inputs, schedule=s, atol=np.float32(0), rtol=0)
    assert r.ok and (r.atol, r.rtol) == (0.0, 0.0)
    with pytest.raises(ks.InputError, match=r"no stored tensor 'y'; tensors: softmax_div"):
        r.errors("y")


# ---- the README's section --------------------------------------------------------------------------------------

def test_the_readme_section_prints_what_it_shows() -> None:
    """The section's example, read from README.md, prints exactly its text block (the twin tier runs it again
    among all the README's blocks)."""
    import contextlib
    import io
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Per-tile numerical debugging: `ks.debug`\n", 1)[1].split("\n## ", 1)[0]
    block, shown = re.search(r"```python\n(.*?)```\n```text\n(.*?)```\n", section, flags=re.S).groups()
    out = io.StringIO()
    ns: dict = {"ks": ks}
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), ns)  # noqa: S102 - our own documentation
    assert out.getvalue() == shown
    assert not ns["sm_report"].ok and ns["sm_report"].first_tile.tile == (33, 0)
