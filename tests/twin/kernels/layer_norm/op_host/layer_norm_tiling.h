#ifndef LAYER_NORM_TILING_H
#define LAYER_NORM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(LayerNormCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, cols);         // elements per row
TILING_DATA_FIELD_DEF(uint32_t, colsAligned);  // row pitch in UB: cols rounded up to 32 bytes of half
TILING_DATA_FIELD_DEF(uint32_t, rowsPerCore);
TILING_DATA_FIELD_DEF(uint32_t, tileRows);     // rows per tile (divides rowsPerCore)
TILING_DATA_FIELD_DEF(float, invCols);
TILING_DATA_FIELD_DEF(float, eps);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(LayerNormCustom, LayerNormCustomTilingData)
}  // namespace optiling
#endif
