#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/layout_apis_tiling.h"
// op_kernel/layout_apis.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void layout_apis(GM_ADDR mode, GM_ADDR x, GM_ADDR h, GM_ADDR vals, GM_ADDR idx, GM_ADDR ht, GM_ADDR tiling);

// sizes shared with the kernel (the same constants as in its file)
constexpr int32_t ROWS = 4;
constexpr int32_t INNER = 64;
constexpr int32_t N = 60;
constexpr int32_t K = 5;
constexpr int32_t KPAD = 8;

int32_t main()
{
    size_t fileSize = 0;
    uint8_t* mode = (uint8_t*)AscendC::GmAlloc(sizeof(int32_t));
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(ROWS * INNER * sizeof(float));
    uint8_t* h = (uint8_t*)AscendC::GmAlloc(256 * sizeof(half));
    uint8_t* vals = (uint8_t*)AscendC::GmAlloc(ROWS * KPAD * sizeof(float));
    uint8_t* idx = (uint8_t*)AscendC::GmAlloc(ROWS * KPAD * sizeof(int32_t));
    uint8_t* ht = (uint8_t*)AscendC::GmAlloc(256 * sizeof(half));
    if (!ReadFile("mode.bin", fileSize, mode, sizeof(int32_t)) ||
        !ReadFile("x.bin", fileSize, x, ROWS * INNER * sizeof(float)) ||
        !ReadFile("h.bin", fileSize, h, 256 * sizeof(half))) {
        return 1;
    }
    // The host side: TopK tiling for rows of INNER elements, K of them kept.
    TopkTilingData tilingData;
    platform_ascendc::PlatformAscendC ascendcPlatform;
    uint32_t maxTmp = 0, minTmp = 0;
    AscendC::GetTopKMaxMinTmpSize(ascendcPlatform, INNER, ROWS, false, true, AscendC::TopKMode::TOPK_NORMAL, true,
                                  sizeof(float), maxTmp, minTmp);
    tilingData.tmpBytes = minTmp;
    AscendC::TopKTilingFunc(ascendcPlatform, INNER, ROWS, K, sizeof(float), true, AscendC::TopKMode::TOPK_NORMAL,
                            true, tilingData.topk);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(layout_apis, 1, mode, x, h, vals, idx, ht, (uint8_t*)&tilingData);
    WriteFile("vals.bin", vals, ROWS * KPAD * sizeof(float));
    WriteFile("idx.bin", idx, ROWS * KPAD * sizeof(int32_t));
    WriteFile("ht.bin", ht, 256 * sizeof(half));
    AscendC::GmFree(mode);
    AscendC::GmFree(x);
    AscendC::GmFree(h);
    AscendC::GmFree(vals);
    AscendC::GmFree(idx);
    AscendC::GmFree(ht);
    return 0;
}
