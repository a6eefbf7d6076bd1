// z += sum over cores of (x[core] + y[core]): each core adds its row into the whole of z with an atomic-add
// DataCopy; and each core fills its quarter of w with initValue (InitGlobalMemory).
#include "kernel_operator.h"

using namespace AscendC;

class KernelAddAtomic {
public:
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w, uint32_t length, float initValue)
    {
        ASSERT(length % (GetBlockNum() * 8) == 0);
        this->length = length;
        this->initValue = initValue;
        xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + GetBlockIdx() * length, length);
        yGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + GetBlockIdx() * length, length);
        zGm.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z), length);
        const uint32_t part = length / GetBlockNum();
        wPart.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(w) + GetBlockIdx() * part, part);
        InitGlobalMemory(wPart, part, initValue);  // before any InitBuffer, as CANN asks
        pipe.InitBuffer(inQueueX, 1, length * sizeof(float));
        pipe.InitBuffer(inQueueY, 1, length * sizeof(float));
        pipe.InitBuffer(outQueue, 1, length * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<float> xLocal = inQueueX.AllocTensor<float>();
        LocalTensor<float> yLocal = inQueueY.AllocTensor<float>();
        DataCopy(xLocal, xGm, length);
        DataCopy(yLocal, yGm, length);
        inQueueX.EnQue(xLocal);
        inQueueY.EnQue(yLocal);
        xLocal = inQueueX.DeQue<float>();
        yLocal = inQueueY.DeQue<float>();
        LocalTensor<float> zLocal = outQueue.AllocTensor<float>();
        Add(zLocal, xLocal, yLocal, length);
        outQueue.EnQue(zLocal);
        inQueueX.FreeTensor(xLocal);
        inQueueY.FreeTensor(yLocal);
        zLocal = outQueue.DeQue<float>();
        SetAtomicAdd<float>();
        DataCopy(zGm, zLocal, length);
        SetAtomicNone();
        outQueue.FreeTensor(zLocal);
    }

private:
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueueX, inQueueY;
    TQue<QuePosition::VECOUT, 1> outQueue;
    GlobalTensor<float> xGm, yGm, zGm, wPart;
    uint32_t length = 0;
    float initValue = 0.0f;
};

extern "C" __global__ __aicore__ void add_atomic(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w, GM_ADDR workspace,
                                                 GM_ADDR tiling)
{
    GET_TILING_DATA(tilingData, tiling);
    KernelAddAtomic op;
    op.Init(x, y, z, w, tilingData.length, tilingData.initValue);
    op.Process();
}
