// Cube-core basic API: GM->L1 ND2NZ DataCopy, LoadData (Load2D, Load3Dv2 img2col), Mmad, Fixpipe L0C->GM.
//
// Layouts are the chip's (C0 = 32 bytes of T, fractal = 16 x C0, 512 bytes): L1 matrices in NZ (from ND2NZ
// or a FRACTAL_Z tile), L0A in zZ, L0B in nZ, L0C in NZ (16 x 16 float fractals). The feature map Load3Dv2
// reads from L1 is NC1HWC0 without the batch, [C1][l1H][l1W][C0], and the patch matrix's K axis is ordered
// (c1, kh, kw, c0), the order of FRACTAL_Z weights (see ../README.md).
#ifndef KS_TWIN_CUBE_BASIC_H
#define KS_TWIN_CUBE_BASIC_H

#include <vector>

#include "copy.h"

enum QuantMode_t : uint8_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };

namespace AscendC {

constexpr int32_t PAD_SIZE = 4;  // padList: left, right, top, bottom

struct Nd2NzParams {
    uint16_t ndNum = 1;              // ND matrices moved
    uint16_t nValue = 0;             // rows of each ND matrix
    uint16_t dValue = 0;             // columns of each ND matrix (elements)
    uint16_t srcNdMatrixStride = 0;  // elements between ND matrix starts in GM
    uint16_t srcDValue = 0;          // elements between GM rows
    uint16_t dstNzC0Stride = 0;      // C0 blocks between the starts of consecutive C0 column blocks in L1
    uint16_t dstNzNStride = 1;       // C0 blocks between consecutive rows inside a column block
    uint16_t dstNzMatrixStride = 0;  // elements between NZ matrix starts in L1
    Nd2NzParams() = default;
    Nd2NzParams(uint16_t nd, uint16_t n, uint16_t d, uint16_t srcMat, uint16_t srcD, uint16_t c0Stride,
                uint16_t nStride, uint16_t dstMat)
        : ndNum(nd), nValue(n), dValue(d), srcNdMatrixStride(srcMat), srcDValue(srcD), dstNzC0Stride(c0Stride),
          dstNzNStride(nStride), dstNzMatrixStride(dstMat)
    {
    }
};

struct LoadData2DParams {
    uint16_t startIndex = 0;  // first source fractal (512 B units)
    uint16_t dstGap = 0;      // 512 B fractals left empty between destination fractals
    uint16_t srcStride = 0;   // 512 B fractals between the starts of consecutive source fractals
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;  // fractals moved, 1..255
    uint8_t sid = 0;
    uint8_t addrMode = 0;
    LoadData2DParams() = default;
    LoadData2DParams(uint16_t start, uint8_t repeat, uint16_t stride, uint8_t sidIn, uint16_t gap, bool trans,
                     uint8_t mode)
        : startIndex(start), dstGap(gap), srcStride(stride), ifTranspose(trans), repeatTimes(repeat), sid(sidIn),
          addrMode(mode)
    {
    }
};
using LoadData2dParams = LoadData2DParams;

template <class T> struct LoadData3DParamsV2 {
    uint8_t padList[PAD_SIZE] = {0, 0, 0, 0};
    uint16_t l1H = 0;
    uint16_t l1W = 0;
    uint16_t channelSize = 0;
    uint16_t kExtension = 0;  // patch-matrix columns moved (K axis)
    uint16_t mExtension = 0;  // patch-matrix rows moved (output pixels)
    uint16_t kStartPt = 0;
    uint16_t mStartPt = 0;
    uint8_t strideW = 1;
    uint8_t strideH = 1;
    uint8_t filterW = 1;
    uint8_t filterH = 1;
    uint8_t dilationFilterW = 1;
    uint8_t dilationFilterH = 1;
    bool enTranspose = false;
    bool enSmallK = false;
    T padValue = T(0);
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
};

struct MmadParams {
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;  // true: C = A * B; false: C += A * B
    MmadParams() = default;
    MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, uint8_t unit, bool source, bool initVal)
        : m(mIn), n(nIn), k(kIn), unitFlag(unit), cmatrixSource(source), cmatrixInitVal(initVal)
    {
    }
};

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
};
inline constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
inline constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};

