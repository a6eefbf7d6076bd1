"""Graph inputs: `placeholder`, in row-major (ND) or FRACTAL_NZ storage."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..core.dtypes import check_dtype
from ..core.formats import check_format, check_nz
from ..ir.ops import Op
from . import shapes as S
from .build import _node, check_name
from .tensor import Tensor

_placeholder_uids = itertools.count()


def placeholder(shape: int | Sequence[int], dtype: str, name: str | None = None, *, format: str = "ND") -> Tensor:  # noqa: A002
    """A graph input of `shape` and `dtype` (float16, bfloat16, float32, int8, int32).

    Inputs are passed to `evaluate` by name. Unnamed placeholders stay distinct (each carries a
    unique ``uid`` attr) and the graph names them "input", "input_1", ... in topological order;
    give each placeholder a unique name to address it stably.

    ``format="NZ"``: a [K, N] float16/bfloat16 weight whose bytes in GM are in CANN's FRACTAL_NZ order
    (K and N multiples of 16; see `kernelstudio.core.formats`). `shape` stays the logical (K, N) and
    `evaluate`, `run_tiled` and `random_inputs` take and give the logical matrix; the twin's run packs
    it into NZ bytes. Only a matmul's B operand (not transposed, not per-head) may read it.
    """
    nm = check_name("placeholder", name)
    label = f"placeholder {nm!r}" if nm else "placeholder"
    shp = S.check_shape(label, shape)
    dt = check_dtype(dtype, f"{label}: dtype")
    fmt = check_format(label, format)
    attrs: dict[str, object] = {} if nm else {"uid": next(_placeholder_uids)}
    if fmt != "ND":
        check_nz(f"{label} {S.fmt_shape(shp)} {dt}", shp, dt)
        attrs["format"] = fmt
    return _node(Op.PLACEHOLDER, (), shp, dt, attrs, nm)
