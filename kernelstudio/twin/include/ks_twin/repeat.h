// Vector unit, repeat forms: one instruction issues `repeatTime` repeats of up to 256 bytes, each repeat
// reading 8 data blocks of 32 bytes placed by block and repeat strides (in 32-byte blocks), the elements of
// a repeat chosen by a contiguous mask (the first `mask` elements). WholeReduceSum / WholeReduceMax reduce
// each repeat to one value; the binary and scalar ops apply element-wise with BinaryRepeatParams /
// UnaryRepeatParams. Only the contiguous mask mode is modelled (the bit-mask form does not compile).
#ifndef KS_TWIN_REPEAT_H
#define KS_TWIN_REPEAT_H

#include "vector.h"

namespace AscendC {

// Strides of a two-source repeat instruction: blocks within a repeat (BlkStride) and between repeats
// (RepStride), in 32-byte blocks. Defaults: dense blocks, 8 blocks (256 bytes) between repeats.
struct BinaryRepeatParams {
    BinaryRepeatParams() = default;
    BinaryRepeatParams(uint8_t dstBlk, uint8_t src0Blk, uint8_t src1Blk, uint8_t dstRep, uint8_t src0Rep,
                       uint8_t src1Rep)
        : dstBlkStride(dstBlk), src0BlkStride(src0Blk), src1BlkStride(src1Blk), dstRepStride(dstRep),
          src0RepStride(src0Rep), src1RepStride(src1Rep)
    {
    }
    uint32_t blockNumber = 8;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

// Strides of a one-source repeat instruction (Adds, Muls, ... in their repeat form).
struct UnaryRepeatParams {
    UnaryRepeatParams() = default;
    UnaryRepeatParams(uint16_t dstBlk, uint16_t srcBlk, uint8_t dstRep, uint8_t srcRep)
        : dstBlkStride(dstBlk), srcBlkStride(srcBlk), dstRepStride(dstRep), srcRepStride(srcRep)
    {
    }
    uint32_t blockNumber = 8;
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

// What WholeReduceMax writes per repeat: value then index (default), index then value, or one of them.
enum class ReduceOrder { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };

}  // namespace AscendC

namespace ks_twin {

template <class T> constexpr uint32_t per_repeat() { return 256 / sizeof(T); }
template <class T> constexpr uint32_t per_block() { return 32 / sizeof(T); }

// Element index (from the operand start) of element e of repeat r.
template <class T> inline uint64_t repeat_elem(uint32_t r, uint32_t e, uint32_t blk, uint32_t rep)
{
    return (static_cast<uint64_t>(r) * rep + static_cast<uint64_t>(e / per_block<T>()) * blk) * per_block<T>() +
           e % per_block<T>();
}

// One past the last element a repeat operand touches.
template <class T> inline uint64_t repeat_extent(int32_t mask, int32_t repeats, uint32_t blk, uint32_t rep)
{
    if (repeats <= 0 || mask <= 0) return 0;
    uint64_t end = 0;
    for (uint32_t b = 0; b <= static_cast<uint32_t>(mask - 1) / per_block<T>(); ++b) {
        uint32_t e = b == static_cast<uint32_t>(mask - 1) / per_block<T>() ? static_cast<uint32_t>(mask - 1)
                                                                             : (b + 1) * per_block<T>() - 1;
        end = std::max(end, repeat_elem<T>(static_cast<uint32_t>(repeats - 1), e, blk, rep) + 1);
    }
    return end;
}

template <class T> inline void check_repeat(const char* api, int32_t mask, int32_t repeats)
{
    if (mask < 1 || static_cast<uint32_t>(mask) > per_repeat<T>()) {
        fail("bounds", "%s on %s: mask %d outside [1, %u] for %s (256 bytes per repeat); split the row into "
             "repeats of at most %u elements", api, core_name(), mask, per_repeat<T>(), type_name<T>(),
             per_repeat<T>());
    }
    if (repeats < 0 || repeats > 255) {
        fail("bounds", "%s on %s: repeatTime %d outside [0, 255]; issue the rows in several instructions", api,
             core_name(), repeats);
    }
}

template <class T> inline void check_element_aligned(const char* api, const AscendC::LocalTensor<T>& t,
                                                     uint32_t elems)
{
    if (t.ByteOffset() % (sizeof(T) * elems) != 0) {
        fail("alignment", "%s on %s: dst starts at byte %llu, not on a %u-byte boundary", api, core_name(),
             static_cast<unsigned long long>(t.ByteOffset()), static_cast<unsigned>(sizeof(T) * elems));
    }
}

template <class T, class F>
inline void binary_repeat(const char* name, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                          const AscendC::LocalTensor<T>& b, uint64_t mask, uint8_t repeats,
                          const AscendC::BinaryRepeatParams& p, F f)
{
    if (__builtin_expect(g_call_log != nullptr, 0)) {  // the spans the repeats cover, for the log line below
        const int32_t m = static_cast<int32_t>(mask);
        note_operand('w', dst, repeat_extent<T>(m, repeats, p.dstBlkStride, p.dstRepStride) * sizeof(T));
        note_operand('r', a, repeat_extent<T>(m, repeats, p.src0BlkStride, p.src0RepStride) * sizeof(T));
        note_operand('r', b, repeat_extent<T>(m, repeats, p.src1BlkStride, p.src1RepStride) * sizeof(T));
    }
    KS_TWIN_LOG(name, "dtype=%s mask=%u repeats=%u dstBlkStride=%u src0BlkStride=%u src1BlkStride=%u "
                "dstRepStride=%u src0RepStride=%u src1RepStride=%u", type_name<T>(), static_cast<unsigned>(mask),
                static_cast<unsigned>(repeats), p.dstBlkStride, p.src0BlkStride, p.src1BlkStride, p.dstRepStride,
                p.src0RepStride, p.src1RepStride);
    require_vector(name);
    check_repeat<T>(name, static_cast<int32_t>(mask), repeats);
    dst.check_aligned(name, "dst");
    a.check_aligned(name, "src0");
    b.check_aligned(name, "src1");
    int32_t m = static_cast<int32_t>(mask);
    dst.check(0, repeat_extent<T>(m, repeats, p.dstBlkStride, p.dstRepStride), name);
    a.check(0, repeat_extent<T>(m, repeats, p.src0BlkStride, p.src0RepStride), name);
    b.check(0, repeat_extent<T>(m, repeats, p.src1BlkStride, p.src1RepStride), name);
    T* d = dst.GetPhyAddr();
    const T* x = a.GetPhyAddr();
    const T* y = b.GetPhyAddr();
    for (uint32_t r = 0; r < repeats; ++r) {
        for (uint32_t e = 0; e < mask; ++e) {
            T xv = x[repeat_elem<T>(r, e, p.src0BlkStride, p.src0RepStride)];
            T yv = y[repeat_elem<T>(r, e, p.src1BlkStride, p.src1RepStride)];
            d[repeat_elem<T>(r, e, p.dstBlkStride, p.dstRepStride)] = from_calc<T>(f(to_calc(xv), to_calc(yv)));
        }
    }
}

template <class T, class F>
inline void unary_repeat(const char* name, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                         uint64_t mask, uint8_t repeats, const AscendC::UnaryRepeatParams& p, F f)
{
    if (__builtin_expect(g_call_log != nullptr, 0)) {  // the spans the repeats cover, for the log line below
        const int32_t m = static_cast<int32_t>(mask);
        note_operand('w', dst, repeat_extent<T>(m, repeats, p.dstBlkStride, p.dstRepStride) * sizeof(T));
        note_operand('r', src, repeat_extent<T>(m, repeats, p.srcBlkStride, p.srcRepStride) * sizeof(T));
    }
    KS_TWIN_LOG(name, "dtype=%s mask=%u repeats=%u dstBlkStride=%u srcBlkStride=%u dstRepStride=%u "
                "srcRepStride=%u", type_name<T>(), static_cast<unsigned>(mask), static_cast<unsigned>(repeats),
                p.dstBlkStride, p.srcBlkStride, p.dstRepStride, p.srcRepStride);
    require_vector(name);
    check_repeat<T>(name, static_cast<int32_t>(mask), repeats);
    dst.check_aligned(name, "dst");
    src.check_aligned(name, "src");
    int32_t m = static_cast<int32_t>(mask);
    dst.check(0, repeat_extent<T>(m, repeats, p.dstBlkStride, p.dstRepStride), name);
    src.check(0, repeat_extent<T>(m, repeats, p.srcBlkStride, p.srcRepStride), name);
    T* d = dst.GetPhyAddr();
    const T* s = src.GetPhyAddr();
    for (uint32_t r = 0; r < repeats; ++r) {
        for (uint32_t e = 0; e < mask; ++e) {
            T v = s[repeat_elem<T>(r, e, p.srcBlkStride, p.srcRepStride)];
            d[repeat_elem<T>(r, e, p.dstBlkStride, p.dstRepStride)] = from_calc<T>(f(to_calc(v)));
        }
    }
}

// Per repeat: the masked elements of src (blocks srcBlkStride apart, repeats srcRepStride apart) reduced
// to one value written dstRepStride results apart (a result is `width` elements: 2 for value + index).
template <class T, class R>
inline void whole_reduce(const char* name, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                         int32_t mask, int32_t repeats, int32_t dstRepStride, int32_t srcBlkStride,
                         int32_t srcRepStride, uint32_t width, R reduce_one)
{
    if (__builtin_expect(g_call_log != nullptr, 0) && repeats > 0 && dstRepStride >= 0 && srcBlkStride >= 0 &&
        srcRepStride >= 0) {  // the spans the repeats cover, for the log line below
        note_operand('w', dst, (static_cast<uint64_t>(repeats - 1) * dstRepStride + 1) * width * sizeof(T));
        note_operand('r', src, repeat_extent<T>(mask, repeats, srcBlkStride, srcRepStride) * sizeof(T));
    }
    KS_TWIN_LOG(name, "dtype=%s mask=%d repeats=%d dstRepStride=%d srcBlkStride=%d srcRepStride=%d",
                type_name<T>(), mask, repeats, dstRepStride, srcBlkStride, srcRepStride);
    require_vector(name);
    check_repeat<T>(name, mask, repeats);
    if (dstRepStride < 0 || srcBlkStride < 0 || srcRepStride < 0) {
        fail("bounds", "%s on %s: negative stride (dstRepStride %d, srcBlkStride %d, srcRepStride %d)", name,
             core_name(), dstRepStride, srcBlkStride, srcRepStride);
    }
    src.check_aligned(name, "src");
    check_element_aligned(name, dst, width);
    src.check(0, repeat_extent<T>(mask, repeats, srcBlkStride, srcRepStride), name);
    if (repeats > 0) dst.check(0, (static_cast<uint64_t>(repeats - 1) * dstRepStride + 1) * width, name);
    const T* s = src.GetPhyAddr();
    T* d = dst.GetPhyAddr();
    for (int32_t r = 0; r < repeats; ++r) {
        reduce_one(d + static_cast<uint64_t>(r) * dstRepStride * width, [&](uint32_t e) {
            return s[repeat_elem<T>(static_cast<uint32_t>(r), e, srcBlkStride, srcRepStride)];
        });
    }
}

}  // namespace ks_twin

namespace AscendC {

#define KS_TWIN_BINARY_REPEAT(NAME, EXPR)                                                                  \
    template <class T, bool isSetMask = true>                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams& repeatParams)           \
    {                                                                                                     \
        ks_twin::binary_repeat(#NAME, dst, src0, src1, mask, repeatTime, repeatParams,                    \
                               [](auto a, auto b) { return EXPR; });                                      \
    }
KS_TWIN_BINARY_REPEAT(Add, a + b)
KS_TWIN_BINARY_REPEAT(Sub, a - b)
KS_TWIN_BINARY_REPEAT(Mul, a * b)
KS_TWIN_BINARY_REPEAT(Div, a / b)
KS_TWIN_BINARY_REPEAT(Max, a > b ? a : b)
KS_TWIN_BINARY_REPEAT(Min, a < b ? a : b)
#undef KS_TWIN_BINARY_REPEAT

#define KS_TWIN_SCALAR_REPEAT(NAME, EXPR)                                                                  \
    template <class T, bool isSetMask = true>                                                             \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, ks_twin::NoDeduce<T> scalar,   \
                     uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams& repeatParams)            \
    {                                                                                                     \
        auto s = ks_twin::to_calc<T>(scalar);                                                             \
        ks_twin::unary_repeat(#NAME, dst, src, mask, repeatTime, repeatParams, [s](auto a) { return EXPR; }); \
    }
KS_TWIN_SCALAR_REPEAT(Adds, a + s)
KS_TWIN_SCALAR_REPEAT(Muls, a * s)
KS_TWIN_SCALAR_REPEAT(Maxs, a > s ? a : s)
KS_TWIN_SCALAR_REPEAT(Mins, a < s ? a : s)
#undef KS_TWIN_SCALAR_REPEAT

// Sum of the masked elements of each repeat (in double, rounded once to T), one value per repeat.
template <class T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride)
{
    const int32_t m = mask;
    ks_twin::whole_reduce("WholeReduceSum", dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride, 1,
                          [m](T* out, auto at) {
                              double acc = 0;
                              for (int32_t e = 0; e < m; ++e) acc += static_cast<double>(ks_twin::to_calc(at(e)));
                              out[0] = static_cast<T>(static_cast<ks_twin::CalcT<T>>(acc));
                          });
}

// Maximum of the masked elements of each repeat and its index inside the repeat (first maximum), written
// as `order` says; the index is stored as the bit pattern of an unsigned integer of T's width.
template <class T, bool isSetMask = true>
inline void WholeReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t mask,
                           const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                           const int32_t srcRepStride, ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)
{
    if (order == ReduceOrder::ORDER_ONLY_INDEX) {
        ks_twin::fail("launch", "WholeReduceMax on %s: ReduceOrder::ORDER_ONLY_INDEX is not modelled; use "
                      "ORDER_VALUE_INDEX or ORDER_ONLY_VALUE", ks_twin::core_name());
    }
    const uint32_t width = order == ReduceOrder::ORDER_ONLY_VALUE ? 1 : 2;
    const int32_t m = mask;
    ks_twin::whole_reduce("WholeReduceMax", dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride,
                          width, [m, order](T* out, auto at) {
                              uint32_t best = 0;
                              for (int32_t e = 1; e < m; ++e) {
                                  if (ks_twin::to_calc(at(e)) > ks_twin::to_calc(at(best))) best = e;
                              }
                              T value = at(best);
                              using U = typename std::conditional<sizeof(T) == 2, uint16_t, uint32_t>::type;
                              U idx = static_cast<U>(best);
                              if (order == ReduceOrder::ORDER_ONLY_VALUE) {
                                  out[0] = value;
                              } else if (order == ReduceOrder::ORDER_VALUE_INDEX) {
                                  out[0] = value;
                                  std::memcpy(&out[1], &idx, sizeof(T));
                              } else {
                                  std::memcpy(&out[0], &idx, sizeof(T));
                                  out[1] = value;
                              }
                          });
}

}  // namespace AscendC

#endif
