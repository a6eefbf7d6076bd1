// TopK (rows of INNER floats, N valid, top K), ArithProgression and a 16x16 half Transpose; `mode` picks a
// clean run (0), the smallest-first order with finished rows (1), or one misuse per error path (2..6).
#include "kernel_operator.h"
#include "../op_host/layout_apis_tiling.h"

constexpr int32_t ROWS = 4;
constexpr int32_t INNER = 64;
constexpr int32_t N = 60;
constexpr int32_t K = 5;
constexpr int32_t KPAD = 8;

extern "C" __global__ __aicore__ void layout_apis(GM_ADDR mode, GM_ADDR x, GM_ADDR h, GM_ADDR vals, GM_ADDR idx,
                                                  GM_ADDR ht, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TopkTilingData t = *reinterpret_cast<TopkTilingData*>(tiling);
    AscendC::GlobalTensor<int32_t> modeGm;
    AscendC::GlobalTensor<float> xGm, valsGm;
    AscendC::GlobalTensor<half> hGm, htGm;
    AscendC::GlobalTensor<int32_t> idxGm;
    modeGm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
    xGm.SetGlobalBuffer((__gm__ float*)x, ROWS * INNER);
    hGm.SetGlobalBuffer((__gm__ half*)h, 256);
    valsGm.SetGlobalBuffer((__gm__ float*)vals, ROWS * KPAD);
    idxGm.SetGlobalBuffer((__gm__ int32_t*)idx, ROWS * KPAD);
    htGm.SetGlobalBuffer((__gm__ half*)ht, 256);
    const int32_t m = modeGm.GetValue(0);

    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> xBuf, valBuf, idxBuf, srcIdxBuf, tmpBuf, hBuf, finBuf;
    pipe.InitBuffer(xBuf, ROWS * INNER * sizeof(float));
    pipe.InitBuffer(valBuf, ROWS * KPAD * sizeof(float));
    pipe.InitBuffer(idxBuf, ROWS * KPAD * sizeof(int32_t));
    pipe.InitBuffer(srcIdxBuf, INNER * sizeof(int32_t));
    pipe.InitBuffer(tmpBuf, t.tmpBytes);
    pipe.InitBuffer(hBuf, 2 * 256 * sizeof(half));
    pipe.InitBuffer(finBuf, 32);
    AscendC::LocalTensor<float> xLocal = xBuf.Get<float>();
    AscendC::LocalTensor<float> valLocal = valBuf.Get<float>();
    AscendC::LocalTensor<int32_t> idxLocal = idxBuf.Get<int32_t>();
    AscendC::LocalTensor<int32_t> srcIdx = srcIdxBuf.Get<int32_t>();
    AscendC::LocalTensor<uint8_t> tmp = tmpBuf.Get<uint8_t>();
    AscendC::LocalTensor<half> hLocal = hBuf.Get<half>();
    AscendC::LocalTensor<bool> finish = finBuf.Get<bool>();

    AscendC::DataCopy(xLocal, xGm, ROWS * INNER);
    AscendC::DataCopy(hLocal, hGm, 256);
    AscendC::ArithProgression<int32_t>(srcIdx, 100, 2, INNER);  // indices come back as 100 + 2 * position
    AscendC::TopKInfo info;
    info.outter = ROWS;
    info.inner = INNER;
    info.n = N;
    if (m == 0) {
        AscendC::TopK<float, true, false, false, AscendC::TopKMode::TOPK_NORMAL>(
            valLocal, idxLocal, xLocal, srcIdx, finish, tmp, K, t.topk, info, true);
    } else if (m == 1) {  // smallest first, row 2 finished, positions as indices
        for (int32_t r = 0; r < ROWS; ++r) finish.SetValue(r, r == 2);
        AscendC::TopK<float, false, true, false, AscendC::TopKMode::TOPK_NORMAL>(
            valLocal, idxLocal, xLocal, srcIdx, finish, tmp, K, t.topk, info, false);
    } else if (m == 2) {  // k larger than the valid row
        AscendC::TopK<float, true>(valLocal, idxLocal, xLocal, srcIdx, finish, tmp, N + 1, t.topk, info, true);
    } else if (m == 3) {  // inner not a multiple of 32
        info.inner = 60;
        AscendC::TopK<float, true>(valLocal, idxLocal, xLocal, srcIdx, finish, tmp, K, t.topk, info, true);
    } else if (m == 4) {  // tmpLocal smaller than the tiling asks
        AscendC::LocalTensor<uint8_t> small = tmpBuf.Get<uint8_t>(64);
        AscendC::TopK<float, true>(valLocal, idxLocal, xLocal, srcIdx, finish, small, K, t.topk, info, true);
    } else if (m == 5) {  // tiling made for another shape
        info.inner = 32;
        info.n = 32;
        AscendC::TopK<float, true>(valLocal, idxLocal, xLocal, srcIdx, finish, tmp, K, t.topk, info, true);
    } else if (m == 6) {  // Transpose in place
        AscendC::Transpose(hLocal[16], hLocal);
    }
    AscendC::Transpose(hLocal[256], hLocal);
    AscendC::DataCopy(valsGm, valLocal, ROWS * KPAD);
    AscendC::DataCopy(idxGm, idxLocal, ROWS * KPAD);
    AscendC::DataCopy(htGm, hLocal[256], 256);
}
