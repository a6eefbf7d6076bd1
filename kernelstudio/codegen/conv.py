"""The cube-core (AIC) program of convolution kernels, written with the low-level cube API.

A conv kernel's AIC program walks C tiles of [Cout rows x output pixels]. Each TileIR statement maps
onto one Ascend C call, the way hand-written conv kernels are built:

| TileIR                         | Ascend C                                                                |
|--------------------------------|-------------------------------------------------------------------------|
| Alloc/EnQue/DeQue/Free (L1/L0) | `TQue<A1/B1/A2/B2/CO1>` AllocTensor / EnQue / DeQue / FreeTensor        |
| Copy GM -> slab (img2col src)  | `DataCopy(slab, xGm, Nd2NzParams)`: a 1-row ND2NZ per channel plane     |
| Copy GM -> a1 (weights, nd2nz) | `DataCopy(a1, wGm, Nd2NzParams)`: [mlen, klen] ND -> NZ                 |
| Copy a1 -> a2                  | `LoadData(a2, a1, LoadData2DParams)` per 16-row fractal row (NZ -> zZ)  |
| Img2Col slab -> b2             | `LoadData(b2, slab, LoadData3DParamsV2<T>)` (Load3Dv2)                  |
| Mmad                           | `Mmad(c, a2, b2, MmadParams(m, n, k, 0, false, init))`                  |
| Copy c -> GM (FixPipe)         | `Fixpipe<T, float, CFG_ROW_MAJOR>(gm, c, FixpipeParamsV220)`: NZ2ND     |

The slab copy keeps the loaded input rows of each channel together (`l1H` = rows loaded) so Load3Dv2
reads a feature map of exactly those rows; the rows above and below that the TileIR slab reserves for
padding become Load3Dv2's top/bottom `padList` entries. This changes only the private layout of the
slab buffer between its copy and the Img2Col that reads it, not any value the program computes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import UnsupportedError
from ..ir.ops import itemsize
from ..lower.expr import Bin, Const, E, Expr, Var, ceil_div
from ..lower.tileir import (
    Alloc,
    Buffer,
    Copy,
    CoreType,
    CrossSet,
    CrossWait,
    DeQue,
    EnQue,
    Free,
    If,
    Img2Col,
    Let,
    Loop,
    Mmad,
    Stmt,
    Tier,
    walk,
)
from .scope import Scope, control_head
from .writer import Writer, ctype

__all__ = ["ConvPart", "is_conv"]

FM_ROWS, FM_PAD_TOP = "fmRows", "fmPadTop"  # C++ locals: loaded input rows and the padding above them
QUANT = {"float16": "QuantMode_t::F322F16", "bfloat16": "QuantMode_t::F322BF16", "float32": "QuantMode_t::NoQuant"}


def is_conv(stmts: tuple[Stmt, ...]) -> bool:
    """Whether a core program contains an img2col (a convolution's cube part)."""
    return any(isinstance(s, Img2Col) for s in walk(stmts))


def _exact_div(e: Expr, d: int) -> Expr:
    """e / d for an `e` built as x * d (or a constant multiple of d)."""
    if isinstance(e, Bin) and e.op == "*" and e.b == Const(d):
        return e.a
    if isinstance(e, Const) and e.value % d == 0:
        return Const(e.value // d)
    return E.div(e, d)


def _round16(e: Expr) -> Expr:
    return E.mul(ceil_div(e, 16), 16)


@contextmanager
def _braces(w: Writer) -> Iterator[None]:
    """A bare `{ ... }` block, so each call's parameter struct stays local."""
    w("{")
    with w.indented():
        yield
    w("}")


class ConvPart:
    """Emits `ProcessCube` of a conv kernel plus its cube-side queues and LocalTensor members."""

    def __init__(self, scope: Scope):
        self.scope = scope
        k = scope.kernel
        self.cube = [b for b in k.buffers if b.core is CoreType.AIC]
        im = [s for s in walk(k.aic) if isinstance(s, Img2Col)]
        self.img = im[0]
        self.fm = self.img.src.buf  # the slab buffer Load3Dv2 reads
        dt = scope.buffer(self.fm).dtype
        self.c0 = 32 // itemsize(dt)
        name = k.name
        if dt not in ("float16", "bfloat16"):
            raise UnsupportedError(f"kernel {name}: conv inputs of {dt} have no Load3Dv2 path to L0B on A2; "
                                   "use float16 or bfloat16")
        if self.img.cin % self.c0:
            raise UnsupportedError(f"kernel {name}: {self.img.cin} input channels are not a multiple of {self.c0} "
                                   f"(C0 for {dt}); pad the channels (and the weights) with zeros to "
                                   f"{-(-self.img.cin // self.c0) * self.c0}")
        if self.img.in_h * self.img.in_w > 65535:
            raise UnsupportedError(f"kernel {name}: an input plane of {self.img.in_h}x{self.img.in_w} exceeds the "
                                   "65535-element ND2NZ matrix stride; split the input rows")
        pads = self.img.pad
        ow = (self.img.in_w + pads[2] + pads[3] - self.img.kw) // self.img.stride[1] + 1
        if ow != self.img.out_w or max(pads) > 255:
            raise UnsupportedError(f"kernel {name}: output width {self.img.out_w} or padding {pads} does not fit "
                                   "Load3Dv2 (padList entries are 0..255)")

    # ---- members and Init ----------------------------------------------------------------------
    def emit(self, members: Writer, init: Writer, methods: Writer) -> None:
        sc = self.scope
        mixed = bool(sc.kernel.aiv)
        if mixed:
            init("if ASCEND_IS_AIC {")
            init.level += 1
        for b in self.cube:
            t = ctype(b.dtype)
            members(f"AscendC::TQue<AscendC::QuePosition::{b.queue.value}, {b.depth}> {sc.que_name(b.name)};",
                    f"AscendC::LocalTensor<{t}> {sc.tensor_name(b.name)};")
            init(f"pipe.InitBuffer({sc.que_name(b.name)}, {b.depth}, {self._slot_bytes(b)});  // {b.purpose}")
        if mixed:
            init.level -= 1
            init("}")
        with methods.block("__aicore__ inline void ProcessCube()"):
            self._body(sc.kernel.aic, methods)
        methods("")

    def _slot_bytes(self, b: Buffer) -> int:
        """One queue buffer: whole 16 x C0 fractals (L1 feature map: C0-aligned channel planes)."""
        isz = itemsize(b.dtype)
        if b.name == self.fm:
            plane = self.img.slab_rows * self.img.in_w
            return self.img.cin * (-(-plane // self.c0) * self.c0) * isz
        return -(-b.rows // 16) * 16 * (-(-b.cols // 16) * 16) * isz

    # ---- the program ---------------------------------------------------------------------------
    def _body(self, stmts: tuple[Stmt, ...], w: Writer) -> None:
        sc = self.scope
        for s in stmts:
            if isinstance(s, Let):
                w(f"const int32_t {sc.var(s.var)} = {sc.expr(s.value)};")
            elif isinstance(s, (Loop, If)):
                w(control_head(s, sc))
                with w.indented():
                    self._body(s.body, w)
                w("}")
            elif isinstance(s, (Alloc, EnQue, DeQue, Free)):
                self._queue(s, w)
            elif isinstance(s, CrossSet):
                w(f"AscendC::CrossCoreSetFlag<0x2, PIPE_{s.pipe.value}>({s.flag});")
            elif isinstance(s, CrossWait):
                w(f"AscendC::CrossCoreWaitFlag({s.flag});")
            elif isinstance(s, Copy):
                self._copy(s, w)
            elif isinstance(s, Img2Col):
                self._img2col(s, w)
            elif isinstance(s, Mmad):
                self._mmad(s, w)
            else:
                raise UnsupportedError(f"kernel {sc.kernel.name}: {type(s).__name__} on the cube core has no "
                                       "cube basic-API form")

    def _queue(self, s: Alloc | EnQue | DeQue | Free, w: Writer) -> None:
        sc = self.scope
        q, t = sc.que_name(s.buf), sc.tensor_name(s.buf)
        ty = ctype(sc.buffer(s.buf).dtype)
        if isinstance(s, Alloc):
            w(f"{t} = {q}.AllocTensor<{ty}>();")
        elif isinstance(s, EnQue):
            w(f"{q}.EnQue({t});")
        elif isinstance(s, DeQue):
            w(f"{t} = {q}.DeQue<{ty}>();")
        else:
            w(f"{q}.FreeTensor({t});")

    def _copy(self, s: Copy, w: Writer) -> None:
        sc = self.scope
        src_tier = Tier.GM if s.src.gm else sc.buffer(s.src.buf).tier
        dst_tier = Tier.GM if s.dst.gm else sc.buffer(s.dst.buf).tier
        if src_tier is Tier.GM and s.dst.buf == self.fm:
            self._feature_map(s, w)
        elif src_tier is Tier.GM and dst_tier is Tier.L1:
            self._nd2nz(s, w)
        elif src_tier is Tier.L1 and dst_tier is Tier.L0A:
            self._load2d(s, w)
        elif src_tier is Tier.L0C and dst_tier is Tier.GM:
            self._fixpipe(s, w)
        else:
            raise UnsupportedError(f"kernel {sc.kernel.name}: a {src_tier.value} -> {dst_tier.value} copy on the "
                                   "cube core of a conv kernel has no cube basic-API form")

    def _feature_map(self, s: Copy, w: Writer) -> None:
        """GM -> L1: the loaded input rows of every channel, one C0-aligned plane per channel."""
        sc, im = self.scope, self.img
        if sc.static(s.dst.stride) != im.slab_rows * im.in_w or sc.static(s.src.stride) != im.in_h * im.in_w:
            raise UnsupportedError(f"kernel {sc.kernel.name}: the img2col source is not whole input rows per "
                                   "channel; Load3Dv2 needs a feature map of whole rows")
        w(f"// {s.comment or 'img2col source'}: {im.cin} channel planes of {FM_ROWS} x {im.in_w}, GM -> L1",
          f"const int32_t {FM_ROWS} = {sc.expr(_exact_div(s.src.cols, im.in_w))};",
          f"const int32_t {FM_PAD_TOP} = {sc.expr(_exact_div(s.dst.offset, im.in_w))};  "
          "// slab rows above the input (top padding)")
        with _braces(w):
            w("AscendC::Nd2NzParams nd2nz;  // one row per plane: a plain copy padded to whole C0 blocks",
              f"nd2nz.ndNum = {sc.expr(s.src.rows)};",
              "nd2nz.nValue = 1;",
              f"nd2nz.dValue = {FM_ROWS} * {im.in_w};",
              f"nd2nz.srcNdMatrixStride = {sc.expr(s.src.stride)};",
              f"nd2nz.srcDValue = {FM_ROWS} * {im.in_w};",
              "nd2nz.dstNzC0Stride = 1;",
              "nd2nz.dstNzNStride = 1;",
              f"nd2nz.dstNzMatrixStride = ({FM_ROWS} * {im.in_w} + {self.c0 - 1}) / {self.c0} * {self.c0};",
              f"AscendC::DataCopy({sc.tensor_name(self.fm)}, {sc.at(s.src)}, nd2nz);")

    def _nd2nz(self, s: Copy, w: Writer) -> None:
        """GM -> L1 of a weight tile: [rows, cols] ND -> NZ (C0-wide column blocks of 16-row-aligned height)."""
        sc = self.scope
        w(f"// {s.comment or 'weights'}: GM -> L1 (ND2NZ)")
        with _braces(w):
            w("AscendC::Nd2NzParams nd2nz;",
              "nd2nz.ndNum = 1;",
              f"nd2nz.nValue = {sc.expr(s.src.rows)};",
              f"nd2nz.dValue = {sc.expr(s.src.cols)};",
              "nd2nz.srcNdMatrixStride = 0;",
              f"nd2nz.srcDValue = {sc.expr(s.src.stride)};",
              f"nd2nz.dstNzC0Stride = {sc.expr(_round16(s.src.rows))};",
              "nd2nz.dstNzNStride = 1;",
              "nd2nz.dstNzMatrixStride = 0;",
              f"AscendC::DataCopy({sc.at(s.dst)}, {sc.at(s.src)}, nd2nz);")

    def _load2d(self, s: Copy, w: Writer) -> None:
        """L1 (NZ) -> L0A (zZ): for each 16-row fractal row, its k fractals (srcStride = m fractals)."""
        sc, c0 = self.scope, self.c0
        m_frac, k_frac = ceil_div(s.src.rows, 16), ceil_div(s.src.cols, c0)
        # a k tile inside a weight slab starts (k offset / C0) column blocks of round16(m) x C0 in
        base = "" if s.src.offset == Const(0) else \
            f"{sc.expr(E.mul(E.div(s.src.offset, c0), E.mul(m_frac, 16 * c0)))} + "
        w("// L1 -> L0A: NZ -> zZ, one 16-row fractal row per LoadData")
        with _braces(w):
            w("AscendC::LoadData2DParams load2d;",
              f"load2d.repeatTimes = {sc.expr(k_frac)};",
              f"load2d.srcStride = {sc.expr(m_frac)};",
              "load2d.ifTranspose = false;")
            with w.block(f"for (int32_t mb = 0; mb < {sc.expr(m_frac)}; ++mb)"):
                w(f"AscendC::LoadData({sc.tensor_name(s.dst.buf)}[mb * {sc.expr(E.mul(k_frac, 16 * c0))}], "
                  f"{sc.tensor_name(s.src.buf)}[{base}mb * {16 * c0}], load2d);")

    def _img2col(self, s: Img2Col, w: Writer) -> None:
        """Load3Dv2 over the loaded rows: pixels [p0, p0 + pixels) x patch columns [k0, k0 + klen)."""
        sc = self.scope
        sh, sw = s.stride
        first_row = E.div(E.add(s.h0, s.pad[0]), sh)  # output row of slab row 0
        m_start = E.sub(s.p0, E.mul(first_row, s.out_w))
        pad_bottom = f"{s.slab_rows} - {FM_PAD_TOP} - {FM_ROWS}"
        w(f"// {s.comment or 'img2col'} (Load3Dv2: L1 feature map -> {sc.buffer(s.dst.buf).tier.value})")
        with _braces(w):
            t = ctype(sc.buffer(s.dst.buf).dtype)
            w(f"AscendC::LoadData3DParamsV2<{t}> load3d;",
              f"load3d.padList[0] = {s.pad[2]};  // left",
              f"load3d.padList[1] = {s.pad[3]};  // right",
              f"load3d.padList[2] = {FM_PAD_TOP};  // top: slab rows above the input",
              f"load3d.padList[3] = {pad_bottom};  // bottom",
              f"load3d.l1H = {FM_ROWS};",
              f"load3d.l1W = {s.in_w};",
              f"load3d.channelSize = {s.cin};",
              f"load3d.kExtension = {sc.expr(s.klen)};",
              f"load3d.mExtension = {sc.expr(s.pixels)};",
              f"load3d.kStartPt = {sc.expr(s.k0)};",
              f"load3d.mStartPt = {sc.expr(m_start)};  // first pixel of the tile, counted from slab row 0",
              f"load3d.strideW = {sw};",
              f"load3d.strideH = {sh};",
              f"load3d.filterW = {s.kw};",
              f"load3d.filterH = {s.kh};",
              "load3d.dilationFilterW = 1;",
              "load3d.dilationFilterH = 1;",
              "load3d.enTranspose = false;",
              "load3d.enSmallK = false;",
              "load3d.padValue = 0;",
              f"AscendC::LoadData({sc.at(s.dst)}, {sc.at(s.src)}, load3d);")

    def _mmad(self, s: Mmad, w: Writer) -> None:
        sc = self.scope
        if s.b_layout != "nk" or s.a_layout != "mk":
            raise UnsupportedError(f"kernel {sc.kernel.name}: a conv Mmad reads A as [m, k] and the patches as "
                                   "[n, k]; other layouts have no Load3Dv2 form")
        init = s.init
        if (isinstance(init, Bin) and init.op == "-" and init.a == Const(1) and isinstance(init.b, Bin)
                and init.b.op == "min" and isinstance(init.b.a, Var) and init.b.b == Const(1)):
            init_c = f"{sc.var(init.b.a.name)} == 0"
        else:
            init_c = f"({sc.expr(init)}) != 0"
        comment = f"  // {s.comment}" if s.comment else ""
        w(f"AscendC::Mmad({sc.at(s.c)}, {sc.at(s.a)}, {sc.at(s.b)}, "
          f"AscendC::MmadParams({sc.expr(s.m)}, {sc.expr(s.n)}, {sc.expr(s.k)}, 0, false, {init_c}));{comment}")

    def _fixpipe(self, s: Copy, w: Writer) -> None:
        """L0C (NZ, column blocks round16(m) rows apart) -> GM rows `stride` elements apart."""
        sc = self.scope
        dst_dt = sc.dtype(s.dst)
        if dst_dt not in QUANT:
            raise UnsupportedError(f"kernel {sc.kernel.name}: FixPipe cannot write {dst_dt}")
        w(f"// {s.comment or 'FixPipe'}")
        with _braces(w):
            w("AscendC::FixpipeParamsV220 fixParams;",
              f"fixParams.nSize = {sc.expr(s.src.cols)};",
              f"fixParams.mSize = {sc.expr(s.src.rows)};",
              f"fixParams.srcStride = {sc.expr(_round16(s.src.rows))};  // rows between L0C column blocks",
              f"fixParams.dstStride = {sc.expr(s.dst.stride)};",
              f"fixParams.quantPre = {QUANT[dst_dt]};",
              "fixParams.ndNum = 1;",
              f"AscendC::Fixpipe<{ctype(dst_dt)}, float, AscendC::CFG_ROW_MAJOR>({sc.at(s.dst)}, "
              f"{sc.at(s.src)}, fixParams);")
