// Small kernels that break one twin check each; main.cpp picks one by the value in mode.bin.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t LEN = 256;

extern "C" __global__ __aicore__ void copy_ok(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, LEN * sizeof(half));
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, LEN);
    yGm.SetGlobalBuffer((__gm__ half*)y, LEN);
    LocalTensor<half> t = que.AllocTensor<half>();
    DataCopy(t, xGm, LEN);
    que.EnQue(t);
    t = que.DeQue<half>();
    Muls(t, t, (half)2.0, LEN);
    DataCopy(yGm, t, LEN);
    que.FreeTensor(t);
}

extern "C" __global__ __aicore__ void ub_overflow(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> inQueue;
    TQue<QuePosition::VECOUT, 2> outQueue;
    pipe.InitBuffer(inQueue, 2, 64 * 1024);
    pipe.InitBuffer(outQueue, 2, 64 * 1024);  // 256 KiB in all: more than the UB
}

extern "C" __global__ __aicore__ void misaligned_copy(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, LEN * sizeof(half));
    GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half*)x, LEN);
    LocalTensor<half> t = que.AllocTensor<half>();
    DataCopy(t, xGm, 100);  // 200 bytes: not whole 32-byte blocks
}

extern "C" __global__ __aicore__ void alloc_beyond_depth(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 2> que;
    pipe.InitBuffer(que, 2, LEN * sizeof(half));
    LocalTensor<half> a = que.AllocTensor<half>();
    LocalTensor<half> b = que.AllocTensor<half>();
    LocalTensor<half> c = que.AllocTensor<half>();
}

extern "C" __global__ __aicore__ void deque_empty(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECOUT, 1> que;
    pipe.InitBuffer(que, 1, LEN * sizeof(half));
    LocalTensor<half> t = que.DeQue<half>();
}

extern "C" __global__ __aicore__ void free_slice(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, LEN * sizeof(half));
    LocalTensor<half> t = que.AllocTensor<half>();
    LocalTensor<half> slice = t[16];
    que.FreeTensor(slice);
}

extern "C" __global__ __aicore__ void flag_never_set(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        CrossCoreWaitFlag(5);  // no AIC ever sets flag 5
    }
}

extern "C" __global__ __aicore__ void endless_loop(GM_ADDR x, GM_ADDR y)
{
    volatile uint32_t spin = 1;
    while (spin != 0) {
    }
}

extern "C" __global__ __aicore__ void gm_overrun(GM_ADDR x, GM_ADDR y)
{
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> que;
    pipe.InitBuffer(que, 1, LEN * sizeof(half));
    GlobalTensor<half> xGm;
    xGm.SetGlobalBuffer((__gm__ half*)x);  // no size: only the GmAlloc buffer bounds the copy
    LocalTensor<half> t = que.AllocTensor<half>();
    DataCopy(t, xGm[128], LEN);
}

extern "C" __global__ __aicore__ void vector_on_cube(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    TPipe pipe;
    TBuf<QuePosition::VECCALC> buf;
    pipe.InitBuffer(buf, LEN * sizeof(float));
    LocalTensor<float> t = buf.Get<float>();
    Duplicate(t, 1.0f, LEN);  // runs on the AIC too: no `if ASCEND_IS_AIV` guard
}

extern "C" __global__ __aicore__ void aiv_overflow_in_mix(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIV {
        TPipe pipe;
        TBuf<QuePosition::VECCALC> buf;
        pipe.InitBuffer(buf, 200 * 1024);
    }
}

// AIV -> AIC -> AIV handshake over mode-2 flags, then a mode-1 barrier between the two AIVs.
extern "C" __global__ __aicore__ void flag_handshake(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        CrossCoreWaitFlag(1);  // needs a set from both AIVs
        CrossCoreSetFlag<2, PIPE_FIX>(2);
    }
    if ASCEND_IS_AIV {
        CrossCoreSetFlag<2, PIPE_MTE3>(1);
        CrossCoreWaitFlag(2);
        GlobalTensor<half> xGm, yGm;
        uint32_t half_len = LEN / 2, start = GetSubBlockIdx() * half_len;
        xGm.SetGlobalBuffer((__gm__ half*)x + start, half_len);
        yGm.SetGlobalBuffer((__gm__ half*)y + start, half_len);
        for (uint32_t i = 0; i < half_len; i++) yGm.SetValue(i, xGm.GetValue(i) * (half)2.0);
        CrossCoreSetFlag<1, PIPE_MTE3>(4);
        CrossCoreWaitFlag(4);
    }
}

extern "C" __global__ __aicore__ void aic_waits_for_one_aiv(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    if ASCEND_IS_AIC {
        CrossCoreWaitFlag(1);
    }
    if ASCEND_IS_AIV {
        if (GetSubBlockIdx() == 0) {
            CrossCoreSetFlag<2, PIPE_MTE3>(1);
        }
    }
}

// The hard SyncAll in a kernel-direct launch (no TilingFunc, no workspace): CANN supports it only in
// custom-operator projects whose TilingFunc sets a non-zero workspace.
extern "C" __global__ __aicore__ void sync_all_direct(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    SyncAll<false>();
}
