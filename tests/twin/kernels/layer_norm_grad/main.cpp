// LayerNorm backward over x [1, 8, 32] float: LayerNormGrad gives dx and resForGamma, LayerNormGradBeta the
// gamma and beta gradients from resForGamma. The host sizes the tmp buffer with both APIs' minimum.
#include "data_utils.h"
#include "tikicpulib.h"
#include "op_host/layer_norm_grad_tiling.h"

extern "C" __global__ __aicore__ void layer_norm_grad(GM_ADDR dy, GM_ADDR x, GM_ADDR variance, GM_ADDR mean,
                                                      GM_ADDR gamma, GM_ADDR pdX, GM_ADDR resForGamma,
                                                      GM_ADDR pdGamma, GM_ADDR pdBeta, GM_ADDR workspace,
                                                      GM_ADDR tiling);

int32_t main()
{
    constexpr uint32_t b = 1, s = 8, h = 32;
    size_t bsh = b * s * h * sizeof(float), bs = b * s * sizeof(float), hb = h * sizeof(float), fileSize = 0;
    uint8_t* dy = (uint8_t*)AscendC::GmAlloc(bsh);
    uint8_t* x = (uint8_t*)AscendC::GmAlloc(bsh);
    uint8_t* variance = (uint8_t*)AscendC::GmAlloc(bs);
    uint8_t* mean = (uint8_t*)AscendC::GmAlloc(bs);
    uint8_t* gamma = (uint8_t*)AscendC::GmAlloc(hb);
    uint8_t* pdX = (uint8_t*)AscendC::GmAlloc(bsh);
    uint8_t* resForGamma = (uint8_t*)AscendC::GmAlloc(bsh);
    uint8_t* pdGamma = (uint8_t*)AscendC::GmAlloc(hb);
    uint8_t* pdBeta = (uint8_t*)AscendC::GmAlloc(hb);
    using Tiling = optiling::LayerNormGradCustomTilingData;
    auto* tiling = (Tiling*)AscendC::GmAlloc(sizeof(Tiling));
    if (!ReadFile("dy.bin", fileSize, dy, bsh) || !ReadFile("x.bin", fileSize, x, bsh) ||
        !ReadFile("variance.bin", fileSize, variance, bs) || !ReadFile("mean.bin", fileSize, mean, bs) ||
        !ReadFile("gamma.bin", fileSize, gamma, hb)) {
        return 1;
    }
    const ge::Shape shape({b, s, h});
    uint32_t gradMax = 0, gradMin = 0, betaMax = 0, betaMin = 0;
    AscendC::GetLayerNormGradMaxMinTmpSize(shape, sizeof(float), false, gradMax, gradMin);
    AscendC::GetLayerNormGradBetaMaxMinTmpSize(shape, sizeof(float), false, betaMax, betaMin);
    const uint32_t tmp = gradMin > betaMin ? gradMin : betaMin;
    tiling->set_rows(b * s);
    tiling->set_cols(h);
    tiling->set_tmpBytes(tmp);
    tiling->set_epsilon(1e-5f);
    AscendC::GetLayerNormGradNDTilingInfo(shape, tmp, sizeof(float), false, tiling->gradTiling);
    AscendC::GetLayerNormGradBetaNDTilingInfo(shape, tmp, sizeof(float), false, tiling->betaTiling);

    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(layer_norm_grad, 1, dy, x, variance, mean, gamma, pdX, resForGamma, pdGamma, pdBeta, nullptr,
                (uint8_t*)tiling);

    WriteFile("pd_x.bin", pdX, bsh);
    WriteFile("res_for_gamma.bin", resForGamma, bsh);
    WriteFile("pd_gamma.bin", pdGamma, hb);
    WriteFile("pd_beta.bin", pdBeta, hb);
    for (uint8_t* p : {dy, x, variance, mean, gamma, pdX, resForGamma, pdGamma, pdBeta}) AscendC::GmFree(p);
    AscendC::GmFree(tiling);
    return 0;
}