struct FixpipeParamsV220 {
    uint16_t nSize = 0;      // columns moved
    uint16_t mSize = 0;      // rows moved
    uint16_t srcStride = 0;  // rows (C0_SIZE units) between the starts of the 16-column blocks of the NZ source
    uint32_t dstStride = 0;  // elements between destination rows (NZ2ND)
    bool reluEn = false;
    QuantMode_t quantPre = NoQuant;
    int64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    uint8_t unitFlag = 0;
    FixpipeParamsV220() = default;
    FixpipeParamsV220(uint16_t n, uint16_t m, uint16_t srcS, uint32_t dstS, bool relu)
        : nSize(n), mSize(m), srcStride(srcS), dstStride(dstS), reluEn(relu)
    {
    }
    FixpipeParamsV220(uint16_t n, uint16_t m, uint16_t srcS, uint32_t dstS, bool relu, QuantMode_t quant,
                      int64_t scalar, uint16_t nd, uint16_t srcNd, uint16_t dstNd, uint8_t unit)
        : nSize(n), mSize(m), srcStride(srcS), dstStride(dstS), reluEn(relu), quantPre(quant), deqScalar(scalar),
          ndNum(nd), srcNdStride(srcNd), dstNdStride(dstNd), unitFlag(unit)
    {
    }
};

}  // namespace AscendC

namespace ks_twin {

template <class T> constexpr uint32_t c0_of() { return 32 / sizeof(T); }

// FixPipe's float -> T conversion: round to nearest even (half via _Float16, bfloat16_t via its constructor).
template <class T> inline T fix_convert(float v)
{
    if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t(v);
    } else {
        return static_cast<T>(v);
    }
}

inline void require_position(AscendC::TPosition got, AscendC::TPosition a, AscendC::TPosition b, const char* api,
                             const char* role)
{
    if (got != a && got != b) {
        fail("launch", "%s on %s: %s is a %s tensor; it must come from a %s or %s queue", api, core_name(), role,
             position_name(got), position_name(a), position_name(b));
    }
}

template <class T> inline void require_aligned(const AscendC::LocalTensor<T>& t, uint64_t bytes, const char* api,
                                               const char* role)
{
    if (t.ByteOffset() % bytes != 0) {
        fail("alignment", "%s on %s: %s starts at byte %llu of %s, not on a %llu-byte boundary; offset it by whole "
             "%llu-byte units (%llu elements of %s)", api, core_name(), role,
             static_cast<unsigned long long>(t.ByteOffset()), position_name(t.GetPosition()),
             static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(bytes),
             static_cast<unsigned long long>(bytes / sizeof(T)), type_name<T>());
    }
}

template <class T> inline void require_fits(const AscendC::LocalTensor<T>& t, uint64_t elems, const char* api,
                                            const char* role, const char* why)
{
    if (elems > t.GetSize()) {
        fail("bounds", "%s on %s: %s needs %llu elements of %s (%s) but the %s tensor holds %u; give the queue "
             "larger buffers in InitBuffer or move a smaller tile", api, core_name(), role,
             static_cast<unsigned long long>(elems), type_name<T>(), why, position_name(t.GetPosition()),
             t.GetSize());
    }
}

}  // namespace ks_twin

