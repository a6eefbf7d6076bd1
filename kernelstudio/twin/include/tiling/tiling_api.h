// The host tiling API of the twin (tiling/tiling_api.h): optiling::TCubeTiling, the Matmul tiling API
// (matmul_tiling) that fills it, and the high-level APIs' tiling functions (norm_tiling.h, topk_tiling.h).
//
// CANN fills the host class on the host and the kernel copies the tiling blob into the plain struct
// ::TCubeTiling (kernel_tiling/kernel_tiling.h) word by word, so the layout is part of the contract; the
// static_asserts below (LayoutMatchesKernelStruct) pin the two to it.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "tiling/tiling_api.h is a host header (TilingFunc and the Matmul tiling API): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
// A kernel unit reads its op_host/<op>_tiling.h for the struct a CANN build generates from it: of this
// header it gets only what that struct needs.
#include "../kernel_tiling/kernel_tiling.h"
#include "../register/tilingdata_base.h"
#elif !defined(KS_TWIN_TILING_API_H)
#define KS_TWIN_TILING_API_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../kernel_tiling/kernel_tiling.h"
#include "../register/tilingdata_base.h"
#include "platform/platform_ascendc.h"
#include "norm_grad_tiling.h"
#include "norm_tiling.h"
#include "pad_tiling.h"
#include "topk_tiling.h"

// The TCubeTiling fields in CANN's order, for the host class and the layout checks below.
#define KS_TWIN_TCUBE_FIELDS(X) \
    X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) \
    X(singleCoreM) X(singleCoreN) X(singleCoreK) X(baseM) X(baseN) \
    X(baseK) X(depthA1) X(depthB1) X(stepM) X(stepN) \
    X(isBias) X(transLength) X(iterateOrder) X(shareMode) X(shareL1Size) \
    X(shareL0CSize) X(shareUbSize) X(batchM) X(batchN) X(singleBatchM) \
    X(singleBatchN) X(stepKa) X(stepKb) X(depthAL1CacheUB) X(depthBL1CacheUB) \
    X(dbL0A) X(dbL0B) X(dbL0C) X(ALayoutInfoB) X(ALayoutInfoS) \
    X(ALayoutInfoN) X(ALayoutInfoG) X(ALayoutInfoD) X(BLayoutInfoB) X(BLayoutInfoS) \
    X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD) X(CLayoutInfoB) X(CLayoutInfoS1) \
    X(CLayoutInfoN) X(CLayoutInfoG) X(CLayoutInfoS2) X(BatchNum) X(mxTypePara)

namespace optiling {
// The host tiling-data class the Matmul tiling API fills (GetTiling): as CANN's, its fields are private behind
// set_/get_ accessors, and SaveToBuffer writes the blob; its layout is the kernel struct ::TCubeTiling's,
// field by field (checked in LayoutMatchesKernelStruct).
class TCubeTiling {
public:
#define KS_TWIN_TCUBE_ACCESSORS(f) \
    void set_##f(int32_t v) { f = v; } \
    int32_t get_##f() const { return f; }
    KS_TWIN_TCUBE_FIELDS(KS_TWIN_TCUBE_ACCESSORS)
#undef KS_TWIN_TCUBE_ACCESSORS
    size_t GetDataSize() const { return sizeof(*this); }
    void SaveToBuffer(void* buf, size_t cap) const
    {
        std::memcpy(buf, static_cast<const void*>(this), cap < sizeof(*this) ? cap : sizeof(*this));
    }
    static constexpr bool LayoutMatchesKernelStruct();

private:
#define KS_TWIN_TCUBE_MEMBER(f) int32_t f = 0;
    KS_TWIN_TCUBE_FIELDS(KS_TWIN_TCUBE_MEMBER)
#undef KS_TWIN_TCUBE_MEMBER
};

// The host class and the kernel struct are one blob: same size, every field at the same offset.
constexpr bool TCubeTiling::LayoutMatchesKernelStruct()
{
    static_assert(sizeof(TCubeTiling) == sizeof(::TCubeTiling), "optiling::TCubeTiling and TCubeTiling differ in size");
#define KS_TWIN_TCUBE_SAME_OFFSET(f) \
    static_assert(offsetof(TCubeTiling, f) == offsetof(::TCubeTiling, f), "TCubeTiling field " #f " moved");
    KS_TWIN_TCUBE_FIELDS(KS_TWIN_TCUBE_SAME_OFFSET)
#undef KS_TWIN_TCUBE_SAME_OFFSET
    return true;
}
static_assert(TCubeTiling::LayoutMatchesKernelStruct(), "optiling::TCubeTiling has TCubeTiling's layout");
}  // namespace optiling

// ---- matmul_tiling: the host Matmul tiling API -----------------------------------------------------
// The twin implements the calls a TilingFunc makes to fill a TCubeTiling for one core's C block:
// types, shapes, the single-core shape, a fixed base split (SetFixSplit) and GetTiling. It does not
// search base blocks the way CANN's does: MatmulApiTiling gives one core the whole problem,
// MultiCoreMatmulTiling splits it over its SetDim cores (below), and without SetFixSplit the base block is
// the largest that fits L0 (see Fill).
namespace matmul_tiling {

enum class DataType : int32_t {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_BF16 = 27, DT_BFLOAT16 = 33,
};
enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, TSCM = 13 };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };
}  // namespace matmul_tiling

