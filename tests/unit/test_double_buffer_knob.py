"""double_buffer changes queue depth only: the auto-chosen tiles stay the same with it on and off (where
they do not fit L0A/L0B twice, those two keep one slot), and it is never slower."""

from __future__ import annotations

import pytest

import kernelstudio as ks
from kernelstudio.core.errors import CapacityError
from tests.reference_kernels import REFERENCE

TARGET = "ascend910b2"


def _readme():
    x = ks.placeholder((64, 256), "float16", name="x")
    w = ks.placeholder((512, 256), "float16", name="w")
    b = ks.placeholder((512,), "float16", name="b")
    y = ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)
    return ks.gelu(y + b)


def _wide_rows():  # 8192-wide rows: the epilogue's UB queues cannot hold two slots of whole rows
    x = ks.placeholder((32, 64), "float16", name="x")
    w = ks.placeholder((8192, 64), "float16", name="w")
    return ks.layer_norm(ks.matmul(x, w, transpose_b=True), axis=-1, eps=1e-5)


CASES = {**{name: (f, {}) for name, f in REFERENCE.items()}, "readme": (_readme, {"m": 16}),
         "wide_rows": (_wide_rows, {})}
_CUBE_KEYS = ("m", "n", "k")


def _lower(name: str, on: bool, splits: dict | None = None):
    f, base = CASES[name]
    out = f()
    s = ks.create_schedule(out, fuse=True)  # the knob on the fused kernels
    st = s[out]
    for ax, v in {**base, **(splits or {})}.items():
        st = st.split(ax, v)
    st.double_buffer(on)
    return ks.lower(s, target=TARGET)


def _tiles(prog) -> dict:
    return {k.name: {a: v for a, v in k.tiling if a.startswith(("tile_", "step_", "vec_"))} for k in prog.kernels}


def _time(prog) -> float:
    return ks.simulate(prog).time_us


# the single-buffered auto tiles of these do not fit with two slots: 16x256x128 needs
# b2 256x128 float16 x2 = 131,072 B of L0B (65,536 B); double buffering keeps the tiles and gives
# L0A/L0B one slot each, every other queue two
DO_NOT_FIT = ("mla_prolog_lite", "readme")


@pytest.mark.parametrize("name", list(CASES))
def test_same_tiles_and_not_slower(name):
    off, on = _lower(name, False), _lower(name, True)
    assert _tiles(on) == _tiles(off)
    assert _time(on) <= _time(off) * 1.0


@pytest.mark.parametrize("name", DO_NOT_FIT)
def test_tiles_that_do_not_fit_l0_twice_keep_one_l0_slot(name):
    off, on = _lower(name, False), _lower(name, True)
    t_on = next(iter(_tiles(on).values()))
    assert (t_on["tile_m"], t_on["tile_n"], t_on["tile_k"]) == (16, 256, 128)
    k = on.kernels[0]
    depth = {b.name: b.depth for b in k.buffers}
    assert depth["a2"] == depth["b2"] == 1 and depth["a1"] == depth["b1"] == 2
    assert any("L0A/L0B keep one slot each" in n for n in k.notes)
    assert _time(on) < _time(off)
    # the same tiles fixed by the user with two slots: the capacity error and its way out
    with pytest.raises(CapacityError) as e:
        _lower(name, True, dict(zip(_CUBE_KEYS, (16, 256, 128), strict=True)))
    msg = str(e.value)
    assert "L0B" in msg and "131,072 B" in msg and "turn off double_buffer" in msg
    # with the same tiles, double buffering is faster
    for tiles in ((16, 256, 64), (16, 128, 128)):
        sp = dict(zip(_CUBE_KEYS, tiles, strict=True))
        assert _time(_lower(name, True, sp)) < _time(_lower(name, False, sp))


@pytest.mark.parametrize("name", ["softmax", "conv_bias_relu", "mla_prolog_lite"])
def test_user_tiles_untouched_by_double_buffer(name):
    splits = {"m": 16, "n": 16, "k": 64} if name != "softmax" else {}
    off, on = _lower(name, False, splits), _lower(name, True, splits)
    assert _tiles(on) == _tiles(off)
    assert _time(on) <= _time(off)
