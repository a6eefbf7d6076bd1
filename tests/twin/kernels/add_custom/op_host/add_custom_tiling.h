#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);  // elements in x, y and z
TILING_DATA_FIELD_DEF(uint32_t, blockLength);  // elements per core (the last core may get fewer)
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per tile (a multiple of 16)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddCustom, AddCustomTilingData)
}  // namespace optiling
#endif
