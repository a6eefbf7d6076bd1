// Each AIV takes one singleCoreM x singleCoreN block of C (the split the host tiling API chose), runs the
// Matmul API over it base block by base block, applies LeakyReLU and writes the block back.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using namespace AscendC;
using namespace matmul;

namespace {
constexpr float ALPHA = 0.125f;

__aicore__ inline void ReadTiling(TCubeTiling* tiling, GM_ADDR tilingGm)
{
    uint32_t* dst = reinterpret_cast<uint32_t*>(tiling);
    auto* src = reinterpret_cast<__gm__ uint32_t*>(tilingGm);
    for (uint32_t i = 0; i < sizeof(TCubeTiling) / sizeof(uint32_t); ++i) dst[i] = src[i];
}

class LeakyMatmul {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, TPipe* pipe)
    {
        const uint32_t mBlocks = (tiling.M + tiling.singleCoreM - 1) / tiling.singleCoreM;
        const uint32_t mIdx = GetBlockIdx() % mBlocks, nIdx = GetBlockIdx() / mBlocks;
        aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a) + mIdx * tiling.singleCoreM * tiling.Ka);
        bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b) + nIdx * tiling.singleCoreN);
        biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(bias) + nIdx * tiling.singleCoreN);
        cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c) + mIdx * tiling.singleCoreM * tiling.N +
                            nIdx * tiling.singleCoreN);
        pipe->InitBuffer(outQueue, 1, tiling.baseM * tiling.baseN * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        mm.SetTensorA(aGm);
        mm.SetTensorB(bGm);
        mm.SetBias(biasGm);
        const uint32_t roundM = tiling.singleCoreM / tiling.baseM;
        for (uint32_t round = 0; mm.template Iterate<true>(); ++round) {
            LocalTensor<float> out = outQueue.AllocTensor<float>();
            mm.template GetTensorC<true>(out, false, true);
            LeakyRelu(out, out, ALPHA, tiling.baseM * tiling.baseN);
            outQueue.EnQue(out);
            out = outQueue.DeQue<float>();
            const uint32_t offset = round % roundM * tiling.baseM * tiling.N + round / roundM * tiling.baseN;
            DataCopyParams params{static_cast<uint16_t>(tiling.baseM),
                                  static_cast<uint16_t>(tiling.baseN * sizeof(float) / 32), 0,
                                  static_cast<uint16_t>((tiling.N - tiling.baseN) * sizeof(float) / 32)};
            DataCopy(cGm[offset], out, params);
            outQueue.FreeTensor(out);
        }
        mm.End();
    }

    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, half>,
           MatmulType<TPosition::VECIN, CubeFormat::ND, float>, MatmulType<TPosition::GM, CubeFormat::ND, float>>
        mm;
    TCubeTiling tiling;

private:
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> biasGm, cGm;
    TQue<QuePosition::VECIN, 1> outQueue;
};
}  // namespace

extern "C" __global__ __aicore__ void mm_leakyrelu_host(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                        GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSysWorkspace(workspace);
    TPipe pipe;
    LeakyMatmul op;
    ReadTiling(&op.tiling, tiling);
    if (GetBlockIdx() >= op.tiling.usedCoreNum) return;
    op.Init(a, b, bias, c, &pipe);
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), op.mm, &op.tiling);
    op.Process();
}
