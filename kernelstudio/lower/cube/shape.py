"""The matmul view of a matmul/conv root that every part of cube lowering reads."""

from __future__ import annotations

from ...core.dtypes import block_elems
from ...fusion.partition import FusedKernel
from ...ir.node import Node
from ...ir.ops import Op
from ...tileir.expr import Const, E, Expr, ceil_div
from ...tileir.program import Region

__all__ = ["CubeShape", "AIV_PER_BLOCK", "CUBE_BLOCK", "aiv_rows", "aiv_rows_expr", "pad16", "sync_rows_per_aiv"]

AIV_PER_BLOCK = 2  # a MIX_AIC_1_2 block: one cube core and two vector cores
CUBE_BLOCK = 16  # rows and columns of the cube's fractal (16 x 16 of a 2-byte dtype): tiles are multiples of it


def pad16(n: int) -> int:
    """n rounded up to the cube's 16-row fractal: the largest tile a dimension of n needs."""
    return -(-n // CUBE_BLOCK) * CUBE_BLOCK


def aiv_rows(rows: int) -> int:
    """Rows of a C tile that one vector core of its block takes (the first one the larger half): the
    share every part of the lowering (tiles, capacity, directive checks, the epilogue) reads."""
    return -(-rows // AIV_PER_BLOCK)


def aiv_rows_expr(rows: Expr) -> Expr:
    """`aiv_rows` of a run-time row count, as a TileIR expression."""
    return ceil_div(rows, AIV_PER_BLOCK)


def sync_rows_per_aiv(rows: int, block_dim: int) -> int:
    """With sync_all every vector core (AIV_PER_BLOCK per block) takes this many of the C rows (the last
    ones fewer)."""
    return -(-rows // (AIV_PER_BLOCK * block_dim))


class CubeShape:
    """The matmul view of a matmul/conv root: batch x [M, K] @ [K, N]."""

    b_nz = False  # B stored as FRACTAL_NZ (set per instance for a plain matmul; other views keep ND)

    def __init__(self, fk: FusedKernel, names: dict[Node, str]):
        root = fk.root
        assert root is not None
        self.root = root
        self.conv = root.op is Op.CONV2D
        a, b = root.inputs
        self.a_name, self.b_name = names[a], names[b]
        # a FRACTAL_NZ B (a plain matmul's weight, the DSL allows no other NZ reader) reaches L1 as a block copy
        self.b_nz = b.op is Op.PLACEHOLDER and b.attr("format", "ND") == "NZ"
        self.in_dtype = a.dtype if a.dtype == b.dtype else "float32"
        # L0C accumulates int8 x int8 in int32, every float product in float32
        self.acc_dtype = "int32" if self.in_dtype == "int8" else "float32"
        self.per_head = False
        if self.conv:
            n, cin, h, w = a.shape
            cout, _, kh, kw = b.shape
            _, _, oh, ow = root.shape
            # the cube reads whole C0 blocks of input channels (NC1HWC0, FRACTAL_Z): the layout transform
            # pads the channels with zeros, so K holds the padded channels, as the chip's Mmad does
            c0 = block_elems(self.in_dtype)
            self.cin_pad = -(-cin // c0) * c0
            self.K_data = cin * kh * kw  # the columns of the weight matrix [Cout, Cin * kh * kw] in GM
            self.batch, self.M, self.K, self.N = n, cout, self.cin_pad * kh * kw, oh * ow
            self.cin, self.h, self.w, self.kh, self.kw, self.oh, self.ow = cin, h, w, kh, kw, oh, ow
            self.stride = tuple(root.attr("stride"))
            self.pad = tuple(root.attr("padding"))
            self.ta, self.tb = False, False
        else:
            self.ta, self.tb = bool(root.attr("transpose_a", False)), bool(root.attr("transpose_b", False))
            self.M, self.N = root.shape[-2], root.shape[-1]
            self.K = a.shape[-2] if self.ta else a.shape[-1]
            ob = root.shape[:-2]
            self.batch = 1
            for d in ob:
                self.batch *= d
            self.ob, self.a_batch, self.b_batch = ob, a.shape[:-2], b.shape[:-2]
            self.per_head = root.attr("batch_axis", None) is not None
            if self.per_head:  # A [M, heads, K] @ B [heads, K, N] -> C [M, heads, N]: head bi is the batch
                self.M, self.batch, self.N = root.shape
                self.K, self.ob = a.shape[2], (self.batch,)
        # leading dimensions: elements from one row of A (A^T: one k row) / of C to the next in GM
        self.lda = (self.M if self.ta else self.K) * (self.batch if self.per_head else 1)
        self.ldc = self.N * (self.batch if self.per_head else 1)
        self.m_expr: Expr = Const(self.M)  # M in the kernel's expressions: Var("M") when the code reads it

    def nd2nz(self, which: str) -> bool:
        """Whether the GM -> L1 copy of operand `which` ("a" / "b") converts ND to NZ on the way (False for an
        operand already stored in FRACTAL_NZ: a block copy of whole fractals)."""
        return not (which == "b" and self.b_nz)

    def panel_key(self, which: str, bi: Expr) -> Expr:
        """The offset that keys batch `bi`'s A or B panels in the L2 model (tile_order.tile_walk): its first
        element in a dense [batch, M, K] / [batch, K, N] layout, so no two heads' A panels share a key."""
        if self.per_head and which == "a":
            return E.mul(bi, self.M * self.K)
        return self.batch_offset(which, bi)

    def c_offset(self, bi: Expr, m0: Expr, n0: Expr) -> Expr:
        """Element offset of C's row m0, column n0 of batch `bi` (per head: head bi's column band)."""
        if self.per_head:
            return E.add(E.add(E.mul(bi, self.N), E.mul(m0, self.ldc)), n0)
        return E.add(E.mul(E.add(E.mul(bi, self.m_expr), m0), self.N), n0)

    def weights(self, m0: Expr, mlen: Expr, k0: Expr, klen: Expr) -> tuple[Region, Expr | None]:
        """A conv's weight tile [m0, +mlen) x [k0, +klen) of the (padded) K, and its valid columns (None when the
        channels need no padding)."""
        r = Region(self.b_name, E.add(E.mul(m0, self.K_data), k0), mlen, klen, Const(self.K_data), gm=True)
        return r, (E.sub(self.K_data, k0) if self.K_data != self.K else None)

    def batch_offset(self, which: str, bi: Expr) -> Expr:
        """Element offset of batch `bi` (flattened output batch index) in A or B."""
        if self.conv:
            return E.mul(bi, self.cin * self.h * self.w) if which == "a" else Const(0)
        if self.per_head:  # head bi: A's column band [bi*K, +K) of every row, B's bi-th [K, N] matrix
            return E.mul(bi, self.K if which == "a" else self.K * self.N)
        shape = self.a_batch if which == "a" else self.b_batch
        mat = self.M * self.K if which == "a" else self.K * self.N
        ob = self.ob
        shape = (1,) * (len(ob) - len(shape)) + tuple(shape)
        off: Expr = Const(0)
        inner_out, stride = 1, mat
        for d in range(len(ob) - 1, -1, -1):
            if shape[d] != 1:
                idx = E.mod(E.div(bi, inner_out), ob[d])
                off = E.add(off, E.mul(idx, stride))
            inner_out *= ob[d]
            stride *= shape[d]
        return off
