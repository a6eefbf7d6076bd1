#ifndef ADD_BROADCAST_TILING_H
#define ADD_BROADCAST_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddBroadcastTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rows);
TILING_DATA_FIELD_DEF(uint32_t, cols);
TILING_DATA_FIELD_DEF(uint32_t, tmpBytes);  // Broadcast's sharedTmpBuffer, enough for both broadcasts
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddBroadcast, AddBroadcastTilingData)
}  // namespace optiling
#endif
