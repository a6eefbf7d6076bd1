// Tiling data of layout_apis: the TopK tmp size and tiling the host computes for the kernel.
#ifndef LAYOUT_APIS_TILING_H
#define LAYOUT_APIS_TILING_H
#include <cstdint>

#include "tiling/tiling_api.h"  // TopkTiling

struct TopkTilingData {
    uint32_t tmpBytes;
    TopkTiling topk;
};

#endif