namespace AscendC {

// ---- GM -> L1 with ND2NZ: each ND matrix lands as C0-wide column blocks (NZ) --------------------------
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    if (p.ndNum > 0 && p.nValue > 0 && p.dValue > 0) {  // the NZ span written: last matrix, column block, row
        constexpr uint64_t c0 = 32 / sizeof(T);
        uint64_t last = static_cast<uint64_t>(p.ndNum - 1) * p.dstNzMatrixStride +
                        (static_cast<uint64_t>(p.dValue - 1) / c0) * p.dstNzC0Stride * c0 +
                        static_cast<uint64_t>(p.nValue - 1) * p.dstNzNStride * c0 + c0;
        KS_TWIN_OPERAND('w', dst, last * sizeof(T));
        KS_TWIN_GM(src, static_cast<uint64_t>(p.ndNum) * p.nValue * p.dValue * sizeof(T));  // the bytes read
        if (p.ndNum == 1) KS_TWIN_GM_ROWS(p.nValue, p.dValue * sizeof(T), static_cast<uint64_t>(p.srcDValue) * sizeof(T));
    }
    char api[200];
    std::snprintf(api, sizeof api, "DataCopy(%s <- GM, Nd2NzParams{ndNum=%u, nValue=%u, dValue=%u, "
                  "srcNdMatrixStride=%u, srcDValue=%u, dstNzC0Stride=%u, dstNzNStride=%u, dstNzMatrixStride=%u})",
                  ks_twin::position_name(dst.GetPosition()), p.ndNum, p.nValue, p.dValue, p.srcNdMatrixStride,
                  p.srcDValue, p.dstNzC0Stride, p.dstNzNStride, p.dstNzMatrixStride);
    KS_TWIN_LOG("DataCopy", "dst=%s src=GM dtype=%s format=Nd2Nz ndNum=%u nValue=%u dValue=%u",
                ks_twin::position_name(dst.GetPosition()), ks_twin::type_name<T>(), p.ndNum, p.nValue, p.dValue);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::require_position(dst.GetPosition(), TPosition::A1, TPosition::B1, api, "the destination");
    constexpr uint32_t C0 = ks_twin::c0_of<T>();
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0 || p.nValue > 16384 || p.ndNum > 4095) {
        ks_twin::fail("bounds", "%s on %s: ndNum must be 1..4095, nValue 1..16384 and dValue >= 1", api,
                      ks_twin::core_name());
    }
    if ((p.nValue > 1 && p.srcDValue < p.dValue) || p.dstNzNStride == 0 || p.dstNzC0Stride == 0) {
        ks_twin::fail("bounds", "%s on %s: srcDValue must be >= dValue and dstNzC0Stride, dstNzNStride >= 1", api,
                      ks_twin::core_name());
    }
    if (p.dValue > C0 && p.dstNzC0Stride < (p.nValue - 1) * p.dstNzNStride + 1) {
        ks_twin::fail("bounds", "%s on %s: dstNzC0Stride %u is smaller than the %u rows of a column block; the "
                      "column blocks would overlap", api, ks_twin::core_name(), p.dstNzC0Stride, p.nValue);
    }
    if (p.ndNum > 1 && p.dstNzMatrixStride % C0 != 0) {
        ks_twin::fail("alignment", "%s on %s: dstNzMatrixStride %u is not a whole number of %u-element (32-byte) "
                      "blocks", api, ks_twin::core_name(), p.dstNzMatrixStride, C0);
    }
    dst.check_aligned(api, "the destination");
    uint64_t blocks = (p.dValue + C0 - 1) / C0;
    uint64_t last = static_cast<uint64_t>(p.ndNum - 1) * p.dstNzMatrixStride +
                    ((blocks - 1) * p.dstNzC0Stride + static_cast<uint64_t>(p.nValue - 1) * p.dstNzNStride + 1) * C0;
    ks_twin::require_fits(dst, last, api, "the destination", "the NZ matrices written");
    uint64_t src_span = static_cast<uint64_t>(p.ndNum - 1) * p.srcNdMatrixStride +
                        static_cast<uint64_t>(p.nValue - 1) * p.srcDValue + p.dValue;
    src.check(0, src_span, api);
    for (uint32_t nd = 0; nd < p.ndNum; ++nd) {
        for (uint32_t r = 0; r < p.nValue; ++r) {
            const T* s = src.GetPhyAddr() + nd * static_cast<uint64_t>(p.srcNdMatrixStride) + r * uint64_t(p.srcDValue);
            T* d = dst.GetPhyAddr() + nd * static_cast<uint64_t>(p.dstNzMatrixStride) + r * uint64_t(p.dstNzNStride) * C0;
            for (uint32_t c = 0; c < p.dValue; ++c) d[(c / C0) * uint64_t(p.dstNzC0Stride) * C0 + c % C0] = s[c];
        }
    }
}

