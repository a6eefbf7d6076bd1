"""The index-expression builders fold as `simplify` does, and the cached hashes equal the dataclass ones."""

from __future__ import annotations

import importlib
import itertools
import pickle

import pytest

from kernelstudio.tileir.expr import Bin, Const, E, Load, Var, as_expr, ceil_div, simplify

OPERANDS = [0, 1, 2, -3, True, "x", Var("y"), Const(0), Const(1), Const(5), Const(-2), Bin("+", Var("x"), Const(1)),
            Load("b", Var("i"))]
BUILDERS = {"+": E.add, "-": E.sub, "*": E.mul, "//": E.div, "%": E.mod, "min": E.min, "max": E.max}


@pytest.mark.parametrize("op", sorted(BUILDERS))
def test_each_builder_folds_as_simplify(op: str) -> None:
    for a, b in itertools.product(OPERANDS, OPERANDS):
        ea, eb = as_expr(a), as_expr(b)
        try:
            want = simplify(Bin(op, ea, eb))
        except ZeroDivisionError:
            with pytest.raises(ZeroDivisionError):
                BUILDERS[op](a, b)
            continue
        got = BUILDERS[op](a, b)
        assert got == want and type(got) is type(want), (op, a, b, got, want)


def test_folding_cases_by_hand() -> None:
    x = Var("x")
    assert E.mul(0, x) == Const(0) and E.mul(x, 1) is x and E.add(0, x) is x and E.sub(x, 0) is x
    assert E.div(x, 1) is x and E.min(x, Var("x")) == x and E.max(3, 5) == Const(5) and E.mod(7, 4) == Const(3)
    assert ceil_div(10, 4) == Const(3) and str(ceil_div(x, 4)) == "((x + 3) // 4)"


def test_a_tree_hashes_as_its_fields_and_survives_pickling() -> None:
    e = Load("buf", Bin("*", Bin("+", Var("i"), Const(1)), Const(8)))
    assert hash(e) == hash(("buf", e.index)) and hash(e.index) == hash(("*", e.index.a, e.index.b))
    assert hash(e) == hash(e)  # the second answer is the kept one
    back = pickle.loads(pickle.dumps(e))
    assert back == e and hash(back) == hash(e) and {e: 1}[back] == 1
    with pytest.raises(AttributeError):
        e.buf = "other"  # type: ignore[misc]


def test_kernel_config_with_equals_dataclasses_replace() -> None:
    import dataclasses

    config = importlib.import_module("kernelstudio.lower.config")
    c = config.KernelConfig(tile_m=32, notes=("a",))
    d = c.with_(tile_m=64, aligned=True, order=("n", "m"))
    assert d == dataclasses.replace(c, tile_m=64, aligned=True, order=("n", "m"))
    assert hash(d) == hash(dataclasses.replace(c, tile_m=64, aligned=True, order=("n", "m")))
    assert c.tile_m == 32 and c.noted("b").notes == ("a", "b")
    with pytest.raises(TypeError, match="no field 'tile_q'"):
        c.with_(tile_q=1)
