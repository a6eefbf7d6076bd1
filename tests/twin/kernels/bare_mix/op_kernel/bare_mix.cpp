// Y = LeakyReLU(A x B) as a MIX kernel on one AI Core: the AIC computes C = A x B with the cube basic API and
// writes it to GM, then raises cross-core flag 3 (mode 2: both AIVs wake); each AIV waits for it, applies
// LeakyReLU to its 16 rows of C and writes them to Y.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t M = 32, N = 32, K = 64, FRACTAL = 16 * 16, ROWS = M / 2, C_READY = 3;
constexpr float ALPHA = 0.1f;

class KernelBareMix {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR y)
    {
        aGm.SetGlobalBuffer((__gm__ half*)a, M * K);
        bGm.SetGlobalBuffer((__gm__ half*)b, K * N);
        cGm.SetGlobalBuffer((__gm__ float*)c, M * N);
        yGm.SetGlobalBuffer((__gm__ float*)y, M * N);
        if ASCEND_IS_AIV {
            pipe.InitBuffer(inQueueC, 1, ROWS * N * sizeof(float));
            pipe.InitBuffer(outQueueY, 1, ROWS * N * sizeof(float));
            return;
        }
        pipe.InitBuffer(inQueueA1, 1, M * K * sizeof(half));
        pipe.InitBuffer(inQueueB1, 1, K * N * sizeof(half));
        pipe.InitBuffer(inQueueA2, 1, M * K * sizeof(half));
        pipe.InitBuffer(inQueueB2, 1, K * N * sizeof(half));
        pipe.InitBuffer(outQueueCO1, 1, M * N * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        if ASCEND_IS_AIC {
            CopyIn();
            SplitA();
            SplitB();
            Compute();
            CopyOut();
            CrossCoreSetFlag<2, PIPE_FIX>(C_READY);  // C is in GM
        }
        if ASCEND_IS_AIV {
            CrossCoreWaitFlag(C_READY);
            VectorEpilogue();
        }
    }

private:
    __aicore__ inline void CopyIn()
    {
        LocalTensor<half> a1 = inQueueA1.AllocTensor<half>();
        LocalTensor<half> b1 = inQueueB1.AllocTensor<half>();
        DataCopy(a1, aGm, Nd2NzParams(1, M, K, 0, K, M, 1, 0));  // K / 16 column blocks of M rows
        DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));  // N / 16 column blocks of K rows
        inQueueA1.EnQue(a1);
        inQueueB1.EnQue(b1);
    }
    __aicore__ inline void SplitA()
    {
        LocalTensor<half> a1 = inQueueA1.DeQue<half>();
        LocalTensor<half> a2 = inQueueA2.AllocTensor<half>();
        LoadData2DParams params;
        params.repeatTimes = K / 16;  // one 16-row fractal row: its K / 16 fractals, M / 16 apart in L1
        params.srcStride = M / 16;
        params.ifTranspose = false;
        for (uint32_t i = 0; i < M / 16; ++i) LoadData(a2[i * K * 16], a1[i * FRACTAL], params);
        inQueueA2.EnQue(a2);
        inQueueA1.FreeTensor(a1);
    }
    __aicore__ inline void SplitB()
    {
        LocalTensor<half> b1 = inQueueB1.DeQue<half>();
        LocalTensor<half> b2 = inQueueB2.AllocTensor<half>();
        LoadData2DParams params;
        params.repeatTimes = N / 16;  // one 16-deep k block: its N / 16 fractals, K / 16 apart in L1, transposed
        params.srcStride = K / 16;
        params.ifTranspose = true;
        for (uint32_t i = 0; i < K / 16; ++i) LoadData(b2[i * N * 16], b1[i * FRACTAL], params);
        inQueueB2.EnQue(b2);
        inQueueB1.FreeTensor(b1);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<half> a2 = inQueueA2.DeQue<half>();
        LocalTensor<half> b2 = inQueueB2.DeQue<half>();
        LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
        Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, true));
        outQueueCO1.EnQue(c1);
        inQueueA2.FreeTensor(a2);
        inQueueB2.FreeTensor(b2);
    }
    __aicore__ inline void CopyOut()
    {
        LocalTensor<float> c1 = outQueueCO1.DeQue<float>();
        FixpipeParamsV220 params;
        params.nSize = N;
        params.mSize = M;
        params.srcStride = M;  // rows between the 16-column blocks of L0C
        params.dstStride = N;
        params.quantPre = QuantMode_t::NoQuant;
        Fixpipe<float, float, CFG_ROW_MAJOR>(cGm, c1, params);
        outQueueCO1.FreeTensor(c1);
    }

    __aicore__ inline void VectorEpilogue()
    {
        const uint32_t offset = GetSubBlockIdx() * ROWS * N;
        LocalTensor<float> c = inQueueC.AllocTensor<float>();
        DataCopy(c, cGm[offset], ROWS * N);
        inQueueC.EnQue(c);
        c = inQueueC.DeQue<float>();
        LocalTensor<float> y = outQueueY.AllocTensor<float>();
        LeakyRelu(y, c, ALPHA, ROWS * N);
        outQueueY.EnQue(y);
        inQueueC.FreeTensor(c);
        y = outQueueY.DeQue<float>();
        DataCopy(yGm[offset], y, ROWS * N);
        outQueueY.FreeTensor(y);
    }

    TPipe pipe;
    TQue<QuePosition::A1, 1> inQueueA1;
    TQue<QuePosition::B1, 1> inQueueB1;
    TQue<QuePosition::A2, 1> inQueueA2;
    TQue<QuePosition::B2, 1> inQueueB2;
    TQue<QuePosition::CO1, 1> outQueueCO1;
    TQue<QuePosition::VECIN, 1> inQueueC;
    TQue<QuePosition::VECOUT, 1> outQueueY;
    GlobalTensor<half> aGm, bGm;
    GlobalTensor<float> cGm, yGm;
};

extern "C" __global__ __aicore__ void bare_mix(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    KernelBareMix op;
    op.Init(a, b, c, y);
    op.Process();
}
