#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/layer_norm_tiling.h"
// op_kernel/layer_norm.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void layer_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);

int32_t main()
{
    constexpr uint32_t rows = 48, cols = 100, blockDim = 4;
    size_t xBytes = rows * cols * sizeof(half), pBytes = cols * sizeof(half), fileSize = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* gamma = (uint8_t*)AscendC::GmAlloc(pBytes);
    uint8_t* beta = (uint8_t*)AscendC::GmAlloc(pBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(xBytes);
    auto* tiling = (optiling::LayerNormCustomTilingData*)AscendC::GmAlloc(sizeof(optiling::LayerNormCustomTilingData));
    if (!ReadFile("x.bin", fileSize, x, xBytes) || !ReadFile("gamma.bin", fileSize, gamma, pBytes) ||
        !ReadFile("beta.bin", fileSize, beta, pBytes)) {
        return 1;
    }
    tiling->set_cols(cols);
    tiling->set_colsAligned((cols + 15) / 16 * 16);
    tiling->set_rowsPerCore(rows / blockDim);
    tiling->set_tileRows(4);
    tiling->set_invCols(1.0f / cols);
    tiling->set_eps(1e-5f);

    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(layer_norm, blockDim, x, gamma, beta, y, nullptr, (uint8_t*)tiling);

    WriteFile("y.bin", y, xBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(gamma);
    AscendC::GmFree(beta);
    AscendC::GmFree(y);
    AscendC::GmFree(tiling);
    return 0;
}
