// What the host tiling functions and the kernel APIs of the twin both use: the twin's own sizing rules
// (its system workspace and the temporary space of SoftMax, LayerNorm, RmsNorm and TopK, SoftMax's tiling) and the TopK
// mode both take.
#ifndef KS_TWIN_SHARED_H
#define KS_TWIN_SHARED_H

#include <cstdint>

#include "../kernel_tiling/kernel_tiling.h"

namespace AscendC {
enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };
}  // namespace AscendC

namespace ks_twin {

// The twin's system workspace for the high-level APIs, which GetUserWorkspace() skips on the kernel side
// and PlatformAscendC::GetLibApiWorkSpaceSize() reports. CANN's size depends on the SoC and CANN
// version; the twin's Matmul needs none, so this is its own choice.
constexpr uint32_t LIB_WORKSPACE_BYTES = 1024;

namespace norm {
// Work space of one SoftMax row, CANN's GetSoftMaxMinTmpSize rule for the chips the twin models (read in
// CANN's open host tiling source, asc-devkit impl/adv_api/tiling/activation/softmax_tiling.cpp): one
// 32-byte block of T for the row's max and sum, the row and 64 more, all as float32. [2, 256] half: 1344 B.
inline uint32_t softmax_row_bytes(uint64_t k, uint32_t typeSize)
{
    const uint64_t perBlock = typeSize == 0 ? 0 : 32 / typeSize;
    return static_cast<uint32_t>((perBlock + k + 64) * 4);
}

// The SoftMaxTiling of srcM x srcK with `workBytes` of work space, as SoftMaxTilingFunc computes it (and the
// kernel API recomputes it when it is called on another shape than its tiling's): rows per pass = the rows
// whose work space fits, at most srcM, and a multiple of 8 when it is over 8 and below srcM (CANN then
// also shrinks a basic block's rows; the twin does not, as its kernel reads only the shape fields).
inline SoftMaxTiling softmax_tiling(uint32_t m, uint32_t k, uint32_t typeSize, uint32_t workBytes)
{
    const uint32_t block = typeSize == 0 ? 0 : 32 / typeSize, row = softmax_row_bytes(k, typeSize);
    SoftMaxTiling t;
    t.srcM = m, t.srcK = k, t.srcSize = m * k;
    t.outMaxM = m, t.outMaxK = block, t.outMaxSize = m * block;
    uint32_t split = row == 0 ? 0 : workBytes / row;
    if (split > m) split = m;
    if (split < m && split > 8) split = split / 8 * 8;
    t.splitM = split, t.splitK = k, t.splitSize = split * k;
    t.reduceM = split, t.reduceK = block, t.reduceSize = split * block;
    t.rangeM = split == 0 ? 0 : m / split;
    t.tailM = split == 0 ? 0 : m % split;
    t.tailSplitSize = t.tailM * k, t.tailReduceSize = t.tailM * block;
    return t;
}
// twin work space of one LayerNorm row: float32 copies of x and y (and of the half input)
inline uint32_t layernorm_row_bytes(uint64_t h, uint32_t typeSize)
{
    return static_cast<uint32_t>((typeSize == 2 ? 3 : 2) * h * 4);
}
// twin work space of one RmsNorm row: a float32 copy (two for half) plus one block for the row's scale
inline uint32_t rmsnorm_row_bytes(uint64_t h, uint32_t typeSize)
{
    return static_cast<uint32_t>((typeSize == 2 ? 2 : 1) * h * 4 + 32);
}
}  // namespace norm

// The twin's work space of one LayerNormGrad / LayerNormGradBeta row (CANN's sizing rule is not read here): as
// many float32 rows of H as the buffers CANN's tiling header counts (LayerNormGrad: 9 for half, 6 for float;
// LayerNormGradBeta: 4 for half, 2 for float). The minimum is one row, the maximum every row.
inline uint32_t layernorm_grad_row_bytes(uint64_t h, uint32_t typeSize)
{
    return static_cast<uint32_t>((typeSize == 2 ? 9 : 6) * h * 4);
}
inline uint32_t layernorm_grad_beta_row_bytes(uint64_t h, uint32_t typeSize)
{
    return static_cast<uint32_t>((typeSize == 2 ? 4 : 2) * h * 4);
}

// Pad's minimum and maximum work space, CANN's GetPadMaxMinTmpSize rule (asc-devkit
// impl/adv_api/tiling/pad/pad_tiling_impl.cpp): two buffers of 16 blocks (min), or of every element rounded up
// to 16 (max), each element widened to one 32-byte block.
inline uint32_t pad_min_bytes(uint32_t typeSize) { return typeSize == 0 ? 0 : 16u * (32u / typeSize) * 2u * typeSize; }
inline uint32_t pad_max_bytes(uint64_t height, uint64_t width, uint32_t typeSize)
{
    if (typeSize == 0 || height * width == 0) return 0;
    return static_cast<uint32_t>(((height * width - 1) / 16 + 1) * 16 * (32 / typeSize) * 2 * typeSize);
}

// Broadcast's minimum and maximum work space on the 910B family, CANN's GetBroadCastMaxMinTmpSize rule
// (asc-devkit impl/adv_api/tiling/pad/broadcast_tiling.cpp) for a [rows, 1] or [1, cols] source broadcast to
// [rows, cols] (dims 1 or 2), 2- or 4-byte elements: none when nothing is broadcast or the source is one
// element; one block along axis 0; along axis 1 a block per element for the brcb step (rounded to 8 rows at
// most) plus, for an unaligned row, a copy of the padded rows.
inline void broadcast_tmp_bytes(uint64_t srcRows, uint64_t srcCols, uint64_t rows, uint64_t cols, uint32_t typeSize,
                                uint32_t& maxValue, uint32_t& minValue)
{
    maxValue = minValue = 0;
    if (typeSize == 0 || srcRows * srcCols == rows * cols || srcRows * srcCols == 1) return;
    if (srcCols != 1 || cols == 1) {  // axis 0: [1, cols] -> [rows, cols]
        maxValue = minValue = 32;
        return;
    }
    const uint64_t per = 32 / typeSize, rows8 = (rows + 7) / 8 * 8, colsAligned = (cols + per - 1) / per * per;
    const uint64_t brcbMin = per * per * typeSize, brcbMax = rows8 * per * typeSize;
    if (cols % per == 0) {
        minValue = static_cast<uint32_t>(brcbMin), maxValue = static_cast<uint32_t>(brcbMax);
    } else {
        minValue = static_cast<uint32_t>(brcbMin + per * colsAligned * typeSize);
        maxValue = static_cast<uint32_t>(brcbMax + rows * colsAligned * typeSize);
    }
}

// Twin sizing of TopK's tmpLocal: two (value, index) proposal areas of 8 bytes per element (Sort32 output
// and the MrgSort ping-pong) plus one row of int32 indices, rounded up to 32 bytes. Min and max are equal.
inline uint32_t topk_tmp_bytes(int32_t inner, int32_t outter)
{
    uint64_t bytes = 2ull * 8ull * static_cast<uint64_t>(inner) * static_cast<uint64_t>(outter) +
                     4ull * static_cast<uint64_t>(inner);
    return static_cast<uint32_t>((bytes + 31) / 32 * 32);
}

}  // namespace ks_twin

#endif
