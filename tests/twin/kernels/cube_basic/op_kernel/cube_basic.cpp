// One 3x3 convolution tile on the cube core with the basic API (DataCopy, Load2D, Load3Dv2, Mmad, Fixpipe) in
// the chip's layouts: x [C1=2][6][6][C0=16] half (NC1HWC0 of a [32, 6, 6] map), w FRACTAL_Z [C1*3*3][1][16][16]
// half (of [16, 32, 3, 3] weights: the NZ of the [16, K] matrix with K ordered (c1, kh, kw, c0)), y [16, 36]
// half. `mode` != 0 breaks one rule on purpose; mode 14 is a kernel written for channel planes (x NCHW copied
// plane by plane with ND2NZ, w ND [16][(c, kh, kw)]), which the twin's Load3Dv2 no longer reads as it meant.
#include "kernel_operator.h"

constexpr int32_t CIN = 32, H = 6, W = 6, KH = 3, KW = 3, COUT = 16, C0 = 16;
constexpr int32_t K = CIN * KH * KW, PIX = H * W, PIX_ALIGN = 48, PLANE = 48;

class KernelCubeTile {
public:
    __aicore__ inline void Init(GM_ADDR mode, GM_ADDR x, GM_ADDR w, GM_ADDR y)
    {
        modeGm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
        xGm.SetGlobalBuffer((__gm__ half*)x, CIN * PIX);
        wGm.SetGlobalBuffer((__gm__ half*)w, COUT * K);
        yGm.SetGlobalBuffer((__gm__ half*)y, COUT * PIX);
        fault = modeGm.GetValue(0);
        pipe.InitBuffer(fmQue, 1, CIN * PLANE * sizeof(half));  // planes of 36 padded to 48 (mode 14)
        pipe.InitBuffer(a1Que, 1, COUT * K * sizeof(half));
        pipe.InitBuffer(a2Que, 1, COUT * K * sizeof(half));
        pipe.InitBuffer(b2Que, 1, fault == 11 ? 70000 : PIX_ALIGN * K * sizeof(half));
        pipe.InitBuffer(cQue, 1, COUT * PIX_ALIGN * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> fm = fmQue.AllocTensor<half>();
        AscendC::LocalTensor<half> a1 = a1Que.AllocTensor<half>();
        if (fault == 14) {  // the plane layout: C0-aligned channel planes, weights ND [COUT][(c, kh, kw)]
            AscendC::Nd2NzParams planes(CIN, 1, PIX, PIX, PIX, 1, 1, PLANE);
            AscendC::DataCopy(fm, xGm, planes);
            AscendC::Nd2NzParams weights(1, COUT, K, 0, K, COUT, 1, 0);
            AscendC::DataCopy(a1, wGm, weights);
        } else if (fault == 9) {
            AscendC::Nd2NzParams weights(1, COUT, K, 0, K, 8, 1, 0);  // column blocks 8 rows apart: they overlap
            AscendC::DataCopy(a1, wGm, weights);
        } else {
            // NC1HWC0: C1 blocks of H x W x C0, contiguous in GM and in L1 (one 32-byte block per pixel)
            AscendC::DataCopy(fm, xGm, AscendC::DataCopyParams(CIN / C0, PIX, 0, 0));
            // FRACTAL_Z: K / C0 column blocks of COUT rows of C0 (one 32-byte block per row), as L1 NZ holds them
            AscendC::DataCopy(a1, wGm, AscendC::DataCopyParams(K / C0, COUT, 0, 0));
        }
        AscendC::LocalTensor<float> c = cQue.AllocTensor<float>();
        const int32_t kSplit[3] = {0, 64, K};
        for (int32_t step = 0; step < 2; ++step) {  // two k tiles: the second accumulates
            const int32_t k0 = kSplit[step], klen = kSplit[step + 1] - k0;
            AscendC::LocalTensor<half> a2 = a2Que.AllocTensor<half>();
            AscendC::LoadData2DParams load2d(k0 / 16, klen / 16, 1, 0, 0, false, 0);
            AscendC::LoadData(fault == 8 ? a2[16] : a2, a1, load2d);
            AscendC::LocalTensor<half> b2 = b2Que.AllocTensor<half>();
            AscendC::LoadData3DParamsV2<half> load3d;
            for (int32_t i = 0; i < AscendC::PAD_SIZE; ++i) load3d.padList[i] = 1;
            load3d.l1H = H;
            load3d.l1W = W;
            load3d.channelSize = fault == 3 ? 8 : CIN;
            load3d.kExtension = fault == 2 ? 32 : klen;
            load3d.mExtension = fault == 1 ? PIX + 1 : PIX;
            load3d.kStartPt = fault == 2 ? K - 16 : k0;
            load3d.mStartPt = 0;
            load3d.filterW = KW;
            load3d.filterH = KH;
            AscendC::LoadData(fault == 13 ? a1 : b2, fm, load3d);
            uint16_t m = fault == 4 ? 32 : COUT;
            uint16_t kk = fault == 12 ? 4096 : klen;
            AscendC::Mmad(c, fault == 5 ? a2[16] : a2, b2, AscendC::MmadParams(m, PIX, kk, 0, false, step == 0));
            a2Que.FreeTensor(a2);
            b2Que.FreeTensor(b2);
        }
        AscendC::FixpipeParamsV220 fix;
        fix.nSize = PIX;
        fix.mSize = COUT;
        fix.srcStride = fault == 10 ? 8 : 16;
        fix.dstStride = PIX;
        fix.quantPre = fault == 7 ? QuantMode_t::NoQuant : QuantMode_t::F322F16;
        AscendC::Fixpipe<half, float, AscendC::CFG_ROW_MAJOR>(yGm, fault == 6 ? c[8] : c, fix);
        cQue.FreeTensor(c);
        a1Que.FreeTensor(a1);
        fmQue.FreeTensor(fm);
    }

private:
    AscendC::TPipe pipe;
    AscendC::TQue<AscendC::QuePosition::B1, 1> fmQue;
    AscendC::TQue<AscendC::QuePosition::A1, 1> a1Que;
    AscendC::TQue<AscendC::QuePosition::A2, 1> a2Que;
    AscendC::TQue<AscendC::QuePosition::B2, 1> b2Que;
    AscendC::TQue<AscendC::QuePosition::CO1, 1> cQue;
    AscendC::GlobalTensor<int32_t> modeGm;
    AscendC::GlobalTensor<half> xGm, wGm, yGm;
    int32_t fault = 0;
};

extern "C" __global__ __aicore__ void cube_tile(GM_ADDR mode, GM_ADDR x, GM_ADDR w, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    KernelCubeTile op;
    op.Init(mode, x, w, y);
    op.Process();
}
