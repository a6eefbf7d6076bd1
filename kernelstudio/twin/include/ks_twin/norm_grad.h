// LayerNormGrad and LayerNormGradBeta, the backward high-level APIs of LayerNorm (lib/normalization/
// layernormgrad.h, layernormgradbeta.h on CANN), computed as CANN documents them, in float32 with sums in
// double, rounded once to T. Over rows of H (B * S of them; the first originalHLength columns are data):
//   rstd = (variance + eps)^-0.5, x1 = dy * gamma, x2 = x - mean
//   pd_var = sum(-0.5 * x1 * x2 * rstd^3), pd_mean = sum(-x1 * rstd) + pd_var / H * sum(-2 * x2)
//   pdX = x1 * rstd + pd_var * 2 / H * x2 + pd_mean / H,  resForGamma = x2 * rstd
//   LayerNormGradBeta: pdGamma[h] = sum over rows of dy * resForGamma, pdBeta[h] = sum over rows of dy.
// mean and variance hold one element per row.
#ifndef KS_TWIN_NORM_GRAD_H
#define KS_TWIN_NORM_GRAD_H

#include <cmath>
#include <cstdint>
#include <vector>

#include "../kernel_tiling/kernel_tiling.h"
#include "norm.h"
#include "shared.h"

namespace AscendC {

enum class DataFormat : uint8_t { ND = 0, NZ, NCHW, NC1HWC0, NHWC };

struct LayerNormGradShapeInfo {
    DataFormat dataFormat = DataFormat::ND;
};

}  // namespace AscendC

namespace ks_twin::norm {

template <class Tiling> inline void check_grad_tiling(const char* api, const Tiling& t, uint32_t typeSize)
{
    if (t.bLength == 0 || t.sLength == 0 || t.hLength == 0) {
        fail("tiling", "%s on %s: the tiling has B=%u, S=%u, H=%u; fill it with the API's host tiling function "
             "(Get%sNDTilingInfo) for the input shape", api, core_name(), t.bLength, t.sLength, t.hLength, api);
    }
    check_row(api, t.hLength, t.originalHLength, typeSize);
}

}  // namespace ks_twin::norm

