#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/sort_apis.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void sort_apis(GM_ADDR mode, GM_ADDR lists, GM_ADDR vals, GM_ADDR idx, GM_ADDR taken,
                                                GM_ADDR repacked, GM_ADDR tiling);

// sizes shared with the kernel (the same constants as in its file)
constexpr int32_t LEN = 32;    // structures per list
constexpr int32_t LISTS = 3;

int32_t main()
{
    size_t fileSize = 0;
    uint8_t* mode = (uint8_t*)AscendC::GmAlloc(sizeof(int32_t));
    uint8_t* lists = (uint8_t*)AscendC::GmAlloc(LISTS * LEN * 8);
    uint8_t* vals = (uint8_t*)AscendC::GmAlloc(LISTS * LEN * sizeof(float));
    uint8_t* idx = (uint8_t*)AscendC::GmAlloc(LISTS * LEN * sizeof(int32_t));
    uint8_t* taken = (uint8_t*)AscendC::GmAlloc(8 * sizeof(int32_t));
    uint8_t* repacked = (uint8_t*)AscendC::GmAlloc(LISTS * LEN * 8);
    uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(32);
    if (!ReadFile("mode.bin", fileSize, mode, sizeof(int32_t)) ||
        !ReadFile("lists.bin", fileSize, lists, LISTS * LEN * 8)) {
        return 1;
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(sort_apis, 1, mode, lists, vals, idx, taken, repacked, tiling);
    WriteFile("vals.bin", vals, LISTS * LEN * sizeof(float));
    WriteFile("idx.bin", idx, LISTS * LEN * sizeof(int32_t));
    WriteFile("taken.bin", taken, 8 * sizeof(int32_t));
    WriteFile("repacked.bin", repacked, LISTS * LEN * 8);
    AscendC::GmFree(mode);
    AscendC::GmFree(lists);
    AscendC::GmFree(vals);
    AscendC::GmFree(idx);
    AscendC::GmFree(taken);
    AscendC::GmFree(repacked);
    AscendC::GmFree(tiling);
    return 0;
}
