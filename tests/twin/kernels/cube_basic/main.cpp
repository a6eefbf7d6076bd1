#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/cube_basic.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void cube_tile(GM_ADDR mode, GM_ADDR x, GM_ADDR w, GM_ADDR y);

// sizes shared with the kernel (the same constants as in its file)
constexpr int32_t CIN = 32, H = 6, W = 6, KH = 3, KW = 3, COUT = 16;
constexpr int32_t K = CIN * KH * KW, PIX = H * W;

int32_t main()
{
    size_t xBytes = CIN * PIX * sizeof(half), wBytes = COUT * K * sizeof(half), yBytes = COUT * PIX * sizeof(half);
    size_t fileSize = 0;
    uint8_t* mode = (uint8_t*)AscendC::GmAlloc(sizeof(int32_t));
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* w = (uint8_t*)AscendC::GmAlloc(wBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(yBytes);
    if (!ReadFile("mode.bin", fileSize, mode, sizeof(int32_t)) || !ReadFile("x.bin", fileSize, x, xBytes) ||
        !ReadFile("w.bin", fileSize, w, wBytes)) {
        return 1;
    }
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(cube_tile, 1, mode, x, w, y);
    WriteFile("y.bin", y, yBytes);
    AscendC::GmFree(mode);
    AscendC::GmFree(x);
    AscendC::GmFree(w);
    AscendC::GmFree(y);
    return 0;
}