// ---- Load2D: L1 -> L0A/L0B, repeatTimes fractals of 16 x C0 (512 bytes) -----------------------------------
template <class T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    if (p.repeatTimes > 0) {  // 512-byte fractals: read from startIndex every srcStride, written every 1 + dstGap
        KS_TWIN_OPERAND('w', dst, (static_cast<uint64_t>(p.repeatTimes - 1) * (1u + p.dstGap) + 1) * 512);
        KS_TWIN_REF("r=%s:%llu+%llu", ks_twin::position_name(src.GetPosition()),
                    static_cast<unsigned long long>(src.ByteOffset() + static_cast<uint64_t>(p.startIndex) * 512),
                    static_cast<unsigned long long>((static_cast<uint64_t>(p.repeatTimes - 1) * p.srcStride + 1) * 512));
    }
    char api[200];
    std::snprintf(api, sizeof api, "LoadData(%s <- %s, LoadData2DParams{startIndex=%u, repeatTimes=%u, srcStride=%u, "
                  "dstGap=%u, ifTranspose=%d})", ks_twin::position_name(dst.GetPosition()),
                  ks_twin::position_name(src.GetPosition()), p.startIndex, p.repeatTimes, p.srcStride, p.dstGap,
                  p.ifTranspose ? 1 : 0);
    KS_TWIN_LOG("LoadData", "dst=%s src=%s dtype=%s format=2D repeatTimes=%u ifTranspose=%d",
                ks_twin::position_name(dst.GetPosition()), ks_twin::position_name(src.GetPosition()),
                ks_twin::type_name<T>(), p.repeatTimes, p.ifTranspose ? 1 : 0);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::require_position(dst.GetPosition(), TPosition::A2, TPosition::B2, api, "the destination");
    ks_twin::require_position(src.GetPosition(), TPosition::A1, TPosition::B1, api, "the source");
    if (p.repeatTimes == 0) {
        ks_twin::fail("bounds", "%s on %s: repeatTimes must be 1..255", api, ks_twin::core_name());
    }
    if (p.ifTranspose && sizeof(T) != 2) {
        ks_twin::fail("launch", "%s on %s: the twin transposes 16 x 16 fractals of 2-byte types only", api,
                      ks_twin::core_name());
    }
    constexpr uint32_t F = 512 / sizeof(T);  // elements per fractal
    ks_twin::require_aligned(dst, 512, api, "the destination");
    ks_twin::require_aligned(src, 32, api, "the source");
    uint64_t src_last = (p.startIndex + static_cast<uint64_t>(p.repeatTimes - 1) * p.srcStride + 1) * F;
    uint64_t dst_last = (static_cast<uint64_t>(p.repeatTimes - 1) * (1 + p.dstGap) + 1) * F;
    ks_twin::require_fits(src, src_last, api, "the source", "the fractals read");
    ks_twin::require_fits(dst, dst_last, api, "the destination", "the fractals written");
    for (uint32_t r = 0; r < p.repeatTimes; ++r) {
        const T* s = src.GetPhyAddr() + (p.startIndex + uint64_t(r) * p.srcStride) * F;
        T* d = dst.GetPhyAddr() + uint64_t(r) * (1 + p.dstGap) * F;
        for (uint32_t i = 0; i < 16; ++i) {
            for (uint32_t j = 0; j < F / 16; ++j) d[p.ifTranspose ? j * 16 + i : i * (F / 16) + j] = s[i * (F / 16) + j];
        }
    }
}

