#ifndef MATMUL_ROWREDUCE_TILING_H
#define MATMUL_ROWREDUCE_TILING_H
#include "register/tilingdata_base.h"
#include "tiling/tiling_api.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(MatmulRowreduceCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, rowsPerVector);  // rows of C each AIV reduces (singleCoreM / 2)
TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(MatmulRowreduceCustom, MatmulRowreduceCustomTilingData)
}  // namespace optiling
#endif
