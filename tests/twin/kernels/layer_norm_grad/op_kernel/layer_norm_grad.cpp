#include "kernel_operator.h"
#include "lib/normalization/layernormgrad.h"
#include "lib/normalization/layernormgradbeta.h"

using namespace AscendC;

class KernelLayerNormGrad {
public:
    __aicore__ inline void Init(GM_ADDR dy, GM_ADDR x, GM_ADDR variance, GM_ADDR mean, GM_ADDR gamma, GM_ADDR pdX,
                                GM_ADDR resForGamma, GM_ADDR pdGamma, GM_ADDR pdBeta, uint32_t rows, uint32_t cols,
                                uint32_t tmpBytes)
    {
        this->rows = rows, this->cols = cols;
        dyGm.SetGlobalBuffer((__gm__ float*)dy, rows * cols);
        xGm.SetGlobalBuffer((__gm__ float*)x, rows * cols);
        varGm.SetGlobalBuffer((__gm__ float*)variance, rows);
        meanGm.SetGlobalBuffer((__gm__ float*)mean, rows);
        gammaGm.SetGlobalBuffer((__gm__ float*)gamma, cols);
        pdXGm.SetGlobalBuffer((__gm__ float*)pdX, rows * cols);
        resGm.SetGlobalBuffer((__gm__ float*)resForGamma, rows * cols);
        pdGammaGm.SetGlobalBuffer((__gm__ float*)pdGamma, cols);
        pdBetaGm.SetGlobalBuffer((__gm__ float*)pdBeta, cols);
        pipe.InitBuffer(inQueue, 1, (2 * rows * cols + 2 * rows + cols) * sizeof(float));
        pipe.InitBuffer(outQueue, 1, (2 * rows * cols + 2 * cols) * sizeof(float));
        pipe.InitBuffer(tmpBuf, tmpBytes);
    }
    __aicore__ inline void Process(float epsilon, LayerNormGradTiling& gradTiling, const LayerNormGradBetaTiling& betaTiling)
    {
        const uint32_t n = rows * cols;
        LocalTensor<float> in = inQueue.AllocTensor<float>();
        DataCopy(in, dyGm, n);
        DataCopy(in[n], xGm, n);
        DataCopy(in[2 * n], varGm, rows);
        DataCopy(in[2 * n + rows], meanGm, rows);
        DataCopy(in[2 * n + 2 * rows], gammaGm, cols);
        inQueue.EnQue(in);
        in = inQueue.DeQue<float>();
        LocalTensor<float> out = outQueue.AllocTensor<float>();
        LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
        LayerNormGrad<float>(out, out[n], in, in[n], in[2 * n], in[2 * n + rows], in[2 * n + 2 * rows], tmp, epsilon,
                             gradTiling);
        LayerNormGradBeta<float>(out[2 * n], out[2 * n + cols], out[n], in, tmp, betaTiling);
        outQueue.EnQue(out);
        inQueue.FreeTensor(in);
        out = outQueue.DeQue<float>();
        DataCopy(pdXGm, out, n);
        DataCopy(resGm, out[n], n);
        DataCopy(pdGammaGm, out[2 * n], cols);
        DataCopy(pdBetaGm, out[2 * n + cols], cols);
        outQueue.FreeTensor(out);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> tmpBuf;
    GlobalTensor<float> dyGm, xGm, varGm, meanGm, gammaGm, pdXGm, resGm, pdGammaGm, pdBetaGm;
    uint32_t rows = 0, cols = 0;
};

extern "C" __global__ __aicore__ void layer_norm_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR variance, GM_ADDR mean,
                                                      GM_ADDR gamma, GM_ADDR pdX, GM_ADDR resForGamma,
                                                      GM_ADDR pdGamma, GM_ADDR pdBeta, GM_ADDR workspace,
                                                      GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelLayerNormGrad op;
    op.Init(dy, x, variance, mean, gamma, pdX, resForGamma, pdGamma, pdBeta, tilingData.rows, tilingData.cols,
            tilingData.tmpBytes);
    op.Process(tilingData.epsilon, tilingData.gradTiling, tilingData.betaTiling);
}
