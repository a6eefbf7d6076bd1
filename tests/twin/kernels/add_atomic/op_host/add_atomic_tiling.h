#ifndef ADD_ATOMIC_TILING_H
#define ADD_ATOMIC_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AddAtomicTilingData)
TILING_DATA_FIELD_DEF(uint32_t, length);  // elements of z; each core adds its row of x and y into all of z
TILING_DATA_FIELD_DEF(float, initValue);  // what InitGlobalMemory writes into w
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AddAtomic, AddAtomicTilingData)
}  // namespace optiling
#endif
