// Repeat forms on rows of COLS floats STRIDE apart: row sums and maxima by two WholeReduce levels (one
// per row over its 256-byte repeats, then one over every row's partials), the row sums broadcast back
// with Brcb and subtracted with a block stride of 0, and Adds over the first 64 columns of every row in
// one instruction. `mode` picks a clean run (0) or one misuse per error path (1..4).
#include "kernel_operator.h"

constexpr int32_t ROWS = 5;
constexpr int32_t COLS = 100;
constexpr int32_t STRIDE = 104;
constexpr int32_t PER_REPEAT = 64;  // floats in 256 bytes
constexpr int32_t PART = 8;         // partials per row, padded to one 32-byte block

extern "C" __global__ __aicore__ void repeat_apis(GM_ADDR mode, GM_ADDR x, GM_ADDR sum, GM_ADDR mx, GM_ADDR vi,
                                                  GM_ADDR y, GM_ADDR z)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::GlobalTensor<int32_t> modeGm;
    AscendC::GlobalTensor<float> xGm, sumGm, mxGm, viGm, yGm, zGm;
    modeGm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
    xGm.SetGlobalBuffer((__gm__ float*)x, ROWS * STRIDE);
    sumGm.SetGlobalBuffer((__gm__ float*)sum, 8);
    mxGm.SetGlobalBuffer((__gm__ float*)mx, 8);
    viGm.SetGlobalBuffer((__gm__ float*)vi, 8);
    yGm.SetGlobalBuffer((__gm__ float*)y, ROWS * STRIDE);
    zGm.SetGlobalBuffer((__gm__ float*)z, ROWS * STRIDE);
    const int32_t m = modeGm.GetValue(0);

    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> xBuf, partBuf, sumBuf, mxBuf, viBuf, blkBuf, yBuf, zBuf;
    pipe.InitBuffer(xBuf, ROWS * STRIDE * sizeof(float));
    pipe.InitBuffer(partBuf, ROWS * PART * sizeof(float));
    pipe.InitBuffer(sumBuf, 8 * sizeof(float));
    pipe.InitBuffer(mxBuf, 8 * sizeof(float));
    pipe.InitBuffer(viBuf, 8 * sizeof(float));
    pipe.InitBuffer(blkBuf, 8 * 8 * sizeof(float));
    pipe.InitBuffer(yBuf, ROWS * STRIDE * sizeof(float));
    pipe.InitBuffer(zBuf, ROWS * STRIDE * sizeof(float));
    AscendC::LocalTensor<float> xLocal = xBuf.Get<float>();
    AscendC::LocalTensor<float> part = partBuf.Get<float>();
    AscendC::LocalTensor<float> sumLocal = sumBuf.Get<float>();
    AscendC::LocalTensor<float> mxLocal = mxBuf.Get<float>();
    AscendC::LocalTensor<float> viLocal = viBuf.Get<float>();
    AscendC::LocalTensor<float> blk = blkBuf.Get<float>();
    AscendC::LocalTensor<float> yLocal = yBuf.Get<float>();
    AscendC::LocalTensor<float> zLocal = zBuf.Get<float>();
    AscendC::DataCopy(xLocal, xGm, ROWS * STRIDE);
    AscendC::DataCopy(yLocal, xGm, ROWS * STRIDE);
    AscendC::DataCopy(zLocal, xGm, ROWS * STRIDE);
    if (m == 1) {  // mask beyond one repeat of floats
        AscendC::WholeReduceSum(sumLocal, xLocal, 100, 1, 1, 1, 8);
    } else if (m == 2) {  // source not on a 32-byte boundary
        AscendC::WholeReduceSum(sumLocal, xLocal[3], 64, 1, 1, 1, 8);
    } else if (m == 3) {  // repeats past the end of the source
        AscendC::WholeReduceMax(mxLocal, xLocal, 64, 6, 1, 1, 13, AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    } else if (m == 4) {  // a binary repeat whose src1 runs past its tensor
        AscendC::Sub(yLocal, xLocal, blk, 64, 5, AscendC::BinaryRepeatParams(1, 1, 1, 13, 13, 13));
    }
    for (int32_t r = 0; r < ROWS; ++r) {
        AscendC::WholeReduceSum(part[r * PART], xLocal[r * STRIDE], PER_REPEAT, 1, 1, 1, 8);
        AscendC::WholeReduceSum(part[r * PART + 1], xLocal[r * STRIDE + PER_REPEAT], COLS - PER_REPEAT, 1, 1, 1, 8);
    }
    AscendC::WholeReduceSum(sumLocal, part, 2, ROWS, 1, 1, PART / 8);
    for (int32_t r = 0; r < ROWS; ++r) {
        AscendC::WholeReduceMax(part[r * PART], xLocal[r * STRIDE], PER_REPEAT, 1, 1, 1, 8,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);
        AscendC::WholeReduceMax(part[r * PART + 1], xLocal[r * STRIDE + PER_REPEAT], COLS - PER_REPEAT, 1, 1, 1, 8,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    }
    AscendC::WholeReduceMax(mxLocal, part, 2, ROWS, 1, 1, PART / 8, AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    // value and index of the maximum of the first 64 elements of rows 0 and 1, pairs 1 result apart
    AscendC::WholeReduceMax(viLocal, xLocal, PER_REPEAT, 2, 1, 1, STRIDE / 8);
    AscendC::Brcb(blk, sumLocal, 1, AscendC::BrcbRepeatParams(1, 8));
    for (int32_t r = 0; r < ROWS; ++r) {
        AscendC::Sub(yLocal[r * STRIDE], xLocal[r * STRIDE], blk[r * 8], PER_REPEAT, 1,
                     AscendC::BinaryRepeatParams(1, 1, 0, 8, 8, 0));
        AscendC::Sub(yLocal[r * STRIDE + PER_REPEAT], xLocal[r * STRIDE + PER_REPEAT], blk[r * 8],
                     COLS - PER_REPEAT, 1, AscendC::BinaryRepeatParams(1, 1, 0, 8, 8, 0));
    }
    AscendC::Adds(zLocal, xLocal, 1.0f, PER_REPEAT, ROWS, AscendC::UnaryRepeatParams(1, 1, STRIDE / 8, STRIDE / 8));
    AscendC::DataCopy(sumGm, sumLocal, 8);
    AscendC::DataCopy(mxGm, mxLocal, 8);
    AscendC::DataCopy(viGm, viLocal, 8);
    AscendC::DataCopy(yGm, yLocal, ROWS * STRIDE);
    AscendC::DataCopy(zGm, zLocal, ROWS * STRIDE);
}
