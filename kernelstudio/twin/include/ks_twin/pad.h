// Pad and Broadcast, the vector core's high-level shape APIs (lib/pad/pad.h, lib/pad/broadcast.h on CANN).
// Each checks what CANN documents for it (the shapes, a 32-byte aligned result row, a work space no smaller
// than the tiling functions' minimum), logs its operands and element count (the trace front end prices it as
// one elementwise pass over the result) and moves the elements exactly.
#ifndef KS_TWIN_PAD_H
#define KS_TWIN_PAD_H

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../kernel_tiling/kernel_tiling.h"
#include "shared.h"
#include "vector.h"

namespace AscendC {

// Pad's fill: left and right padding, in elements, and the value written there.
struct PadParams {
    uint16_t leftPad = 0;
    uint16_t rightPad = 0;
    int32_t padValue = 0;
};

}  // namespace AscendC

namespace ks_twin::pad {

template <class T> inline void check_pad_dtype()
{
    static_assert(std::is_same<T, int16_t>::value || std::is_same<T, uint16_t>::value || std::is_same<T, half>::value ||
                      std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value ||
                      std::is_same<T, float>::value,
                  "Pad takes int16_t, uint16_t, half, int32_t, uint32_t or float");
}

// Pad of [h, w] (valid width ow): each row becomes [leftPad x padValue, its ow elements, rightPad x padValue],
// round32(w) wide; w already whole blocks (and all valid) has nothing to pad.
template <class T>
inline void pad(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const AscendC::PadParams& p,
                uint64_t tmpBytes, bool hasTmp, const PadTiling& tiling)
{
    check_pad_dtype<T>();
    const char* api = "Pad";
    const uint32_t h = tiling.srcHeight, w = tiling.srcWidth, ow = tiling.srcOriWidth, per = 32 / sizeof(T);
    const uint32_t dw = (w + per - 1) / per * per;
    KS_TWIN_OPERAND('w', dst, static_cast<uint64_t>(h) * dw * sizeof(T));
    KS_TWIN_OPERAND('r', src, static_cast<uint64_t>(h) * w * sizeof(T));
    KS_TWIN_LOG("Pad", "dtype=%s count=%u rows=%u width=%u oriWidth=%u leftPad=%u rightPad=%u", type_name<T>(), h * dw,
                h, w, ow, p.leftPad, p.rightPad);
    require_vector(api);
    if (h == 0 || w == 0) {
        fail("tiling", "Pad on %s: the PadTiling has srcHeight=%u, srcWidth=%u; fill it with PadTilingFunc(srcShape, "
             "oriSrcShape, stackBufferSize, sizeof(T), tiling) on the host", core_name(), h, w);
    }
    if (ow == 0 || ow > w || (ow == w && w % per == 0)) {
        fail("bounds", "Pad on %s: the valid width %u of rows %u wide (%u elements a 32-byte block) leaves nothing to "
             "pad; Pad needs a width that is not whole blocks, or fewer valid elements than the width", core_name(),
             ow, w, per);
    }
    if (static_cast<uint32_t>(p.leftPad) + ow + p.rightPad != dw) {
        fail("bounds", "Pad on %s: leftPad %u + valid width %u + rightPad %u = %u, but a padded row is %u elements (%u "
             "rounded up to 32 bytes); choose rightPad = %u - %u - leftPad", core_name(), p.leftPad, ow, p.rightPad,
             p.leftPad + ow + p.rightPad, dw, w, dw, ow);
    }
    if (hasTmp) {
        const uint32_t minimum = pad_min_bytes(sizeof(T));
        if (tmpBytes < minimum) {
            fail("bounds", "Pad on %s: sharedTmpBuffer holds %llu bytes but the API needs at least %u "
                 "(GetPadMaxMinTmpSize); give the tmp buffer more room", core_name(),
                 static_cast<unsigned long long>(tmpBytes), minimum);
        }
    }
    vec_operand(src, h * w, api, "srcTensor");
    vec_operand(dst, h * dw, api, "dstTensor");
    T fill;
    if constexpr (std::is_floating_point<T>::value || std::is_same<T, half>::value) {
        fill = static_cast<T>(static_cast<float>(p.padValue));
    } else {
        fill = static_cast<T>(p.padValue);
    }
    std::vector<T> rows(static_cast<size_t>(h) * dw);  // src and dst may be one tensor
    for (uint32_t r = 0; r < h; ++r) {
        T* d = rows.data() + static_cast<size_t>(r) * dw;
        const T* s = src.GetPhyAddr() + static_cast<size_t>(r) * w;
        for (uint32_t i = 0; i < p.leftPad; ++i) d[i] = fill;
        for (uint32_t i = 0; i < ow; ++i) d[p.leftPad + i] = s[i];
        for (uint32_t i = p.leftPad + ow; i < dw; ++i) d[i] = fill;
    }
    std::memcpy(dst.GetPhyAddr(), rows.data(), rows.size() * sizeof(T));
}

// Broadcast of srcShape to dstShape (dims 1 or 2; the broadcast axis of src has length 1).
template <class T, int32_t dim, int32_t axis>
inline void broadcast(const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src, const uint32_t* dstShape,
                      const uint32_t* srcShape, uint64_t tmpBytes, bool hasTmp)
{
    static_assert(dim == 1 || dim == 2, "the twin's Broadcast takes 1-D or 2-D shapes (as CANN on this chip)");
    static_assert(axis == 0 || axis == 1, "Broadcast's axis is 0 or 1");
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "Broadcast takes 1-, 2- or 4-byte elements");
    const char* api = "Broadcast";
    const uint32_t rows = dim == 2 ? dstShape[0] : 1, cols = dim == 2 ? dstShape[1] : dstShape[0];
    const uint32_t sr = dim == 2 ? srcShape[0] : 1, sc = dim == 2 ? srcShape[1] : srcShape[0];
    KS_TWIN_OPERAND('w', dst, static_cast<uint64_t>(rows) * cols * sizeof(T));
    KS_TWIN_OPERAND('r', src, static_cast<uint64_t>(sr) * sc * sizeof(T));
    KS_TWIN_LOG("Broadcast", "dtype=%s count=%u dim=%d axis=%d rows=%u cols=%u", type_name<T>(), rows * cols, dim, axis,
                rows, cols);
    require_vector(api);
    const bool ok = dim == 1 ? (sc == 1 || sc == cols)
                             : (axis == 0 ? (sr == 1 && sc == cols) : (sc == 1 && sr == rows));
    if (!ok || rows == 0 || cols == 0) {
        fail("bounds", "Broadcast<dim=%d, axis=%d> on %s: source [%u, %u] cannot broadcast to [%u, %u]; along axis %d "
             "the source has length 1 and the other axis the result's length", dim, axis, core_name(), sr, sc, rows,
             cols, axis);
    }
    const uint32_t per = 32 / sizeof(T);
    if (dim == 2 && axis == 0 && cols % per != 0) {
        fail("alignment", "Broadcast<2, 0> on %s: rows of %u elements are not whole 32-byte blocks (%u elements); pad "
             "the row to %u", core_name(), cols, per, (cols + per - 1) / per * per);
    }
    if (hasTmp) {
        uint32_t maxValue = 0, minValue = 0;
        broadcast_tmp_bytes(sr, sc, rows, cols, sizeof(T), maxValue, minValue);
        if (tmpBytes < minValue) {
            fail("bounds", "Broadcast on %s: sharedTmpBuffer holds %llu bytes but the API needs at least %u for [%u, %u] "
                 "-> [%u, %u] (GetBroadCastMaxMinTmpSize); give the tmp buffer more room", core_name(),
                 static_cast<unsigned long long>(tmpBytes), minValue, sr, sc, rows, cols);
        }
    }
    vec_operand(src, sr * sc, api, "srcLocal");
    vec_operand(dst, rows * cols, api, "dstLocal");
    std::vector<T> in(src.GetPhyAddr(), src.GetPhyAddr() + static_cast<size_t>(sr) * sc);
    T* d = dst.GetPhyAddr();
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c = 0; c < cols; ++c) {
            const uint32_t i = (sr == 1 ? 0 : r) * sc + (sc == 1 ? 0 : c);
            d[static_cast<size_t>(r) * cols + c] = in[i];
        }
    }
}

}  // namespace ks_twin::pad

namespace AscendC {

template <typename T>
inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
                const LocalTensor<uint8_t>& sharedTmpBuffer, PadTiling& tiling, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    sharedTmpBuffer.check_aligned("Pad", "sharedTmpBuffer");
    ks_twin::pad::pad(dstTensor, srcTensor, padParams, sharedTmpBuffer.GetSize(), true, tiling);
}

template <typename T>
inline void Pad(const LocalTensor<T>& dstTensor, const LocalTensor<T>& srcTensor, PadParams& padParams,
                PadTiling& tiling, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ks_twin::pad::pad(dstTensor, srcTensor, padParams, 0, false, tiling);
}

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], LocalTensor<uint8_t>& sharedTmpBuffer,
                      ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    sharedTmpBuffer.check_aligned("Broadcast", "sharedTmpBuffer");
    ks_twin::pad::broadcast<T, dim, axis>(dstLocal, srcLocal, dstShape, srcShape, sharedTmpBuffer.GetSize(), true);
}

template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void Broadcast(const LocalTensor<T>& dstLocal, const LocalTensor<T>& srcLocal, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    ks_twin::pad::broadcast<T, dim, axis>(dstLocal, srcLocal, dstShape, srcShape, 0, false);
}

}  // namespace AscendC

#endif
