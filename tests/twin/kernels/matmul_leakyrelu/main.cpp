#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/matmul_leakyrelu_tiling.h"
// op_kernel/matmul_leakyrelu.cpp is its own translation unit: declare its kernels
extern "C" __global__ __aicore__ void matmul_leakyrelu(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling);

int32_t main()
{
    constexpr int32_t M = 128, N = 96, K = 64;
    constexpr uint32_t blockDim = 2;  // 2 AI Cores = 4 AIVs, each one singleCoreM x singleCoreN block of C
    size_t aBytes = M * K * sizeof(half), bBytes = K * N * sizeof(half), biasBytes = N * sizeof(float);
    size_t cBytes = M * N * sizeof(float), fileSize = 0;
    uint8_t* a = (uint8_t*)AscendC::GmAlloc(aBytes);
    uint8_t* b = (uint8_t*)AscendC::GmAlloc(bBytes);
    uint8_t* bias = (uint8_t*)AscendC::GmAlloc(biasBytes);
    uint8_t* c = (uint8_t*)AscendC::GmAlloc(cBytes);
    uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(16 * 1024);
    using Tiling = optiling::MatmulLeakyreluCustomTilingData;
    auto* tiling = (Tiling*)AscendC::GmAlloc(sizeof(Tiling));
    if (!ReadFile("a.bin", fileSize, a, aBytes) || !ReadFile("b.bin", fileSize, b, bBytes) ||
        !ReadFile("bias.bin", fileSize, bias, biasBytes)) {
        return 1;
    }
    tiling->set_alpha(0.1f);
    optiling::TCubeTiling& t = tiling->cubeTilingData;  // the host tiling-data class
    t.set_usedCoreNum(4);
    t.set_M(M);
    t.set_N(N);
    t.set_Ka(K);
    t.set_Kb(K);
    t.set_singleCoreM(M / 2);
    t.set_singleCoreN(N / 2);
    t.set_singleCoreK(K);
    t.set_baseM(32);
    t.set_baseN(16);
    t.set_baseK(32);
    t.set_depthA1(2);
    t.set_depthB1(2);
    t.set_isBias(1);

    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(matmul_leakyrelu, blockDim, a, b, bias, c, workspace, (uint8_t*)tiling);

    WriteFile("c.bin", c, cBytes);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(bias);
    AscendC::GmFree(c);
    AscendC::GmFree(workspace);
    AscendC::GmFree(tiling);
    return 0;
}
