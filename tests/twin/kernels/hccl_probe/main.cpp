// Launches hccl_probe on every rank (run_ranks), one AIV block (two for mode 4), reading rank<r>/mode.bin and x.bin.
#include <cstdint>
#include "data_utils.h"
#include "tikicpulib.h"
#include "ks_twin/hccl.h"

extern "C" __global__ __aicore__ void hccl_probe(GM_ADDR mode, GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling);

static int RunRank(uint32_t rank)
{
    (void)rank;
    uint8_t* mode = static_cast<uint8_t*>(AscendC::GmAlloc(4));
    uint8_t* x = static_cast<uint8_t*>(AscendC::GmAlloc(32 * sizeof(float)));
    uint8_t* y = static_cast<uint8_t*>(AscendC::GmAlloc(32 * sizeof(float)));
    size_t size = 0;
    if (!ReadFile("mode.bin", size, mode, 4) || !ReadFile("x.bin", size, x, 32 * sizeof(float))) return 1;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(hccl_probe, *reinterpret_cast<int32_t*>(mode) == 4 ? 2 : 1, mode, x, y, nullptr, nullptr);
    if (!WriteFile("y.bin", y, 32 * sizeof(float))) return 1;
    AscendC::GmFree(mode);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
    return 0;
}

int32_t main() { return ks_twin::hccl::run_ranks(4, 4096, RunRank); }
