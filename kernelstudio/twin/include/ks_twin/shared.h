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
