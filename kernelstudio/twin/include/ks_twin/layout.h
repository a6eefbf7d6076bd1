// Layout and selection APIs: Transpose (16x16 blocks of 2-byte elements), ArithProgression, and the
// high-level TopK (Normal and Small mode); its host tiling functions are in tiling/topk_tiling.h.
#ifndef KS_TWIN_LAYOUT_H
#define KS_TWIN_LAYOUT_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../kernel_tiling/kernel_tiling.h"
#include "pipe.h"
#include "shared.h"
#include "vector.h"

// ---- kernel side -----------------------------------------------------------------------------------
namespace AscendC {

// Transpose(dst, src): one 16 x 16 matrix of 2-byte elements, 512 contiguous bytes each:
// dst[j * 16 + i] = src[i * 16 + j]. dst and src must not overlap.
template <class T> inline void Transpose(const LocalTensor<T>& dst, const LocalTensor<T>& src)
{
    static_assert(sizeof(T) == 2, "Transpose(dst, src) moves 16x16 blocks of 2-byte elements (half, int16_t, "
                                  "uint16_t); transpose 4-byte data per element or with TransDataTo5HD");
    KS_TWIN_LOG("Transpose", "dtype=%s", ks_twin::type_name<T>());
    ks_twin::require_vector("Transpose");
    ks_twin::vec_operand(dst, 256, "Transpose", "dst");
    ks_twin::vec_operand(src, 256, "Transpose", "src");
    const T* s = src.GetPhyAddr();
    T* d = dst.GetPhyAddr();
    if (d < s + 256 && s < d + 256) {
        ks_twin::fail("bounds", "Transpose on %s: dst and src overlap (bytes %llu and %llu of %s); transpose into "
                      "a separate 512-byte block", ks_twin::core_name(),
                      static_cast<unsigned long long>(dst.ByteOffset()),
                      static_cast<unsigned long long>(src.ByteOffset()), ks_twin::position_name(src.GetPosition()));
    }
    for (uint32_t i = 0; i < 16; ++i) {
        for (uint32_t j = 0; j < 16; ++j) d[j * 16 + i] = s[i * 16 + j];
    }
}

// ArithProgression(dst, first, diff, count): dst[i] = first + i * diff.
template <class T>
inline void ArithProgression(const LocalTensor<T>& dst, const ks_twin::NoDeduce<T> firstValue,
                             const ks_twin::NoDeduce<T> diffValue, const int32_t count)
{
    KS_TWIN_LOG("ArithProgression", "dtype=%s count=%d", ks_twin::type_name<T>(), count);
    ks_twin::require_vector("ArithProgression");
    if (count < 0) ks_twin::fail("bounds", "ArithProgression(count=%d) on %s: count must be >= 0", count,
                                 ks_twin::core_name());
    ks_twin::vec_operand(dst, static_cast<uint32_t>(count), "ArithProgression", "dst");
    auto first = ks_twin::to_calc(firstValue), diff = ks_twin::to_calc(diffValue);
    for (int32_t i = 0; i < count; ++i) dst.GetPhyAddr()[i] = ks_twin::from_calc<T>(first + diff * i);
}

// Shape of TopK's source: `outter` rows of `inner` elements (a multiple of 32), the first `n` valid.
struct TopKInfo {
    int32_t outter = 1;
    int32_t inner = 32;
    int32_t n = 32;
};

}  // namespace AscendC

