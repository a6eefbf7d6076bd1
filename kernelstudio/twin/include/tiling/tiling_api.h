// TCubeTiling: the Matmul tiling struct as the kernel sees it, with CANN's fields in CANN's order.
//
// CANN fills it on the host (matmul_tiling::MultiCoreMatmulTiling::GetTiling into optiling::TCubeTiling)
// and the kernel copies the tiling blob into this struct word by word, so the layout is part of the
// contract: 50 int32_t fields, the order of CANN 8.x (kernel_tiling.h / adv_api matmul_tilingdata.h).
// Every field starts at 0, as on CANN. The twin's Matmul reads the fields marked "read"; the others are
// kept so that blobs and offsets match CANN, and are ignored here (batch matmul, layouts, MX types and
// UB/L1 sharing are not modelled). A 0 in stepM/stepN/stepKa/stepKb, depthA1/depthB1 or dbL0A/B/C is
// read as 1.
#ifndef KS_TWIN_TILING_API_H
#define KS_TWIN_TILING_API_H

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "../register/tilingdata_base.h"
#include "platform/platform_ascendc.h"
#include "norm_tiling.h"
#include "topk_tiling.h"

// set_<field> / get_<field>, as CANN's host class optiling::TCubeTiling has them (see the struct below)
#define KS_TWIN_TCUBE_ACCESSOR(f) \
    void set_##f(int32_t v) { f = v; } \
    int32_t get_##f() const { return f; }

struct TCubeTiling {
    int32_t usedCoreNum = 0;      // ignored: blockDim comes from ICPU_RUN_KF
    int32_t M = 0;                // read: rows of A and C (org shape)
    int32_t N = 0;                // read: columns of B and C (org shape)
    int32_t Ka = 0;               // read: K of A (org shape)
    int32_t Kb = 0;               // read: K of B (org shape; 0 or equal to Ka)
    int32_t singleCoreM = 0;      // read
    int32_t singleCoreN = 0;      // read
    int32_t singleCoreK = 0;      // read
    int32_t baseM = 0;            // read
    int32_t baseN = 0;            // read
    int32_t baseK = 0;            // read
    int32_t depthA1 = 0;          // read: L1 capacity and slab checks
    int32_t depthB1 = 0;          // read
    int32_t stepM = 0;            // read
    int32_t stepN = 0;            // read
    int32_t isBias = 0;           // read: must match SetBias
    int32_t transLength = 0;      // ignored
    int32_t iterateOrder = 0;     // read: 0 walks M first, 1 walks N first
    int32_t shareMode = 0;        // ignored
    int32_t shareL1Size = 0;      // ignored
    int32_t shareL0CSize = 0;     // ignored
    int32_t shareUbSize = 0;      // ignored
    int32_t batchM = 0;           // ignored (batch matmul)
    int32_t batchN = 0;           // ignored
    int32_t singleBatchM = 0;     // ignored
    int32_t singleBatchN = 0;     // ignored
    int32_t stepKa = 0;           // read
    int32_t stepKb = 0;           // read
    int32_t depthAL1CacheUB = 0;  // ignored
    int32_t depthBL1CacheUB = 0;  // ignored
    int32_t dbL0A = 0;            // read: L0A capacity check
    int32_t dbL0B = 0;            // read: L0B capacity check
    int32_t dbL0C = 0;            // read: L0C capacity check
    int32_t ALayoutInfoB = 0;     // ignored (IterateBatch layouts)
    int32_t ALayoutInfoS = 0;
    int32_t ALayoutInfoN = 0;
    int32_t ALayoutInfoG = 0;
    int32_t ALayoutInfoD = 0;
    int32_t BLayoutInfoB = 0;
    int32_t BLayoutInfoS = 0;
    int32_t BLayoutInfoN = 0;
    int32_t BLayoutInfoG = 0;
    int32_t BLayoutInfoD = 0;
    int32_t CLayoutInfoB = 0;
    int32_t CLayoutInfoS1 = 0;
    int32_t CLayoutInfoN = 0;
    int32_t CLayoutInfoG = 0;
    int32_t CLayoutInfoS2 = 0;
    int32_t BatchNum = 0;         // ignored
    int32_t mxTypePara = 0;       // ignored (MX matmul; `reserved` in CANN 8.1)

