"""The TileIR vector-op registry (tileir/vector_ops.py) is the one table of vector ops: lowering emits only
ops it has a row for, each reader (interpreter, simulator, code generator) handles every row, and no reader
keeps its own op -> API table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import kernelstudio
from kernelstudio import hw
from kernelstudio.codegen import layout as _layout  # noqa: F401  (adds the select / transpose rules)
from kernelstudio.codegen.vector import VEC_RULES
from kernelstudio.hw.vector_ops import all_ops
from kernelstudio.interp.run import _vec
from kernelstudio.lower import vector_body
from kernelstudio.sim.costs import Pricer
from kernelstudio.sim.program import StaticInstr
from kernelstudio.tileir.vector_ops import FORMS, OPS, REDUCTIONS, VECTOR_OPS

PKG = Path(kernelstudio.__file__).parent
ROWS = sorted(OPS)


def _emitted_by_lowering() -> tuple[set[str], set[str]]:
    """(VecOp names, Reduce names) lowering writes: string literals given to VecOp / Reduce or bound to
    `op` / `name` in lower/, and the values of vector_body's graph-op maps."""
    vec, red = set(vector_body._UNARY.values()) | set(vector_body._BINARY.values()), set(vector_body._REDUCE.values())
    for path in (PKG / "lower").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("VecOp", "Reduce") and node.args:
                first = node.args[0]
                consts = [first] if isinstance(first, ast.Constant) else [
                    n for n in ast.walk(first) if isinstance(n, ast.Constant)]
                (vec if node.func.id == "VecOp" else red).update(
                    c.value for c in consts if isinstance(c.value, str))
    return vec, red


def test_every_op_lowering_emits_has_a_row() -> None:
    vec, red = _emitted_by_lowering()
    assert {"add", "adds", "muls", "duplicate", "cast", "copy", "select", "transpose", "neg"} <= vec
    assert vec <= VECTOR_OPS, vec - VECTOR_OPS
    assert red <= set(REDUCTIONS), red - set(REDUCTIONS)


def test_vector_body_with_scalar_ops_have_rows() -> None:
    src = (PKG / "lower" / "vector_body.py").read_text()
    for name in re.findall(r'\("(\w+)", -?c\)|"(\w+)", 1\.0 / c', src):
        for n in name:
            assert not n or n in OPS, n


def test_rows_are_well_formed() -> None:
    for name, r in OPS.items():
        assert r.name == name and r.form in FORMS
        assert r.cost in all_ops(), (name, r.cost)  # the simulator can price it
        assert r.call.api, name  # written with its own API or with its `via` row's
        for api, cost in r.count_calls:
            assert api and cost in all_ops(), (name, api, cost)
        if r.scalar_form:
            assert r.form == "binary" and OPS[r.scalar_form].form == "scalar", name
        if r.via:
            assert OPS[r.via].via == "", name
    for name, red in REDUCTIONS.items():
        assert red.name == name and red.cost in all_ops() and OPS[red.combine].form == "binary"


def _operands(r, dt: np.dtype) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [np.abs(rng.standard_normal((4, 8))).astype(dt) + dt.type(0.5) for _ in range(r.arity)]


@pytest.mark.parametrize("name", ROWS)
def test_interpreter_computes_every_row(name: str) -> None:
    r = OPS[name]
    dt = np.dtype(np.float32)
    out = np.asarray(_vec(r, _operands(r, dt), 2.0 if r.form in ("scalar", "fill") else None, dt))
    assert out.shape in ((4, 8), (8, 4), ()) and np.all(np.isfinite(out.astype(np.float64)))


@pytest.mark.parametrize("name", ROWS)
def test_simulator_prices_every_row(name: str) -> None:
    profile = hw.get(hw.names()[0])
    dtype = "float16" if OPS[name].form != "cast" else "float32"
    st = StaticInstr(sid=0, kernel=0, side="aiv", pipe=0, kind="vec", text=name, op=name, dtype=dtype,
                     dst_dtype="float16")
    cycles, _, count = Pricer(profile, [st], {}).price(0, (8, 128))
    assert cycles > 0 and count == 8 * 128


@pytest.mark.parametrize("name", ROWS)
def test_code_generator_has_a_rule_for_every_row(name: str) -> None:
    assert OPS[name].form in VEC_RULES


def test_interpreter_and_simulator_reduce_every_reduction() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert REDUCTIONS["sum"].numpy(x).ravel().tolist() == [6, 22, 38]
    assert REDUCTIONS["max"].numpy(x).ravel().tolist() == [3, 7, 11]
    profile = hw.get(hw.names()[0])
    for name in REDUCTIONS:
        st = StaticInstr(sid=0, kernel=0, side="aiv", pipe=0, kind="reduce", text=name, op=name, dtype="float32",
                         dst_dtype="float32", accumulate=True)
        assert Pricer(profile, [st], {}).price(0, (8, 256))[0] > 0


# the reader modules: what they write for an op comes from the registry, never from a table of their own
READERS = ["interp/run.py", "sim/costs.py", "tileir/vec_calls.py", "tileir/scratch.py", "lower/vector_body.py",
           *(f"codegen/{p.name}" for p in sorted((PKG / "codegen").glob("*.py")))]
API_NAMES = ("Add", "Adds", "Sub", "Mul", "Muls", "Maxs", "Mins", "Exp", "Ln", "Rsqrt", "Reciprocal", "Relu",
             "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Duplicate", "Cast", "WholeReduceSum", "WholeReduceMax")


@pytest.mark.parametrize("module", READERS)
def test_readers_keep_no_op_api_table(module: str) -> None:
    src = (PKG / module).read_text()
    quoted = [api for api in API_NAMES if f'"{api}"' in src]
    assert not quoted, f"{module} spells the API names {quoted} of tileir/vector_ops.py rows"
    table = re.search(r'\{\s*"(add|exp|adds|sum)":\s*"', src)
    assert table is None, f"{module} holds an op -> name table: {table.group(0)!r}"


@pytest.mark.parametrize("module", ["interp/run.py", "sim/costs.py"])
def test_interpreter_and_pricer_branch_on_no_op_name(module: str) -> None:
    src = (PKG / module).read_text()
    assert not re.findall(r'\.op (?:==|!=|in) [("]', src), f"{module} tests op names; read the row instead"
