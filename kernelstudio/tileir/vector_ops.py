"""The TileIR vector ops, one row each: what every reader of the TileIR needs to know about an op.

A row holds the op's form (how many tensor sources and what else it takes), its NumPy meaning (what
the interpreter computes, in the destination's dtype), the op the simulator prices it as
(`hw.vector_ops`: an instruction or a composite), the Ascend C API the code generator calls, and for
a binary op the with-scalar op that takes its place when one operand is a single value per row.
Lowering finds the op of a graph op here too. Adding a vector op is adding a row; what a reader writes
for a form that is not one table lookup (a cast's round mode, select's mask) stays in the reader,
keyed by the form.

Forms (sources are Regions of VecOp.srcs):
- "binary": dst = f(a, b), e.g. add; count form API(dst, a, b, n), repeat form with BinaryRepeatParams.
- "scalar": dst = f(x, scalar), e.g. adds; API(dst, x, scalar, n) (repeat form: UnaryRepeatParams).
- "fill": dst = scalar (duplicate); API(dst, scalar, n).
- "unary": dst = f(x), e.g. exp; API(dst, x, n). An op written with another op's API names it in
  `via`: square as Mul(dst, x, x, n), neg as Muls(dst, x, -1, n) (`fixed_scalar`).
- "copy": dst = x on the vector unit (Adds(dst, x, 0, n), or DataCopy when whole blocks).
- "cast": dst = x rounded to dst's dtype (Cast with a round mode); "cast_rint" rounds a float to an
  integer dtype to nearest even and saturates (CAST_RINT), where "cast" truncates (CAST_TRUNC).
- "select": dst = cond != 0 ? a : b (CompareScalar, then Select).
- "transpose": dst (cols x rows) = src (rows x cols) transposed.

Row reductions (`Reduce.op`, a namespace of their own: "max" there is a row maximum) are in
REDUCTIONS, with the op that combines two partial results.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.errors import KernelStudioError
from ..ir.ops import Op

__all__ = ["VectorOp", "Reduction", "OPS", "VECTOR_OPS", "REDUCTIONS", "FORMS", "vector_op", "reduction",
           "SCALAR_REPEAT_APIS", "REDUCE_APIS"]

# form -> tensor sources
FORMS: dict[str, int] = {"binary": 2, "scalar": 1, "fill": 0, "unary": 1, "copy": 1, "cast": 1, "select": 3,
                         "transpose": 1}

# (sources, scalar, dtype) -> result; the sources are arrays of dtype (a cast's are its source dtype's),
# the scalar is dtype.type(VecOp.scalar) or None
NumPy = Callable[[list[np.ndarray], Any, np.dtype], np.ndarray]

_erf = np.frompyfunc(math.erf, 1, 1)


def _rint(x: np.ndarray, dt: np.dtype) -> np.ndarray:
    """x rounded to nearest even and saturated to the integer dtype `dt` (a float dt: rounded only)."""
    r = np.rint(x.astype(np.float64))
    if dt.kind != "i":
        return r
    info = np.iinfo(dt)
    return np.clip(r, info.min, info.max)


@dataclass(frozen=True, slots=True)
class VectorOp:
    """One TileIR vector op (`VecOp.op == name`)."""

    name: str
    form: str
    numpy: NumPy  # the interpreter's meaning
    cost: str  # the op `vector_cycles` prices it as (hw.vector_ops: an instruction or a composite)
    api: str = ""  # its Ascend C API ("" when written with the API of `via`)
    via: str = ""  # the op whose API writes this one (square: mul as Mul(x, x); neg: muls; copy: adds)
    fixed_scalar: float | None = None  # the scalar of that call (neg: -1, copy: 0)
    scalar_form: str = ""  # binary op with one operand a single value: the with-scalar op (add -> adds)
    repeat: bool = False  # the API is also written in its repeat form (tileir/vec_calls.py)
    calls: tuple[tuple[str, str], ...] | None = None  # count-form calls (API, cost op) when not one call
    graph_ops: tuple[Op, ...] = ()  # the graph ops lowering writes as this op

    @property
    def arity(self) -> int:
        """Tensor sources of the op."""
        return FORMS[self.form]

    @property
    def call(self) -> VectorOp:
        """The row whose Ascend C API writes this op: itself, or `via`."""
        return OPS[self.via] if self.via else self

    @property
    def count_calls(self) -> tuple[tuple[str, str], ...]:
        """The count-form calls of the op over n contiguous elements, as (API, cost op); () when it has
        no count form (transpose)."""
        return self.calls if self.calls is not None else ((self.call.api, self.cost),)


@dataclass(frozen=True, slots=True)
class Reduction:
    """One row reduction (`Reduce.op == name`)."""

    name: str
    numpy: Callable[[np.ndarray], np.ndarray]  # the reduction of every row, keepdims
    combine: str  # the binary vector op that merges two partial results (accumulate, column-group folds)
    cost: str  # the op `vector_cycles` prices the whole-row reduction as
    api: str  # the WholeReduce API
    ordered: bool = False  # the API takes a ReduceOrder (values only are kept)
    graph_ops: tuple[Op, ...] = ()


def _rows(*rows: VectorOp) -> dict[str, VectorOp]:
    return {r.name: r for r in rows}


def _one(dt: np.dtype) -> Any:
    return dt.type(1)


OPS: dict[str, VectorOp] = _rows(
    # binary, vector x vector
    VectorOp("add", "binary", lambda x, s, dt: x[0] + x[1], "add", "Add", scalar_form="adds", repeat=True,
             graph_ops=(Op.ADD,)),
    VectorOp("sub", "binary", lambda x, s, dt: x[0] - x[1], "sub", "Sub", repeat=True, graph_ops=(Op.SUB,)),
    VectorOp("mul", "binary", lambda x, s, dt: x[0] * x[1], "mul", "Mul", scalar_form="muls", repeat=True,
             graph_ops=(Op.MUL,)),
    VectorOp("div", "binary", lambda x, s, dt: x[0] / x[1], "div", "Div", repeat=True, graph_ops=(Op.DIV,)),
    VectorOp("max", "binary", lambda x, s, dt: np.maximum(x[0], x[1]), "max", "Max", scalar_form="maxs",
             repeat=True, graph_ops=(Op.MAXIMUM,)),
    VectorOp("min", "binary", lambda x, s, dt: np.minimum(x[0], x[1]), "min", "Min", scalar_form="mins",
             repeat=True, graph_ops=(Op.MINIMUM,)),
    # vector x scalar
    VectorOp("adds", "scalar", lambda x, s, dt: x[0] + s, "adds", "Adds", repeat=True),
    VectorOp("muls", "scalar", lambda x, s, dt: x[0] * s, "muls", "Muls", repeat=True),
    VectorOp("maxs", "scalar", lambda x, s, dt: np.maximum(x[0], s), "maxs", "Maxs", repeat=True),
    VectorOp("mins", "scalar", lambda x, s, dt: np.minimum(x[0], s), "mins", "Mins", repeat=True),
    VectorOp("leaky_relu", "scalar", lambda x, s, dt: np.where(x[0] >= 0, x[0], x[0] * s), "leaky_relu",
             "LeakyRelu", graph_ops=(Op.LEAKY_RELU,)),
    VectorOp("duplicate", "fill", lambda x, s, dt: np.asarray(s), "duplicate", "Duplicate"),
    # unary
    VectorOp("exp", "unary", lambda x, s, dt: np.exp(x[0]), "exp", "Exp", graph_ops=(Op.EXP,)),
    VectorOp("ln", "unary", lambda x, s, dt: np.log(x[0]), "ln", "Ln", graph_ops=(Op.LOG,)),
    VectorOp("sqrt", "unary", lambda x, s, dt: np.sqrt(x[0]), "sqrt", "Sqrt", graph_ops=(Op.SQRT,)),
    VectorOp("rsqrt", "unary", lambda x, s, dt: _one(dt) / np.sqrt(x[0]), "rsqrt", "Rsqrt", graph_ops=(Op.RSQRT,)),
    VectorOp("reciprocal", "unary", lambda x, s, dt: _one(dt) / x[0], "reciprocal", "Reciprocal",
             graph_ops=(Op.RECIPROCAL,)),
    VectorOp("abs", "unary", lambda x, s, dt: np.abs(x[0]), "abs", "Abs", graph_ops=(Op.ABS,)),
    VectorOp("relu", "unary", lambda x, s, dt: np.maximum(x[0], dt.type(0)), "relu", "Relu", graph_ops=(Op.RELU,)),
    VectorOp("neg", "unary", lambda x, s, dt: -x[0], "neg", via="muls", fixed_scalar=-1.0, graph_ops=(Op.NEG,)),
    VectorOp("square", "unary", lambda x, s, dt: x[0] * x[0], "square", via="mul", graph_ops=(Op.SQUARE,)),
    VectorOp("erf", "unary", lambda x, s, dt: np.asarray(_erf(x[0].astype(np.float64)), dtype=np.float64), "erf",
             "Erf", graph_ops=(Op.ERF,)),
    VectorOp("tanh", "unary", lambda x, s, dt: np.tanh(x[0]), "tanh", "Tanh", graph_ops=(Op.TANH,)),
    VectorOp("sigmoid", "unary", lambda x, s, dt: _one(dt) / (_one(dt) + np.exp(-x[0])), "sigmoid", "Sigmoid",
             graph_ops=(Op.SIGMOID,)),
    # data
    VectorOp("copy", "copy", lambda x, s, dt: x[0], "copy", via="adds", fixed_scalar=0.0,
             graph_ops=(Op.RESHAPE, Op.BROADCAST_TO, Op.SLICE)),
    VectorOp("cast", "cast", lambda x, s, dt: x[0], "cast", "Cast"),
    VectorOp("cast_rint", "cast", lambda x, s, dt: _rint(x[0], dt), "cast", "Cast"),
    VectorOp("select", "select", lambda x, s, dt: np.where(x[0] != 0, x[1], x[2]), "where", "Select",
             calls=(("CompareScalar", "compare"), ("Select", "select")), graph_ops=(Op.WHERE,)),
    VectorOp("transpose", "transpose", lambda x, s, dt: x[0].T, "transpose", "Transpose", calls=()),
)

VECTOR_OPS: frozenset[str] = frozenset(OPS)  # every VecOp.op

REDUCTIONS: dict[str, Reduction] = {r.name: r for r in (
    Reduction("sum", lambda x: x.sum(axis=1, keepdims=True), "add", "reduce_sum", "WholeReduceSum",
              graph_ops=(Op.REDUCE_SUM, Op.REDUCE_MEAN)),
    Reduction("max", lambda x: x.max(axis=1, keepdims=True), "max", "reduce_max", "WholeReduceMax", ordered=True,
              graph_ops=(Op.REDUCE_MAX,)),
)}

# the scalar APIs written in their repeat form (UnaryRepeatParams), and the WholeReduce APIs
SCALAR_REPEAT_APIS: frozenset[str] = frozenset(r.api for r in OPS.values() if r.form == "scalar" and r.repeat)
REDUCE_APIS: dict[str, Reduction] = {r.api: r for r in REDUCTIONS.values()}


def vector_op(name: str, who: str = "TileIR") -> VectorOp:
    """The row of vector op `name`; a KernelStudioError naming `who` when there is none."""
    row = OPS.get(name)
    if row is None:
        raise KernelStudioError(f"{who}: vector op {name!r} is not in the TileIR vocabulary")
    return row


def reduction(name: str, who: str = "TileIR") -> Reduction:
    """The row of row reduction `name`."""
    row = REDUCTIONS.get(name)
    if row is None:
        raise KernelStudioError(f"{who}: reduction {name!r} is not in the TileIR vocabulary")
    return row