    // One type for both halves: CANN has a host tiling-data class optiling::TCubeTiling (set_/get_, SaveToBuffer)
    // and a kernel struct ::TCubeTiling with the same 50 fields; the twin's struct carries the accessors.
    KS_TWIN_TCUBE_ACCESSOR(usedCoreNum) KS_TWIN_TCUBE_ACCESSOR(M) KS_TWIN_TCUBE_ACCESSOR(N) KS_TWIN_TCUBE_ACCESSOR(Ka) KS_TWIN_TCUBE_ACCESSOR(Kb)
    KS_TWIN_TCUBE_ACCESSOR(singleCoreM) KS_TWIN_TCUBE_ACCESSOR(singleCoreN) KS_TWIN_TCUBE_ACCESSOR(singleCoreK) KS_TWIN_TCUBE_ACCESSOR(baseM) KS_TWIN_TCUBE_ACCESSOR(baseN)
    KS_TWIN_TCUBE_ACCESSOR(baseK) KS_TWIN_TCUBE_ACCESSOR(depthA1) KS_TWIN_TCUBE_ACCESSOR(depthB1) KS_TWIN_TCUBE_ACCESSOR(stepM) KS_TWIN_TCUBE_ACCESSOR(stepN)
    KS_TWIN_TCUBE_ACCESSOR(isBias) KS_TWIN_TCUBE_ACCESSOR(transLength) KS_TWIN_TCUBE_ACCESSOR(iterateOrder) KS_TWIN_TCUBE_ACCESSOR(shareMode) KS_TWIN_TCUBE_ACCESSOR(shareL1Size)
    KS_TWIN_TCUBE_ACCESSOR(shareL0CSize) KS_TWIN_TCUBE_ACCESSOR(shareUbSize) KS_TWIN_TCUBE_ACCESSOR(batchM) KS_TWIN_TCUBE_ACCESSOR(batchN) KS_TWIN_TCUBE_ACCESSOR(singleBatchM)
    KS_TWIN_TCUBE_ACCESSOR(singleBatchN) KS_TWIN_TCUBE_ACCESSOR(stepKa) KS_TWIN_TCUBE_ACCESSOR(stepKb) KS_TWIN_TCUBE_ACCESSOR(depthAL1CacheUB) KS_TWIN_TCUBE_ACCESSOR(depthBL1CacheUB)
    KS_TWIN_TCUBE_ACCESSOR(dbL0A) KS_TWIN_TCUBE_ACCESSOR(dbL0B) KS_TWIN_TCUBE_ACCESSOR(dbL0C) KS_TWIN_TCUBE_ACCESSOR(ALayoutInfoB) KS_TWIN_TCUBE_ACCESSOR(ALayoutInfoS)
    KS_TWIN_TCUBE_ACCESSOR(ALayoutInfoN) KS_TWIN_TCUBE_ACCESSOR(ALayoutInfoG) KS_TWIN_TCUBE_ACCESSOR(ALayoutInfoD) KS_TWIN_TCUBE_ACCESSOR(BLayoutInfoB) KS_TWIN_TCUBE_ACCESSOR(BLayoutInfoS)
    KS_TWIN_TCUBE_ACCESSOR(BLayoutInfoN) KS_TWIN_TCUBE_ACCESSOR(BLayoutInfoG) KS_TWIN_TCUBE_ACCESSOR(BLayoutInfoD) KS_TWIN_TCUBE_ACCESSOR(CLayoutInfoB) KS_TWIN_TCUBE_ACCESSOR(CLayoutInfoS1)
    KS_TWIN_TCUBE_ACCESSOR(CLayoutInfoN) KS_TWIN_TCUBE_ACCESSOR(CLayoutInfoG) KS_TWIN_TCUBE_ACCESSOR(CLayoutInfoS2) KS_TWIN_TCUBE_ACCESSOR(BatchNum) KS_TWIN_TCUBE_ACCESSOR(mxTypePara)
    size_t GetDataSize() const { return sizeof(*this); }
    void SaveToBuffer(void* buf, size_t cap) const { std::memcpy(buf, this, cap < sizeof(*this) ? cap : sizeof(*this)); }
};