namespace ks_twin {
// bytes of one element of a matmul_tiling::DataType
inline int32_t dtype_bytes(matmul_tiling::DataType t)
{
    switch (t) {
        case matmul_tiling::DataType::DT_INT8: case matmul_tiling::DataType::DT_UINT8: return 1;
        case matmul_tiling::DataType::DT_FLOAT16: case matmul_tiling::DataType::DT_BF16: case matmul_tiling::DataType::DT_BFLOAT16: case matmul_tiling::DataType::DT_INT16:
        case matmul_tiling::DataType::DT_UINT16: return 2;
        case matmul_tiling::DataType::DT_INT64: case matmul_tiling::DataType::DT_UINT64: return 8;
        default: return 4;
    }
}
}  // namespace ks_twin

namespace matmul_tiling {


class MatmulApiTilingBase {
public:
    MatmulApiTilingBase() = default;
    explicit MatmulApiTilingBase(const platform_ascendc::PlatformAscendC& platform) : platform_(platform) {}
    virtual ~MatmulApiTilingBase() = default;

    int32_t SetAType(TPosition pos, CubeFormat fmt, DataType dt, bool isTrans = false)
    {
        (void)pos, (void)fmt;
        aType_ = dt, transA_ = isTrans, typesSet_ |= 1;
        return 0;
    }
    int32_t SetBType(TPosition pos, CubeFormat fmt, DataType dt, bool isTrans = false)
    {
        (void)pos, (void)fmt;
        bType_ = dt, transB_ = isTrans, typesSet_ |= 2;
        return 0;
    }
    int32_t SetCType(TPosition pos, CubeFormat fmt, DataType dt)
    {
        (void)pos, (void)fmt;
        cType_ = dt, typesSet_ |= 4;
        return 0;
    }
    int32_t SetBiasType(TPosition pos, CubeFormat fmt, DataType dt)
    {
        (void)pos, (void)fmt, (void)dt;
        return 0;
    }
    virtual int32_t SetShape(int32_t m, int32_t n, int32_t k)
    {
        if (m <= 0 || n <= 0 || k <= 0) return -1;
        m_ = m, n_ = n, k_ = k;
        return 0;
    }
    int32_t SetOrgShape(int32_t orgM, int32_t orgN, int32_t orgK) { return SetOrgShape(orgM, orgN, orgK, orgK); }
    int32_t SetOrgShape(int32_t orgM, int32_t orgN, int32_t orgKa, int32_t orgKb)
    {
        if (orgM <= 0 || orgN <= 0 || orgKa <= 0 || orgKb <= 0) return -1;
        orgM_ = orgM, orgN_ = orgN, orgKa_ = orgKa, orgKb_ = orgKb;
        return 0;
    }
    // baseM / baseN / baseK in elements; -1 leaves one to GetTiling.
    int32_t SetFixSplit(int32_t baseM = -1, int32_t baseN = -1, int32_t baseK = -1)
    {
        fixM_ = baseM, fixN_ = baseN, fixK_ = baseK;
        return 0;
    }
    int32_t SetBufferSpace(int32_t l1Size = -1, int32_t l0CSize = -1, int32_t ubSize = -1, int32_t btSize = -1)
    {
        (void)ubSize, (void)btSize;
        l1Limit_ = l1Size, l0cLimit_ = l0CSize;
        return 0;
    }
    int32_t SetBias(bool isBias = false)
    {
        bias_ = isBias;
        return 0;
    }
    int32_t EnableBias(bool isBias = false) { return SetBias(isBias); }
    int32_t SetTraverse(MatrixTraverse traverse)
    {
        traverse_ = traverse;
        return 0;
    }
    int32_t GetBaseM() const { return baseM_; }
    int32_t GetBaseN() const { return baseN_; }
    int32_t GetBaseK() const { return baseK_; }

protected:
    // Fill `t` for one core's block singleM x singleN x singleK; -1 (and `t` untouched) when no split fits.
    int64_t Fill(::TCubeTiling& t, int32_t singleM, int32_t singleN, int32_t singleK, int32_t cores)
    {
        if (typesSet_ != 7 || m_ <= 0) return -1;  // SetAType, SetBType, SetCType and SetShape are required
        const int32_t orgM = orgM_ > 0 ? orgM_ : m_, orgN = orgN_ > 0 ? orgN_ : n_;
        const int32_t orgKa = orgKa_ > 0 ? orgKa_ : k_, orgKb = orgKb_ > 0 ? orgKb_ : k_;
        uint64_t l0a = 0, l0b = 0, l0c = 0, l1 = 0;
        platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, l0a);
        platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, l0b);
        platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, l0c);
        platform_.GetCoreMemSize(platform_ascendc::CoreMemType::L1, l1);
        if (l0cLimit_ > 0) l0c = static_cast<uint64_t>(l0cLimit_);
        if (l1Limit_ > 0) l1 = static_cast<uint64_t>(l1Limit_);
        const int32_t in = ks_twin::dtype_bytes(aType_), c0 = 32 / in;  // elements per 32-byte fractal row
        auto up = [](int32_t v, int32_t a) { return (v + a - 1) / a * a; };
        const int32_t bm = fixM_ > 0 ? fixM_ : (up(singleM, 16) < 128 ? up(singleM, 16) : 128);
        const int32_t bn = fixN_ > 0 ? fixN_ : (up(singleN, 16) < 256 ? up(singleN, 16) : 256);
        if (bm > up(singleM, 16) || bn > up(singleN, 16)) return -1;       // base larger than the block
        if (static_cast<uint64_t>(bm) * bn * 4 > l0c) return -1;           // one C base block must fit L0C
        int32_t bk = fixK_;
        if (bk <= 0) {  // the largest k step, in fractal units, that double-buffers in L0A and L0B
            bk = up(singleK, c0);
            while (bk > c0 && (2ull * bm * bk * in > l0a || 2ull * bn * bk * in > l0b)) bk -= c0;
        }
        if (static_cast<uint64_t>(bm) * bk * in > l0a || static_cast<uint64_t>(bn) * bk * in > l0b) return -1;
        const bool dbA = 2ull * bm * bk * in <= l0a, dbB = 2ull * bn * bk * in <= l0b;
        const bool dbC = 2ull * bm * bn * 4 <= l0c;
        if (2ull * (static_cast<uint64_t>(bm) + bn) * bk * in > l1) return -1;  // two A and B slabs in L1
        t = ::TCubeTiling{};
        t.usedCoreNum = cores;
        t.M = orgM, t.N = orgN, t.Ka = orgKa, t.Kb = orgKb;
        t.singleCoreM = singleM, t.singleCoreN = singleN, t.singleCoreK = singleK;
        t.baseM = bm, t.baseN = bn, t.baseK = bk;
        t.depthA1 = 2, t.depthB1 = 2, t.stepM = 1, t.stepN = 1, t.stepKa = 1, t.stepKb = 1;
        t.isBias = bias_ ? 1 : 0;
        t.iterateOrder = traverse_ == MatrixTraverse::FIRSTN ? 1 : 0;
        t.dbL0A = dbA ? 2 : 1, t.dbL0B = dbB ? 2 : 1, t.dbL0C = dbC ? 2 : 1;
        baseM_ = bm, baseN_ = bn, baseK_ = bk;
        return 0;
    }

    int64_t FillHost(optiling::TCubeTiling& tiling, int32_t singleM, int32_t singleN, int32_t singleK, int32_t cores)
    {
        ::TCubeTiling t;
        const int64_t r = Fill(t, singleM, singleN, singleK, cores);
        if (r == 0) std::memcpy(static_cast<void*>(&tiling), &t, sizeof(t));  // one layout (see the static_asserts)
        return r;
    }

    platform_ascendc::PlatformAscendC platform_{};
    DataType aType_ = DataType::DT_FLOAT16, bType_ = DataType::DT_FLOAT16, cType_ = DataType::DT_FLOAT;
    bool transA_ = false, transB_ = false, bias_ = false;
    int32_t typesSet_ = 0;
    int32_t m_ = 0, n_ = 0, k_ = 0, orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0;
    int32_t fixM_ = -1, fixN_ = -1, fixK_ = -1, l1Limit_ = -1, l0cLimit_ = -1;
    int32_t baseM_ = 0, baseN_ = 0, baseK_ = 0;
    MatrixTraverse traverse_ = MatrixTraverse::NOSET;
};

