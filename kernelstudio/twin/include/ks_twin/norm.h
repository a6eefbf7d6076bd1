// High-level row APIs of the vector core: SoftMax, LayerNorm (output, mean, variance) and RmsNorm, the
// overloads that take a caller-provided sharedTmpBuffer. Each checks what CANN states for it (half or
// float operands, a 32-byte aligned last axis, a tiling made for this shape, a tmp buffer no smaller
// than the API's minimum) and computes in float32, sums in double, rounding once to T.
#ifndef KS_TWIN_NORM_H
#define KS_TWIN_NORM_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "../kernel_tiling/kernel_tiling.h"
#include "shared.h"
#include "pipe.h"
#include "vector.h"

namespace AscendC {

// The shape a SoftMax call works on: srcM rows of srcK elements (srcK 32-byte aligned), of which the
// first oriSrcM rows and oriSrcK columns hold data.
struct SoftMaxShapeInfo {
    uint32_t srcM = 0;
    uint32_t srcK = 0;
    uint32_t oriSrcM = 0;
    uint32_t oriSrcK = 0;
};

}  // namespace AscendC

namespace ks_twin::norm {

template <class T> inline void check_dtype(const char* api)
{
    (void)api;
    static_assert(std::is_same<T, half>::value || std::is_same<T, float>::value,
                  "SoftMax, LayerNorm and RmsNorm take half or float operands");
}

inline void check_row(const char* api, uint32_t len, uint32_t orig, uint32_t typeSize)
{
    if (len == 0 || len * typeSize % 32 != 0) {
        ks_twin::fail("alignment", "%s on %s: the last axis holds %u elements of %u bytes = %u bytes, not a whole "
                      "number of 32-byte blocks; pad each row to %u elements and pass the unpadded length as "
                      "the original length", api, ks_twin::core_name(), len, typeSize, len * typeSize,
                      (len * typeSize + 31) / 32 * 32 / typeSize);
    }
    if (orig == 0 || orig > len) {
        ks_twin::fail("bounds", "%s on %s: the original last-axis length %u must be in 1..%u (the padded length)",
                      api, ks_twin::core_name(), orig, len);
    }
}

inline void check_tmp(const char* api, uint64_t have, uint64_t minimum, const char* sizer)
{
    if (have < minimum) {
        ks_twin::fail("bounds", "%s on %s: sharedTmpBuffer holds %llu bytes but the API needs at least %llu for "
                      "this shape (%s); give the tmp buffer more room", api, ks_twin::core_name(),
                      static_cast<unsigned long long>(have), static_cast<unsigned long long>(minimum), sizer);
    }
}

}  // namespace ks_twin::norm

