// TopK host tiling (AscendC::TopKTilingFunc, GetTopKMaxMinTmpSize) and the TopkTiling struct the kernel
// reads: part of tiling/tiling_api.h on CANN; kernel_operator.h brings in the struct and the mode enum.
#ifndef KS_TWIN_TOPK_TILING_H
#define KS_TWIN_TOPK_TILING_H

#include <cstdint>

#include "platform/platform_ascendc.h"

// The documented TopkTiling fields (a global struct on the kernel side, optiling:: on the host); the twin
// fills and reads the size fields only.
struct TopkTiling {
    int32_t tmpLocalSize = 0;   // bytes of tmpLocal the kernel call needs
    int32_t allDataSize = 0;    // outter * inner
    int32_t innerDataSize = 0;  // inner
    uint32_t sortRepeat = 0;    // inner / 32 (Sort32 repeats per row)
    int32_t mrgSortRepeat = 0;
    int32_t kAlignFourBytes = 0;  // k rounded up to 32 bytes of 4-byte elements
    int32_t kAlignTwoBytes = 0;   // k rounded up to 32 bytes of 2-byte elements
    int32_t maskOffset = 0;
    int32_t maskVreducev2FourBytes = 0;
    int32_t maskVreducev2TwoBytes = 0;
    int32_t mrgSortSrc1offset = 0;
    int32_t mrgSortSrc2offset = 0;
    int32_t mrgSortSrc3offset = 0;
    int32_t mrgSortTwoQueueSrc1Offset = 0;
    int32_t mrgFourQueueTailPara1 = 0;
    int32_t mrgFourQueueTailPara2 = 0;
    int32_t srcIndexOffset = 0;
    int32_t topkMrgSrc1MaskSizeOffset = 0;
    int32_t topkNSmallSrcIndexOffset = 0;
    uint32_t vreduceValMask0 = 0;
    uint32_t vreduceValMask1 = 0;
    uint32_t vreduceIdxMask0 = 0;
    uint32_t vreduceIdxMask1 = 0;
};

namespace AscendC {

enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };

// Twin sizing of tmpLocal: two (value, index) proposal areas of 8 bytes per element (Sort32 output and
// the MrgSort ping-pong) plus one row of int32 indices, rounded up to 32 bytes. Min and max are equal.
inline uint32_t ks_topk_tmp_bytes(int32_t inner, int32_t outter)
{
    uint64_t bytes = 2ull * 8ull * static_cast<uint64_t>(inner) * static_cast<uint64_t>(outter) +
                     4ull * static_cast<uint64_t>(inner);
    return static_cast<uint32_t>((bytes + 31) / 32 * 32);
}

inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const int32_t inner, const int32_t outter,
                                 const bool isReuseSource, const bool isInitIndex, TopKMode mode, const bool isLargest,
                                 const uint32_t dataTypeSize, uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource, (void)isInitIndex, (void)mode, (void)isLargest;
    if (inner <= 0 || outter <= 0 || inner % 32 != 0 || (dataTypeSize != 2 && dataTypeSize != 4)) return false;
    maxValue = minValue = ks_topk_tmp_bytes(inner, outter);
    return true;
}

inline bool TopKTilingFunc(const platform_ascendc::PlatformAscendC&, const int32_t inner, const int32_t outter,
                           const int32_t k, const uint32_t dataTypeSize, const bool isInitIndex, TopKMode mode,
                           const bool isLargest, TopkTiling& tiling)
{
    (void)isInitIndex, (void)isLargest;
    if (inner <= 0 || outter <= 0 || inner % 32 != 0 || k < 1 || k > inner) return false;
    if (dataTypeSize != 2 && dataTypeSize != 4) return false;
    if (mode == TopKMode::TOPK_NSMALL && inner != 32) return false;
    tiling = TopkTiling();
    tiling.tmpLocalSize = static_cast<int32_t>(ks_topk_tmp_bytes(inner, outter));
    tiling.allDataSize = inner * outter;
    tiling.innerDataSize = inner;
    tiling.sortRepeat = static_cast<uint32_t>(inner / 32);
    tiling.kAlignFourBytes = (k + 7) / 8 * 8;
    tiling.kAlignTwoBytes = (k + 15) / 16 * 16;
    return true;
}

}  // namespace AscendC

namespace optiling {
using ::TopkTiling;
}  // namespace optiling

#endif
