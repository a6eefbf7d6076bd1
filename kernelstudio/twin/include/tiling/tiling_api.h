// TCubeTiling: the Matmul tiling struct as the kernel sees it (a plain struct of int32_t fields).
#ifndef KS_TWIN_TILING_API_H
#define KS_TWIN_TILING_API_H

#include <cstdint>

struct TCubeTiling {
    int32_t usedCoreNum = 0;
    int32_t M = 0;
    int32_t N = 0;
    int32_t Ka = 0;
    int32_t Kb = 0;
    int32_t singleCoreM = 0;
    int32_t singleCoreN = 0;
    int32_t singleCoreK = 0;
    int32_t baseM = 0;
    int32_t baseN = 0;
    int32_t baseK = 0;
    int32_t depthA1 = 1;
    int32_t depthB1 = 1;
    int32_t stepM = 1;
    int32_t stepN = 1;
    int32_t isBias = 0;
    int32_t transLength = 0;
    int32_t iterateOrder = 0;  // 0: M first, 1: N first
    int32_t shareMode = 0;
    int32_t shareL1Size = 0;
    int32_t shareL0CSize = 0;
    int32_t shareUbSize = 0;
    int32_t stepKa = 1;
    int32_t stepKb = 1;
    int32_t dbL0A = 2;
    int32_t dbL0B = 2;
    int32_t dbL0C = 1;
};

namespace optiling {
using ::TCubeTiling;
}

#endif
