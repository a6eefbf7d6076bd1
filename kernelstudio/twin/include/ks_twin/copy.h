// DataCopy / DataCopyPad between GM and on-chip buffers, in 32-byte blocks, with checks.
#ifndef KS_TWIN_COPY_H
#define KS_TWIN_COPY_H

#include "atomic.h"
#include "pipe.h"

namespace AscendC {

struct DataCopyParams {
    uint16_t blockCount = 1;  // rows
    uint16_t blockLen = 0;    // 32-byte blocks per row (bytes in the DataCopyPad overload)
    uint16_t srcStride = 0;   // gap between source rows
    uint16_t dstStride = 0;   // gap between destination rows
    DataCopyParams() = default;
    DataCopyParams(uint16_t count, uint16_t len, uint16_t srcGap, uint16_t dstGap)
        : blockCount(count), blockLen(len), srcStride(srcGap), dstStride(dstGap)
    {
    }
};

struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;   // bytes per row
    uint32_t srcStride = 0;  // GM side in bytes, UB side in 32-byte blocks
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
    DataCopyExtParams() = default;
    DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcGap, uint32_t dstGap, uint32_t reserved)
        : blockCount(count), blockLen(len), srcStride(srcGap), dstStride(dstGap), rsv(reserved)
    {
    }
};

template <class T> struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0;   // elements
    uint8_t rightPadding = 0;  // elements
    T paddingValue = T(0);
    DataCopyPadExtParams() = default;
    DataCopyPadExtParams(bool pad, uint8_t left, uint8_t right, T value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value)
    {
    }
};

struct DataCopyPadParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
    DataCopyPadParams() = default;
    DataCopyPadParams(bool pad, uint8_t left, uint8_t right, uint64_t value)
        : isPad(pad), leftPadding(left), rightPadding(right), paddingValue(value)
    {
    }
};

}  // namespace AscendC

namespace ks_twin {

inline void require_core_for(AscendC::TPosition p, const char* api)
{
    if (!ctx().active) return;
    bool ub = mem_of(p) == MEM_UB;
    if (ub && ctx().type == CoreType::AIC) require_vector(api);
    if (!ub && ctx().type == CoreType::AIV) {
        fail("launch", "%s runs on the %s, which has no %s; guard cube-side code with `if ASCEND_IS_AIC { ... }`",
             api, core_name(), mem_name(mem_of(p)));
    }
}

inline void copy_rows(uint8_t* dst, const uint8_t* src, uint32_t rows, uint64_t row_bytes, uint64_t src_pitch,
                      uint64_t dst_pitch)
{
    for (uint32_t r = 0; r < rows; ++r) std::memmove(dst + r * dst_pitch, src + r * src_pitch, row_bytes);
}

template <class T> inline void check_whole_blocks(const char* api, uint32_t count)
{
    uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % 32 != 0) {
        fail("alignment", "%s on %s moves %u x %zu = %llu bytes, not a whole number of 32-byte blocks; copy a "
             "multiple of %zu elements of %s, or use DataCopyPad for the %llu-byte tail",
             api, core_name(), count, sizeof(T), static_cast<unsigned long long>(bytes), 32 / sizeof(T),
             type_name<T>(), static_cast<unsigned long long>(bytes % 32));
    }
}

inline void check_params(const char* api, const AscendC::DataCopyParams& p)
{
    if (p.blockCount == 0 || p.blockLen == 0 || p.blockCount > 4095) {
        fail("bounds", "%s on %s: DataCopyParams{blockCount=%u, blockLen=%u} needs blockCount 1..4095 and "
             "blockLen >= 1", api, core_name(), p.blockCount, p.blockLen);
    }
}

inline uint64_t span(uint32_t rows, uint64_t row_bytes, uint64_t pitch) { return (rows - 1) * pitch + row_bytes; }

template <class T> inline uint64_t elems_for(uint64_t bytes) { return (bytes + sizeof(T) - 1) / sizeof(T); }

inline uint64_t round32(uint64_t n) { return (n + 31) / 32 * 32; }

}  // namespace ks_twin

