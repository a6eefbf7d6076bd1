// Host tiling of the high-level SoftMax, LayerNorm and RmsNorm APIs (GetSoftMaxMinTmpSize /
// SoftMaxTilingFunc, GetLayerNormMaxMinTmpSize / GetLayerNormNDTilingInfo, GetRmsNormMaxMinTmpSize /
// GetRmsNormTilingInfo) and the SoftMaxTiling / LayerNormTiling / RmsNormTiling structs the kernel reads.
// Part of tiling/tiling_api.h on CANN; the structs are in kernel_tiling/kernel_tiling.h.
//
// The temporary-space sizes are the twin's own formulas (CANN's
// are not documented): a float32 copy of the rows one pass works on, so the minimum is one row.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "tiling/norm_tiling.h is a host header (the high-level APIs' tiling functions): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
// A kernel unit reads its op_host/<op>_tiling.h for the struct a CANN build generates from it: of this
// header it gets only what that struct needs.
#include "../kernel_tiling/kernel_tiling.h"
#elif !defined(KS_TWIN_NORM_TILING_H)
#define KS_TWIN_NORM_TILING_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "../kernel_tiling/kernel_tiling.h"
#include "../ks_twin/shared.h"

// ---- ge::Shape: the shape argument of the high-level tiling functions (graph/tensor.h on CANN) -------
#ifndef KS_TWIN_GE_SHAPE
#define KS_TWIN_GE_SHAPE
namespace ge {
class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t>& dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (int64_t d : dims_) n *= d;
        return n;
    }

private:
    std::vector<int64_t> dims_;
};
}  // namespace ge
#endif

namespace ks_twin::norm {
// rows x cols of a [.., cols] shape (all leading dims are rows); 0 x 0 for an empty or 0-d shape
inline std::pair<uint64_t, uint64_t> rows_cols(const ge::Shape& s)
{
    const size_t n = s.GetDimNum();
    if (n == 0) return {0, 0};
    uint64_t rows = 1;
    for (size_t i = 0; i + 1 < n; ++i) rows *= static_cast<uint64_t>(s.GetDim(i) > 0 ? s.GetDim(i) : 0);
    const int64_t c = s.GetDim(n - 1);
    return {rows, static_cast<uint64_t>(c > 0 ? c : 0)};
}
}  // namespace ks_twin::norm

// The SoftMaxTiling fields in CANN's order, for the host class and its layout check.
#define KS_TWIN_SOFTMAX_FIELDS(X) \
    X(srcM) X(srcK) X(srcSize) X(outMaxM) X(outMaxK) X(outMaxSize) X(splitM) X(splitK) X(splitSize) \
    X(reduceM) X(reduceK) X(reduceSize) X(rangeM) X(tailM) X(tailSplitSize) X(tailReduceSize)

