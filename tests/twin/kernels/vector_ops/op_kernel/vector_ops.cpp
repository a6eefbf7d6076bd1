// One row of `out` per vector API, so the test can check each against NumPy.
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t LEN = 256;
constexpr uint32_t ROWS = 28;

extern "C" __global__ __aicore__ void vector_ops(GM_ADDR x, GM_ADDR y, GM_ADDR out)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> inQueue;
    TQue<QuePosition::VECOUT, 1> outQueue;
    TBuf<QuePosition::VECCALC> tmpBuf, maskBuf, workBuf;
    pipe.InitBuffer(inQueue, 1, 2 * LEN * sizeof(float));
    pipe.InitBuffer(outQueue, 1, ROWS * LEN * sizeof(float));
    pipe.InitBuffer(tmpBuf, LEN * sizeof(float));
    pipe.InitBuffer(maskBuf, LEN / 8);
    pipe.InitBuffer(workBuf, 64 * sizeof(float));
    GlobalTensor<float> xGm, yGm, outGm;
    xGm.SetGlobalBuffer((__gm__ float*)x, LEN);
    yGm.SetGlobalBuffer((__gm__ float*)y, LEN);
    outGm.SetGlobalBuffer((__gm__ float*)out, ROWS * LEN);

    LocalTensor<float> in = inQueue.AllocTensor<float>();
    DataCopy(in, xGm, LEN);
    DataCopy(in[LEN], yGm, LEN);
    inQueue.EnQue(in);
    in = inQueue.DeQue<float>();
    LocalTensor<float> xs = in;
    LocalTensor<float> ys = in[LEN];
    LocalTensor<float> o = outQueue.AllocTensor<float>();
    LocalTensor<float> tmp = tmpBuf.Get<float>();
    LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
    LocalTensor<float> work = workBuf.Get<float>();
    Duplicate(o, 0.0f, ROWS * LEN);

    Add(o[0 * LEN], xs, ys, LEN);
    Sub(o[1 * LEN], xs, ys, LEN);
    Mul(o[2 * LEN], xs, ys, LEN);
    Div(o[3 * LEN], xs, ys, LEN);
    Max(o[4 * LEN], xs, ys, LEN);
    Min(o[5 * LEN], xs, ys, LEN);
    Adds(o[6 * LEN], xs, 1.5f, LEN);
    Muls(o[7 * LEN], xs, -2.0f, LEN);
    Maxs(o[8 * LEN], xs, 0.25f, LEN);
    Mins(o[9 * LEN], xs, 0.25f, LEN);
    Exp(o[10 * LEN], xs, LEN);
    Abs(tmp, xs, LEN);
    Adds(tmp, tmp, 1.0f, LEN);
    Ln(o[11 * LEN], tmp, LEN);
    Rsqrt(o[13 * LEN], tmp, LEN);
    Abs(tmp, xs, LEN);
    Sqrt(o[12 * LEN], tmp, LEN);
    Reciprocal(o[14 * LEN], ys, LEN);
    Relu(o[15 * LEN], xs, LEN);
    Abs(o[16 * LEN], xs, LEN);
    LeakyRelu(o[17 * LEN], xs, 0.2f, LEN);
    Duplicate(o[18 * LEN], 7.0f, LEN);
    Erf(o[19 * LEN], xs, LEN);
    Tanh(o[20 * LEN], xs, LEN);
    Sigmoid(o[21 * LEN], xs, LEN);
    Gelu(o[22 * LEN], xs, LEN);
    Compare(mask, xs, ys, CMPMODE::GT, LEN);
    Select(o[23 * LEN], mask, xs, ys, SELMODE::VSEL_TENSOR_TENSOR_MODE, LEN);
    CompareScalar(mask, xs, 0.0f, CMPMODE::LT, LEN);
    Select(o[24 * LEN], mask, xs, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, LEN);
    Brcb(o[25 * LEN], xs, 4, BrcbRepeatParams(1, 8));
    ReduceMax(o[26 * LEN], xs, work, LEN, true);
    ReduceSum(o[27 * LEN], xs, work, LEN);

    outQueue.EnQue(o);
    inQueue.FreeTensor(in);
    o = outQueue.DeQue<float>();
    DataCopy(outGm, o, ROWS * LEN);
    outQueue.FreeTensor(o);
}