namespace AscendC {

// SoftMax: per row, dst = exp(src - max) / sum(exp(src - max)) over the first oriSrcK columns; each row's
// max and sum are written to one 32-byte block of maxTensor / sumTensor (32 / sizeof(T) copies).
template <typename T, bool isReuseSource = false, bool isBasicBlock = false, bool isDataFormatNZ = false>
inline void SoftMax(const LocalTensor<T>& dstTensor, const LocalTensor<T>& sumTensor, const LocalTensor<T>& maxTensor,
                    const LocalTensor<T>& srcTensor, const LocalTensor<uint8_t>& sharedTmpBuffer,
                    const SoftMaxTiling& tiling, const SoftMaxShapeInfo& softmaxShapeInfo = {},
                    ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::norm::check_dtype<T>("SoftMax");
    static_assert(!isDataFormatNZ, "the twin's SoftMax reads ND data only");
    const char* api = "SoftMax";
    SoftMaxShapeInfo info = softmaxShapeInfo;
    if (info.srcM == 0) info = SoftMaxShapeInfo{tiling.srcM, tiling.srcK, tiling.srcM, tiling.srcK};
    {  // the operands, for the sync checker and the trace: dst, sum and max written, src read
        const uint64_t n = static_cast<uint64_t>(info.oriSrcM) * info.srcK, per = 32 / sizeof(T);
        KS_TWIN_OPERAND('w', dstTensor, n * sizeof(T));
        KS_TWIN_OPERAND('w', sumTensor, info.oriSrcM * per * sizeof(T));
        KS_TWIN_OPERAND('w', maxTensor, info.oriSrcM * per * sizeof(T));
        KS_TWIN_OPERAND('r', srcTensor, n * sizeof(T));
    }
    KS_TWIN_LOG("SoftMax", "dtype=%s srcM=%u srcK=%u oriSrcM=%u oriSrcK=%u tmp=%u", ks_twin::type_name<T>(), info.srcM,
                info.srcK, info.oriSrcM, info.oriSrcK, sharedTmpBuffer.GetSize());
    ks_twin::require_vector(api);
    ::ks_twin::norm::check_row(api, info.srcK, info.oriSrcK, sizeof(T));
    if (info.oriSrcM > info.srcM) {
        ks_twin::fail("bounds", "SoftMax on %s: SoftMaxShapeInfo has oriSrcM=%u rows of data in srcM=%u; oriSrcM "
                      "must be at most srcM", ks_twin::core_name(), info.oriSrcM, info.srcM);
    }
    const uint32_t minTmp = ::ks_twin::norm::softmax_row_bytes(info.srcK, sizeof(T));
    ::ks_twin::norm::check_tmp(api, sharedTmpBuffer.GetSize(), minTmp, "GetSoftMaxMinTmpSize");
    // As CANN's kernel does: a call on another shape than its tiling's gets a tiling computed for its shape
    // and the sharedTmpBuffer it was given.
    const bool own = info.srcM == tiling.srcM && info.srcK == tiling.srcK;
    const SoftMaxTiling used = own ? tiling : ::ks_twin::norm::softmax_tiling(info.srcM, info.srcK, sizeof(T),
                                                                              sharedTmpBuffer.GetSize());
    if (used.splitM == 0) {
        ks_twin::fail("tiling", "SoftMax on %s: the SoftMaxTiling has splitM = 0: SoftMaxTilingFunc got less work "
                      "space than GetSoftMaxMinTmpSize = %u bytes for %u x %u; pass at least that",
                      ks_twin::core_name(), minTmp, info.srcM, info.srcK);
    }
    sharedTmpBuffer.check_aligned(api, "sharedTmpBuffer");
    const uint32_t rows = info.oriSrcM, k = info.srcK, block = 32 / sizeof(T);
    ks_twin::vec_operand(srcTensor, rows * k, api, "srcTensor");
    ks_twin::vec_operand(dstTensor, rows * k, api, "dstTensor");
    ks_twin::vec_operand(maxTensor, rows * block, api, "maxTensor");
    ks_twin::vec_operand(sumTensor, rows * block, api, "sumTensor");
    for (uint32_t r = 0; r < rows; ++r) {
        const T* s = srcTensor.GetPhyAddr() + r * k;
        T* d = dstTensor.GetPhyAddr() + r * k;
        float mx = -INFINITY;
        for (uint32_t i = 0; i < info.oriSrcK; ++i) mx = std::fmax(mx, static_cast<float>(s[i]));
        double sum = 0.0;
        for (uint32_t i = 0; i < info.oriSrcK; ++i) sum += static_cast<double>(std::exp(static_cast<float>(s[i]) - mx));
        const float fs = static_cast<float>(sum);
        for (uint32_t i = 0; i < info.oriSrcK; ++i) d[i] = static_cast<T>(std::exp(static_cast<float>(s[i]) - mx) / fs);
        for (uint32_t i = info.oriSrcK; i < k; ++i) d[i] = static_cast<T>(0.0f);
        for (uint32_t j = 0; j < block; ++j) {
            maxTensor.GetPhyAddr()[r * block + j] = static_cast<T>(mx);
            sumTensor.GetPhyAddr()[r * block + j] = static_cast<T>(fs);
        }
    }
}

// AdjustSoftMaxRes: every row of softMaxRes (srcM x srcK of the shape info) whose max equals `from` (the bit
// pattern of a T2 value: 16 bits for half) is set to `to`; true when at least one row was. stepSizeMode 0 reads
// a row's max at the start of its 32-byte block of maxTensor (as SoftMax writes it), non-zero one element a row.
template <typename T1, typename T2, bool isDataFormatNZ = false, uint8_t stepSizeMode = 0>
inline bool AdjustSoftMaxRes(const LocalTensor<T1>& softMaxRes, const LocalTensor<T2>& maxTensor, const uint32_t from,
                             const T1 to, const SoftMaxShapeInfo& softmaxShapeInfo, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::norm::check_dtype<T1>("AdjustSoftMaxRes");
    ::ks_twin::norm::check_dtype<T2>("AdjustSoftMaxRes");
    static_assert(!isDataFormatNZ, "the twin's AdjustSoftMaxRes reads ND data only");
    const char* api = "AdjustSoftMaxRes";
    const uint32_t rows = softmaxShapeInfo.srcM, k = softmaxShapeInfo.srcK;
    const uint32_t step = stepSizeMode == 0 ? 32 / sizeof(T2) : 1;
    KS_TWIN_OPERAND('w', softMaxRes, static_cast<uint64_t>(rows) * k * sizeof(T1));
    KS_TWIN_OPERAND('r', maxTensor, static_cast<uint64_t>(rows) * step * sizeof(T2));
    KS_TWIN_LOG("AdjustSoftMaxRes", "dtype=%s count=%u rows=%u", ks_twin::type_name<T1>(), rows * k, rows);
    ks_twin::require_vector(api);
    ::ks_twin::norm::check_row(api, k, k, sizeof(T1));
    ks_twin::vec_operand(softMaxRes, rows * k, api, "softMaxRes");
    ks_twin::vec_operand(maxTensor, (rows == 0 ? 0 : (rows - 1) * step + 1), api, "maxTensor");
    bool changed = false;
    for (uint32_t r = 0; r < rows; ++r) {
        const T2 m = maxTensor.GetPhyAddr()[r * step];
        uint32_t bits = 0;
        std::memcpy(&bits, &m, sizeof(T2));
        if (bits != from) continue;
        changed = true;
        for (uint32_t i = 0; i < k; ++i) softMaxRes.GetPhyAddr()[r * k + i] = to;
    }
    return changed;
}

// LayerNorm over [B, S, H]: per row, mean and (biased) variance of the first originalHLength elements,
// output = (x - mean) / sqrt(variance + epsilon) * gamma + beta; mean and variance, B * S each, as T.
template <typename T, bool isReuseSource = false>
inline void LayerNorm(const LocalTensor<T>& output, const LocalTensor<T>& outputMean,
                      const LocalTensor<T>& outputVariance, const LocalTensor<T>& inputX, const LocalTensor<T>& gamma,
                      const LocalTensor<T>& beta, const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon,
                      LayerNormTiling& tiling, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::norm::check_dtype<T>("LayerNorm");
    const char* api = "LayerNorm";
    const uint32_t rows = tiling.bLength * tiling.sLength, h = tiling.hLength, oh = tiling.originalHLength;
    // the operands: output, mean and variance written; x, gamma and beta read
    KS_TWIN_OPERAND('w', output, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('w', outputMean, static_cast<uint64_t>(rows) * sizeof(T));
    KS_TWIN_OPERAND('w', outputVariance, static_cast<uint64_t>(rows) * sizeof(T));
    KS_TWIN_OPERAND('r', inputX, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', gamma, static_cast<uint64_t>(oh) * sizeof(T));
    KS_TWIN_OPERAND('r', beta, static_cast<uint64_t>(oh) * sizeof(T));
    KS_TWIN_LOG("LayerNorm", "dtype=%s b=%u s=%u h=%u originalH=%u tmp=%u", ks_twin::type_name<T>(), tiling.bLength,
                tiling.sLength, h, oh, sharedTmpBuffer.GetSize());
    ks_twin::require_vector(api);
    if (rows == 0) {
        ks_twin::fail("tiling", "LayerNorm on %s: the LayerNormTiling holds bLength=%u, sLength=%u; fill it with "
                      "GetLayerNormNDTilingInfo", ks_twin::core_name(), tiling.bLength, tiling.sLength);
    }
    ::ks_twin::norm::check_row(api, h, oh, sizeof(T));
    const uint32_t minimum = ::ks_twin::norm::layernorm_row_bytes(h, sizeof(T));
    ::ks_twin::norm::check_tmp(api, sharedTmpBuffer.GetSize(), minimum, "GetLayerNormMaxMinTmpSize");
    if (tiling.tmpBufSize < minimum) {
        ks_twin::fail("tiling", "LayerNorm on %s: the LayerNormTiling was made for %u bytes of work space, below "
                      "the minimum %u (GetLayerNormMaxMinTmpSize); pass at least that to GetLayerNormNDTilingInfo",
                      ks_twin::core_name(), tiling.tmpBufSize, minimum);
    }
    ::ks_twin::norm::check_tmp(api, sharedTmpBuffer.GetSize(), tiling.tmpBufSize, "the stackBufferSize of the tiling");
    sharedTmpBuffer.check_aligned(api, "sharedTmpBuffer");
    ks_twin::vec_operand(inputX, rows * h, api, "inputX");
    ks_twin::vec_operand(output, rows * h, api, "output");
    ks_twin::vec_operand(gamma, oh, api, "gamma");
    ks_twin::vec_operand(beta, oh, api, "beta");
    ks_twin::vec_operand(outputMean, rows, api, "outputMean");
    ks_twin::vec_operand(outputVariance, rows, api, "outputVariance");
    const float eps = static_cast<float>(epsilon);
    for (uint32_t r = 0; r < rows; ++r) {
        const T* x = inputX.GetPhyAddr() + r * h;
        T* y = output.GetPhyAddr() + r * h;
        double acc = 0.0;
        for (uint32_t i = 0; i < oh; ++i) acc += static_cast<double>(static_cast<float>(x[i]));
        const float mean = static_cast<float>(acc / oh);
        double sq = 0.0;
        for (uint32_t i = 0; i < oh; ++i) {
            const float d = static_cast<float>(x[i]) - mean;
            sq += static_cast<double>(d * d);
        }
        const float var = static_cast<float>(sq / oh);
        const float rstd = 1.0f / std::sqrt(var + eps);
        for (uint32_t i = 0; i < oh; ++i) {
            const float v = (static_cast<float>(x[i]) - mean) * rstd;
            y[i] = static_cast<T>(v * static_cast<float>(gamma.GetPhyAddr()[i]) + static_cast<float>(beta.GetPhyAddr()[i]));
        }
        for (uint32_t i = oh; i < h; ++i) y[i] = static_cast<T>(0.0f);
        outputMean.GetPhyAddr()[r] = static_cast<T>(mean);
        outputVariance.GetPhyAddr()[r] = static_cast<T>(var);
    }
}

// RmsNorm over [B, S, H]: per row, dst = src / sqrt(mean(src^2) + epsilon) * gamma, the mean over the
// first originalHLength elements.
template <typename T, bool isBasicBlock = false>
inline void RmsNorm(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const LocalTensor<T>& gammaLocal,
                    const LocalTensor<uint8_t>& sharedTmpBuffer, const T epsilon, const RmsNormTiling& tiling,
                    ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ::ks_twin::norm::check_dtype<T>("RmsNorm");
    const char* api = "RmsNorm";
    const uint32_t rows = tiling.bLength * tiling.sLength, h = tiling.hLength, oh = tiling.originalHLength;
    // the operands: dst written; src and gamma read
    KS_TWIN_OPERAND('w', dstLocal, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', srcLocal, static_cast<uint64_t>(rows) * h * sizeof(T));
    KS_TWIN_OPERAND('r', gammaLocal, static_cast<uint64_t>(oh) * sizeof(T));
    KS_TWIN_LOG("RmsNorm", "dtype=%s b=%u s=%u h=%u originalH=%u tmp=%u", ks_twin::type_name<T>(), tiling.bLength,
                tiling.sLength, h, oh, sharedTmpBuffer.GetSize());
    ks_twin::require_vector(api);
    if (rows == 0 || tiling.mainBsLength == 0) {
        ks_twin::fail("tiling", "RmsNorm on %s: the RmsNormTiling holds bLength=%u, sLength=%u, mainBsLength=%u; "
                      "fill it with GetRmsNormTilingInfo (which returns false when the work space is too small)",
                      ks_twin::core_name(), tiling.bLength, tiling.sLength, tiling.mainBsLength);
    }
    ::ks_twin::norm::check_row(api, h, oh, sizeof(T));
    if (isBasicBlock && (h % 64 != 0 || h >= 2048 || rows % 8 != 0)) {
        ks_twin::fail("launch", "RmsNorm<isBasicBlock=true> on %s: a basic block needs H a multiple of 64 below "
                      "2048 and B * S a multiple of 8, got H=%u, B * S=%u; use isBasicBlock=false",
                      ks_twin::core_name(), h, rows);
    }
    ::ks_twin::norm::check_tmp(api, sharedTmpBuffer.GetSize(), ::ks_twin::norm::rmsnorm_row_bytes(h, sizeof(T)),
                       "GetRmsNormMaxMinTmpSize");
    sharedTmpBuffer.check_aligned(api, "sharedTmpBuffer");
    ks_twin::vec_operand(srcLocal, rows * h, api, "srcLocal");
    ks_twin::vec_operand(dstLocal, rows * h, api, "dstLocal");
    ks_twin::vec_operand(gammaLocal, oh, api, "gammaLocal");
    const float eps = static_cast<float>(epsilon);
    for (uint32_t r = 0; r < rows; ++r) {
        const T* x = srcLocal.GetPhyAddr() + r * h;
        T* y = dstLocal.GetPhyAddr() + r * h;
        double sq = 0.0;
        for (uint32_t i = 0; i < oh; ++i) {
            const float v = static_cast<float>(x[i]);
            sq += static_cast<double>(v * v);
        }
        const float scale = 1.0f / std::sqrt(static_cast<float>(sq / oh) + eps);
        for (uint32_t i = 0; i < oh; ++i) {
            y[i] = static_cast<T>(static_cast<float>(x[i]) * scale * static_cast<float>(gammaLocal.GetPhyAddr()[i]));
        }
        for (uint32_t i = oh; i < h; ++i) y[i] = static_cast<T>(0.0f);
    }
}

}  // namespace AscendC

#endif
