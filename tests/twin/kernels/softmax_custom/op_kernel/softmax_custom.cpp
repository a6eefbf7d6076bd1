// Per core: copy its rows in, SoftMax them, set every row whose max is `adjustFrom` to 0 with
// AdjustSoftMaxRes, copy the rows out and record whether any row was adjusted.
#include "kernel_operator.h"
#include "lib/activation/softmax.h"

using namespace AscendC;

class KernelSoftmax {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR adjusted, uint32_t rowsPerCore, uint32_t width,
                                uint32_t tmpBytes, uint32_t adjustFrom, const SoftMaxTiling& softmaxTiling)
    {
        rows = rowsPerCore, cols = width, from = adjustFrom;
        tiling = softmaxTiling;
        const uint32_t n = rows * cols;
        xGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x) + GetBlockIdx() * n, n);
        yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y) + GetBlockIdx() * n, n);
        flagGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t*>(adjusted) + GetBlockIdx(), 1);
        pipe.InitBuffer(inQueue, 1, n * sizeof(half));
        pipe.InitBuffer(outQueue, 1, n * sizeof(half));
        pipe.InitBuffer(maxBuf, rows * 32);
        pipe.InitBuffer(sumBuf, rows * 32);
        pipe.InitBuffer(tmpBuf, tmpBytes);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        DataCopy(xLocal, xGm, rows * cols);
        inQueue.EnQue(xLocal);
        xLocal = inQueue.DeQue<half>();
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        LocalTensor<half> maxLocal = maxBuf.Get<half>(), sumLocal = sumBuf.Get<half>();
        SoftMaxShapeInfo shape{rows, cols, rows, cols};
        SoftMax<half>(yLocal, sumLocal, maxLocal, xLocal, tmpBuf.Get<uint8_t>(), tiling, shape);
        const bool changed = AdjustSoftMaxRes<half, half>(yLocal, maxLocal, from, static_cast<half>(0), shape);
        flagGm.SetValue(0, changed ? 1 : 0);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
        yLocal = outQueue.DeQue<half>();
        DataCopy(yGm, yLocal, rows * cols);
        outQueue.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> maxBuf, sumBuf, tmpBuf;
    GlobalTensor<half> xGm, yGm;
    GlobalTensor<int32_t> flagGm;
    SoftMaxTiling tiling;
    uint32_t rows = 0, cols = 0, from = 0;
};

extern "C" __global__ __aicore__ void softmax_custom(GM_ADDR x, GM_ADDR y, GM_ADDR adjusted, GM_ADDR workspace,
                                                     GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelSoftmax op;
    op.Init(x, y, adjusted, tilingData.rowsPerCore, tilingData.cols, tilingData.tmpBytes, tilingData.adjustFrom,
            tilingData.softmaxTilingData);
    op.Process();
}
