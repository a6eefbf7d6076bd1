// The host-side layout transforms of ks_twin/transdata.h, without a kernel: x [2, 20, 3, 5] half -> NC1HWC0
// (C0 = 16), w [20, 20, 3, 3] float -> FRACTAL_Z (C0 = 8). mode 1 gives the FRACTAL_Z a destination one byte short.
#include "data_utils.h"
#include "tikicpulib.h"
#include "ks_twin/transdata.h"

constexpr int64_t N = 2, C = 20, H = 3, W = 5, COUT = 20, KH = 3, KW = 3;

int32_t main()
{
    size_t fileSize = 0, xBytes = N * C * H * W * 2, wBytes = COUT * C * KH * KW * 4;
    int32_t mode = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(xBytes);
    uint8_t* w = (uint8_t*)AscendC::GmAlloc(wBytes);
    if (!ReadFile("mode.bin", fileSize, &mode, sizeof mode) || !ReadFile("x.bin", fileSize, x, xBytes) ||
        !ReadFile("w.bin", fileSize, w, wBytes)) {
        return 1;
    }
    size_t x5Bytes = ks_twin::host::nc1hwc0_bytes(N, C, H, W, 2);
    size_t wzBytes = ks_twin::host::fractal_z_bytes(COUT, C, KH, KW, 4);
    uint8_t* x5 = (uint8_t*)AscendC::GmAlloc(x5Bytes);
    uint8_t* wz = (uint8_t*)AscendC::GmAlloc(wzBytes);
    ks_twin::host::nchw_to_nc1hwc0(x, x5, x5Bytes, N, C, H, W, 2);
    ks_twin::host::weights_to_fractal_z(w, wz, mode == 1 ? wzBytes - 1 : wzBytes, COUT, C, KH, KW, 4);
    WriteFile("x5.bin", x5, x5Bytes);
    WriteFile("wz.bin", wz, wzBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(w);
    AscendC::GmFree(x5);
    AscendC::GmFree(wz);
    return 0;
}
