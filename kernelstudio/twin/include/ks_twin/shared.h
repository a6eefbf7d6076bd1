// What the host tiling functions and the kernel APIs of the twin both use: the twin's own sizing rules
// (its system workspace and the temporary space of SoftMax, LayerNorm, RmsNorm and TopK) and the TopK
// mode both take.
#ifndef KS_TWIN_SHARED_H
#define KS_TWIN_SHARED_H

#include <cstdint>

namespace AscendC {
enum class TopKMode { TOPK_NORMAL, TOPK_NSMALL };
}  // namespace AscendC

namespace ks_twin {

// The twin's system workspace for the high-level APIs, which GetUserWorkspace() skips on the kernel side
// and PlatformAscendC::GetLibApiWorkSpaceSize() reports. CANN's size depends on the SoC and CANN
// version; the twin's Matmul needs none, so this is its own choice.
constexpr uint32_t LIB_WORKSPACE_BYTES = 1024;

namespace norm {
// twin work space of one row: a float32 copy of it plus one 32-byte block each for its max and sum
inline uint32_t softmax_row_bytes(uint64_t k) { return static_cast<uint32_t>(k * 4 + 64); }
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
