#include "kernel_operator.h"
#include "lib/pad/broadcast.h"

using namespace AscendC;

class KernelAddBroadcast {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR s, GM_ADDR z, uint32_t rows, uint32_t cols,
                                uint32_t tmpBytes)
    {
        this->rows = rows, this->cols = cols;
        xGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x), rows * cols);
        yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y), cols);
        sGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(s), rows);
        zGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(z), rows * cols);
        pipe.InitBuffer(inQueueX, 1, rows * cols * sizeof(half));
        pipe.InitBuffer(inQueueY, 1, cols * sizeof(half));
        pipe.InitBuffer(inQueueS, 1, rows * sizeof(half));
        pipe.InitBuffer(outQueue, 1, rows * cols * sizeof(half));
        pipe.InitBuffer(wideBuf, rows * cols * sizeof(half));
        pipe.InitBuffer(tmpBuf, tmpBytes);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        LocalTensor<half> yLocal = inQueueY.AllocTensor<half>();
        LocalTensor<half> sLocal = inQueueS.AllocTensor<half>();
        DataCopy(xLocal, xGm, rows * cols);
        DataCopy(yLocal, yGm, cols);
        DataCopy(sLocal, sGm, rows);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
        inQueueS.EnQue(sLocal);
        xLocal = inQueueX.DeQue<half>();
        yLocal = inQueueY.DeQue<half>();
        sLocal = inQueueS.DeQue<half>();
        LocalTensor<half> zLocal = outQueue.AllocTensor<half>();
        LocalTensor<half> wide = wideBuf.Get<half>();
        LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
        const uint32_t dstShape[2] = {rows, cols}, rowShape[2] = {1, cols}, colShape[2] = {rows, 1};
        Broadcast<half, 2, 0>(wide, yLocal, dstShape, rowShape, tmp);
        Add(zLocal, xLocal, wide, rows * cols);
        Broadcast<half, 2, 1>(wide, sLocal, dstShape, colShape, tmp);
        Add(zLocal, zLocal, wide, rows * cols);
        outQueue.EnQue(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
        inQueueS.FreeTensor(sLocal);
        zLocal = outQueue.DeQue<half>();
        DataCopy(zGm, zLocal, rows * cols);
        outQueue.FreeTensor(zLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueueX, inQueueY, inQueueS;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> wideBuf, tmpBuf;
    GlobalTensor<half> xGm, yGm, sGm, zGm;
    uint32_t rows = 0, cols = 0;
};

extern "C" __global__ __aicore__ void add_broadcast(GM_ADDR x, GM_ADDR y, GM_ADDR s, GM_ADDR z, GM_ADDR workspace,
                                                    GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelAddBroadcast op;
    op.Init(x, y, s, z, tilingData.rows, tilingData.cols, tilingData.tmpBytes);
    op.Process();
}
