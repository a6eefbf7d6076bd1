// Tiling data of layout_apis: the TopK tmp size and tiling the host computes for the kernel.
#ifndef LAYOUT_APIS_TILING_H
#define LAYOUT_APIS_TILING_H
// TopkTiling comes from kernel_operator.h, which kernels and tikicpulib.h include first
#include <cstdint>

struct TopkTilingData {
    uint32_t tmpBytes;
    TopkTiling topk;
};

#endif