namespace optiling {
using ::LayerNormTiling;
using ::RmsNormTiling;

// The host tiling-data class SoftMaxTilingFunc fills: as CANN's (a tiling-data definition), its fields are
// private behind set_/get_ accessors and SaveToBuffer writes the blob; the kernel reads the same bytes as the
// plain struct ::SoftMaxTiling (AscendC::tiling::SoftMaxTiling), field by field (LayoutMatchesKernelStruct).
class SoftMaxTiling {
public:
#define KS_TWIN_SOFTMAX_ACCESSORS(f) \
    void set_##f(uint32_t v) { f = v; } \
    uint32_t get_##f() const { return f; }
    KS_TWIN_SOFTMAX_FIELDS(KS_TWIN_SOFTMAX_ACCESSORS)
#undef KS_TWIN_SOFTMAX_ACCESSORS
    size_t GetDataSize() const { return sizeof(*this); }
    void SaveToBuffer(void* buf, size_t cap) const
    {
        std::memcpy(buf, static_cast<const void*>(this), cap < sizeof(*this) ? cap : sizeof(*this));
    }
    static constexpr bool LayoutMatchesKernelStruct();

private:
#define KS_TWIN_SOFTMAX_MEMBER(f) uint32_t f = 0;
    KS_TWIN_SOFTMAX_FIELDS(KS_TWIN_SOFTMAX_MEMBER)
#undef KS_TWIN_SOFTMAX_MEMBER
};

constexpr bool SoftMaxTiling::LayoutMatchesKernelStruct()
{
    static_assert(sizeof(SoftMaxTiling) == sizeof(::SoftMaxTiling), "optiling::SoftMaxTiling and SoftMaxTiling differ");
#define KS_TWIN_SOFTMAX_SAME_OFFSET(f) \
    static_assert(offsetof(SoftMaxTiling, f) == offsetof(::SoftMaxTiling, f), "SoftMaxTiling field " #f " moved");
    KS_TWIN_SOFTMAX_FIELDS(KS_TWIN_SOFTMAX_SAME_OFFSET)
#undef KS_TWIN_SOFTMAX_SAME_OFFSET
    return true;
}
static_assert(SoftMaxTiling::LayoutMatchesKernelStruct(), "optiling::SoftMaxTiling has SoftMaxTiling's layout");
}  // namespace optiling


namespace AscendC {

// ---- SoftMax: srcShape {M, K} (K the 32-byte aligned last axis) --------------------------------------
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource)
{
    (void)isReuseSource;
    return ks_twin::norm::softmax_row_bytes(ks_twin::norm::rows_cols(srcShape).second, dataTypeSize);
}

inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape& srcShape, const uint32_t dataTypeSize, const bool isReuseSource)
{
    (void)isReuseSource;
    auto rc = ks_twin::norm::rows_cols(srcShape);
    return static_cast<uint32_t>(rc.first * ks_twin::norm::softmax_row_bytes(rc.second, dataTypeSize));
}

// Rows of one pass = localWorkSpaceSize / (one row's work space); splitM = 0 when not even one row fits.
// Two forms, as CANN has them: the host tiling-data class (optiling::SoftMaxTiling, a field of a
// TILING_DATA_FIELD_DEF_STRUCT) and the plain struct (AscendC::tiling::SoftMaxTiling).
inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, ::SoftMaxTiling& softmaxTiling)
{
    auto rc = ks_twin::norm::rows_cols(srcShape);
    softmaxTiling = ks_twin::norm::softmax_tiling(static_cast<uint32_t>(rc.first), static_cast<uint32_t>(rc.second),
                                                  dataTypeSize, localWorkSpaceSize);
}

inline void SoftMaxTilingFunc(const ge::Shape& srcShape, const uint32_t dataTypeSize,
                              const uint32_t localWorkSpaceSize, optiling::SoftMaxTiling& softmaxTiling)
{
    ::SoftMaxTiling t;
    SoftMaxTilingFunc(srcShape, dataTypeSize, localWorkSpaceSize, t);
#define KS_TWIN_SOFTMAX_SET(f) softmaxTiling.set_##f(t.f);
    KS_TWIN_SOFTMAX_FIELDS(KS_TWIN_SOFTMAX_SET)
#undef KS_TWIN_SOFTMAX_SET
}

// ---- LayerNorm (normalized output, mean and variance): srcShape {B, S, H[, originalH]} ----------------
inline void GetLayerNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const uint64_t b = static_cast<uint64_t>(srcShape.GetDim(0)), s = static_cast<uint64_t>(srcShape.GetDim(1));
    const uint64_t h = static_cast<uint64_t>(srcShape.GetDim(2));
    minValue = ks_twin::norm::layernorm_row_bytes(h, typeSize);
    maxValue = static_cast<uint32_t>(b * s * ks_twin::norm::layernorm_row_bytes(h, typeSize));
}

