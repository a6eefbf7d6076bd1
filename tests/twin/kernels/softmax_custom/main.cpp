// SoftMax over [64, 32] half on 2 cores. The host makes the SoftMaxTiling for the whole tensor, as a
// sample's host does; each core calls SoftMax on its own 32 x 32 rows, so the API recomputes the tiling
// for that shape (as CANN's does) with the sharedTmpBuffer it gets: GetSoftMaxMinTmpSize of one core's rows.
#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/softmax_custom_tiling.h"

extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR adjusted, GM_ADDR workspace,
                                                     GM_ADDR tiling);

int32_t main()
{
    constexpr uint32_t rows = 64, cols = 32, blockDim = 2;
    size_t bytes = rows * cols * sizeof(half), fileSize = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* adjusted = (uint8_t*)AscendC::GmAlloc(blockDim * sizeof(int32_t));
    using Tiling = optiling::SoftmaxCustomTilingData;
    auto* tiling = (Tiling*)AscendC::GmAlloc(sizeof(Tiling));
    if (!ReadFile("x.bin", fileSize, x, bytes)) return 1;

    const uint32_t tmpBytes = AscendC::GetSoftMaxMinTmpSize(ge::Shape({rows / blockDim, cols}), sizeof(half), false);
    tiling->set_rowsPerCore(rows / blockDim);
    tiling->set_cols(cols);
    tiling->set_tmpBytes(tmpBytes);
    tiling->set_adjustFrom(0x4000);  // half 2.0
    AscendC::SoftMaxTilingFunc(ge::Shape({rows, cols}), sizeof(half), tmpBytes, tiling->softmaxTilingData);

    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(softmax_custom, blockDim, x, y, adjusted, nullptr, (uint8_t*)tiling);

    WriteFile("y.bin", y, bytes);
    WriteFile("adjusted.bin", adjusted, blockDim * sizeof(int32_t));
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(adjusted);
    AscendC::GmFree(tiling);
    return 0;
}
