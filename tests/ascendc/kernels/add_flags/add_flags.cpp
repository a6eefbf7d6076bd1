// z = x + y with hand-placed pipe flags instead of queues: x, y and z live in TBufs and every hand-off
// between MTE2 (copy in), V (Add) and MTE3 (copy out) is a SetFlag/WaitFlag pair, as kernels that manage
// their own buffers write it.
#include "kernel_operator.h"
#include "add_flags_tiling.h"

using namespace AscendC;

class KernelAddFlags {
public:
    __aicore__ inline KernelAddFlags() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t blockLength, uint32_t tileLength)
    {
        uint32_t start = blockLength * GetBlockIdx();
        this->tiles = blockLength / tileLength;
        this->tileLength = tileLength;
        xGm.SetGlobalBuffer((__gm__ half*)x + start, blockLength);
        yGm.SetGlobalBuffer((__gm__ half*)y + start, blockLength);
        zGm.SetGlobalBuffer((__gm__ half*)z + start, blockLength);
        pipe.InitBuffer(xBuf, tileLength * sizeof(half));
        pipe.InitBuffer(yBuf, tileLength * sizeof(half));
        pipe.InitBuffer(zBuf, tileLength * sizeof(half));
    }
    __aicore__ inline void Process()
    {
        LocalTensor<half> x = xBuf.Get<half>();
        LocalTensor<half> y = yBuf.Get<half>();
        LocalTensor<half> z = zBuf.Get<half>();
        for (uint32_t i = 0; i < this->tiles; i++) {
            uint32_t offset = i * this->tileLength;
            if (i > 0) {
                WaitFlag<HardEvent::V_MTE2>(0);  // V has read the previous x and y
            }
            DataCopy(x, xGm[offset], this->tileLength);
            DataCopy(y, yGm[offset], this->tileLength);
            SetFlag<HardEvent::MTE2_V>(0);
            WaitFlag<HardEvent::MTE2_V>(0);
            if (i > 0) {
                WaitFlag<HardEvent::MTE3_V>(0);  // MTE3 has read the previous z
            }
            Add(z, x, y, this->tileLength);
            if (i + 1 < this->tiles) {
                SetFlag<HardEvent::V_MTE2>(0);
            }
            SetFlag<HardEvent::V_MTE3>(0);
            WaitFlag<HardEvent::V_MTE3>(0);
            DataCopy(zGm[offset], z, this->tileLength);
            if (i + 1 < this->tiles) {
                SetFlag<HardEvent::MTE3_V>(0);
            }
        }
    }

private:
    TPipe pipe;
    TBuf<QuePosition::VECCALC> xBuf, yBuf, zBuf;
    GlobalTensor<half> xGm, yGm, zGm;
    uint32_t tiles = 0;
    uint32_t tileLength = 0;
};

extern "C" __global__ __aicore__ void add_flags(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(tilingData, tiling);
    KernelAddFlags op;
    op.Init(x, y, z, tilingData.blockLength, tilingData.tileLength);
    op.Process();
}
