// LayerNormGrad and LayerNormGradBeta host tiling (AscendC::GetLayerNormGradMaxMinTmpSize,
// GetLayerNormGradNDTilingInfo, GetLayerNormGradBetaMaxMinTmpSize, GetLayerNormGradBetaNDTilingInfo) and the
// structs the kernel reads (kernel_tiling/kernel_tiling.h): part of tiling/tiling_api.h on CANN. srcShape is
// {B, S, H[, originalH]}.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "tiling/norm_grad_tiling.h is a host header (LayerNormGrad's tiling functions): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
#include "../kernel_tiling/kernel_tiling.h"
#elif !defined(KS_TWIN_NORM_GRAD_TILING_H)
#define KS_TWIN_NORM_GRAD_TILING_H

#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"
#include "../ks_twin/shared.h"
#include "norm_tiling.h"

namespace optiling {
using ::LayerNormGradBetaTiling;
using ::LayerNormGradTiling;
}  // namespace optiling

namespace ks_twin::norm {
template <class Tiling> inline void grad_shape(const ge::Shape& s, uint32_t stackBufferSize, Tiling& t)
{
    t = Tiling{};
    t.stackBufferSize = stackBufferSize;
    t.bLength = static_cast<uint32_t>(s.GetDim(0));
    t.sLength = static_cast<uint32_t>(s.GetDim(1));
    t.hLength = static_cast<uint32_t>(s.GetDim(2));
    t.originalHLength = s.GetDimNum() > 3 ? static_cast<uint32_t>(s.GetDim(3)) : t.hLength;
}
}  // namespace ks_twin::norm

namespace AscendC {

inline void GetLayerNormGradMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize, const bool isReuseSource,
                                          uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const uint64_t bs = static_cast<uint64_t>(srcShape.GetDim(0)) * static_cast<uint64_t>(srcShape.GetDim(1));
    minValue = ks_twin::layernorm_grad_row_bytes(static_cast<uint64_t>(srcShape.GetDim(2)), typeSize);
    maxValue = static_cast<uint32_t>(bs * minValue);
}

inline void GetLayerNormGradNDTilingInfo(const ge::Shape srcShape, const uint32_t stackBufferSize,
                                         const uint32_t typeSize, const bool isReuseSource, LayerNormGradTiling& tiling)
{
    (void)typeSize, (void)isReuseSource;
    ks_twin::norm::grad_shape(srcShape, stackBufferSize, tiling);
}

inline void GetLayerNormGradBetaMaxMinTmpSize(const ge::Shape& srcShape, const uint32_t typeSize,
                                              const bool isReuseSource, uint32_t& maxValue, uint32_t& minValue)
{
    (void)isReuseSource;
    const uint64_t bs = static_cast<uint64_t>(srcShape.GetDim(0)) * static_cast<uint64_t>(srcShape.GetDim(1));
    minValue = ks_twin::layernorm_grad_beta_row_bytes(static_cast<uint64_t>(srcShape.GetDim(2)), typeSize);
    maxValue = static_cast<uint32_t>(bs * minValue);
}

inline void GetLayerNormGradBetaNDTilingInfo(const ge::Shape srcShape, const uint32_t stackBufferSize,
                                             const uint32_t typeSize, const bool isReuseSource,
                                             LayerNormGradBetaTiling& tiling)
{
    (void)typeSize, (void)isReuseSource;
    ks_twin::norm::grad_shape(srcShape, stackBufferSize, tiling);
    tiling.bsLength = tiling.bLength * tiling.sLength;
    tiling.bshLength = tiling.bsLength * tiling.hLength;
}

}  // namespace AscendC

#endif
