// TopK host tiling (AscendC::TopKTilingFunc, GetTopKMaxMinTmpSize) and the TopkTiling struct the kernel
// reads (kernel_tiling/kernel_tiling.h): part of tiling/tiling_api.h on CANN.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "tiling/topk_tiling.h is a host header (TopK's tiling functions): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
// A kernel unit reads its op_host/<op>_tiling.h for the struct a CANN build generates from it: of this
// header it gets only what that struct needs.
#include "../kernel_tiling/kernel_tiling.h"
#elif !defined(KS_TWIN_TOPK_TILING_H)
#define KS_TWIN_TOPK_TILING_H

#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"
#include "../ks_twin/shared.h"
#include "platform/platform_ascendc.h"

namespace AscendC {

inline bool GetTopKMaxMinTmpSize(const platform_ascendc::PlatformAscendC&, const int32_t inner, const int32_t outter,
                                 const bool isReuseSource, const bool isInitIndex, TopKMode mode, const bool isLargest,
                                 const uint32_t dataTypeSize, uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource, (void)isInitIndex, (void)mode, (void)isLargest;
    if (inner <= 0 || outter <= 0 || inner % 32 != 0 || (dataTypeSize != 2 && dataTypeSize != 4)) return false;
    maxValue = minValue = ks_twin::topk_tmp_bytes(inner, outter);
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
    tiling.tmpLocalSize = static_cast<int32_t>(ks_twin::topk_tmp_bytes(inner, outter));
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
