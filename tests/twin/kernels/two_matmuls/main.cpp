// Two kernels in two translation units with the same Matmul types, one built with ASCENDC_CUBE_ONLY and
// one without, run one after the other: C1 = C2 = A x B.
#include "data_utils.h"
#include "tikicpulib.h"
#include "tiling/tiling_api.h"

extern "C" __global__ __aicore__ void mm_cube(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling);
extern "C" __global__ __aicore__ void mm_mix(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling);

constexpr int32_t M = 32, N = 48, K = 64;

int32_t main()
{
    size_t fileSize = 0;
    uint8_t* a = (uint8_t*)AscendC::GmAlloc(M * K * sizeof(half));
    uint8_t* b = (uint8_t*)AscendC::GmAlloc(K * N * sizeof(half));
    uint8_t* c1 = (uint8_t*)AscendC::GmAlloc(M * N * sizeof(float));
    uint8_t* c2 = (uint8_t*)AscendC::GmAlloc(M * N * sizeof(float));
    uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(1024);
    if (!ReadFile("a.bin", fileSize, a, M * K * sizeof(half)) || !ReadFile("b.bin", fileSize, b, K * N * sizeof(half))) {
        return 1;
    }
    TCubeTiling* t = (TCubeTiling*)AscendC::GmAlloc(sizeof(TCubeTiling));
    t->usedCoreNum = 1;
    t->M = M;
    t->N = N;
    t->Ka = K;
    t->Kb = K;
    t->singleCoreM = M;
    t->singleCoreN = N;
    t->singleCoreK = K;
    t->baseM = 32;
    t->baseN = 16;
    t->baseK = 32;

    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(mm_cube, 1, a, b, c1, workspace, (uint8_t*)t);
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(mm_mix, 1, a, b, c2, workspace, (uint8_t*)t);

    WriteFile("c1.bin", c1, M * N * sizeof(float));
    WriteFile("c2.bin", c2, M * N * sizeof(float));
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(c1);
    AscendC::GmFree(c2);
    AscendC::GmFree(workspace);
    AscendC::GmFree(t);
    return 0;
}