namespace AscendC {

// ---- count overloads: whole 32-byte blocks, contiguous ----------------------------------------
template <class T> inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_GM(src, count * sizeof(T));
    char api[96];
    std::snprintf(api, sizeof api, "DataCopy(%s <- GM, count=%u)", ks_twin::position_name(dst.GetPosition()), count);
    KS_TWIN_LOG("DataCopy", "dst=%s src=GM dtype=%s count=%u", ks_twin::position_name(dst.GetPosition()),
                ks_twin::type_name<T>(), count);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::check_whole_blocks<T>(api, count);
    dst.check_aligned(api, "the destination");
    dst.check(0, count, api);
    src.check(0, count, api);
    std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), count * sizeof(T));
}

template <class T> inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('r', src, count * sizeof(T));
    KS_TWIN_GM(dst, count * sizeof(T));
    char api[96];
    std::snprintf(api, sizeof api, "DataCopy(GM <- %s, count=%u)", ks_twin::position_name(src.GetPosition()), count);
    KS_TWIN_LOG("DataCopy", "dst=GM src=%s dtype=%s count=%u", ks_twin::position_name(src.GetPosition()),
                ks_twin::type_name<T>(), count);
    ks_twin::require_core_for(src.GetPosition(), api);
    ks_twin::check_whole_blocks<T>(api, count);
    src.check_aligned(api, "the source");
    src.check(0, count, api);
    dst.check(0, count, api);
    ks_twin::gm_store<T>(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()), reinterpret_cast<const uint8_t*>(src.GetPhyAddr()),
                         1, count * sizeof(T), 0, 0, api);
}

template <class T> inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_OPERAND('r', src, count * sizeof(T));
    char api[96];
    std::snprintf(api, sizeof api, "DataCopy(%s <- %s, count=%u)", ks_twin::position_name(dst.GetPosition()),
                  ks_twin::position_name(src.GetPosition()), count);
    KS_TWIN_LOG("DataCopy", "dst=%s src=%s dtype=%s count=%u", ks_twin::position_name(dst.GetPosition()),
                ks_twin::position_name(src.GetPosition()), ks_twin::type_name<T>(), count);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::check_whole_blocks<T>(api, count);
    dst.check_aligned(api, "the destination");
    src.check_aligned(api, "the source");
    dst.check(0, count, api);
    src.check(0, count, api);
    std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), count * sizeof(T));
}

