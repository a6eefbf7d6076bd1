"""ks.split / ks.concat / ks.rope: the kernels' strided moves, and three-way numerics (golden == run_tiled ==
twin) on small shapes with tails, every case merged into one twin binary."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio import twin
from kernelstudio.codegen import codegen, generate_files, op_names

from .merge import merge
from .reference import TOL, outputs

Case = Callable[[], tuple[ks.Tensor, ...]]


def split_ew_concat() -> tuple[ks.Tensor, ...]:
    """split into [48, 16], elementwise ops on each part, concat back."""
    x = ks.placeholder((8, 64), "float16", name="x")
    a, b = ks.split(x, [48, 16])
    return (ks.concat([ks.exp(b) * 0.5, a + 1.0]),)


def split_unaligned() -> tuple[ks.Tensor, ...]:
    """[40, 24] of float16: widths (80 and 48 bytes) and an offset that are not whole 32-byte blocks."""
    x = ks.placeholder((13, 64), "float16", name="x")
    a, b = ks.split(x, [40, 24])
    return (a * 2.0, b - 1.0)


def concat_three() -> tuple[ks.Tensor, ...]:
    x = ks.placeholder((11, 24), "float32", name="x")
    y = ks.placeholder((11, 5), "float32", name="y")
    z = ks.placeholder((11, 35), "float32", name="z")
    return (ks.concat([x, ks.relu(y), z * 3.0], axis=1),)


def axis0() -> tuple[ks.Tensor, ...]:
    """split and concat along axis 0 (row offsets), with an odd row count."""
    x = ks.placeholder((3, 9, 20), "float16", name="x")
    p, q, r = ks.split(x, 3, axis=0)
    return (ks.concat([r, p * 2.0, q], axis=0), ks.split(x, [5, 4], axis=1)[1] + 1.0)


def rope_half() -> tuple[ks.Tensor, ...]:
    x = ks.placeholder((8, 64), "float16", name="x")
    sin = ks.placeholder((8, 64), "float16", name="sin")
    cos = ks.placeholder((8, 64), "float16", name="cos")
    return (ks.rope(x, sin, cos, layout="half"),)


def rope_half_tails() -> tuple[ks.Tensor, ...]:
    """A (T, 40) head: halves of 20 float32 (80 bytes), 13 rows."""
    x = ks.placeholder((13, 40), "float32", name="x")
    sin = ks.placeholder((13, 40), "float32", name="sin")
    cos = ks.placeholder((13, 40), "float32", name="cos")
    return (ks.rope(x, sin, cos),)


def rope_interleave() -> tuple[ks.Tensor, ...]:
    """Pairs (2i, 2i+1): a reshape to [..., 32, 2] and width-1 splits (one element per burst)."""
    x = ks.placeholder((8, 64), "float16", name="x")
    sin = ks.placeholder((8, 64), "float16", name="sin")
    cos = ks.placeholder((8, 64), "float16", name="cos")
    return (ks.rope(x, sin, cos, layout="interleave"),)


CASES: dict[str, Case] = {
    "split_ew_concat": split_ew_concat, "split_unaligned": split_unaligned, "concat_three": concat_three,
    "axis0": axis0, "rope_half": rope_half, "rope_half_tails": rope_half_tails,
    "rope_interleave": rope_interleave,
}


def _lower(outs: tuple[ks.Tensor, ...], fuse: bool):
    return ks.lower(ks.create_schedule(list(outs), fuse=fuse), target="ascend910b2")


def _src(name: str) -> str:
    prog = _lower(CASES[name](), True)
    files = generate_files(prog)
    return "\n".join(files[n.kernel_file] for n in op_names(prog).values())


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("fuse", [True, False])
def test_golden_equals_run_tiled(name: str, fuse: bool) -> None:
    outs = CASES[name]()
    prog = _lower(outs, fuse)
    inp = ks.random_inputs(list(outs), seed=3)
    want = outputs(prog, tuple(ks.evaluate(list(outs), inp)))
    got = outputs(prog, ks.run_tiled(prog, inp))
    for out in prog.outputs:
        rtol, atol = TOL.get(prog.tensor(out).dtype, (0.0, 0.0))
        np.testing.assert_allclose(got[out], want[out], rtol=rtol, atol=atol, err_msg=f"{name} {out}")


def test_unaligned_parts_move_with_datacopypad() -> None:
    src = _src("split_unaligned")
    assert "AscendC::DataCopyPad(" in src


@pytest.mark.parametrize("fuse", [True, False])
def test_split_concat_rope_three_way(fuse: bool, twin_cache) -> None:
    progs, golden, tiled, inputs = [], [], [], {}
    for i, build in enumerate(CASES.values()):
        outs = build()
        prog = _lower(outs, fuse)
        inp = ks.random_inputs(list(outs), seed=i)
        progs.append(prog)
        golden.append(outputs(prog, tuple(ks.evaluate(list(outs), inp))))
        tiled.append(outputs(prog, ks.run_tiled(prog, inp)))
        inputs.update({f"c{i}_{n}": v for n, v in inp.items()})
    got = twin.run(codegen(merge(progs)), inputs, cache_dir=twin_cache, by_name=True)
    for i, (name, prog) in enumerate(zip(CASES, progs, strict=True)):
        for out in prog.outputs:
            rtol, atol = TOL.get(prog.tensor(out).dtype, (0.0, 0.0))
            g = np.asarray(got[f"c{i}_{out}"], dtype=np.float32)
            np.testing.assert_allclose(tiled[i][out], golden[i][out], rtol=rtol, atol=atol,
                                       err_msg=f"{name} {out} run_tiled")
            np.testing.assert_allclose(g, golden[i][out], rtol=rtol, atol=atol, err_msg=f"{name} {out} twin")


def test_split_parts_fuse_into_their_consumers_and_concat_moves_apart() -> None:
    s = ks.create_schedule(list(split_ew_concat()))
    kernels = [[n.op.value for n in k.nodes] for k in s.kernels]
    assert kernels == [["slice", "exp", "mul"], ["slice", "add"], ["concat"]], kernels
    s = ks.create_schedule(list(rope_half()))
    assert [k.nodes[0].op.value for k in s.kernels] == ["slice", "slice", "concat", "mul"]


def test_axis_slices_with_outer_dims_move_in_kernels_of_their_own() -> None:
    x = ks.placeholder((3, 9, 20), "float16", name="x")
    part = ks.split(x, [5, 4], axis=1)[1]
    prog = _lower((part + 1.0,), True)
    assert prog.kernels[0].ops == ("slice",) and "strided copies" in prog.kernels[0].notes[0]


def test_moves_are_simulated_by_their_bytes() -> None:
    x = ks.placeholder((256, 64), "float16", name="x")
    y = ks.placeholder((256, 64), "float16", name="y")
    prog = _lower((ks.concat([x, y]),), True)
    r = ks.simulate(prog)
    assert r.time_us > 0
    assert r.traffic["GM->UB"] == r.traffic["UB->GM"] == 2 * 256 * 64 * 2
