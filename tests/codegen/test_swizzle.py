"""swizzle(group, direction): the order C tiles are dealt to the cube cores. Every tile exactly once,
as catlass's GemmIdentityBlockSwizzle walks them, refused where it cannot apply, numerics unchanged
(three-way exact with tails and a group that does not divide the tile rows)."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import ScheduleError
from kernelstudio.tileir.expr import compile_expr

from .reference import three_way


def _mm(m: int, k: int, n: int, batch: tuple[int, ...] = ()):
    a = ks.placeholder((*batch, m, k), "float16", name="a")
    b = ks.placeholder((k, n), "float16", name="b")
    return ks.matmul(a, b)


def _lower(out, tiles=(32, 32, 32), swizzle=None, order=None, target="ascend910b2"):
    s = ks.create_schedule(out, fuse=True)
    st = s[s.kernels[0].name].split("m", tiles[0]).split("n", tiles[1]).split("k", tiles[2])
    if order:
        st.reorder(*order)
    if swizzle:
        st.swizzle(*swizzle)
    return ks.lower(s, target)


def _visits(prog) -> list[tuple[int, int, int]]:
    """(bi, mi, ni) of tile t = 0, 1, ... as the kernel's tile walk computes them."""
    k = prog.kernels[0]
    w = k.tile_walk
    out = []
    for t in range(w.tiles):
        env = {"t": t}
        for let in w.lets:
            env[let.var] = compile_expr(let.value)(env)
        out.append((env["bi"], env["mi"], env["ni"]))
    return out


def _catlass(mt: int, nt: int, g: int, direction: str) -> list[tuple[int, int]]:
    """GemmIdentityBlockSwizzle<g, 0 | 1>::GetBlockCoord for every task index, written out plainly."""
    rows, cols = (mt, nt) if direction == "m" else (nt, mt)
    out = []
    for u in range(mt * nt):
        grp, inside = divmod(u, g * cols)
        size = min(g, rows - grp * g)
        a, b = grp * g + inside % size, inside // size
        if grp % 2:
            b = cols - 1 - b
        out.append((a, b) if direction == "m" else (b, a))
    return out


@pytest.mark.parametrize(("m", "n", "group", "direction"), [
    (200, 150, 3, "m"), (200, 150, 7, "m"), (200, 150, 1, "m"), (96, 230, 2, "n"), (96, 230, 8, "n"),
])
def test_the_walk_visits_every_tile_once_in_catlass_order(m, n, group, direction):
    prog = _lower(_mm(m, 64, n, batch=(2,)), swizzle=(group, direction))
    mt, nt = -(-m // 32), -(-n // 32)
    visits = _visits(prog)
    assert sorted(visits) == [(b, i, j) for b in range(2) for i in range(mt) for j in range(nt)]
    per_batch = [(i, j) for b, i, j in visits if b == 0]
    assert per_batch == _catlass(mt, nt, group, direction)
    assert "swizzle: C tiles walked in" in prog.passes[-1][1]


def test_group_one_is_a_serpentine_row_walk_and_all_rows_is_column_major():
    out = _mm(96, 64, 128)  # 3 x 4 tiles
    row_major = _visits(_lower(out))
    assert row_major[:5] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 0)]
    serpentine = _visits(_lower(out, swizzle=(1, "m")))
    assert serpentine[:5] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 3)]
    col_major = _visits(_lower(out, order=("n", "m")))
    assert col_major != row_major
    assert _visits(_lower(out, swizzle=(3, "m"))) == col_major  # 3 tile rows: one group


@pytest.mark.parametrize(("make", "fragments"), [
    (lambda st: st.swizzle(0), ("group", ">= 1, got 0")),
    (lambda st: st.swizzle(2, "k"), ("direction 'k'", "'m' (groups of tile rows)")),
    (lambda st: st.swizzle(2.5), ("whole number",)),
])
def test_bad_arguments_name_the_value_and_the_choices(make, fragments):
    s = ks.create_schedule(_mm(64, 64, 64))
    with pytest.raises(ScheduleError) as e:
        make(s[s.kernels[0].name])
    for f in fragments:
        assert f in str(e.value)


def test_a_group_larger_than_the_tile_rows_names_both_numbers():
    with pytest.raises(ScheduleError,
                       match=r"swizzle\(group=9, direction='m'\).*only 7 tile rows \(M=200 in tiles of 32\).*most 7"):
        _lower(_mm(200, 64, 150), swizzle=(9, "m"))


def test_swizzle_and_reorder_together_is_an_error():
    with pytest.raises(ScheduleError, match=r"reorder\('n', 'm'\) both set the order.*keep one"):
        _lower(_mm(200, 64, 150), swizzle=(2, "m"), order=("n", "m"))


def test_refused_on_vector_kernels_and_row_reduction_epilogues():
    x = ks.placeholder((64, 128), "float16", name="x")
    s = ks.create_schedule(ks.exp(x))
    with pytest.raises(ScheduleError, match="swizzle applies to matmul/conv kernels"):
        s[s.kernels[0].name].swizzle(2)
    w = ks.placeholder((128, 256), "float16", name="w")
    s = ks.create_schedule(ks.rms_norm(ks.matmul(x, w)), fuse=True)
    s[s.kernels[0].name].swizzle(2)
    with pytest.raises(ScheduleError, match="row-reduction epilogue needs whole rows.*keep the reduction out"):
        ks.lower(s, "ascend910b2")


def test_three_way_batched_matmul_with_tails_and_an_uneven_group(twin_cache):
    out = _mm(200, 72, 150, batch=(2,))
    three_way(out, _lower(out, swizzle=(3, "m")), twin_cache)


def test_three_way_mixed_kernel_swizzled_by_columns(twin_cache):
    x = ks.placeholder((120, 64), "float16", name="x")
    w = ks.placeholder((64, 230), "float16", name="w")
    bias = ks.placeholder((230,), "float16", name="bias")
    out = ks.gelu(ks.matmul(x, w) + bias)
    prog = _lower(out, swizzle=(3, "n"))
    assert prog.kernels[0].family == "cube_vector"
    three_way(out, prog, twin_cache)


def test_saved_and_replayed_like_every_directive():
    s = ks.create_schedule(_mm(256, 64, 256))
    s[s.kernels[0].name].split("m", 32).swizzle(2, "n")
    again = ks.create_schedule(_mm(256, 64, 256))
    again.replay(s.to_json())
    assert again.directives == s.directives
    assert again.directives[-1] == ks.Directive("swizzle", s.kernels[0].name, "n", 2)


def test_three_way_conv_with_swizzled_pixel_tiles(twin_cache):
    from tests.reference_kernels import conv_bias_relu

    out = conv_bias_relu(n=2, cin=16, hw=20, cout=48)  # M = 48 output channels, N = 400 pixels per image
    s = ks.create_schedule(out, fuse=True)
    s[s.kernels[0].name].split("m", 16).split("n", 64).swizzle(2, "m")
    prog = ks.lower(s, "ascend910b2")
    assert prog.kernels[0].tile_walk.tiles == 2 * 3 * 7
    three_way(out, prog, twin_cache)
