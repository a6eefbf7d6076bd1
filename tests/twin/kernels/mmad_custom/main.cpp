#include "data_utils.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void mmad_custom(GM_ADDR a, GM_ADDR b, GM_ADDR c);

int32_t main()
{
    constexpr uint32_t M = 32, N = 32, K = 64;
    size_t aBytes = M * K * sizeof(half), bBytes = K * N * sizeof(half), cBytes = M * N * sizeof(float), fileSize = 0;
    uint8_t* a = (uint8_t*)AscendC::GmAlloc(aBytes);
    uint8_t* b = (uint8_t*)AscendC::GmAlloc(bBytes);
    uint8_t* c = (uint8_t*)AscendC::GmAlloc(cBytes);
    if (!ReadFile("a.bin", fileSize, a, aBytes) || !ReadFile("b.bin", fileSize, b, bBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(mmad_custom, 1, a, b, c);
    WriteFile("c.bin", c, cBytes);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(c);
    return 0;
}
