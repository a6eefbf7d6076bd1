#include "kernel_operator.h"
#include "../op_host/layer_norm_tiling.h"

using namespace AscendC;

constexpr int32_t BUFFER_NUM = 2;
constexpr uint32_t WORK_FLOATS = 64;
constexpr uint32_t STAT_FLOATS = 8;

class KernelLayerNorm {
public:
    __aicore__ inline KernelLayerNorm() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y, uint32_t cols,
                                uint32_t colsAligned, uint32_t rowsPerCore, uint32_t tileRows, float invCols, float eps)
    {
        this->cols = cols;
        this->colsAligned = colsAligned;
        this->rowsPerCore = rowsPerCore;
        this->tileRows = tileRows;
        this->invCols = invCols;
        this->eps = eps;
        uint64_t start = static_cast<uint64_t>(GetBlockIdx()) * rowsPerCore * cols;
        xGm.SetGlobalBuffer((__gm__ half*)x + start, rowsPerCore * cols);
        yGm.SetGlobalBuffer((__gm__ half*)y + start, rowsPerCore * cols);
        gammaGm.SetGlobalBuffer((__gm__ half*)gamma, cols);
        betaGm.SetGlobalBuffer((__gm__ half*)beta, cols);
        uint32_t tileElems = tileRows * colsAligned;
        pipe.InitBuffer(inQueueX, BUFFER_NUM, tileElems * sizeof(half));
        pipe.InitBuffer(outQueueY, BUFFER_NUM, tileElems * sizeof(half));
        pipe.InitBuffer(xFloatBuf, tileElems * sizeof(float));
        pipe.InitBuffer(squareBuf, colsAligned * sizeof(float));
        pipe.InitBuffer(gammaBuf, colsAligned * sizeof(float));
        pipe.InitBuffer(betaBuf, colsAligned * sizeof(float));
        pipe.InitBuffer(stageBuf, colsAligned * sizeof(half));
        pipe.InitBuffer(workBuf, WORK_FLOATS * sizeof(float));
        pipe.InitBuffer(statBuf, STAT_FLOATS * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        LoadParam(gammaGm, gammaBuf.Get<float>());
        LoadParam(betaGm, betaBuf.Get<float>());
        uint32_t tiles = rowsPerCore / tileRows;
        for (uint32_t i = 0; i < tiles; i++) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void LoadParam(GlobalTensor<half>& src, LocalTensor<float> dst)
    {
        LocalTensor<half> stage = stageBuf.Get<half>();
        DataCopyExtParams copyParams{1, static_cast<uint32_t>(cols * sizeof(half)), 0, 0, 0};
        DataCopyPadExtParams<half> padParams{true, 0, static_cast<uint8_t>(colsAligned - cols), 0};
        DataCopyPad(stage, src, copyParams, padParams);
        SetFlag<HardEvent::MTE2_V>(0);
        WaitFlag<HardEvent::MTE2_V>(0);
        Cast(dst, stage, RoundMode::CAST_NONE, colsAligned);
        PipeBarrier<PIPE_V>();
    }
    __aicore__ inline void CopyIn(uint32_t progress)
    {
        LocalTensor<half> xLocal = inQueueX.AllocTensor<half>();
        DataCopyExtParams copyParams{static_cast<uint16_t>(tileRows), static_cast<uint32_t>(cols * sizeof(half)), 0,
                                     0, 0};
        DataCopyPadExtParams<half> padParams{false, 0, 0, 0};
        DataCopyPad(xLocal, xGm[progress * tileRows * cols], copyParams, padParams);
        inQueueX.EnQue(xLocal);
    }
    __aicore__ inline void Compute()
    {
        LocalTensor<half> xLocal = inQueueX.DeQue<half>();
        LocalTensor<float> xFloat = xFloatBuf.Get<float>();
        Cast(xFloat, xLocal, RoundMode::CAST_NONE, tileRows * colsAligned);
        inQueueX.FreeTensor(xLocal);
        LocalTensor<float> square = squareBuf.Get<float>();
        LocalTensor<float> work = workBuf.Get<float>();
        LocalTensor<float> stat = statBuf.Get<float>();
        LocalTensor<float> gammaLocal = gammaBuf.Get<float>();
        LocalTensor<float> betaLocal = betaBuf.Get<float>();
        for (uint32_t r = 0; r < tileRows; r++) {
            LocalTensor<float> row = xFloat[r * colsAligned];
            ReduceSum(stat, row, work, cols);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            float mean = stat.GetValue(0) * invCols;
            Adds(row, row, -mean, cols);
            Mul(square, row, row, cols);
            ReduceSum(stat, square, work, cols);
            Muls(stat, stat, invCols, STAT_FLOATS);
            Adds(stat, stat, eps, STAT_FLOATS);
            Sqrt(stat, stat, STAT_FLOATS);
            Reciprocal(stat, stat, STAT_FLOATS);
            SetFlag<HardEvent::V_S>(0);
            WaitFlag<HardEvent::V_S>(0);
            float rstd = stat.GetValue(0);
            Muls(row, row, rstd, cols);
            Mul(row, row, gammaLocal, cols);
            Add(row, row, betaLocal, cols);
        }
        LocalTensor<half> yLocal = outQueueY.AllocTensor<half>();
        Cast(yLocal, xFloat, RoundMode::CAST_RINT, tileRows * colsAligned);
        outQueueY.EnQue(yLocal);
    }
    __aicore__ inline void CopyOut(uint32_t progress)
    {
        LocalTensor<half> yLocal = outQueueY.DeQue<half>();
        DataCopyExtParams copyParams{static_cast<uint16_t>(tileRows), static_cast<uint32_t>(cols * sizeof(half)), 0,
                                     0, 0};
        DataCopyPad(yGm[progress * tileRows * cols], yLocal, copyParams);
        outQueueY.FreeTensor(yLocal);
    }

    TPipe pipe;
    TQue<QuePosition::VECIN, BUFFER_NUM> inQueueX;
    TQue<QuePosition::VECOUT, BUFFER_NUM> outQueueY;
    TBuf<QuePosition::VECCALC> xFloatBuf, squareBuf, gammaBuf, betaBuf, stageBuf, workBuf, statBuf;
    GlobalTensor<half> xGm, yGm, gammaGm, betaGm;
    uint32_t cols = 0, colsAligned = 0, rowsPerCore = 0, tileRows = 0;
    float invCols = 0.0f, eps = 0.0f;
};

extern "C" __global__ __aicore__ void layer_norm(GM_ADDR x, GM_ADDR gamma, GM_ADDR beta, GM_ADDR y,
                                                 GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA(tilingData, tiling);
    KernelLayerNorm op;
    op.Init(x, gamma, beta, y, tilingData.cols, tilingData.colsAligned, tilingData.rowsPerCore, tilingData.tileRows,
            tilingData.invCols, tilingData.eps);
    op.Process();
}
