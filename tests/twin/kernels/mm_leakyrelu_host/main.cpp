// A matmul + LeakyReLU launched the way CANN's CPU-debug matmul samples launch theirs: main.cpp makes the
// TCubeTiling with the host Matmul tiling API on the platform of PlatformAscendCManager, saves it into a
// buffer and copies that into the launch's tiling argument with memcpy_s; the kernel reads the plain struct
// word by word from GM.
#include "data_utils.h"
#include "kernel_tiling/kernel_tiling.h"
#include "tiling/platform/platform_ascendc.h"
#include "tiling/tiling_api.h"
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void mm_leakyrelu_host(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                        GM_ADDR workspace, GM_ADDR tiling);

namespace {
constexpr int32_t M = 128, N = 96, K = 64;
constexpr uint32_t BLOCK_DIM = 2;  // AI Cores; the Matmul API runs from their 4 AIVs

bool GenerateTiling(uint8_t* buffer, size_t bufferSize)
{
    platform_ascendc::PlatformAscendC* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    if (platform == nullptr) return false;
    matmul_tiling::MultiCoreMatmulTiling cubeTiling(*platform);
    cubeTiling.SetDim(BLOCK_DIM * 2);  // MIX on a separated chip: SetDim counts the AIVs
    cubeTiling.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16);
    cubeTiling.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT16);
    cubeTiling.SetCType(matmul_tiling::TPosition::VECIN, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND,
                        matmul_tiling::DataType::DT_FLOAT);
    cubeTiling.SetShape(M, N, K);
    cubeTiling.SetOrgShape(M, N, K);
    cubeTiling.SetBias(true);
    cubeTiling.SetBufferSpace(-1, -1, -1);
    optiling::TCubeTiling tilingData;
    if (cubeTiling.GetTiling(tilingData) == -1) return false;
    tilingData.SaveToBuffer(buffer, bufferSize);
    return true;
}
}  // namespace

int32_t main()
{
    size_t aBytes = M * K * sizeof(half), bBytes = K * N * sizeof(half), biasBytes = N * sizeof(float);
    size_t cBytes = M * N * sizeof(float), fileSize = 0;
    uint8_t* a = (uint8_t*)AscendC::GmAlloc(aBytes);
    uint8_t* b = (uint8_t*)AscendC::GmAlloc(bBytes);
    uint8_t* bias = (uint8_t*)AscendC::GmAlloc(biasBytes);
    uint8_t* c = (uint8_t*)AscendC::GmAlloc(cBytes);
    uint8_t* workspace = (uint8_t*)AscendC::GmAlloc(16 * 1024);
    if (!ReadFile("a.bin", fileSize, a, aBytes) || !ReadFile("b.bin", fileSize, b, bBytes) ||
        !ReadFile("bias.bin", fileSize, bias, biasBytes)) {
        return 1;
    }
    uint8_t hostTiling[sizeof(TCubeTiling)] = {};
    if (!GenerateTiling(hostTiling, sizeof(hostTiling))) return 1;
    uint8_t* tiling = (uint8_t*)AscendC::GmAlloc(sizeof(TCubeTiling));
    if (memcpy_s(tiling, sizeof(TCubeTiling), hostTiling, sizeof(hostTiling)) != EOK) return 1;

    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(mm_leakyrelu_host, BLOCK_DIM, a, b, bias, c, workspace, tiling);

    WriteFile("c.bin", c, cBytes);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(bias);
    AscendC::GmFree(c);
    AscendC::GmFree(workspace);
    AscendC::GmFree(tiling);
    return 0;
}