// ---- Load3Dv2: img2col of an L1 feature map [C1][l1H][l1W][C0] into the patch matrix (pixels x (c1, kh, kw, c0))
// A2 receives it as the left matrix (zZ: m = pixels, k); B2 as the right matrix (nZ: k x n, n = pixels).
template <class T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<T>& p,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    // the patch tile written (rows rounded to 16) and the whole C1 x l1H x l1W x C0 feature map read
    KS_TWIN_OPERAND('w', dst, (static_cast<uint64_t>(p.mExtension) + 15) / 16 * 16 * p.kExtension * sizeof(T));
    KS_TWIN_OPERAND('r', src, static_cast<uint64_t>(p.channelSize) * p.l1H * p.l1W * sizeof(T));
    char api[300];
    std::snprintf(api, sizeof api, "LoadData(%s <- %s, LoadData3DParamsV2{l1H=%u, l1W=%u, channelSize=%u, "
                  "kExtension=%u, mExtension=%u, kStartPt=%u, mStartPt=%u, stride=%ux%u, filter=%ux%u, "
                  "padList={%u,%u,%u,%u}})", ks_twin::position_name(dst.GetPosition()),
                  ks_twin::position_name(src.GetPosition()), p.l1H, p.l1W, p.channelSize, p.kExtension, p.mExtension,
                  p.kStartPt, p.mStartPt, p.strideH, p.strideW, p.filterH, p.filterW, p.padList[0], p.padList[1],
                  p.padList[2], p.padList[3]);
    KS_TWIN_LOG("LoadData", "dst=%s src=%s dtype=%s format=3Dv2 kExtension=%u mExtension=%u",
                ks_twin::position_name(dst.GetPosition()), ks_twin::position_name(src.GetPosition()),
                ks_twin::type_name<T>(), p.kExtension, p.mExtension);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::require_position(dst.GetPosition(), TPosition::A2, TPosition::B2, api, "the destination");
    ks_twin::require_position(src.GetPosition(), TPosition::A1, TPosition::B1, api, "the source");
    constexpr uint32_t C0 = ks_twin::c0_of<T>();
    if (p.enTranspose || p.enSmallK || p.fMatrixCtrl || p.filterSizeW || p.filterSizeH) {
        ks_twin::fail("launch", "%s on %s: enTranspose, enSmallK, fMatrixCtrl and filterSizeW/H are not modelled by "
                      "the twin; leave them false", api, ks_twin::core_name());
    }
    if (p.l1H == 0 || p.l1W == 0 || p.channelSize == 0 || p.strideH == 0 || p.strideW == 0 || p.filterH == 0 ||
        p.filterW == 0 || p.dilationFilterH == 0 || p.dilationFilterW == 0 || p.mExtension == 0 ||
        p.kExtension == 0) {
        ks_twin::fail("bounds", "%s on %s: l1H, l1W, channelSize, strides, filter sizes, dilations and the k/m "
                      "extensions must all be >= 1", api, ks_twin::core_name());
    }
    if (p.channelSize % C0 != 0 || p.kExtension % C0 != 0 || p.kStartPt % C0 != 0) {
        ks_twin::fail("alignment", "%s on %s: channelSize, kExtension and kStartPt must be whole C0 blocks (%u "
                      "elements of %s; the NC1HWC0 feature map holds channels in C1 blocks of C0); pad the "
                      "channels to a multiple of %u", api, ks_twin::core_name(), C0, ks_twin::type_name<T>(), C0);
    }
    uint32_t dkh = (p.filterH - 1) * p.dilationFilterH + 1, dkw = (p.filterW - 1) * p.dilationFilterW + 1;
    int64_t ph = int64_t(p.l1H) + p.padList[2] + p.padList[3], pw = int64_t(p.l1W) + p.padList[0] + p.padList[1];
    if (ph < dkh || pw < dkw) {
        ks_twin::fail("bounds", "%s on %s: the padded %lld x %lld feature map is smaller than the %u x %u filter",
                      api, ks_twin::core_name(), static_cast<long long>(ph), static_cast<long long>(pw), dkh, dkw);
    }
    uint64_t out_h = (ph - dkh) / p.strideH + 1, out_w = (pw - dkw) / p.strideW + 1;
    uint64_t k_total = uint64_t(p.channelSize) * p.filterH * p.filterW;
    if (uint64_t(p.mStartPt) + p.mExtension > out_h * out_w) {
        ks_twin::fail("bounds", "%s on %s: output pixels [%u, %u) run past the %llu x %llu = %llu pixels the "
                      "feature map yields; load more input rows into L1 or shorten mExtension", api,
                      ks_twin::core_name(), p.mStartPt, p.mStartPt + p.mExtension,
                      static_cast<unsigned long long>(out_h), static_cast<unsigned long long>(out_w),
                      static_cast<unsigned long long>(out_h * out_w));
    }
    if (uint64_t(p.kStartPt) + p.kExtension > k_total) {
        ks_twin::fail("bounds", "%s on %s: patch columns [%u, %u) run past K = channelSize %u x %u x %u = %llu "
                      "(ordered c1, kh, kw, c0)", api,
                      ks_twin::core_name(), p.kStartPt, p.kStartPt + p.kExtension, p.channelSize, p.filterH,
                      p.filterW, static_cast<unsigned long long>(k_total));
    }
    const uint64_t fmap = uint64_t(p.l1H) * p.l1W * C0;  // one C1 block: [l1H][l1W][C0]
    src.check_aligned(api, "the feature map");
    ks_twin::require_fits(src, fmap * (p.channelSize / C0), api, "the feature map",
                          "channelSize / C0 blocks of l1H x l1W x C0 (NC1HWC0)");
    ks_twin::require_aligned(dst, 512, api, "the destination");
    uint64_t m1 = (p.mExtension + 15) / 16, k1 = p.kExtension / C0;
    ks_twin::require_fits(dst, m1 * k1 * 16 * C0, api, "the destination", "the patch fractals written");
    bool left = dst.GetPosition() == TPosition::A2;
    for (uint32_t pi = 0; pi < p.mExtension; ++pi) {
        uint64_t g = p.mStartPt + pi, oh = g / out_w, ow = g % out_w;
        for (uint32_t kk = 0; kk < p.kExtension; ++kk) {
            // k = ((c1 * filterH + i) * filterW + j) * C0 + c0
            uint64_t k = p.kStartPt + kk, c0 = k % C0, tap = k / C0;
            uint64_t c1 = tap / (p.filterH * p.filterW), i = (tap / p.filterW) % p.filterH, j = tap % p.filterW;
            int64_t h = int64_t(oh * p.strideH + i * p.dilationFilterH) - p.padList[2];
            int64_t w = int64_t(ow * p.strideW + j * p.dilationFilterW) - p.padList[0];
            T v = p.padValue;
            if (h >= 0 && h < p.l1H && w >= 0 && w < p.l1W) {
                v = src.GetPhyAddr()[c1 * fmap + (uint64_t(h) * p.l1W + uint64_t(w)) * C0 + c0];
            }
            uint64_t frac = left ? (pi / 16) * k1 + kk / C0 : (kk / C0) * m1 + pi / 16;
            dst.GetPhyAddr()[frac * 16 * C0 + (pi % 16) * C0 + kk % C0] = v;
        }
    }
}