static_assert(sizeof(TCubeTiling) == 50 * sizeof(int32_t), "TCubeTiling: CANN's 50 int32 fields, no padding");
static_assert(offsetof(TCubeTiling, stepKa) == 26 * sizeof(int32_t), "TCubeTiling field order: stepKa is field 26");
static_assert(offsetof(TCubeTiling, dbL0C) == 32 * sizeof(int32_t), "TCubeTiling field order: dbL0C is field 32");

namespace optiling {
using ::TCubeTiling;
}

// ---- matmul_tiling: the host Matmul tiling API -----------------------------------------------------
// The twin implements the calls a TilingFunc makes to fill a TCubeTiling for one core's C block:
// types, shapes, the single-core shape, a fixed base split (SetFixSplit) and GetTiling. It does not
// search core splits or base blocks the way CANN's does: without SetSingleShape one core takes the whole
// problem, and without SetFixSplit the base block is the largest that fits L0 (see GetTiling).
namespace matmul_tiling {

enum class DataType : int32_t {
    DT_FLOAT = 0, DT_FLOAT16 = 1, DT_INT8 = 2, DT_INT32 = 3, DT_UINT8 = 4, DT_INT16 = 6, DT_UINT16 = 7,
    DT_UINT32 = 8, DT_INT64 = 9, DT_UINT64 = 10, DT_BF16 = 27, DT_BFLOAT16 = 33,
};
enum class TPosition : int32_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, TSCM = 13 };
enum class CubeFormat : int32_t { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };
enum class MatrixTraverse : int32_t { NOSET = 0, FIRSTM = 1, FIRSTN = 2 };

inline int32_t ks_dtype_bytes(DataType t)
{
    switch (t) {
        case DataType::DT_INT8: case DataType::DT_UINT8: return 1;
        case DataType::DT_FLOAT16: case DataType::DT_BF16: case DataType::DT_BFLOAT16: case DataType::DT_INT16:
        case DataType::DT_UINT16: return 2;
        case DataType::DT_INT64: case DataType::DT_UINT64: return 8;
        default: return 4;
    }
}

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
    int64_t Fill(TCubeTiling& t, int32_t singleM, int32_t singleN, int32_t singleK, int32_t cores)
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
        const int32_t in = ks_dtype_bytes(aType_), c0 = 32 / in;  // elements per 32-byte fractal row
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
        t = TCubeTiling{};
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
    int64_t GetTiling(TCubeTiling& tiling) { return Fill(tiling, m_, n_, k_, 1); }
};

// Several cores: SetDim cores, each taking a singleCoreM x singleCoreN block (SetSingleShape).
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
        m = singleM_ > 0 ? singleM_ : m_, n = singleN_ > 0 ? singleN_ : n_, k = singleK_ > 0 ? singleK_ : k_;
        return 0;
    }
    int32_t GetCoreNum(int32_t& dim, int32_t& mDim, int32_t& nDim) const
    {
        int32_t m = 0, n = 0, k = 0;
        GetSingleShape(m, n, k);
        mDim = (m_ + m - 1) / m, nDim = (n_ + n - 1) / n, dim = dim_;
        return 0;
    }
    int64_t GetTiling(TCubeTiling& tiling)
    {
        int32_t m = 0, n = 0, k = 0;
        GetSingleShape(m, n, k);
        // a core's block may reach past the problem (a group of C tiles at the edge): SetTail cuts it
        return Fill(tiling, m, n, k, dim_);
    }

private:
    int32_t dim_ = 1, singleM_ = -1, singleN_ = -1, singleK_ = -1;
};

}  // namespace matmul_tiling

#endif
