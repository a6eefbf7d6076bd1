#ifndef ADD_PREFETCH_TILING_H
#define ADD_PREFETCH_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddPrefetchTilingData)
TILING_DATA_FIELD_DEF(uint32_t, blockLength);  // elements per core (a multiple of tileLength)
TILING_DATA_FIELD_DEF(uint32_t, tileLength);   // elements per tile (a multiple of 16)
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddPrefetch, AddPrefetchTilingData)
}  // namespace optiling
#endif
