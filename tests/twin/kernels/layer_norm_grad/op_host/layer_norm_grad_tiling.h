#ifndef LAYER_NORM_GRAD_TILING_H
#define LAYER_NORM_GRAD_TILING_H
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LayerNormGradCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);       // B * S
TILING_DATA_FIELD_DEF(uint32_t, cols);       // H
TILING_DATA_FIELD_DEF(uint32_t, tmpBytes);   // one sharedTmpBuffer, enough for both APIs
TILING_DATA_FIELD_DEF(float, epsilon);
TILING_DATA_FIELD_DEF_STRUCT(LayerNormGradTiling, gradTiling);
TILING_DATA_FIELD_DEF_STRUCT(LayerNormGradBetaTiling, betaTiling);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LayerNormGradCustom, LayerNormGradCustomTilingData)
}  // namespace optiling
#endif
