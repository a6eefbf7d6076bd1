// |x| of a [16, 15] half tensor, each row padded to 16 with zeros: Pad to whole 32-byte rows, then Abs.
#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/abs_pad_tiling.h"

extern "C" __global__ __aicore__ void abs_pad(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);

int32_t main()
{
    constexpr uint32_t height = 16, width = 15, paddedWidth = 16;
    size_t xBytes = height * width * sizeof(half), yBytes = height * paddedWidth * sizeof(half), fileSize = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(yBytes);
    auto* tiling = (optiling::AbsPadTilingData*)AscendC::GmAlloc(sizeof(optiling::AbsPadTilingData));
    if (!ReadFile("x.bin", fileSize, x, xBytes)) return 1;

    const ge::Shape shape({height, width});
    uint32_t maxTmp = 0, minTmp = 0;
    AscendC::GetPadMaxMinTmpSize(shape, sizeof(half), maxTmp, minTmp);
    tiling->set_height(height);
    tiling->set_width(width);
    tiling->set_tmpBytes(minTmp);
    AscendC::PadTilingFunc(shape, shape, minTmp, sizeof(half), tiling->padTilingData);

    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(abs_pad, 1, x, y, nullptr, (uint8_t*)tiling);

    WriteFile("y.bin", y, yBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(tiling);
    return 0;
}
