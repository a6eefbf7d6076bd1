"""The row APIs of a twin call log (SoftMax, LayerNorm, RmsNorm, TopK) as the TileIR vector instructions a designed
kernel of the same op issues per tile, so the trace front end (timeline.py) prices them with the same cost curves.

Each call logs its shape (SoftMax: oriSrcM rows of srcK; LayerNorm / RmsNorm: b x s rows of h; TopK: outter rows of
inner, k) and its operands (`w=` / `r=` refs, in the API's argument order). A float16 call computes in float32, as
the API and the designed kernels do: its source is cast in, its result cast out.

- SoftMax: reduce max, sub, exp, reduce sum, div (the lowered softmax body);
- LayerNorm: reduce sum, muls (the mean), sub, square, reduce sum, muls (the variance), adds epsilon, rsqrt, mul,
  mul gamma, add beta (gamma and beta cast in per call at float16: the API takes them as T each call);
- RmsNorm: square, reduce sum, muls, adds epsilon, rsqrt, mul, mul gamma;
- TopK: the TileIR's TopK over the rows (priced as its merge passes, `sim.costs`).

Not priced: the mean and variance rows LayerNorm also writes, SoftMax's sum and max rows (a few elements a row).
The float32 intermediates live in scratch buffers the trace declares (`row f32 ...`), not in the user's tmp
buffer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ..tileir.expr import Const
from ..tileir.program import Buffer, If, Loop, Reduce, Region, Stmt, TopK, VecOp
from ..tileir.vec_calls import expand

__all__ = ["ROW_APIS", "row_api", "expand_rows"]

ROW_APIS = frozenset({"SoftMax", "LayerNorm", "RmsNorm", "TopK"})


def _shape(api: str, a: dict) -> tuple[int, int] | None:
    try:
        if api == "SoftMax":
            return int(a["oriSrcM"]), int(a["srcK"])
        if api in ("LayerNorm", "RmsNorm"):
            return int(a["b"]) * int(a["s"]), int(a["h"])
        if api == "TopK":
            return int(a["outter"]), int(a["inner"])
    except (KeyError, TypeError, ValueError):
        return None
    return None


def row_api(api: str, args: dict, writes: list[Region], reads: list[Region], dtype: str, note: str,
            declare: Callable[[str, str, int, int], None]) -> list[Stmt] | None:
    """The instructions of one row-API call (None when its log line lacks its shape or operands). `writes` /
    `reads` are the call's on-chip operands in log order, `declare(name, dtype, rows, cols)` makes a scratch
    buffer at least that large."""
    shape = _shape(api, args)
    if shape is None or not writes or not reads:
        return None
    rows, cols = shape
    if rows <= 0 or cols <= 0:
        return []

    def tile(r: Region, n_cols: int = cols, n_rows: int = rows) -> Region:
        return Region(r.buf, r.offset, Const(n_rows), Const(n_cols), Const(n_cols))

    if api == "TopK":
        if len(writes) < 2:
            return None
        k = int(args.get("k", 1))
        return [TopK(tile(writes[0], k), tile(writes[1], k), tile(reads[0]), k, comment=note)]

    f32 = "float32"

    def scratch(name: str, n_cols: int = cols, n_rows: int = rows) -> Region:
        declare(name, f32, n_rows, n_cols)
        return Region(name, Const(0), Const(n_rows), Const(n_cols), Const(n_cols))

    a, b, c = scratch("row f32 a"), scratch("row f32 b"), scratch("row f32 c")
    col, col2 = scratch("row f32 col", 1), scratch("row f32 col2", 1)
    out: list[Stmt] = []
    half = dtype != f32

    def cast_in(src: Region, dst: Region) -> Region:
        if not half:
            return src
        out.append(VecOp("cast", dst, (src,), comment=note))
        return dst

    def finish(res: Region, op: str, srcs: tuple[Region, ...]) -> None:
        """The last op: into the user's destination (float32), else into `res` then cast out."""
        if half:
            out.append(VecOp(op, res, srcs, comment=note))
            out.append(VecOp("cast", tile(writes[0]), (res,), comment=note))
        else:
            out.append(VecOp(op, tile(writes[0]), srcs, comment=note))

    x = cast_in(tile(reads[0]), a)
    inv = 1.0 / cols
    if api == "SoftMax":
        out.append(Reduce("max", col, x, comment=note))
        out.append(VecOp("sub", b, (x, col), comment=note))
        out.append(VecOp("exp", c, (b,), comment=note))
        out.append(Reduce("sum", col, c, comment=note))
        finish(b, "div", (c, col))
        return out
    if api == "LayerNorm":
        if len(reads) < 3:
            return None
        out.append(Reduce("sum", col, x, comment=note))
        out.append(VecOp("muls", col, (col,), inv, comment=note))
        out.append(VecOp("sub", b, (x, col), comment=note))
        out.append(VecOp("square", c, (b,), comment=note))
        out.append(Reduce("sum", col, c, comment=note))
        out.append(VecOp("muls", col, (col,), inv, comment=note))
        out.append(VecOp("adds", col2, (col,), 1e-5, comment=note))
        out.append(VecOp("rsqrt", col, (col2,), comment=note))
        out.append(VecOp("mul", c, (b, col), comment=note))
        gamma = cast_in(tile(reads[1], n_rows=1), scratch("row f32 gamma", n_rows=1))
        beta = cast_in(tile(reads[2], n_rows=1), scratch("row f32 beta", n_rows=1))
        out.append(VecOp("mul", b, (c, gamma), comment=note))
        finish(c, "add", (b, beta))
        return out
    # RmsNorm
    if len(reads) < 2:
        return None
    out.append(VecOp("square", b, (x,), comment=note))
    out.append(Reduce("sum", col, b, comment=note))
    out.append(VecOp("muls", col, (col,), inv, comment=note))
    out.append(VecOp("adds", col2, (col,), 1e-6, comment=note))
    out.append(VecOp("rsqrt", col, (col2,), comment=note))
    out.append(VecOp("mul", c, (x, col), comment=note))
    gamma = cast_in(tile(reads[1], n_rows=1), scratch("row f32 gamma", n_rows=1))
    finish(b, "mul", (c, gamma))
    return out


def expand_rows(stmts: tuple[Stmt, ...], buffers: Mapping[str, Buffer], kernel: str) -> tuple[Stmt, ...]:
    """`stmts` with each row-API instruction (a VecOp or Reduce: the trace makes no other) replaced by the vector
    calls the simulator issues for it (`vec_calls.expand`), each call's text ending with the API's call site."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, If):
            out.append(replace(s, body=expand_rows(s.body, buffers, kernel)))
            continue
        exp = expand(s, buffers, {}, kernel=kernel) if isinstance(s, (VecOp, Reduce)) else None
        if exp is None:
            out.append(s)
            continue
        out += [_at_site(c, s.comment) for c in exp.stmts]
    return tuple(out)


def _at_site(s: Stmt, site: str) -> Stmt:
    if isinstance(s, (If, Loop)):
        return replace(s, body=tuple(_at_site(b, site) for b in s.body))
    if not hasattr(s, "comment"):
        return s
    return replace(s, comment=f"{s.comment}; {site}" if s.comment else site)
