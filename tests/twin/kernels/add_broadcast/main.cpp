// z[r, c] = x[r, c] + y[c] + s[r]: y ([1, cols]) is broadcast along rows, s ([rows, 1]) along columns.
#include "data_utils.h"
#include "tikicpulib.h"
#include "tiling/tiling_api.h"
#include "op_host/add_broadcast_tiling.h"

extern "C" __global__ __aicore__ void add_broadcast(GM_ADDR x, GM_ADDR y, GM_ADDR s, GM_ADDR z, GM_ADDR workspace,
                                                    GM_ADDR tiling);

int32_t main()
{
    constexpr uint32_t rows = 16, cols = 64;
    size_t xBytes = rows * cols * sizeof(half), yBytes = cols * sizeof(half), sBytes = rows * sizeof(half);
    size_t fileSize = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(yBytes);
    uint8_t* s = (uint8_t*)AscendC::GmAlloc(sBytes);
    uint8_t* z = (uint8_t*)AscendC::GmAlloc(xBytes);
    auto* tiling = (optiling::AddBroadcastTilingData*)AscendC::GmAlloc(sizeof(optiling::AddBroadcastTilingData));
    if (!ReadFile("x.bin", fileSize, x, xBytes) || !ReadFile("y.bin", fileSize, y, yBytes) ||
        !ReadFile("s.bin", fileSize, s, sBytes)) {
        return 1;
    }
    platform_ascendc::PlatformAscendC* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    uint32_t rowMax = 0, rowMin = 0, colMax = 0, colMin = 0;
    AscendC::GetBroadCastMaxMinTmpSize(*platform, ge::Shape({1, cols}), ge::Shape({rows, cols}), sizeof(half), false,
                                       rowMax, rowMin);
    AscendC::GetBroadCastMaxMinTmpSize(*platform, ge::Shape({rows, 1}), ge::Shape({rows, cols}), sizeof(half), false,
                                       colMax, colMin);
    tiling->set_rows(rows);
    tiling->set_cols(cols);
    tiling->set_tmpBytes(rowMin > colMin ? rowMin : colMin);

    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_broadcast, 1, x, y, s, z, nullptr, (uint8_t*)tiling);

    WriteFile("z.bin", z, xBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(s);
    AscendC::GmFree(z);
    AscendC::GmFree(tiling);
    return 0;
}