inline void GetLayerNormNDTilingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource, LayerNormTiling& tiling)
{
    (void)isReuseSource;
    LayerNormTiling t;
    t.bLength = static_cast<uint32_t>(srcShape.GetDim(0));
    t.sLength = static_cast<uint32_t>(srcShape.GetDim(1));
    t.hLength = static_cast<uint32_t>(srcShape.GetDim(2));
    t.originalHLength = srcShape.GetDimNum() > 3 ? static_cast<uint32_t>(srcShape.GetDim(3)) : t.hLength;
    t.inputXSize = t.bLength * t.sLength * t.hLength;
    t.meanVarSize = t.bLength * t.sLength;
    t.numberOfTmpBuf = typeSize == 2 ? 3 : 2;
    t.tmpBufSize = stackBufferSize;
    const uint32_t row = ks_twin::norm::layernorm_row_bytes(t.hLength, typeSize);
    const uint32_t rows = row == 0 ? 0 : stackBufferSize / row;
    t.oneTmpSize = rows * t.hLength;  // float elements of one temporary area
    t.firstTmpStartPos = 0, t.secondTmpStartPos = t.oneTmpSize, t.thirdTmpStartPos = 2 * t.oneTmpSize;
    tiling = t;
}

// The older, misspelled name CANN keeps as a deprecated alias.
inline void GetLayerNormNDTillingInfo(const ge::Shape& srcShape, const uint32_t stackBufferSize,
                                      const uint32_t typeSize, const bool isReuseSource, LayerNormTiling& tiling)
{
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, tiling);
}

// ---- RmsNorm: srcShape {B, S, H} (H 32-byte aligned), originSrcShape {B, S, originalH} -----------------
inline bool GetRmsNormMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                    uint32_t& minValue, const bool isBasicBlock = false)
{
    (void)isBasicBlock;
    if (srcShape.GetDimNum() != 3 || (typeSize != 2 && typeSize != 4)) return false;
    const uint64_t bs = static_cast<uint64_t>(srcShape.GetDim(0) * srcShape.GetDim(1));
    const uint64_t h = static_cast<uint64_t>(srcShape.GetDim(2));
    if (bs == 0 || h == 0 || h * typeSize % 32 != 0) return false;
    minValue = ks_twin::norm::rmsnorm_row_bytes(h, typeSize);
    maxValue = static_cast<uint32_t>(bs * ks_twin::norm::rmsnorm_row_bytes(h, typeSize));
    return true;
}

inline bool GetRmsNormTilingInfo(const ge::Shape& srcShape, const ge::Shape& originSrcShape,
                                 const uint32_t stackBufferByteSize, const uint32_t typeSize, RmsNormTiling& tiling,
                                 const bool isBasicBlock = false)
{
    uint32_t maxValue = 0, minValue = 0;
    if (!GetRmsNormMaxMinTmpSize(srcShape, typeSize, maxValue, minValue, isBasicBlock)) return false;
    if (stackBufferByteSize < minValue || originSrcShape.GetDimNum() != 3) return false;
    RmsNormTiling t;
    t.bLength = static_cast<uint32_t>(srcShape.GetDim(0));
    t.sLength = static_cast<uint32_t>(srcShape.GetDim(1));
    t.hLength = static_cast<uint32_t>(srcShape.GetDim(2));
    t.originalHLength = static_cast<uint32_t>(originSrcShape.GetDim(2));
    if (t.originalHLength == 0 || t.originalHLength > t.hLength) return false;
    t.reciprocalOfHLength = 1.0f / static_cast<float>(t.originalHLength);
    const uint32_t bs = t.bLength * t.sLength;
    uint32_t rows = stackBufferByteSize / minValue;
    if (rows > bs) rows = bs;
    t.mainBsLength = rows, t.mainBsLengthAlign = (rows + 7) / 8 * 8, t.mainBshLength = rows * t.hLength;
    t.loopRound = bs / rows;
    t.tailBsLength = bs % rows, t.tailBshLength = t.tailBsLength * t.hLength;
    t.inputTailPos = t.loopRound * t.mainBshLength;
    tiling = t;
    return true;
}

}  // namespace AscendC

#endif