namespace ks_twin::topk {
using namespace AscendC;

template <class T, bool isInitIndex, bool isHasfinish, TopKMode topkMode>
inline void run(const LocalTensor<T>& dstValue, const LocalTensor<int32_t>& dstIndex, const LocalTensor<T>& src,
                const LocalTensor<int32_t>& srcIndex, const LocalTensor<bool>& finish, uint64_t tmpBytes,
                const int32_t k, const TopkTiling& tiling, const TopKInfo& info, const bool isLargest)
{
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value, "TopK sorts half or float");
    const char* api = "TopK";
    if (info.outter > 0 && k > 0 && info.inner > 0) {  // the operands: values and indices written, src read
        const uint64_t rows = static_cast<uint64_t>(info.outter), kv = (k * sizeof(T) + 31) / 32 * 32 / sizeof(T);
        KS_TWIN_OPERAND('w', dstValue, rows * kv * sizeof(T));
        KS_TWIN_OPERAND('w', dstIndex, rows * ((static_cast<uint64_t>(k) + 7) / 8 * 8) * sizeof(int32_t));
        KS_TWIN_OPERAND('r', src, rows * info.inner * sizeof(T));
    }
    KS_TWIN_LOG("TopK", "dtype=%s k=%d outter=%d inner=%d n=%d", ks_twin::type_name<T>(), k, info.outter, info.inner,
                info.n);
    ks_twin::require_vector(api);
    const char* core = ks_twin::core_name();
    if (info.outter < 1 || info.n < 1 || info.n > info.inner) {
        ks_twin::fail("bounds", "TopK on %s: TopKInfo{outter=%d, inner=%d, n=%d} needs outter >= 1 and 1 <= n <= "
                      "inner", core, info.outter, info.inner, info.n);
    }
    if (info.inner % 32 != 0) {
        ks_twin::fail("alignment", "TopK on %s: inner=%d is not a multiple of 32 elements; pad each row to %d and "
                      "fill the padding with the lowest value", core, info.inner, (info.inner + 31) / 32 * 32);
    }
    if (topkMode == TopKMode::TOPK_NSMALL && info.inner != 32) {
        ks_twin::fail("bounds", "TopK<TOPK_NSMALL> on %s: Small mode needs inner == 32, got %d; use TOPK_NORMAL",
                      core, info.inner);
    }
    if (k < 1 || k > info.n) {
        ks_twin::fail("bounds", "TopK(k=%d) on %s: k must be in 1..n, and each row holds n=%d valid elements; "
                      "lower k or widen the row", k, core, info.n);
    }
    if (tiling.innerDataSize != info.inner || tiling.allDataSize < info.inner * info.outter) {
        ks_twin::fail("tiling", "TopK on %s: the TopkTiling was made for inner=%d, %d elements, but TopKInfo says "
                      "inner=%d, outter=%d; call TopKTilingFunc with this shape", core, tiling.innerDataSize,
                      tiling.allDataSize, info.inner, info.outter);
    }
    if (tmpBytes < static_cast<uint64_t>(tiling.tmpLocalSize)) {
        ks_twin::fail("bounds", "TopK on %s: tmpLocal holds %llu bytes but the tiling needs %d "
                      "(GetTopKMaxMinTmpSize); give the tmp buffer more room", core,
                      static_cast<unsigned long long>(tmpBytes), tiling.tmpLocalSize);
    }
    const uint32_t kv = static_cast<uint32_t>((k * sizeof(T) + 31) / 32 * 32 / sizeof(T));
    const uint32_t ki = static_cast<uint32_t>((k + 7) / 8 * 8);
    const uint32_t rows = static_cast<uint32_t>(info.outter), inner = static_cast<uint32_t>(info.inner);
    ks_twin::vec_operand(src, rows * inner, api, "src");
    ks_twin::vec_operand(dstValue, (rows - 1) * kv + k, api, "dstValue");
    ks_twin::vec_operand(dstIndex, (rows - 1) * ki + k, api, "dstIndex");
    if (isInitIndex) ks_twin::vec_operand(srcIndex, inner, api, "srcIndex");
    if (isHasfinish) finish.check(0, rows, api);
    std::vector<uint32_t> order(static_cast<size_t>(info.n));
    for (uint32_t r = 0; r < rows; ++r) {
        const T* s = src.GetPhyAddr() + r * inner;
        for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
            auto va = ks_twin::to_calc(s[a]), vb = ks_twin::to_calc(s[b]);
            return isLargest ? va > vb : va < vb;
        });
        bool done = isHasfinish && finish.GetPhyAddr()[r];
        for (int32_t j = 0; j < k; ++j) {
            dstValue.GetPhyAddr()[r * kv + j] = s[order[j]];
            int32_t idx = isInitIndex ? srcIndex.GetPhyAddr()[order[j]] : static_cast<int32_t>(order[j]);
            dstIndex.GetPhyAddr()[r * ki + j] = done ? info.n : idx;
        }
    }
}

}  // namespace ks_twin::topk

namespace AscendC {

// TopK: per row, the k largest (isLargest) or smallest values, in order, ties to the lower position; the
// indices are srcIndexLocal[position] with isInitIndex, else the position. Rows of dstValueLocal are k
// rounded up to 32 bytes of T apart, rows of dstIndexLocal k rounded up to 8.
template <class T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          TopKMode topkMode = TopKMode::TOPK_NORMAL>
inline void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
                 const LocalTensor<T>& srcLocal, const LocalTensor<int32_t>& srcIndexLocal,
                 const LocalTensor<bool>& finishLocal, const LocalTensor<uint8_t>& tmpLocal, const int32_t k,
                 const TopkTiling& tilling, const TopKInfo& topKInfo, const bool isLargest = true,
                 ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    tmpLocal.check_aligned("TopK", "tmpLocal");
    ::ks_twin::topk::run<T, isInitIndex, isHasfinish, topkMode>(dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal,
                                                        finishLocal, tmpLocal.GetSize(), k, tilling, topKInfo,
                                                        isLargest);
}

// The overload without tmpLocal takes its scratch from the API's own stack buffer (always large enough).
template <class T, bool isInitIndex = false, bool isHasfinish = false, bool isReuseSrc = false,
          TopKMode topkMode = TopKMode::TOPK_NORMAL>
inline void TopK(const LocalTensor<T>& dstValueLocal, const LocalTensor<int32_t>& dstIndexLocal,
                 const LocalTensor<T>& srcLocal, const LocalTensor<int32_t>& srcIndexLocal,
                 const LocalTensor<bool>& finishLocal, const int32_t k, const TopkTiling& tilling,
                 const TopKInfo& topKInfo, const bool isLargest = true, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::topk::run<T, isInitIndex, isHasfinish, topkMode>(dstValueLocal, dstIndexLocal, srcLocal, srcIndexLocal,
                                                        finishLocal, UINT64_MAX, k, tilling, topKInfo, isLargest);
}

}  // namespace AscendC

#endif
