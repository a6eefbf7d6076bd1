"""Graph inputs: `placeholder`."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..core.dtypes import check_dtype
from ..ir.ops import Op
from . import shapes as S
from .build import _node, check_name
from .tensor import Tensor

_placeholder_uids = itertools.count()


def placeholder(shape: int | Sequence[int], dtype: str, name: str | None = None) -> Tensor:
    """A graph input of `shape` and `dtype` (float16, bfloat16, float32, int8, int32).

    Inputs are passed to `evaluate` by name. Unnamed placeholders stay distinct (each carries a
    unique ``uid`` attr) and the graph names them "input", "input_1", ... in topological order;
    give each placeholder a unique name to address it stably.
    """
    nm = check_name("placeholder", name)
    label = f"placeholder {nm!r}" if nm else "placeholder"
    shp = S.check_shape(label, shape)
    dt = check_dtype(dtype, f"{label}: dtype")
    attrs = {} if nm else {"uid": next(_placeholder_uids)}
    return _node(Op.PLACEHOLDER, (), shp, dt, attrs, nm)