// ---- Mmad: C (L0C, NZ) = / += A (L0A, zZ) x B (L0B, nZ), fp32 accumulation ------------------------------------
template <class C, class A, class B>
inline void Mmad(const LocalTensor<C>& c, const LocalTensor<A>& a, const LocalTensor<B>& b, const MmadParams& p,
                 ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    {  // the L0 tiles: m and n rounded to 16, k to whole C0 of the operand type
        uint64_t m16 = (static_cast<uint64_t>(p.m) + 15) / 16 * 16, n16 = (static_cast<uint64_t>(p.n) + 15) / 16 * 16;
        uint64_t ka = (static_cast<uint64_t>(p.k) * sizeof(A) + 31) / 32 * 32, kb = (static_cast<uint64_t>(p.k) * sizeof(B) + 31) / 32 * 32;
        KS_TWIN_OPERAND('w', c, m16 * n16 * sizeof(C));
        if (!p.cmatrixInitVal) KS_TWIN_OPERAND('r', c, m16 * n16 * sizeof(C));
        KS_TWIN_OPERAND('r', a, m16 * ka);
        KS_TWIN_OPERAND('r', b, n16 * kb);
    }
    char api[160];
    std::snprintf(api, sizeof api, "Mmad(MmadParams{m=%u, n=%u, k=%u, cmatrixInitVal=%d})", p.m, p.n, p.k,
                  p.cmatrixInitVal ? 1 : 0);
    KS_TWIN_LOG("Mmad", "dtype=%s m=%u n=%u k=%u cmatrixInitVal=%d", ks_twin::type_name<A>(), p.m, p.n, p.k,
                p.cmatrixInitVal ? 1 : 0);
    ks_twin::require_core_for(c.GetPosition(), api);
    ks_twin::require_position(c.GetPosition(), TPosition::CO1, TPosition::CO1, api, "C");
    ks_twin::require_position(a.GetPosition(), TPosition::A2, TPosition::A2, api, "A");
    ks_twin::require_position(b.GetPosition(), TPosition::B2, TPosition::B2, api, "B");
    if (p.m == 0 || p.n == 0 || p.k == 0 || p.m > 4095 || p.n > 4095 || p.k > 4095) {
        ks_twin::fail("bounds", "%s on %s: m, n and k must be 1..4095", api, ks_twin::core_name());
    }
    if (p.cmatrixSource || p.isBias) {
        ks_twin::fail("launch", "%s on %s: cmatrixSource/isBias (bias from C2) are not modelled; add the bias in "
                      "the epilogue", api, ks_twin::core_name());
    }
    constexpr uint32_t C0 = ks_twin::c0_of<A>();
    uint64_t m1 = (p.m + 15) / 16, n1 = (p.n + 15) / 16, k1 = (p.k + C0 - 1) / C0;
    ks_twin::require_aligned(a, 512, api, "A");
    ks_twin::require_aligned(b, 512, api, "B");
    ks_twin::require_aligned(c, 64, api, "C");
    ks_twin::require_fits(a, m1 * k1 * 16 * C0, api, "A", "m x k rounded to whole fractals");
    ks_twin::require_fits(b, n1 * k1 * 16 * C0, api, "B", "k x n rounded to whole fractals");
    ks_twin::require_fits(c, m1 * n1 * 256, api, "C", "m x n rounded to whole 16 x 16 fractals");
    using Acc = std::conditional_t<std::is_integral<A>::value, int32_t, float>;
    const A* pa = a.GetPhyAddr();
    const B* pb = b.GetPhyAddr();
    C* pc = c.GetPhyAddr();
    std::vector<Acc> col(p.k);
    for (uint32_t j = 0; j < p.n; ++j) {
        for (uint32_t kk = 0; kk < p.k; ++kk) {
            col[kk] = static_cast<Acc>(pb[((kk / C0) * n1 + j / 16) * 16 * C0 + (j % 16) * C0 + kk % C0]);
        }
        for (uint32_t i = 0; i < p.m; ++i) {
            const A* row = pa + (i / 16) * k1 * 16 * C0 + (i % 16) * C0;
            Acc acc = 0;
            for (uint32_t kk = 0; kk < p.k; ++kk) {
                if constexpr (std::is_integral<Acc>::value) {  // int32 wraps, as L0C does
                    acc = ks_twin::acc_add(acc, ks_twin::acc_mul(static_cast<Acc>(row[(kk / C0) * 16 * C0 + kk % C0]),
                                                                 col[kk]));
                } else {
                    acc += static_cast<Acc>(row[(kk / C0) * 16 * C0 + kk % C0]) * col[kk];
                }
            }
            C& out = pc[(j / 16) * m1 * 256 + i * 16 + j % 16];
            out = p.cmatrixInitVal ? static_cast<C>(acc) : static_cast<C>(ks_twin::acc_add(static_cast<Acc>(out), acc));
        }
    }
}

