#include "data_utils.h"
#include "tikicpulib.h"
// op_kernel/twin_errors.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void copy_ok(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void ub_overflow(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void misaligned_copy(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void alloc_beyond_depth(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void deque_empty(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void free_slice(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void flag_never_set(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void endless_loop(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void gm_overrun(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void vector_on_cube(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void aiv_overflow_in_mix(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void flag_handshake(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void aic_waits_for_one_aiv(GM_ADDR x, GM_ADDR y);
extern "C" __global__ __aicore__ void sync_all_direct(GM_ADDR x, GM_ADDR y);

// sizes shared with the kernel (the same constants as in its file)
constexpr uint32_t LEN = 256;

int32_t main()
{
    size_t bytes = LEN * sizeof(half), fileSize = 0;
    int32_t mode = 0;
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bytes);
    uint8_t* y = (uint8_t*)AscendC::GmAlloc(bytes);
    if (!ReadFile("mode.bin", fileSize, &mode, sizeof(mode)) || !ReadFile("x.bin", fileSize, x, bytes)) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    switch (mode) {
        case 0: ICPU_RUN_KF(copy_ok, 1, x, y); break;
        case 1: ICPU_RUN_KF(ub_overflow, 1, x, y); break;
        case 2: ICPU_RUN_KF(misaligned_copy, 1, x, y); break;
        case 3: ICPU_RUN_KF(alloc_beyond_depth, 1, x, y); break;
        case 4: ICPU_RUN_KF(deque_empty, 1, x, y); break;
        case 5: ICPU_RUN_KF(free_slice, 1, x, y); break;
        case 6:
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(flag_never_set, 2, x, y);
            break;
        case 7: ICPU_RUN_KF(endless_loop, 1, x, y); break;
        case 8: ICPU_RUN_KF(gm_overrun, 1, x, y); break;
        case 9:
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(vector_on_cube, 1, x, y);
            break;
        case 10:
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(aiv_overflow_in_mix, 1, x, y);
            break;
        case 11: ICPU_RUN_KF(flag_never_set, 1, x, y); break;  // declared MIX, launched AIV
        case 12:
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(flag_handshake, 1, x, y);
            break;
        case 13:
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(aic_waits_for_one_aiv, 1, x, y);
            break;
        case 14:
            AscendC::SetKernelMode(KernelMode::MIX_MODE);
            ICPU_RUN_KF(sync_all_direct, 2, x, y);
            break;
        default: return 2;
    }
    WriteFile("y.bin", y, bytes);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    return 0;
}
