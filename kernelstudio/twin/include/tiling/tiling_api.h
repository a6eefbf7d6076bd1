// TCubeTiling: the Matmul tiling struct as the kernel sees it, with CANN's fields in CANN's order.
//
// CANN fills it on the host (matmul_tiling::MultiCoreMatmulTiling::GetTiling into optiling::TCubeTiling)
// and the kernel copies the tiling blob into this struct word by word, so the layout is part of the
// contract: 50 int32_t fields, the order of CANN 8.x (kernel_tiling.h / adv_api matmul_tilingdata.h).
// Every field starts at 0, as on CANN. The twin's Matmul reads the fields marked "read"; the others are
// kept so that blobs and offsets match CANN, and are ignored here (batch matmul, layouts, MX types and
// UB/L1 sharing are not modelled). A 0 in stepM/stepN/stepKa/stepKb, depthA1/depthB1 or dbL0A/B/C is
// read as 1.
#ifndef KS_TWIN_TILING_API_H
#define KS_TWIN_TILING_API_H

#include <cstddef>
#include <cstdint>

struct TCubeTiling {
    int32_t usedCoreNum = 0;      // ignored: blockDim comes from ICPU_RUN_KF
    int32_t M = 0;                // read: rows of A and C (org shape)
    int32_t N = 0;                // read: columns of B and C (org shape)
    int32_t Ka = 0;               // read: K of A (org shape)
    int32_t Kb = 0;               // read: K of B (org shape; 0 or equal to Ka)
    int32_t singleCoreM = 0;      // read
    int32_t singleCoreN = 0;      // read
    int32_t singleCoreK = 0;      // read
    int32_t baseM = 0;            // read
    int32_t baseN = 0;            // read
    int32_t baseK = 0;            // read
    int32_t depthA1 = 0;          // read: L1 capacity and slab checks
    int32_t depthB1 = 0;          // read
    int32_t stepM = 0;            // read
    int32_t stepN = 0;            // read
    int32_t isBias = 0;           // read: must match SetBias
    int32_t transLength = 0;      // ignored
    int32_t iterateOrder = 0;     // read: 0 walks M first, 1 walks N first
    int32_t shareMode = 0;        // ignored
    int32_t shareL1Size = 0;      // ignored
    int32_t shareL0CSize = 0;     // ignored
    int32_t shareUbSize = 0;      // ignored
    int32_t batchM = 0;           // ignored (batch matmul)
    int32_t batchN = 0;           // ignored
    int32_t singleBatchM = 0;     // ignored
    int32_t singleBatchN = 0;     // ignored
    int32_t stepKa = 0;           // read
    int32_t stepKb = 0;           // read
    int32_t depthAL1CacheUB = 0;  // ignored
    int32_t depthBL1CacheUB = 0;  // ignored
    int32_t dbL0A = 0;            // read: L0A capacity check
    int32_t dbL0B = 0;            // read: L0B capacity check
    int32_t dbL0C = 0;            // read: L0C capacity check
    int32_t ALayoutInfoB = 0;     // ignored (IterateBatch layouts)
    int32_t ALayoutInfoS = 0;
    int32_t ALayoutInfoN = 0;
    int32_t ALayoutInfoG = 0;
    int32_t ALayoutInfoD = 0;
    int32_t BLayoutInfoB = 0;
    int32_t BLayoutInfoS = 0;
    int32_t BLayoutInfoN = 0;
    int32_t BLayoutInfoG = 0;
    int32_t BLayoutInfoD = 0;
    int32_t CLayoutInfoB = 0;
    int32_t CLayoutInfoS1 = 0;
    int32_t CLayoutInfoN = 0;
    int32_t CLayoutInfoG = 0;
    int32_t CLayoutInfoS2 = 0;
    int32_t BatchNum = 0;         // ignored
    int32_t mxTypePara = 0;       // ignored (MX matmul; `reserved` in CANN 8.1)
};

static_assert(sizeof(TCubeTiling) == 50 * sizeof(int32_t), "TCubeTiling: CANN's 50 int32 fields, no padding");
static_assert(offsetof(TCubeTiling, stepKa) == 26 * sizeof(int32_t), "TCubeTiling field order: stepKa is field 26");
static_assert(offsetof(TCubeTiling, dbL0C) == 32 * sizeof(int32_t), "TCubeTiling field order: dbL0C is field 32");

namespace optiling {
using ::TCubeTiling;
}

#endif