namespace AscendC {

template <typename T, bool isReuseSource = false>
inline void LayerNormGrad(const LocalTensor<T>& outputPdX, const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                          const LocalTensor<T>& inputX, const LocalTensor<T>& inputVariance,
                          const LocalTensor<T>& inputMean, const LocalTensor<T>& inputGamma,
                          LocalTensor<uint8_t>& sharedTmpBuffer, T epsilon, LayerNormGradTiling& tiling,
                          const LayerNormGradShapeInfo& shapeInfo = {}, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::norm::check_dtype<T>("LayerNormGrad");
    const char* api = "LayerNormGrad";
    const uint32_t rows = tiling.bLength * tiling.sLength, h = tiling.hLength, oh = tiling.originalHLength;
    KS_TWIN_OPERAND('w', outputPdX, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('w', resForGamma, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', inputDy, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', inputX, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', inputVariance, static_cast<uint64_t>(rows) * sizeof(T));
    KS_TWIN_OPERAND('r', inputMean, static_cast<uint64_t>(rows) * sizeof(T));
    KS_TWIN_OPERAND('r', inputGamma, static_cast<uint64_t>(h) * sizeof(T));
    KS_TWIN_LOG("LayerNormGrad", "dtype=%s count=%u b=%u s=%u h=%u tmp=%u", ks_twin::type_name<T>(), rows * h,
                tiling.bLength, tiling.sLength, h, sharedTmpBuffer.GetSize());
    ks_twin::require_vector(api);
    if (shapeInfo.dataFormat != DataFormat::ND) {
        ks_twin::fail("launch", "%s on %s: the twin's LayerNormGrad reads ND data only", api, ks_twin::core_name());
    }
    ::ks_twin::norm::check_grad_tiling(api, tiling, sizeof(T));
    ::ks_twin::norm::check_tmp(api, sharedTmpBuffer.GetSize(), ::ks_twin::layernorm_grad_row_bytes(h, sizeof(T)),
                               "GetLayerNormGradMaxMinTmpSize");
    sharedTmpBuffer.check_aligned(api, "sharedTmpBuffer");
    for (const auto* t : {&outputPdX, &resForGamma, &inputDy, &inputX}) ks_twin::vec_operand(*t, rows * h, api, "a [B, S, H] operand");
    ks_twin::vec_operand(inputVariance, rows, api, "inputVariance");
    ks_twin::vec_operand(inputMean, rows, api, "inputMean");
    ks_twin::vec_operand(inputGamma, h, api, "inputGamma");
    const float eps = static_cast<float>(epsilon), inv = 1.0f / static_cast<float>(oh);
    std::vector<float> x1(oh), x2(oh);
    for (uint32_t r = 0; r < rows; ++r) {
        const T* dy = inputDy.GetPhyAddr() + static_cast<size_t>(r) * h;
        const T* x = inputX.GetPhyAddr() + static_cast<size_t>(r) * h;
        const float mean = static_cast<float>(inputMean.GetPhyAddr()[r]);
        const float rstd = 1.0f / std::sqrt(static_cast<float>(inputVariance.GetPhyAddr()[r]) + eps);
        double var_sum = 0.0, mean_sum = 0.0, x2_sum = 0.0;
        for (uint32_t i = 0; i < oh; ++i) {
            x1[i] = static_cast<float>(dy[i]) * static_cast<float>(inputGamma.GetPhyAddr()[i]);
            x2[i] = static_cast<float>(x[i]) - mean;
            var_sum += -0.5 * x1[i] * x2[i] * rstd * rstd * rstd;
            mean_sum += -1.0 * x1[i] * rstd;
            x2_sum += -2.0 * x2[i];
        }
        const float pd_var = static_cast<float>(var_sum);
        const float pd_mean = static_cast<float>(mean_sum + pd_var * inv * x2_sum);
        T* px = outputPdX.GetPhyAddr() + static_cast<size_t>(r) * h;
        T* rg = resForGamma.GetPhyAddr() + static_cast<size_t>(r) * h;
        for (uint32_t i = 0; i < oh; ++i) {
            px[i] = static_cast<T>(x1[i] * rstd + pd_var * 2.0f * inv * x2[i] + pd_mean * inv);
            rg[i] = static_cast<T>(x2[i] * rstd);
        }
        for (uint32_t i = oh; i < h; ++i) px[i] = rg[i] = static_cast<T>(0.0f);
    }
}

template <typename T, bool isReuseSource = false>
inline void LayerNormGradBeta(const LocalTensor<T>& outputPdGamma, const LocalTensor<T>& outputPdBeta,
                              const LocalTensor<T>& resForGamma, const LocalTensor<T>& inputDy,
                              const LocalTensor<uint8_t>& sharedTmpBuffer, const LayerNormGradBetaTiling& tiling,
                              ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::norm::check_dtype<T>("LayerNormGradBeta");
    const char* api = "LayerNormGradBeta";
    const uint32_t rows = tiling.bLength * tiling.sLength, h = tiling.hLength, oh = tiling.originalHLength;
    KS_TWIN_OPERAND('w', outputPdGamma, static_cast<uint64_t>(h) * sizeof(T));
    KS_TWIN_OPERAND('w', outputPdBeta, static_cast<uint64_t>(h) * sizeof(T));
    KS_TWIN_OPERAND('r', resForGamma, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', inputDy, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_LOG("LayerNormGradBeta", "dtype=%s count=%u b=%u s=%u h=%u tmp=%u", ks_twin::type_name<T>(), rows * h,
                tiling.bLength, tiling.sLength, h, sharedTmpBuffer.GetSize());
    ks_twin::require_vector(api);
    ::ks_twin::norm::check_grad_tiling(api, tiling, sizeof(T));
    ::ks_twin::norm::check_tmp(api, sharedTmpBuffer.GetSize(), ::ks_twin::layernorm_grad_beta_row_bytes(h, sizeof(T)),
                               "GetLayerNormGradBetaMaxMinTmpSize");
    sharedTmpBuffer.check_aligned(api, "sharedTmpBuffer");
    ks_twin::vec_operand(resForGamma, rows * h, api, "resForGamma");
    ks_twin::vec_operand(inputDy, rows * h, api, "inputDy");
    ks_twin::vec_operand(outputPdGamma, h, api, "outputPdGamma");
    ks_twin::vec_operand(outputPdBeta, h, api, "outputPdBeta");
    for (uint32_t i = 0; i < h; ++i) {
        double g = 0.0, b = 0.0;
        for (uint32_t r = 0; r < rows && i < oh; ++r) {
            const float dy = static_cast<float>(inputDy.GetPhyAddr()[static_cast<size_t>(r) * h + i]);
            g += static_cast<double>(dy) * static_cast<float>(resForGamma.GetPhyAddr()[static_cast<size_t>(r) * h + i]);
            b += dy;
        }
        outputPdGamma.GetPhyAddr()[i] = static_cast<T>(static_cast<float>(g));
        outputPdBeta.GetPhyAddr()[i] = static_cast<T>(static_cast<float>(b));
    }
}

}  // namespace AscendC

#endif
