#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/cast_modes.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void cast_modes(GM_ADDR x, GM_ADDR xb, GM_ADDR b16, GM_ADDR hRint, GM_ADDR hRound, GM_ADDR hFloor, GM_ADDR hCeil, GM_ADDR hTrunc, GM_ADDR iRound, GM_ADDR iFloor, GM_ADDR xbFloat);

// sizes shared with the kernel (the same constants as in its file)
constexpr uint32_t LEN = 256;

int32_t main()
{
    const char* inNames[] = {"x.bin", "xb.bin"};
    const size_t inBytes[] = {LEN * 4, LEN * 2};
    const char* outNames[] = {"b16.bin", "h_rint.bin", "h_round.bin", "h_floor.bin", "h_ceil.bin",
                              "h_trunc.bin", "i_round.bin", "i_floor.bin", "xb_float.bin"};
    const size_t outBytes[] = {LEN * 2, LEN * 2, LEN * 2, LEN * 2, LEN * 2, LEN * 2, LEN * 4, LEN * 4, LEN * 4};
    uint8_t* in[2];
    uint8_t* out[9];
    size_t fileSize = 0;
    for (int i = 0; i < 2; i++) {
        in[i] = (uint8_t*)AscendC::GmAlloc(inBytes[i]);
        if (!ReadFile(inNames[i], fileSize, in[i], inBytes[i])) return 1;
    }
    for (int i = 0; i < 9; i++) out[i] = (uint8_t*)AscendC::GmAlloc(outBytes[i]);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(cast_modes, 1, in[0], in[1], out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8]);
    for (int i = 0; i < 9; i++) {
        WriteFile(outNames[i], out[i], outBytes[i]);
        AscendC::GmFree(out[i]);
    }
    AscendC::GmFree(in[0]);
    AscendC::GmFree(in[1]);
    return 0;
}
