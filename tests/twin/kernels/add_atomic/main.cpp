#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/add_atomic_tiling.h"

extern "C" __global__ __aicore__ void add_atomic(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w, GM_ADDR workspace,
                                                 GM_ADDR tiling);

int32_t main()
{
    constexpr uint32_t blockDim = 4, length = 2048;
    size_t inBytes = blockDim * length * sizeof(float), outBytes = length * sizeof(float), fileSize = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(outBytes);
    uint8_t* w = (uint8_t*)AscendC::GmAlloc(outBytes);
    uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(1024);
    auto* tiling = (optiling::AddAtomicTilingData*)AscendC::GmAlloc(sizeof(optiling::AddAtomicTilingData));
    if (!ReadFile("x.bin", fileSize, x, inBytes) || !ReadFile("y.bin", fileSize, y, inBytes)) return 1;
    if (memset_s(z, outBytes, 0, outBytes) != EOK) return 1;  // the cores accumulate into zeros
    tiling->set_length(length);
    tiling->set_initValue(1.0f);

    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_atomic, blockDim, x, y, z, w, workspace, (uint8_t*)tiling);

    WriteFile("z.bin", z, outBytes);
    WriteFile("w.bin", w, outBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    AscendC::GmFree(w);
    AscendC::GmFree(workspace);
    AscendC::GmFree(tiling);
    return 0;
}