// ---- DataCopyParams overloads: blockCount rows of blockLen 32-byte blocks, strides are gaps ------
template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, ks_twin::span(p.blockCount, p.blockLen * 32ull, (p.blockLen + p.dstStride) * 32ull));
    KS_TWIN_GM(src, static_cast<uint64_t>(p.blockCount) * p.blockLen * 32ull);  // the bytes moved
    KS_TWIN_GM_ROWS(p.blockCount, p.blockLen * 32ull, (p.blockLen + p.srcStride) * 32ull);
    char api[128];
    std::snprintf(api, sizeof api, "DataCopy(%s <- GM, {blockCount=%u, blockLen=%u, srcStride=%u, dstStride=%u})",
                  ks_twin::position_name(dst.GetPosition()), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    KS_TWIN_LOG("DataCopy", "dst=%s src=GM dtype=%s blockCount=%u blockLen=%u srcStride=%u dstStride=%u", ks_twin::position_name(dst.GetPosition()),
                ks_twin::type_name<T>(), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::check_params(api, p);
    uint64_t row = p.blockLen * 32ull, sp = (p.blockLen + p.srcStride) * 32ull, dp = (p.blockLen + p.dstStride) * 32ull;
    dst.check_aligned(api, "the destination");
    dst.check(0, ks_twin::span(p.blockCount, row, dp) / sizeof(T), api);
    src.check(0, ks_twin::elems_for<T>(ks_twin::span(p.blockCount, row, sp)), api);
    ks_twin::copy_rows(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                       reinterpret_cast<const uint8_t*>(src.GetPhyAddr()), p.blockCount, row, sp, dp);
}

template <class T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('r', src, ks_twin::span(p.blockCount, p.blockLen * 32ull, (p.blockLen + p.srcStride) * 32ull));
    KS_TWIN_GM(dst, static_cast<uint64_t>(p.blockCount) * p.blockLen * 32ull);  // the bytes moved
    KS_TWIN_GM_ROWS(p.blockCount, p.blockLen * 32ull, (p.blockLen + p.dstStride) * 32ull);
    char api[128];
    std::snprintf(api, sizeof api, "DataCopy(GM <- %s, {blockCount=%u, blockLen=%u, srcStride=%u, dstStride=%u})",
                  ks_twin::position_name(src.GetPosition()), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    KS_TWIN_LOG("DataCopy", "dst=GM src=%s dtype=%s blockCount=%u blockLen=%u srcStride=%u dstStride=%u", ks_twin::position_name(src.GetPosition()),
                ks_twin::type_name<T>(), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    ks_twin::require_core_for(src.GetPosition(), api);
    ks_twin::check_params(api, p);
    uint64_t row = p.blockLen * 32ull, sp = (p.blockLen + p.srcStride) * 32ull, dp = (p.blockLen + p.dstStride) * 32ull;
    src.check_aligned(api, "the source");
    src.check(0, ks_twin::span(p.blockCount, row, sp) / sizeof(T), api);
    dst.check(0, ks_twin::elems_for<T>(ks_twin::span(p.blockCount, row, dp)), api);
    ks_twin::gm_store<T>(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                         reinterpret_cast<const uint8_t*>(src.GetPhyAddr()), p.blockCount, row, sp, dp, api);
}

template <class T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                     ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, ks_twin::span(p.blockCount, p.blockLen * 32ull, (p.blockLen + p.dstStride) * 32ull));
    KS_TWIN_OPERAND('r', src, ks_twin::span(p.blockCount, p.blockLen * 32ull, (p.blockLen + p.srcStride) * 32ull));
    char api[128];
    std::snprintf(api, sizeof api, "DataCopy(%s <- %s, {blockCount=%u, blockLen=%u, srcStride=%u, dstStride=%u})",
                  ks_twin::position_name(dst.GetPosition()), ks_twin::position_name(src.GetPosition()),
                  p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    KS_TWIN_LOG("DataCopy", "dst=%s src=%s dtype=%s blockCount=%u blockLen=%u srcStride=%u dstStride=%u", ks_twin::position_name(dst.GetPosition()),
                ks_twin::position_name(src.GetPosition()), ks_twin::type_name<T>(), p.blockCount, p.blockLen,
                p.srcStride, p.dstStride);
    ks_twin::require_core_for(dst.GetPosition(), api);
    ks_twin::check_params(api, p);
    uint64_t row = p.blockLen * 32ull, sp = (p.blockLen + p.srcStride) * 32ull, dp = (p.blockLen + p.dstStride) * 32ull;
    dst.check_aligned(api, "the destination");
    src.check_aligned(api, "the source");
    dst.check(0, ks_twin::span(p.blockCount, row, dp) / sizeof(T), api);
    src.check(0, ks_twin::span(p.blockCount, row, sp) / sizeof(T), api);
    ks_twin::copy_rows(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                       reinterpret_cast<const uint8_t*>(src.GetPhyAddr()), p.blockCount, row, sp, dp);
}

// ---- DataCopyPad: rows of any byte length; UB rows are padded to 32-byte blocks -----------------
template <class T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    char api[160];
    std::snprintf(api, sizeof api,
                  "DataCopyPad(%s <- GM, {blockCount=%u, blockLen=%u B, srcStride=%u B, dstStride=%u blocks})",
                  ks_twin::position_name(dst.GetPosition()), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    {  // the operands, noted for the log line below (UB rows padded to 32 bytes)
        const uint64_t row = ks_twin::round32((pad.leftPadding + p.blockLen / sizeof(T) + pad.rightPadding) * sizeof(T));
        KS_TWIN_OPERAND('w', dst, ks_twin::span(p.blockCount, row, row + p.dstStride * 32ull));
        KS_TWIN_GM(src, static_cast<uint64_t>(p.blockCount) * p.blockLen);  // the bytes moved
        KS_TWIN_GM_ROWS(p.blockCount, p.blockLen, p.blockLen + static_cast<uint64_t>(p.srcStride));
    }
    KS_TWIN_LOG("DataCopyPad", "dst=%s src=GM dtype=%s blockCount=%u blockLen=%u srcStride=%u dstStride=%u isPad=%d", ks_twin::position_name(dst.GetPosition()),
                ks_twin::type_name<T>(), p.blockCount, p.blockLen, p.srcStride, p.dstStride, pad.isPad ? 1 : 0);
    ks_twin::require_core_for(dst.GetPosition(), api);
    if (p.blockCount == 0 || p.blockLen == 0 || p.blockLen % sizeof(T) != 0 || p.srcStride % sizeof(T) != 0) {
        ks_twin::fail("alignment", "%s on %s: blockCount must be >= 1 and blockLen/srcStride whole %s elements "
                      "(multiples of %zu bytes)", api, ks_twin::core_name(), ks_twin::type_name<T>(), sizeof(T));
    }
    if ((pad.leftPadding + pad.rightPadding) * sizeof(T) > 32) {
        ks_twin::fail("alignment", "%s on %s: leftPadding %u + rightPadding %u elements exceed one 32-byte block",
                      api, ks_twin::core_name(), pad.leftPadding, pad.rightPadding);
    }
    uint64_t n = p.blockLen / sizeof(T);
    uint64_t ub_row = ks_twin::round32((pad.leftPadding + n + pad.rightPadding) * sizeof(T));
    uint64_t up = ub_row + p.dstStride * 32ull, gp = p.blockLen + static_cast<uint64_t>(p.srcStride);
    dst.check_aligned(api, "the destination");
    dst.check(0, ks_twin::span(p.blockCount, ub_row, up) / sizeof(T), api);
    src.check(0, ks_twin::span(p.blockCount, p.blockLen, gp) / sizeof(T), api);
    auto* d = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
    const auto* s = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
    for (uint32_t r = 0; r < p.blockCount; ++r) {
        T* row = reinterpret_cast<T*>(d + r * up);
        if (pad.isPad) {
            for (uint32_t i = 0; i < pad.leftPadding; ++i) row[i] = pad.paddingValue;
            for (uint32_t i = 0; i < pad.rightPadding; ++i) row[pad.leftPadding + n + i] = pad.paddingValue;
        }
        std::memcpy(row + pad.leftPadding, s + r * gp, p.blockLen);
    }
}

template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p,
                        ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    char api[160];
    std::snprintf(api, sizeof api,
                  "DataCopyPad(GM <- %s, {blockCount=%u, blockLen=%u B, srcStride=%u blocks, dstStride=%u B})",
                  ks_twin::position_name(src.GetPosition()), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    {  // the operands, noted for the log line below
        const uint64_t row = ks_twin::round32(p.blockLen);
        KS_TWIN_OPERAND('r', src, ks_twin::span(p.blockCount, p.blockLen, row + p.srcStride * 32ull));
        KS_TWIN_GM(dst, static_cast<uint64_t>(p.blockCount) * p.blockLen);  // the bytes moved
        KS_TWIN_GM_ROWS(p.blockCount, p.blockLen, p.blockLen + static_cast<uint64_t>(p.dstStride));
    }
    KS_TWIN_LOG("DataCopyPad", "dst=GM src=%s dtype=%s blockCount=%u blockLen=%u srcStride=%u dstStride=%u", ks_twin::position_name(src.GetPosition()),
                ks_twin::type_name<T>(), p.blockCount, p.blockLen, p.srcStride, p.dstStride);
    ks_twin::require_core_for(src.GetPosition(), api);
    if (p.blockCount == 0 || p.blockLen == 0 || p.blockLen % sizeof(T) != 0 || p.dstStride % sizeof(T) != 0) {
        ks_twin::fail("alignment", "%s on %s: blockCount must be >= 1 and blockLen/dstStride whole %s elements "
                      "(multiples of %zu bytes)", api, ks_twin::core_name(), ks_twin::type_name<T>(), sizeof(T));
    }
    uint64_t ub_row = ks_twin::round32(p.blockLen);
    uint64_t up = ub_row + p.srcStride * 32ull, gp = p.blockLen + static_cast<uint64_t>(p.dstStride);
    src.check_aligned(api, "the source");
    src.check(0, ks_twin::span(p.blockCount, p.blockLen, up) / sizeof(T), api);
    dst.check(0, ks_twin::span(p.blockCount, p.blockLen, gp) / sizeof(T), api);
    ks_twin::gm_store<T>(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()),
                         reinterpret_cast<const uint8_t*>(src.GetPhyAddr()), p.blockCount, p.blockLen, up, gp, api);
}

template <class T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    T value;
    std::memset(&value, 0, sizeof value);
    std::memcpy(&value, &pad.paddingValue, sizeof(T) < 8 ? sizeof(T) : 8);
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0),
                DataCopyPadExtParams<T>(pad.isPad, pad.leftPadding, pad.rightPadding, value));
}

template <class T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p,
                        ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    DataCopyPad(dst, src, DataCopyExtParams(p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0));
}

}  // namespace AscendC

#endif
