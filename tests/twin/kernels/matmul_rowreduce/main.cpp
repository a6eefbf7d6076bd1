#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/matmul_rowreduce_tiling.h"
// op_kernel/matmul_rowreduce.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void matmul_rowreduce(GM_ADDR a, GM_ADDR b, GM_ADDR rowSum, GM_ADDR rowMax, GM_ADDR workspace, GM_ADDR tiling);

int32_t main()
{
    constexpr int32_t M = 96, N = 80, K = 64;
    constexpr uint32_t blockDim = 2;  // each AI Core: its AIC computes 48 rows of C, each AIV reduces 24
    size_t aBytes = M * K * sizeof(half), bBytes = N * K * sizeof(half), outBytes = M * sizeof(float);
    size_t fileSize = 0;
    uint8_t* a = (uint8_t*)AscendC::GmAlloc(aBytes);
    uint8_t* b = (uint8_t*)AscendC::GmAlloc(bBytes);
    uint8_t* rowSum = (uint8_t*)AscendC::GmAlloc(outBytes);
    uint8_t* rowMax = (uint8_t*)AscendC::GmAlloc(outBytes);
    // the system part (GetLibApiWorkSpaceSize) comes first; the kernel skips it with GetUserWorkspace
    uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(platform_ascendc::PlatformAscendC().GetLibApiWorkSpaceSize() + KS_WORKSPACE_BYTES);
    using Tiling = optiling::MatmulRowreduceCustomTilingData;
    auto* tiling = (Tiling*)AscendC::GmAlloc(sizeof(Tiling));
    if (!ReadFile("a.bin", fileSize, a, aBytes) || !ReadFile("b.bin", fileSize, b, bBytes)) return 1;
    tiling->set_rowsPerVector(M / blockDim / 2);
    optiling::TCubeTiling& t = tiling->cubeTilingData;  // the host tiling-data class
    t.set_usedCoreNum(blockDim);
    t.set_M(M);
    t.set_N(N);
    t.set_Ka(K);
    t.set_Kb(K);
    t.set_singleCoreM(M / blockDim);
    t.set_singleCoreN(N);
    t.set_singleCoreK(K);
    t.set_baseM(32);  // 48 rows -> tiles of 32 and a 16-row tail
    t.set_baseN(48);  // 80 cols -> tiles of 48 and a 32-col tail
    t.set_baseK(64);
    t.set_isBias(0);

    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(matmul_rowreduce, blockDim, a, b, rowSum, rowMax, workspace, (uint8_t*)tiling);

    WriteFile("row_sum.bin", rowSum, outBytes);
    WriteFile("row_max.bin", rowMax, outBytes);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(rowSum);
    AscendC::GmFree(rowMax);
    AscendC::GmFree(workspace);
    AscendC::GmFree(tiling);
    return 0;
}
