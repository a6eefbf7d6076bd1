#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/add_custom_tiling.h"
// op_kernel/add_custom.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling);

int32_t main(int32_t argc, char* argv[])
{
    constexpr uint32_t totalLength = 10037;  // 8 cores x 1264, the last core 1189: tails at both levels
    constexpr uint32_t blockDim = 8;
    size_t bytes = totalLength * sizeof(half);
    size_t fileSize = 0;

    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(1024);
    auto* tiling = (optiling::AddCustomTilingData*)AscendC::GmAlloc(sizeof(optiling::AddCustomTilingData));
    if (!ReadFile("x.bin", fileSize, x, bytes) || !ReadFile("y.bin", fileSize, y, bytes)) return 1;

    uint32_t perCore = (totalLength + blockDim - 1) / blockDim;
    tiling->set_totalLength(totalLength);
    tiling->set_blockLength((perCore + 15) / 16 * 16);
    tiling->set_tileLength(512);

    ICPU_SET_TILING_KEY(1);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_custom, blockDim, x, y, z, workspace, (uint8_t*)tiling);

    WriteFile("z.bin", z, bytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    AscendC::GmFree(workspace);
    AscendC::GmFree(tiling);
    return 0;
}
