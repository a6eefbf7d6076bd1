// Cast under every RoundMode: float -> bfloat16/half/int32 and bfloat16 -> float.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t LEN = 256;

template <typename T> __aicore__ inline void Store(GM_ADDR dst, const LocalTensor<T>& src)
{
    GlobalTensor<T> gm;
    gm.SetGlobalBuffer((__gm__ T*)dst, LEN);
    DataCopy(gm, src, LEN);
}

extern "C" __global__ __aicore__ void cast_modes(GM_ADDR x, GM_ADDR xb, GM_ADDR b16, GM_ADDR hRint, GM_ADDR hRound,
                                                 GM_ADDR hFloor, GM_ADDR hCeil, GM_ADDR hTrunc, GM_ADDR iRound,
                                                 GM_ADDR iFloor, GM_ADDR xbFloat)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    TBuf<QuePosition::VECCALC> xBuf, xbBuf, bBuf, hBuf, iBuf, fBuf;
    pipe.InitBuffer(xBuf, LEN * sizeof(float));
    pipe.InitBuffer(xbBuf, LEN * sizeof(bfloat16_t));
    pipe.InitBuffer(bBuf, LEN * sizeof(bfloat16_t));
    pipe.InitBuffer(hBuf, LEN * sizeof(half));
    pipe.InitBuffer(iBuf, LEN * sizeof(int32_t));
    pipe.InitBuffer(fBuf, LEN * sizeof(float));
    GlobalTensor<float> xGm;
    GlobalTensor<bfloat16_t> xbGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, LEN);
    xbGm.SetGlobalBuffer((__gm__ bfloat16_t*)xb, LEN);
    LocalTensor<float> xLocal = xBuf.Get<float>();
    LocalTensor<bfloat16_t> xbLocal = xbBuf.Get<bfloat16_t>();
    DataCopy(xLocal, xGm, LEN);
    DataCopy(xbLocal, xbGm, LEN);
    SetFlag<HardEvent::MTE2_V>(0);
    WaitFlag<HardEvent::MTE2_V>(0);

    LocalTensor<bfloat16_t> bLocal = bBuf.Get<bfloat16_t>();
    Cast(bLocal, xLocal, RoundMode::CAST_RINT, LEN);
    Store(b16, bLocal);
    LocalTensor<half> hLocal = hBuf.Get<half>();
    const RoundMode halfModes[] = {RoundMode::CAST_RINT, RoundMode::CAST_ROUND, RoundMode::CAST_FLOOR,
                                   RoundMode::CAST_CEIL, RoundMode::CAST_TRUNC};
    GM_ADDR halfOuts[] = {hRint, hRound, hFloor, hCeil, hTrunc};
    for (int m = 0; m < 5; m++) {
        Cast(hLocal, xLocal, halfModes[m], LEN);
        Store(halfOuts[m], hLocal);
    }
    LocalTensor<int32_t> iLocal = iBuf.Get<int32_t>();
    Cast(iLocal, xLocal, RoundMode::CAST_ROUND, LEN);
    Store(iRound, iLocal);
    Cast(iLocal, xLocal, RoundMode::CAST_FLOOR, LEN);
    Store(iFloor, iLocal);
    LocalTensor<float> fLocal = fBuf.Get<float>();
    Cast(fLocal, xbLocal, RoundMode::CAST_NONE, LEN);
    Store(xbFloat, fLocal);
}
