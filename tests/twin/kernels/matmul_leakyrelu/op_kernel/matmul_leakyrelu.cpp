#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "../op_host/matmul_leakyrelu_tiling.h"

using namespace AscendC;
using namespace matmul;

__aicore__ inline uint32_t Ceiling(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

template <typename aType, typename bType, typename cType, typename biasType> class MatmulLeakyKernel {
public:
    __aicore__ inline MatmulLeakyKernel() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c, const TCubeTiling& tiling, float alpha,
                                TPipe* pipe)
    {
        this->tiling = tiling;
        this->alpha = alpha;
        aGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ aType*>(a), tiling.M * tiling.Ka);
        bGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ bType*>(b), tiling.Kb * tiling.N);
        cGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ cType*>(c), tiling.M * tiling.N);
        biasGlobal.SetGlobalBuffer(reinterpret_cast<__gm__ biasType*>(bias), tiling.N);

        int32_t offsetA = 0, offsetB = 0, offsetC = 0, offsetBias = 0;
        CalcOffset(GetBlockIdx(), tiling, offsetA, offsetB, offsetC, offsetBias);
        aGlobal = aGlobal[offsetA];
        bGlobal = bGlobal[offsetB];
        cGlobal = cGlobal[offsetC];
        biasGlobal = biasGlobal[offsetBias];
        pipe->InitBuffer(reluInQueue, 1, tiling.baseM * tiling.baseN * sizeof(cType));
    }
    __aicore__ inline void Process()
    {
        uint32_t computeRound = 0;
        matmulObj.SetTensorA(aGlobal);
        matmulObj.SetTensorB(bGlobal);
        matmulObj.SetBias(biasGlobal);
        while (matmulObj.template Iterate<true>()) {
            MatmulCompute();
            LeakyReluCompute();
            CopyOut(computeRound);
            computeRound++;
        }
        matmulObj.End();
    }

    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, aType>, MatmulType<TPosition::GM, CubeFormat::ND, bType>,
           MatmulType<TPosition::VECIN, CubeFormat::ND, cType>, MatmulType<TPosition::GM, CubeFormat::ND, biasType>>
        matmulObj;
    TCubeTiling tiling;

private:
    __aicore__ inline void MatmulCompute()
    {
        reluInLocal = reluInQueue.AllocTensor<cType>();
        matmulObj.template GetTensorC<true>(reluInLocal, false, true);
    }
    __aicore__ inline void LeakyReluCompute()
    {
        LeakyRelu(reluInLocal, reluInLocal, (cType)alpha, tiling.baseM * tiling.baseN);
        reluInQueue.EnQue(reluInLocal);
    }
    __aicore__ inline void CopyOut(uint32_t count)
    {
        reluInLocal = reluInQueue.DeQue<cType>();
        const uint32_t roundM = tiling.singleCoreM / tiling.baseM;
        uint32_t startOffset = (count % roundM * tiling.baseM * tiling.N + count / roundM * tiling.baseN);
        DataCopyParams copyParam = {static_cast<uint16_t>(tiling.baseM),
                                    static_cast<uint16_t>(tiling.baseN * sizeof(cType) / DEFAULT_C0_SIZE), 0,
                                    static_cast<uint16_t>((tiling.N - tiling.baseN) * sizeof(cType) / DEFAULT_C0_SIZE)};
        DataCopy(cGlobal[startOffset], reluInLocal, copyParam);
        reluInQueue.FreeTensor(reluInLocal);
    }
    __aicore__ inline void CalcOffset(int32_t blockIdx, const TCubeTiling& tiling, int32_t& offsetA, int32_t& offsetB,
                                      int32_t& offsetC, int32_t& offsetBias)
    {
        auto mSingleBlocks = Ceiling(tiling.M, tiling.singleCoreM);
        auto mCoreIndx = blockIdx % mSingleBlocks;
        auto nCoreIndx = blockIdx / mSingleBlocks;
        offsetA = mCoreIndx * tiling.Ka * tiling.singleCoreM;
        offsetB = nCoreIndx * tiling.singleCoreN;
        offsetC = mCoreIndx * tiling.N * tiling.singleCoreM + nCoreIndx * tiling.singleCoreN;
        offsetBias = nCoreIndx * tiling.singleCoreN;
    }

    GlobalTensor<aType> aGlobal;
    GlobalTensor<bType> bGlobal;
    GlobalTensor<cType> cGlobal;
    GlobalTensor<biasType> biasGlobal;
    TQue<QuePosition::VECIN, 1> reluInQueue;
    LocalTensor<cType> reluInLocal;
    float alpha = 0.0f;
};

extern "C" __global__ __aicore__ void matmul_leakyrelu(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c,
                                                       GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SetSysWorkspace(workspace);
    GET_TILING_DATA(tilingData, tiling);
    TPipe pipe;
    MatmulLeakyKernel<half, half, float, float> matmulLeakyKernel;
    matmulLeakyKernel.Init(a, b, bias, c, tilingData.cubeTilingData, tilingData.alpha, &pipe);
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), matmulLeakyKernel.matmulObj, &matmulLeakyKernel.tiling);
    matmulLeakyKernel.Process();
}