// ---- Fixpipe: L0C (NZ) -> GM (ND rows of dstStride elements), with float -> half/bfloat16 conversion ---------
template <class T, class U, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<T>& dst, const LocalTensor<U>& src, const FixpipeParamsV220& p,
                    ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    if (p.nSize > 0 && p.mSize > 0) {  // NZ columns blocks of srcStride rows, 16 elements each
        KS_TWIN_OPERAND('r', src, ((static_cast<uint64_t>(p.nSize - 1) / 16) * p.srcStride * 16 +
                                   static_cast<uint64_t>(p.mSize) * 16) * sizeof(U));
        KS_TWIN_GM(dst, static_cast<uint64_t>(p.mSize) * p.nSize * sizeof(T));  // the bytes written
        KS_TWIN_GM_ROWS(p.mSize, p.nSize * sizeof(T), static_cast<uint64_t>(p.dstStride) * sizeof(T));
    }
    char api[200];
    std::snprintf(api, sizeof api, "Fixpipe(GM <- %s, FixpipeParamsV220{nSize=%u, mSize=%u, srcStride=%u, "
                  "dstStride=%u, quantPre=%d})", ks_twin::position_name(src.GetPosition()), p.nSize, p.mSize,
                  p.srcStride, p.dstStride, static_cast<int>(p.quantPre));
    KS_TWIN_LOG("Fixpipe", "dst=GM src=%s dtype=%s nSize=%u mSize=%u", ks_twin::position_name(src.GetPosition()),
                ks_twin::type_name<T>(), p.nSize, p.mSize);
    ks_twin::require_core_for(src.GetPosition(), api);
    ks_twin::require_position(src.GetPosition(), TPosition::CO1, TPosition::CO1, api, "the source");
    if (config.format != CO2Layout::ROW_MAJOR || p.ndNum != 1) {
        ks_twin::fail("launch", "%s on %s: the twin models the NZ2ND form (CFG_ROW_MAJOR, ndNum = 1) only", api,
                      ks_twin::core_name());
    }
    if (p.nSize == 0 || p.mSize == 0 || p.nSize > 4095 || p.mSize > 8192) {
        ks_twin::fail("bounds", "%s on %s: nSize must be 1..4095 and mSize 1..8192", api, ks_twin::core_name());
    }
    if (p.srcStride < p.mSize || p.dstStride < p.nSize) {
        ks_twin::fail("bounds", "%s on %s: srcStride %u must cover the %u rows of a column block and dstStride %u "
                      "the %u columns of a row", api, ks_twin::core_name(), p.srcStride, p.mSize, p.dstStride, p.nSize);
    }
    constexpr bool to16 = std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;
    bool ok = std::is_same<U, float>::value &&
              ((std::is_same<T, float>::value && p.quantPre == NoQuant) ||
               (std::is_same<T, half>::value && p.quantPre == F322F16) ||
               (std::is_same<T, bfloat16_t>::value && p.quantPre == F322BF16));
    if (!ok) {
        ks_twin::fail("launch", "%s on %s: writing %s from %s needs quantPre %s", api, ks_twin::core_name(),
                      ks_twin::type_name<T>(), ks_twin::type_name<U>(),
                      !to16 ? "NoQuant" : (std::is_same<T, half>::value ? "F322F16" : "F322BF16"));
    }
    ks_twin::require_aligned(src, 64, api, "the source");
    uint64_t n1 = (p.nSize + 15) / 16;
    ks_twin::require_fits(src, ((n1 - 1) * p.srcStride + p.mSize) * 16, api, "the source", "the NZ blocks read");
    dst.check(0, uint64_t(p.mSize - 1) * p.dstStride + p.nSize, api);
    for (uint32_t i = 0; i < p.mSize; ++i) {
        for (uint32_t j = 0; j < p.nSize; ++j) {
            float v = static_cast<float>(src.GetPhyAddr()[(j / 16) * uint64_t(p.srcStride) * 16 + i * 16 + j % 16]);
            if (p.reluEn && v < 0) v = 0;
            dst.GetPhyAddr()[uint64_t(i) * p.dstStride + j] = ks_twin::fix_convert<T>(v);
        }
    }
}

}  // namespace AscendC

#endif
