// Pad and Broadcast host tiling (AscendC::GetPadMaxMinTmpSize, PadTilingFunc, GetBroadCastMaxMinTmpSize) and
// the PadTiling struct the kernel reads (kernel_tiling/kernel_tiling.h): part of tiling/tiling_api.h on CANN.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "tiling/pad_tiling.h is a host header (Pad's and Broadcast's tiling functions): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
// A kernel unit reads its op_host/<op>_tiling.h for the struct a CANN build generates from it: of this
// header it gets only what that struct needs.
#include "../kernel_tiling/kernel_tiling.h"
#elif !defined(KS_TWIN_PAD_TILING_H)
#define KS_TWIN_PAD_TILING_H

#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"
#include "../ks_twin/shared.h"
#include "norm_tiling.h"
#include "platform/platform_ascendc.h"

namespace optiling {
using ::PadTiling;
}  // namespace optiling

namespace AscendC {

// srcShape {height, width}: the work space Pad needs (CANN's rule, ks_twin/shared.h).
inline void GetPadMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, uint32_t& maxValue,
                                uint32_t& minValue)
{
    const auto rc = ks_twin::norm::rows_cols(srcShape);
    minValue = ks_twin::pad_min_bytes(typeSize);
    maxValue = ks_twin::pad_max_bytes(rc.first, rc.second, typeSize);
}

// srcShape {height, width} as the tensor is laid out, oriSrcShape {height, valid width}.
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape, const uint32_t stackBufferSize,
                          const uint32_t typeSize, PadTiling& tiling)
{
    (void)typeSize;
    const auto rc = ks_twin::norm::rows_cols(srcShape), ori = ks_twin::norm::rows_cols(oriSrcShape);
    tiling = PadTiling{};
    tiling.srcHeight = static_cast<uint32_t>(rc.first);
    tiling.srcWidth = static_cast<uint32_t>(rc.second);
    tiling.srcOriWidth = static_cast<uint32_t>(ori.second);
    tiling.tmpBuffer2Offset = stackBufferSize;  // twin: the work space the tiling was made for, in bytes
}

// srcShape [rows, 1] or [1, cols] (or 1-D [1]) broadcast to dstShape of as many dims.
inline void GetBroadCastMaxMinTmpSize(const platform_ascendc::PlatformAscendC& ascendcPlatform, const ge::Shape& srcShape,
                                      const ge::Shape& dstShape, uint32_t typeSize, const bool isReuseSource,
                                      uint32_t& maxValue, uint32_t& minValue)
{
    (void)ascendcPlatform, (void)isReuseSource;
    const bool two = dstShape.GetDimNum() == 2;
    const uint64_t sr = two ? srcShape.GetDim(0) : 1, sc = two ? srcShape.GetDim(1) : srcShape.GetDim(0);
    const uint64_t dr = two ? dstShape.GetDim(0) : 1, dc = two ? dstShape.GetDim(1) : dstShape.GetDim(0);
    ks_twin::broadcast_tmp_bytes(sr, sc, dr, dc, typeSize, maxValue, minValue);
}

}  // namespace AscendC

#endif
