// C = A @ B^T on the cube into the workspace, then per-row sum and max of C on the vector cores.
#define ASCENDC_CUBE_ONLY
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "../op_host/matmul_rowreduce_tiling.h"

using namespace AscendC;

constexpr uint16_t SYNC_AIC_AIV_FLAG = 3;
constexpr int32_t BUFFER_NUM = 2;

class KernelMatmulRowreduce {
public:
    using AType = MatmulType<TPosition::GM, CubeFormat::ND, half>;
    using BType = MatmulType<TPosition::GM, CubeFormat::ND, half, true>;
    using CType = MatmulType<TPosition::GM, CubeFormat::ND, float>;
    using BiasType = MatmulType<TPosition::GM, CubeFormat::ND, float>;

    __aicore__ inline KernelMatmulRowreduce() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR rowSum, GM_ADDR rowMax, GM_ADDR workspace,
                                const TCubeTiling& tiling, uint32_t rowsPerVector)
    {
        this->tiling = tiling;
        this->rowsPerVector = rowsPerVector;
        if ASCEND_IS_AIC {
            uint64_t rowStart = static_cast<uint64_t>(GetBlockIdx()) * tiling.singleCoreM;
            aGm.SetGlobalBuffer((__gm__ half*)a + rowStart * tiling.Ka, tiling.singleCoreM * tiling.Ka);
            bGm.SetGlobalBuffer((__gm__ half*)b, tiling.N * tiling.Kb);
            cGm.SetGlobalBuffer((__gm__ float*)workspace + rowStart * tiling.N, tiling.singleCoreM * tiling.N);
        }
        if ASCEND_IS_AIV {
            uint64_t rowStart = static_cast<uint64_t>(GetBlockIdx()) * rowsPerVector;
            cGm.SetGlobalBuffer((__gm__ float*)workspace + rowStart * tiling.N, rowsPerVector * tiling.N);
            sumGm.SetGlobalBuffer((__gm__ float*)rowSum + rowStart, rowsPerVector);
            maxGm.SetGlobalBuffer((__gm__ float*)rowMax + rowStart, rowsPerVector);
            pipe.InitBuffer(inQueueC, BUFFER_NUM, tiling.N * sizeof(float));
            pipe.InitBuffer(outQueueSum, 1, rowsPerVector * sizeof(float));
            pipe.InitBuffer(outQueueMax, 1, rowsPerVector * sizeof(float));
            pipe.InitBuffer(workBuf, 64 * sizeof(float));
            pipe.InitBuffer(statBuf, 8 * sizeof(float));
        }
    }
    __aicore__ inline void Process()
    {
        if ASCEND_IS_AIC {
            REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), matmulObj, &tiling);
            matmulObj.SetTensorA(aGm);
            matmulObj.SetTensorB(bGm, true);
            matmulObj.IterateAll(cGm);
            matmulObj.End();
            CrossCoreSetFlag<2, PIPE_FIX>(SYNC_AIC_AIV_FLAG);
        }
        if ASCEND_IS_AIV {
            CrossCoreWaitFlag(SYNC_AIC_AIV_FLAG);
            LocalTensor<float> sums = outQueueSum.AllocTensor<float>();
            LocalTensor<float> maxs = outQueueMax.AllocTensor<float>();
            for (uint32_t r = 0; r < rowsPerVector; r++) {
                CopyIn(r);
                Reduce(r, sums, maxs);
            }
            outQueueSum.EnQue(sums);
            outQueueMax.EnQue(maxs);
            CopyOut();
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t row)
    {
        LocalTensor<float> cLocal = inQueueC.AllocTensor<float>();
        DataCopy(cLocal, cGm[row * tiling.N], tiling.N);
        inQueueC.EnQue(cLocal);
    }
    __aicore__ inline void Reduce(uint32_t row, LocalTensor<float>& sums, LocalTensor<float>& maxs)
    {
        LocalTensor<float> cLocal = inQueueC.DeQue<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> stat = statBuf.Get<float>();
        ReduceSum(stat, cLocal, work, tiling.N);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        sums.SetValue(row, stat.GetValue(0));
        ReduceMax(stat, cLocal, work, tiling.N);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        maxs.SetValue(row, stat.GetValue(0));
        inQueueC.FreeTensor(cLocal);
    }
    __aicore__ inline void CopyOut()
    {
        LocalTensor<float> sums = outQueueSum.DeQue<float>();
        LocalTensor<float> maxs = outQueueMax.DeQue<float>();
        DataCopy(sumGm, sums, rowsPerVector);
        DataCopy(maxGm, maxs, rowsPerVector);
        outQueueSum.FreeTensor(sums);
        outQueueMax.FreeTensor(maxs);
    }

    TPipe pipe;
    Matmul<AType, BType, CType, BiasType> matmulObj;
    TCubeTiling tiling;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueC;
    TQue<QuePosition::VECOUT, 1> outQueueSum, outQueueMax;
    TBuf<QuePosition::VECCALC> workBuf, statBuf;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm, sumGm, maxGm;
    uint32_t rowsPerVector = 0;
};

extern "C" __global__ __aicore__ void matmul_rowreduce(GM_ADDR a, GM_ADDR b, GM_ADDR rowSum, GM_ADDR rowMax,
                                                       GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA(tilingData, tiling);
    KernelMatmulRowreduce op;
    op.Init(a, b, rowSum, rowMax, GetUserWorkspace(workspace), tilingData.cubeTilingData, tilingData.rowsPerVector);
    op.Process();
}
