#ifndef ABS_PAD_TILING_H
#define ABS_PAD_TILING_H
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AbsPadTilingData)
TILING_DATA_FIELD_DEF(uint32_t, height);
TILING_DATA_FIELD_DEF(uint32_t, width);      // valid elements a row in GM
TILING_DATA_FIELD_DEF(uint32_t, tmpBytes);   // Pad's sharedTmpBuffer
TILING_DATA_FIELD_DEF_STRUCT(PadTiling, padTilingData);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AbsPad, AbsPadTilingData)
}  // namespace optiling
#endif
