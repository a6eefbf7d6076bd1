#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/vector_ops.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void vector_ops(GM_ADDR x, GM_ADDR y, GM_ADDR out);

// sizes shared with the kernel (the same constants as in its file)
constexpr uint32_t LEN = 256;
constexpr uint32_t ROWS = 28;

int32_t main()
{
    size_t inBytes = LEN * sizeof(float), outBytes = ROWS * LEN * sizeof(float), fileSize = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(inBytes);
    uint8_t* out = (uint8_t*)AscendC::GmAlloc(outBytes);
    if (!ReadFile("x.bin", fileSize, x, inBytes) || !ReadFile("y.bin", fileSize, y, inBytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(vector_ops, 1, x, y, out);
    WriteFile("out.bin", out, outBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(out);
    return 0;
}
