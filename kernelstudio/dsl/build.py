"""The node builder every DSL op constructor uses: argument checks, dtype promotion, constants,
composite scopes and `_node`, which adds one graph node."""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import reduce as _fold

import numpy as np

from ..core import names as _names
from ..core.dtypes import check_dtype
from ..core.errors import DTypeError, UnsupportedError
from ..ir.node import Composite, Node
from ..ir.ops import DTYPES, FLOAT_DTYPES, Op
from . import shapes as S
from .tensor import Tensor

Scalar = int | float
Operand = Tensor | int | float

_COMPOSITE: ContextVar[Composite | None] = ContextVar("kernelstudio_composite", default=None)
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38}
_INT_RANGE = {"int8": (-128, 127), "int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


@contextmanager
def composite_scope(name: str) -> Iterator[Composite]:
    """Tag every node built inside the block with one `Composite` (the outermost scope wins)."""
    current = _COMPOSITE.get()
    if current is not None:
        yield current
        return
    comp = Composite.new(name)
    token = _COMPOSITE.set(comp)
    try:
        yield comp
    finally:
        _COMPOSITE.reset(token)


# --- argument checking ---------------------------------------------------------------------------


def check_name(op: str, name: object) -> str:
    """A node name: None -> "" (the graph names it), else a C identifier (`kernelstudio.core.names`)."""
    if name is None:
        return ""
    return _names.check_name(op, name)


def _scalar_or_tensor(op: str, what: str, v: object) -> Operand:
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (bool, np.bool_)):
        raise DTypeError(f"{op}: {what} is the bool {v!r}; bool scalars are not supported, use 1 or 0")
    if isinstance(v, (complex, np.complexfloating)):
        raise DTypeError(f"{op}: {what} is the complex number {v!r}; complex values are not supported")
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    raise DTypeError(
        f"{op}: {what} is a {type(v).__module__}.{type(v).__qualname__}; pass a Tensor "
        "(from placeholder or another op) or a Python int/float"
    )


def _tensor(op: str, what: str, v: object) -> Tensor:
    t = _scalar_or_tensor(op, what, v)
    if not isinstance(t, Tensor):
        raise DTypeError(
            f"{op}: {what} is the scalar {t!r}; {op} needs a Tensor here (from placeholder or another op)"
        )
    return t


def _flag(op: str, what: str, v: object) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise DTypeError(f"{op}: {what} must be True or False, got {v!r}")
    return bool(v)


_INT64_READERS = (Op.SCATTER, Op.GROUPED_MATMUL)  # ops that read an int64 index input as it is


def _node(op: Op, inputs: Sequence[Tensor], shape: Sequence[int], dtype: str,
          attrs: dict[str, object] | None = None, name: str = "") -> Tensor:
    if dtype == "int64" and op is not Op.PLACEHOLDER or op not in _INT64_READERS and any(
            t.dtype == "int64" for t in inputs):
        who = next((t for t in inputs if t.dtype == "int64"), None)
        raise DTypeError(f"{op.value}: {who.describe() if who is not None else 'its result'} is int64; int64 "
                         "tensors are index inputs (a placeholder read by ks.scatter or ks.grouped_matmul) and "
                         "nothing computes on them; give this op an int32 placeholder instead")
    _check_nz_readers(op, inputs, attrs or {})
    return Tensor(Node(op, tuple(t.node for t in inputs), tuple(shape), dtype,
                       tuple(sorted((attrs or {}).items())), name, _COMPOSITE.get()))


def _check_nz_readers(op: Op, inputs: Sequence[Tensor], attrs: dict[str, object]) -> None:
    """Raise unless every FRACTAL_NZ input is the B operand of a plain matmul (the only reader whose cube
    copy takes the fractal bytes as they are)."""
    for i, t in enumerate(inputs):
        if t.format == "ND":
            continue
        plain_b = (op is Op.MATMUL and i == 1 and not attrs.get("transpose_b") and "batch_axis" not in attrs
                   and inputs[0].format == "ND")
        if not plain_b:
            role = "B operand of a transposed or per-head matmul" if op is Op.MATMUL and i == 1 else \
                "A operand of matmul" if op is Op.MATMUL else f"input of {op.value}"
            raise UnsupportedError(
                f"{op.value}: {t.describe()} is stored in FRACTAL_NZ and cannot be the {role}; an NZ tensor is "
                f"read only as B of matmul(a, b) (no transpose_b, no batch_axis); declare {t.name!r} with "
                "format='ND' to use it here")


def const(value: Scalar, dtype: str, op: str = "const") -> Tensor:
    """A scalar constant node (shape ()) of `dtype`; the value must fit the dtype."""
    if dtype in FLOAT_DTYPES:
        v: Scalar = float(value)
        if math.isfinite(v) and builtins.abs(v) > _FLOAT_MAX[dtype]:
            raise DTypeError(
                f"{op}: scalar {value!r} overflows {dtype} (max {_FLOAT_MAX[dtype]:g}); "
                "cast the tensor to float32 first"
            )
    else:
        if isinstance(value, float):
            raise DTypeError(f"{op}: float scalar {value!r} cannot be a {dtype} constant; use an int")
        v = int(value)
        lo, hi = _INT_RANGE[dtype]
        if not lo <= v <= hi:
            raise DTypeError(f"{op}: scalar {v} does not fit {dtype} ({lo}..{hi}); cast the tensor to int32")
    return _node(Op.CONST, (), (), dtype, {"value": v})


def _operands(op: str, args: Sequence[tuple[str, object]]) -> tuple[list[Tensor], str]:
    """Tensors for `args` in their promoted dtype (scalars -> consts, other dtypes -> casts)."""
    vals = [_scalar_or_tensor(op, what, v) for what, v in args]
    tensors = [v for v in vals if isinstance(v, Tensor)]
    if not tensors:
        raise DTypeError(
            f"{op}: needs at least one Tensor operand, got only Python scalars "
            f"{tuple(vals)!r}; compute constants in Python"
        )
    dtype = _fold(S.promote, (t.dtype for t in tensors))
    out = []
    for (what, _), v in zip(args, vals, strict=True):
        if isinstance(v, Tensor):
            out.append(v if v.dtype == dtype else _node(Op.CAST, (v,), v.shape, dtype))
        elif isinstance(v, float) and dtype not in FLOAT_DTYPES:
            names = ", ".join(t.describe() for t in tensors)
            raise DTypeError(
                f"{op}: float scalar {v!r} ({what}) cannot combine with integer tensor {names}; "
                f"cast the tensor to a float dtype first, e.g. cast(x, 'float32')"
            )
        else:
            try:
                out.append(const(v, dtype, f"{op}: {what}"))
            except DTypeError as e:
                raise DTypeError(f"{e} (the other operand: {_describe(*tensors)})") from None
    return out, dtype


def _check_dtype(dtype: object, what: Callable[[], str]) -> str:
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    return check_dtype(dtype, what())


def _describe(*ts: Tensor) -> str:
    return " and ".join(t.describe() for t in ts)


def _d(t: Tensor) -> S.Label:
    return S.Label(t.describe)


def _n(t: Tensor) -> S.Label:
    return S.Label(lambda: t.name)