// One core's tiling: its block is the whole shape given to SetShape.
class MatmulApiTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
    int64_t GetTiling(::TCubeTiling& tiling) { return Fill(tiling, m_, n_, k_, 1); }
    int64_t GetTiling(optiling::TCubeTiling& tiling) { return FillHost(tiling, m_, n_, k_, 1); }
};

// Several cores: SetDim gives the cores the tiling may use; GetTiling splits C into mDim x nDim blocks
// (mDim * nDim <= dim), each core taking singleCoreM = ceil(M / mDim) rows and singleCoreN = ceil(N / nDim)
// columns (the edge cores' blocks are cut with SetTail), and writes usedCoreNum = mDim * nDim, as CANN's
// documented multi-core split does. SetSingleShape fixes a core's block instead (usedCoreNum is then the
// number of such blocks that cover C, mDim * nDim as GetCoreNum documents); GetCoreNum reports the split.
// The twin's choice among splits (CANN's search is not documented): the most cores, then the least A + B a
// core loads (singleCoreM + singleCoreN), then more cores along M.
class MultiCoreMatmulTiling : public MatmulApiTilingBase {
public:
    using MatmulApiTilingBase::MatmulApiTilingBase;
    int32_t SetDim(int32_t dim)
    {
        if (dim <= 0) return -1;
        dim_ = dim;
        return 0;
    }
    int32_t SetSingleShape(int32_t singleM = -1, int32_t singleN = -1, int32_t singleK = -1)
    {
        if (singleM > 0) singleM_ = singleM;
        if (singleN > 0) singleN_ = singleN;
        if (singleK > 0) singleK_ = singleK;
        return 0;
    }
    int32_t GetSingleShape(int32_t& m, int32_t& n, int32_t& k) const
    {
        Split s = split();
        m = s.m, n = s.n, k = singleK_ > 0 ? singleK_ : k_;
        return 0;
    }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const
    {
        Split s = split();
        mDim = s.mDim, nDim = s.nDim, dim = s.mDim * s.nDim;
        return 0;
    }
    int64_t GetTiling(::TCubeTiling& tiling)
    {
        const Split s = split();
        return Fill(tiling, s.m, s.n, singleK_ > 0 ? singleK_ : k_, s.mDim * s.nDim);
    }
    int64_t GetTiling(optiling::TCubeTiling& tiling)
    {
        ::TCubeTiling t;
        const int64_t r = GetTiling(t);
        if (r == 0) std::memcpy(static_cast<void*>(&tiling), &t, sizeof(t));  // one layout (see LayoutMatchesKernelStruct)
        return r;
    }

private:
    struct Split {
        int32_t mDim = 1, nDim = 1, m = 0, n = 0;
    };
    static int32_t ceil_div(int32_t a, int32_t b) { return (a + b - 1) / b; }
    Split split() const
    {
        Split best;
        best.m = singleM_ > 0 ? singleM_ : m_, best.n = singleN_ > 0 ? singleN_ : n_;
        if (m_ <= 0 || n_ <= 0) return best;
        if (singleM_ > 0 || singleN_ > 0) {  // the caller's block: as many cores as it takes to cover C
            best.mDim = ceil_div(m_, best.m), best.nDim = ceil_div(n_, best.n);
            return best;
        }
        const int32_t mMax = ceil_div(m_, 16), nMax = ceil_div(n_, 16);  // a core takes at least one 16 x 16 tile
        bool found = false;
        for (int32_t md = 1; md <= dim_ && md <= mMax; ++md) {
            for (int32_t nd = 1; md * nd <= dim_ && nd <= nMax; ++nd) {
                Split s;
                s.mDim = md, s.nDim = nd, s.m = ceil_div(m_, md), s.n = ceil_div(n_, nd);
                const int32_t cores = md * nd, bestCores = best.mDim * best.nDim;
                const bool better = !found || cores > bestCores ||
                                    (cores == bestCores && (s.m + s.n < best.m + best.n ||
                                                            (s.m + s.n == best.m + best.n && md > best.mDim)));
                if (better) best = s, found = true;
            }
        }
        return best;
    }

    int32_t dim_ = 1, singleM_ = -1, singleN_ = -1, singleK_ = -1;
};

}  // namespace matmul_tiling

#endif
