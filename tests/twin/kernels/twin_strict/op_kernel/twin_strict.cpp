// Where the twin is as strict as CANN: the default kernel mode, 32-byte InitBuffer rounding; and a small
// loop whose API-call log has known counts. main.cpp picks a kernel by the value in mode.bin.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t LEN = 64;    // x and y: LEN half
constexpr uint32_t TILE = 16;   // logged_loop: tiles of 16 half (32 bytes)
constexpr uint32_t IDS = 6;     // who_am_i: 3 cores x 2 blocks

// Each core writes its identity: the AIC of block b at 3b (100 + GetBlockIdx()), its AIVs at 3b+1 and
// 3b+2 (200 + GetBlockIdx()). Run with no SetKernelMode, this shows the launch is MIX.
extern "C" __global__ __aicore__ void who_am_i(GM_ADDR ids)
{
    GlobalTensor<int32_t> idGm;
    idGm.SetGlobalBuffer((__gm__ int32_t*)ids, IDS);
    int64_t idx = GetBlockIdx();
    if ASCEND_IS_AIC {
        idGm.SetValue(3 * idx, static_cast<int32_t>(100 + idx));
    } else {
        idGm.SetValue(3 * (idx / 2) + 1 + idx % 2, static_cast<int32_t>(200 + idx));
    }
}

// Declares AIV_ONLY: launching it without SetKernelMode(AIV_MODE) is a launch error.
extern "C" __global__ __aicore__ void declared_aiv_only(GM_ADDR ids)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
}

// Vector code without an ASCEND_IS_AIV guard: fine in AIV_MODE, a launch error in the default MIX.
extern "C" __global__ __aicore__ void unguarded_vector(GM_ADDR y)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, TILE * sizeof(half));
    LocalTensor<half> t = buf.Get<half>();
    Duplicate(t, (half)1.0, TILE);
}

// InitBuffer(que, 1, 6 bytes): CANN rounds the buffer to 32 bytes, so a padded 3-element DataCopyPad
// fits. y[0..3) = x[0..3) + 1; ids[0] = the queue tensor's size, ids[1] = the 6-byte TBuf's size.
extern "C" __global__ __aicore__ void unaligned_buffer(GM_ADDR x, GM_ADDR y, GM_ADDR ids)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> que;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(que, 1, 3 * sizeof(half));
    pipe.InitBuffer(buf, 3 * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    GlobalTensor<int32_t> idGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, LEN);
    yGm.SetGlobalBuffer((__gm__ half*)y, LEN);
    idGm.SetGlobalBuffer((__gm__ int32_t*)ids, IDS);
    LocalTensor<half> t = que.AllocTensor<half>();
    DataCopyPad(t, xGm, DataCopyExtParams(1, 3 * sizeof(half), 0, 0, 0), DataCopyPadExtParams<half>(false, 0, 0, 0));
    que.EnQue(t);
    t = que.DeQue<half>();
    Adds(t, t, (half)1.0, 3);
    DataCopyPad(yGm, t, DataCopyExtParams(1, 3 * sizeof(half), 0, 0, 0));
    idGm.SetValue(0, static_cast<int32_t>(t.GetSize()));
    idGm.SetValue(1, static_cast<int32_t>(buf.Get<half>().GetSize()));
    que.FreeTensor(t);
}

// Two padded rows of 3 elements need 2 x 32 bytes: past the one rounded 32-byte buffer.
extern "C" __global__ __aicore__ void unaligned_overrun(GM_ADDR x, GM_ADDR y, GM_ADDR ids)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, 3 * sizeof(half));
    GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, LEN);
    LocalTensor<half> t = que.AllocTensor<half>();
    DataCopyPad(t, xGm, DataCopyExtParams(2, 3 * sizeof(half), 0, 0, 0), DataCopyPadExtParams<half>(false, 0, 0, 0));
}

// A 6-byte TBuf holds 16 half after rounding; asking for 17 is still an overrun.
extern "C" __global__ __aicore__ void tbuf_overrun(GM_ADDR x, GM_ADDR y, GM_ADDR ids)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * sizeof(half));
    LocalTensor<half> t = buf.Get<half>(17);
}

// Each core doubles its half of x in two tiles: per core 1 InitBuffer, 2 x (AllocTensor, DataCopy in,
// EnQue, DeQue, Muls, Adds, SetFlag/WaitFlag<V_MTE3>, DataCopy out, FreeTensor), then one PipeBarrier.
extern "C" __global__ __aicore__ void logged_loop(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> que;
    pipe.InitBuffer(que, 2, TILE * sizeof(half));
    uint32_t per_core = LEN / GetBlockNum();
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x + GetBlockIdx() * per_core, per_core);
    yGm.SetGlobalBuffer((__gm__ half*)y + GetBlockIdx() * per_core, per_core);
    for (uint32_t i = 0; i < per_core / TILE; ++i) {
        LocalTensor<half> t = que.AllocTensor<half>();
        DataCopy(t, xGm[i * TILE], TILE);
        que.EnQue(t);
        t = que.DeQue<half>();
        Muls(t, t, (half)2.0, TILE);
        Adds(t, t, (half)0.0, TILE);
        SetFlag<HardEvent::V_MTE3>(0);
        WaitFlag<HardEvent::V_MTE3>(0);
        DataCopy(yGm[i * TILE], t, TILE);
        que.FreeTensor(t);
    }
    PipeBarrier<PIPE_ALL>();
}
