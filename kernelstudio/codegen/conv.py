"""The cube-core (AIC) program of convolution kernels, written with the low-level cube API in the chip's
layouts.

A conv kernel's AIC program walks C tiles of [Cout rows x output pixels]. Each TileIR statement maps
onto one Ascend C call, the way hand-written conv kernels are built:

| TileIR                          | Ascend C                                                               |
|---------------------------------|------------------------------------------------------------------------|
| Alloc/EnQue/DeQue/Free (L1/L0)  | `TQue<A1/B1/A2/B2/CO1>` AllocTensor / EnQue / DeQue / FreeTensor       |
| Copy GM -> slab (img2col src)   | `DataCopy(slab, xGm, DataCopyParams)`: C1 blocks of [rows][W][C0]      |
| Copy GM -> a1 (weights)         | `DataCopy(a1, wGm, DataCopyParams)`: C0-wide FRACTAL_Z column blocks   |
| Copy a1 -> a2                   | `LoadData(a2, a1, LoadData2DParams)` per 16-row fractal row (NZ -> zZ) |
| Img2Col slab -> b2              | `LoadData(b2, slab, LoadData3DParamsV2<T>)` (Load3Dv2)                 |
| Mmad                            | `Mmad(c, a2, b2, MmadParams(m, n, k, 0, false, init))`                 |
| Copy c -> GM (FixPipe)          | `Fixpipe<T, float, CFG_ROW_MAJOR>(gm, c, FixpipeParamsV220)`: NZ2ND    |

Layouts (C0 = 32 bytes of the element type). The kernel reads its feature map in NC1HWC0 ([N][C1][H][W][C0])
and its weights in FRACTAL_Z ([C1*kh*kw][N1][16][C0]), the formats CANN's Load3Dv2 is built for: Load3Dv2
reads an L1 feature map [C1][l1H][l1W][C0] and orders the patch matrix's K axis (c1, kh, kw, c0). FRACTAL_Z
of weights [Cout][Cin][kh][kw] is exactly the NZ layout of the [Cout rounded to 16, K] weight matrix with K
in that order: each C0-wide column block holds every output channel, so a weight tile is one strided
DataCopy into the L1 NZ layout Load2D reads (no ND2NZ). The feature-map copy moves, for each of the C1
channel blocks, the loaded input rows ([rows][W][C0], contiguous in NC1HWC0) in one DataCopy; the rows above
and below that the TileIR slab reserves for padding become Load3Dv2's top/bottom `padList` entries.

The TileIR orders K as (c, kh, kw); the generated code reads each k tile [k0, k0 + klen) in the chip's
order instead, for the weights and for Load3Dv2's kStartPt/kExtension alike. Mmad sums over every k tile,
so both orders cover the same products (only the float summation order differs); this needs whole C0 blocks
of channels, so that each k tile is whole C0 blocks of one (c1, kh, kw) tap. Other channel counts are padded
with zeros by the layout transform (NC1HWC0 and FRACTAL_Z hold C1 * C0 channels), and the lowering tiles that
padded K = C1 * C0 * kh * kw (families._CubeShape): its Img2Col carries the real channel count
(`cin_valid`) and its weight copies the real columns (`Copy.valid_cols`), which the interpreter reads as
zeros past; the code reads the transformed buffers, whose padding is zeros.

The layout transform is a host step: the operator's OpDef declares `ge::FORMAT_NC1HWC0` for the feature
map and `ge::FORMAT_FRACTAL_Z` for the weights (`gm_formats`), and CANN's graph engine inserts TransData
for them; the generated CPU launcher converts the logical NCHW and [Cout, Cin, kh, kw] buffers into new
GM buffers before each conv launch (ks_twin/transdata.h). The interpreter and the simulator are unchanged:
they read the logical NCHW tensors the TileIR names.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..core.dtypes import block_elems, itemsize
from ..core.errors import UnsupportedError
from ..tileir.expr import Bin, Const, E, Expr, Var, ceil_div
from ..tileir.memo import KernelMemo
from ..tileir.program import (
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
    Kernel,
    Let,
    Loop,
    Mmad,
    Program,
    Region,
    Stmt,
    Tier,
    walk,
)
from .scope import Scope, control_head
from .writer import Writer, ctype

__all__ = ["ConvPart", "GmFormat", "gm_formats", "is_conv"]

FM_ROWS, FM_PAD_TOP = "fmRows", "fmPadTop"  # C++ locals: loaded input rows and the padding above them
QUANT = {"float16": "QuantMode_t::F322F16", "bfloat16": "QuantMode_t::F322BF16", "float32": "QuantMode_t::NoQuant"}


_CONV = KernelMemo()


def is_conv(stmts: tuple[Stmt, ...]) -> bool:
    """Whether a core program contains an img2col (a convolution's cube part)."""
    return _CONV.get((stmts,), lambda: any(isinstance(s, Img2Col) for s in walk(stmts)))


N0 = 16  # output channels (rows) of a FRACTAL_Z fractal


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


@dataclass(frozen=True)
class GmFormat:
    """A conv kernel's GM input held in a private format: the host converts the logical tensor into it."""

    tensor: str
    format: str  # "NC1HWC0" (feature map) or "FRACTAL_Z" (weights), as msOpGen's JSON spells them
    shape: tuple[int, ...]  # the logical (origin) shape: NCHW, or [Cout, Cin, kh, kw]
    c0: int  # elements of 32 bytes

    @property
    def ge(self) -> str:
        return f"ge::FORMAT_{self.format}"

    @property
    def storage_shape(self) -> tuple[int, ...]:
        """NC1HWC0: [N, C1, H, W, C0]; FRACTAL_Z: [C1 * kh * kw, N1, 16, C0] (channels and output rows
        zero-padded to C0 and 16)."""
        a, b, c, d = self.shape
        if self.format == "NC1HWC0":
            return (a, -(-b // self.c0), c, d, self.c0)
        return (-(-b // self.c0) * c * d, -(-a // N0), N0, self.c0)

    @property
    def elements(self) -> int:
        """Elements of the converted buffer."""
        n = 1
        for x in self.storage_shape:
            n *= x
        return n


def gm_formats(prog: Program, k: Kernel) -> dict[str, GmFormat]:
    """The GM inputs of a conv kernel that the host converts: its feature map to NC1HWC0 and its weights to
    FRACTAL_Z (empty for other kernels)."""
    if not is_conv(k.aic):
        return {}
    fm = next(s for s in walk(k.aic) if isinstance(s, Img2Col)).src.buf
    tiers = {b.name: b.tier for b in k.buffers}
    out: dict[str, GmFormat] = {}
    for s in walk(k.aic):
        if not (isinstance(s, Copy) and s.src.gm and not s.dst.gm and tiers.get(s.dst.buf) is Tier.L1):
            continue
        t = prog.tensor(s.src.buf)
        c0 = block_elems(t.dtype)
        if len(t.shape) != 4:
            raise UnsupportedError(f"kernel {k.name}: conv operand {t.name} has shape {list(t.shape)}; the conv "
                                   "emitter needs an NCHW feature map and [Cout, Cin, kh, kw] weights")
        out[t.name] = GmFormat(t.name, "NC1HWC0" if s.dst.buf == fm else "FRACTAL_Z", tuple(t.shape), c0)
    return out


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
        self.c0 = block_elems(dt)
        name = k.name
        if dt not in ("float16", "bfloat16"):
            raise UnsupportedError(f"kernel {name}: conv inputs of {dt} have no Load3Dv2 path to L0B on A2; "
                                   "use float16 or bfloat16")
        if self.img.cin % self.c0:  # the lowering pads the channels to whole C0 blocks (families._CubeShape)
            raise UnsupportedError(f"kernel {name}: the img2col reads {self.img.cin} channels, not whole C0 "
                                   f"blocks of {self.c0}; this is a bug in kernelstudio, please report it")
        if self.img.in_h * self.img.in_w > 65535:
            raise UnsupportedError(f"kernel {name}: an input plane of {self.img.in_h}x{self.img.in_w} exceeds the "
                                   "65535 32-byte blocks a DataCopy moves or skips per C1 block; split the input "
                                   "rows")
        for t in gm_formats(scope.prog, k).values():
            if scope.prog.tensor(t.tensor).role == "workspace":
                raise UnsupportedError(f"kernel {name}: conv operand {t.tensor} lives in the workspace; the host "
                                       f"converts conv operands to {t.format} between launches, so it must be a "
                                       "kernel argument (do not fuse its producer into the conv kernel)")
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
        """One queue buffer: whole 16 x C0 fractals (L1 feature map: C1 blocks of slab_rows x W x C0)."""
        isz = itemsize(b.dtype)
        if b.name == self.fm:
            return self.img.cin * self.img.slab_rows * self.img.in_w * isz
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
            self._weights(s, w)
        elif src_tier is Tier.L1 and dst_tier is Tier.L0A:
            self._load2d(s, w)
        elif src_tier is Tier.L0C and dst_tier is Tier.GM:
            self._fixpipe(s, w)
        else:
            raise UnsupportedError(f"kernel {sc.kernel.name}: a {src_tier.value} -> {dst_tier.value} copy on the "
                                   "cube core of a conv kernel has no cube basic-API form")

    def _feature_map(self, s: Copy, w: Writer) -> None:
        """GM (NC1HWC0) -> L1 [C1][rows][W][C0]: the loaded input rows of every C1 channel block."""
        sc, im, c0 = self.scope, self.img, self.c0
        if sc.static(s.dst.stride) != im.slab_rows * im.in_w or sc.static(s.src.stride) != im.in_h * im.in_w:
            raise UnsupportedError(f"kernel {sc.kernel.name}: the img2col source is not whole input rows per "
                                   "channel; Load3Dv2 needs a feature map of whole rows")
        c1 = im.cin // c0
        w(f"// {s.comment or 'img2col source'}: C1 = {c1} channel blocks of {FM_ROWS} x {im.in_w} x {c0} "
          "(NC1HWC0), GM -> L1",
          f"const int32_t {FM_ROWS} = {sc.expr(_exact_div(s.src.cols, im.in_w))};",
          f"const int32_t {FM_PAD_TOP} = {sc.expr(_exact_div(s.dst.offset, im.in_w))};  "
          "// slab rows above the input (top padding)")
        with _braces(w):
            w("AscendC::DataCopyParams fmCopy;",
              f"fmCopy.blockCount = {c1};  // C1 channel blocks",
              f"fmCopy.blockLen = {FM_ROWS} * {im.in_w};  // one 32-byte block (C0 channels) per pixel",
              f"fmCopy.srcStride = ({im.in_h} - {FM_ROWS}) * {im.in_w};  // the other rows of each C1 block",
              "fmCopy.dstStride = 0;  // L1: [C1][fmRows][W][C0], the feature map Load3Dv2 reads",
              f"AscendC::DataCopy({sc.tensor_name(self.fm)}, {sc.at(self._nc1hwc0(s.src))}, fmCopy);")

    def _nc1hwc0(self, r: Region) -> Region:
        """The TileIR's NCHW region start (n, 0, h, 0) as the offset of (n, 0, h, 0, 0) in NC1HWC0: an image of
        C x H x W elements becomes C1 x C0 x H x W (C padded to whole C0 blocks), a row is W x C0 elements."""
        im, c0 = self.img, self.c0
        image, padded = (im.cin_valid or im.cin) * im.in_h * im.in_w, im.cin * im.in_h * im.in_w
        terms, todo = [], [r.offset]
        while todo:
            e = todo.pop()
            if isinstance(e, Bin) and e.op == "+":
                todo += [e.a, e.b]
            else:
                terms.append(e)
        off: Expr = Const(0)
        for e in terms:
            if isinstance(e, Bin) and e.op == "*" and isinstance(e.b, Const) and e.b.value % image == 0:
                off = E.add(off, E.mul(e.a, e.b.value // image * padded))  # whole images
            elif isinstance(e, Bin) and e.op == "*" and e.b == Const(im.in_w):
                off = E.add(off, E.mul(e.a, im.in_w * c0))  # input rows
            else:  # any other form: split into image and row offset
                o = r.offset
                return replace(r, offset=E.add(E.mul(E.div(o, image), padded), E.mul(E.mod(o, image), c0)))
        return replace(r, offset=off)

    def _weights(self, s: Copy, w: Writer) -> None:
        """GM (FRACTAL_Z) -> L1 (NZ) of a weight tile: rows [m0, m0 + rows) x chip-order k [k0, k0 + cols) is
        cols / C0 column blocks, each `rows` 32-byte rows; FRACTAL_Z column blocks hold round16(Cout) rows,
        L1 NZ column blocks round16(rows)."""
        sc, c0 = self.scope, self.c0
        t = sc.prog.tensor(s.src.buf)
        cout, k_total = t.shape[0], t.size // t.shape[0]
        rows_pad = _round_up(cout, N0)
        row, col = self._row_col(s.src.offset, k_total)
        src = replace(s.src, offset=E.add(E.mul(E.div(col, c0), rows_pad * c0), E.mul(row, c0)))
        w(f"// {s.comment or 'weights'}: GM (FRACTAL_Z) -> L1 (NZ), k in (c1, kh, kw, c0) order")
        with _braces(w):
            w("AscendC::DataCopyParams wCopy;",
              f"wCopy.blockCount = {sc.expr(E.div(s.src.cols, c0))};  // C0-wide column blocks",
              f"wCopy.blockLen = {sc.expr(s.src.rows)};  // one 32-byte block (C0 elements) per output channel",
              f"wCopy.srcStride = {sc.expr(E.sub(rows_pad, s.src.rows))};  // FRACTAL_Z blocks hold {rows_pad} rows",
              f"wCopy.dstStride = {sc.expr(E.sub(_round16(s.src.rows), s.src.rows))};  "
              "// L1 NZ blocks hold round16(rows)",
              f"AscendC::DataCopy({sc.at(s.dst)}, {sc.at(src)}, wCopy);")

    def _row_col(self, offset: Expr, k_total: int) -> tuple[Expr, Expr]:
        """(row, column) of an ND [Cout, K] element offset built as row * K + column."""
        if isinstance(offset, Bin) and offset.op == "+":
            for a, b in ((offset.a, offset.b), (offset.b, offset.a)):
                if isinstance(a, Bin) and a.op == "*" and a.b == Const(k_total):
                    return a.a, b
        if isinstance(offset, Bin) and offset.op == "*" and offset.b == Const(k_total):
            return offset.a, Const(0)
        return E.div(offset, k_total), E.mod(offset, k_total)

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
        """Load3Dv2 over the loaded rows: pixels [p0, p0 + pixels) x patch columns [k0, k0 + klen) in the
        chip's (c1, kh, kw, c0) order, the k range the weight tile holds."""
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
              f"load3d.kExtension = {sc.expr(s.klen)};  // k in (c1, kh, kw, c0) order, as the weight tile",
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
