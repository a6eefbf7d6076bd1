#include "kernel_operator.h"
#include "lib/pad/pad.h"

using namespace AscendC;

class KernelAbsPad {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t height, uint32_t width, uint32_t tmpBytes,
                                const PadTiling& padTiling)
    {
        this->height = height, this->width = width, this->tiling = padTiling;
        paddedWidth = (width * sizeof(half) + 31) / 32 * 32 / sizeof(half);
        xGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x), height * width);
        yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y), height * paddedWidth);
        pipe.InitBuffer(inQueue, 1, height * paddedWidth * sizeof(half));
        pipe.InitBuffer(outQueue, 1, height * paddedWidth * sizeof(half));
        pipe.InitBuffer(tmpBuf, tmpBytes);
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> xLocal = inQueue.AllocTensor<half>();
        DataCopy(xLocal, xGm, height * width);  // 16 x 15 halves: 15 whole blocks, rows packed
        inQueue.EnQue(xLocal);
        xLocal = inQueue.DeQue<half>();
        LocalTensor<half> yLocal = outQueue.AllocTensor<half>();
        PadParams params{0, static_cast<uint16_t>(paddedWidth - width), 0};
        Pad(yLocal, xLocal, params, tmpBuf.Get<uint8_t>(), tiling);
        Abs(yLocal, yLocal, height * paddedWidth);
        outQueue.EnQue(yLocal);
        inQueue.FreeTensor(xLocal);
        yLocal = outQueue.DeQue<half>();
        DataCopy(yGm, yLocal, height * paddedWidth);
        outQueue.FreeTensor(yLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<TPosition::VECCALC> tmpBuf;
    GlobalTensor<half> xGm, yGm;
    PadTiling tiling;
    uint32_t height = 0, width = 0, paddedWidth = 0;
};

extern "C" __global__ __aicore__ void abs_pad(GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelAbsPad op;
    op.Init(x, y, tilingData.height, tilingData.width, tilingData.tmpBytes, tilingData.padTilingData);
    op.Process();
}
