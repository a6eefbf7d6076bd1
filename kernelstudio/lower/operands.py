"""A fused kernel's GM operands as region functions over its [rows, cols] iteration space (vector
kernels and the epilogues of mixed kernels read and write through them)."""

from __future__ import annotations

from ..core.errors import UnsupportedError
from ..fusion.partition import FusedKernel
from ..ir.node import Node
from ..tileir.expr import Const, E, Expr
from ..tileir.program import Region
from .vector_body import Operand

__all__ = ["gm_operands", "gm_region"]

ZERO = Const(0)


def gm_region(name: str, view: str, cols_total: int, row_base: Expr = ZERO,
               col_base: Expr = ZERO, period: int | None = None):
    """Region function for a GM tensor laid out on the [rows, cols] space as `view`; a tensor whose
    rows repeat every `period` rows reads row r at r % period (chunks never cross a period)."""
    def region(r0: Expr, rlen: Expr, c0: Expr, clen: Expr) -> Region:
        r, c = E.add(row_base, r0), E.add(col_base, c0)
        if period is not None:
            r = E.mod(r, period)
        if view == "full":
            return Region(name, E.add(E.mul(r, cols_total), c), rlen, clen, Const(cols_total), gm=True)
        if view == "row":
            return Region(name, c, Const(1), clen, Const(cols_total), gm=True)
        if view == "col":
            return Region(name, r, rlen, Const(1), Const(1), gm=True)
        return Region(name, Const(0), Const(1), Const(1), Const(1), gm=True)

    return region


def _row_region(name: str, view: str, cols_total: int, row_base: Expr, col_base: Expr,
                rmap: tuple[tuple[int, int, int], ...] | None):
    """Per-row GM window of a tensor broadcast along inner row dims (None when a strided window does)."""
    if rmap is None:
        return None

    def region(r: Expr, c0: Expr, clen: Expr) -> Region:
        g = E.add(row_base, r)
        src: Expr = Const(0)
        for extent, inner, stride in rmap:
            if stride:
                src = E.add(src, E.mul(E.mod(E.div(g, inner), extent), stride))
        if view == "full":
            return Region(name, E.add(E.mul(src, cols_total), E.add(col_base, c0)), Const(1), clen,
                          Const(cols_total), gm=True)
        return Region(name, src, Const(1), Const(1), Const(1), gm=True)

    return region


def _row_run(rmap: tuple[tuple[int, int, int], ...] | None) -> int:
    """Rows of the space in a run that reads one tensor row: the rows inside the innermost row dim the
    tensor does not broadcast along (1 when that dim is the last one)."""
    for _extent, inner, stride in reversed(rmap or ()):
        if stride:
            return inner
    return 1


def gm_operands(fk: FusedKernel, names: dict[Node, str], skip: set[Node], row_base: Expr = ZERO,
              col_base: Expr = ZERO, periods: dict[Node, int] | None = None) -> tuple[list[Operand], list[Operand]]:
    """The kernel's GM operands; `periods` gives inputs a row period their shape at lowering does not show."""
    ins, outs = [], []
    periods = periods or {}
    for i in fk.inputs:
        if i in skip:
            continue
        view = fk.input_view(i)
        if view is None:
            raise UnsupportedError(
                f"kernel {fk.name}: input {names[i]}{list(i.shape)} does not map onto the kernel's "
                f"{list(fk.space)} iteration space as a full tile, row vector, column vector or scalar; "
                "broadcast it explicitly with broadcast_to or reshape it")
        ins.append(Operand(i, names[i], view, i.dtype,
                           gm_region(names[i], view, fk.cols, row_base, col_base,
                                      periods.get(i, fk.input_period(i))),
                           _row_region(names[i], view, fk.cols, row_base, col_base, fk.input_row_map(i)),
                           _row_run(fk.input_row_map(i)), row_base))
    for o in fk.outputs:
        view = fk.view(o)
        outs.append(Operand(o, names[o], view, o.dtype,
                            gm_region(names[o], view, fk.cols, row_base, col_base)))
    return ins, outs
