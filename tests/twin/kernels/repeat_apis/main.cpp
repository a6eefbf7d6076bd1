#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/repeat_apis.cpp is its own translation unit: declare its kernel
extern "C" __global__ __aicore__ void repeat_apis(GM_ADDR mode, GM_ADDR x, GM_ADDR sum, GM_ADDR mx, GM_ADDR vi,
                                                  GM_ADDR y, GM_ADDR z);

// sizes shared with the kernel (the same constants as in its file)
constexpr int32_t ROWS = 5;
constexpr int32_t COLS = 100;
constexpr int32_t STRIDE = 104;

int32_t main()
{
    size_t fileSize = 0;
    uint8_t* mode = (uint8_t*)AscendC::GmAlloc(sizeof(int32_t));
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(ROWS * STRIDE * sizeof(float));
    uint8_t* sum = (uint8_t*)AscendC::GmAlloc(8 * sizeof(float));
    uint8_t* mx = (uint8_t*)AscendC::GmAlloc(8 * sizeof(float));
    uint8_t* vi = (uint8_t*)AscendC::GmAlloc(8 * sizeof(float));
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(ROWS * STRIDE * sizeof(float));
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(ROWS * STRIDE * sizeof(float));
    if (!ReadFile("mode.bin", fileSize, mode, sizeof(int32_t)) ||
        !ReadFile("x.bin", fileSize, x, ROWS * STRIDE * sizeof(float))) {
        return 1;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(repeat_apis, 1, mode, x, sum, mx, vi, y, z);
    WriteFile("sum.bin", sum, 8 * sizeof(float));
    WriteFile("mx.bin", mx, 8 * sizeof(float));
    WriteFile("vi.bin", vi, 8 * sizeof(float));
    WriteFile("y.bin", y, ROWS * STRIDE * sizeof(float));
    WriteFile("z.bin", z, ROWS * STRIDE * sizeof(float));
    AscendC::GmFree(mode);
    AscendC::GmFree(x);
    AscendC::GmFree(sum);
    AscendC::GmFree(mx);
    AscendC::GmFree(vi);
    AscendC::GmFree(y);
    AscendC::GmFree(z);
    return 0;
}
