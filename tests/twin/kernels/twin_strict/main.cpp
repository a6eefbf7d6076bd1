#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/twin_strict.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void who_am_i(GM_ADDR ids);
extern "C" __global__ __aicore__ void declared_aiv_only(GM_ADDR ids);
extern "C" __global__ __aicore__ void unguarded_vector(GM_ADDR y);
extern "C" __global__ __aicore__ void unaligned_buffer(GM_ADDR x, GM_ADDR y, GM_ADDR ids);
extern "C" __global__ __aicore__ void unaligned_overrun(GM_ADDR x, GM_ADDR y, GM_ADDR ids);
extern "C" __global__ __aicore__ void tbuf_overrun(GM_ADDR x, GM_ADDR y, GM_ADDR ids);
extern "C" __global__ __aicore__ void logged_loop(GM_ADDR x, GM_ADDR y);

// sizes shared with the kernel (the same constants as in its file)
constexpr uint32_t LEN = 64;    // x and y: LEN half
constexpr uint32_t TILE = 16;   // logged_loop: tiles of 16 half (32 bytes)
constexpr uint32_t IDS = 6;     // who_am_i: 3 cores x 2 blocks

int32_t main()
{
    size_t bytes = LEN * sizeof(half), idBytes = IDS * sizeof(int32_t), fileSize = 0;
    int32_t mode = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* ids = (uint8_t*)AscendC::GmAlloc(idBytes);
    if (!ReadFile("mode.bin", fileSize, &mode, sizeof(mode)) || !ReadFile("x.bin", fileSize, x, bytes)) return 1;
    // modes 0..2 never call SetKernelMode: the launch runs in the default mode
    switch (mode) {
        case 0: ICPU_RUN_KF(who_am_i, 2, ids); break;
        case 1: ICPU_RUN_KF(declared_aiv_only, 1, ids); break;
        case 2: ICPU_RUN_KF(unguarded_vector, 1, y); break;
        case 3:
            AscendC::SetKernelMode(KernelMode::AIV_MODE);
            ICPU_RUN_KF(unaligned_buffer, 1, x, y, ids);
            break;
        case 4:
            AscendC::SetKernelMode(KernelMode::AIV_MODE);
            ICPU_RUN_KF(unaligned_overrun, 1, x, y, ids);
            break;
        case 5:
            AscendC::SetKernelMode(KernelMode::AIV_MODE);
            ICPU_RUN_KF(tbuf_overrun, 1, x, y, ids);
            break;
        case 6:
            AscendC::SetKernelMode(KernelMode::AIV_MODE);
            ICPU_RUN_KF(logged_loop, 2, x, y);
            break;
        case 7:  // the same kernel explicitly in MIX mode, as main.cpp for a MIX kernel writes it
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(who_am_i, 2, ids);
            break;
        default: return 2;
    }
    WriteFile("y.bin", y, bytes);
    WriteFile("ids.bin", ids, idBytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    AscendC::GmFree(ids);
    return 0;
}
