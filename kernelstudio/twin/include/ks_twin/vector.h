// Vector unit: count-based element-wise ops, Cast with rounding modes, reductions, Brcb, Compare/Select.
#ifndef KS_TWIN_VECTOR_H
#define KS_TWIN_VECTOR_H

#include <algorithm>
#include <cfenv>
#include <limits>

#include "pipe.h"

namespace ks_twin {

// 256-byte repeats a count-based vector instruction of `count` elements of T issues.
template <class T> inline uint32_t repeats_of(uint32_t count)
{
    return static_cast<uint32_t>((static_cast<uint64_t>(count) * sizeof(T) + 255) / 256);
}

// Log line of a count-based vector instruction: its element type, count and 256-byte repeats.
#define KS_TWIN_LOG_VEC(NAME, T, COUNT)                                                                     \
    KS_TWIN_LOG(NAME, "dtype=%s count=%u repeats=%u", ::ks_twin::type_name<T>(), static_cast<unsigned>(COUNT), \
                ::ks_twin::repeats_of<T>(COUNT))

template <class T> inline void vec_operand(const AscendC::LocalTensor<T>& t, uint32_t count, const char* api,
                                           const char* role)
{
    t.check_aligned(api, role);
    t.check(0, count, api);
}

template <class T, class F>
inline void unary(const char* name, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& src,
                  uint32_t count, F f)
{
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_OPERAND('r', src, count * sizeof(T));
    KS_TWIN_LOG_VEC(name, T, count);
    require_vector(name);
    vec_operand(dst, count, name, "dst");
    vec_operand(src, count, name, "src");
    T* d = dst.GetPhyAddr();
    const T* s = src.GetPhyAddr();
    for (uint32_t i = 0; i < count; ++i) d[i] = from_calc<T>(f(to_calc(s[i])));
}

template <class T, class F>
inline void binary(const char* name, const AscendC::LocalTensor<T>& dst, const AscendC::LocalTensor<T>& a,
                   const AscendC::LocalTensor<T>& b, uint32_t count, F f)
{
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_OPERAND('r', a, count * sizeof(T));
    KS_TWIN_OPERAND('r', b, count * sizeof(T));
    KS_TWIN_LOG_VEC(name, T, count);
    require_vector(name);
    vec_operand(dst, count, name, "dst");
    vec_operand(a, count, name, "src0");
    vec_operand(b, count, name, "src1");
    T* d = dst.GetPhyAddr();
    const T* x = a.GetPhyAddr();
    const T* y = b.GetPhyAddr();
    for (uint32_t i = 0; i < count; ++i) d[i] = from_calc<T>(f(to_calc(x[i]), to_calc(y[i])));
}

// ---- rounding a double into a target type under a RoundMode ------------------------------------
template <class D> struct FloatBits;
template <> struct FloatBits<float> {
    using U = uint32_t;
    static float nearest(double x) { return static_cast<float>(x); }
};
template <> struct FloatBits<half> {
    using U = uint16_t;
    static half nearest(double x) { return static_cast<half>(x); }
};
template <> struct FloatBits<bfloat16_t> {
    using U = uint16_t;
    static bfloat16_t nearest(double x) { return bfloat16_t(static_cast<float>(x)); }
};

template <class D> inline D step(D v, bool up)
{
    using U = typename FloatBits<D>::U;
    U u;
    std::memcpy(&u, &v, sizeof u);
    const U sign = static_cast<U>(U(1) << (sizeof(U) * 8 - 1));
    bool neg = (u & sign) != 0;
    if ((u & ~sign) == 0) {
        u = up ? U(1) : static_cast<U>(sign | 1);
    } else if (up != neg) {
        ++u;
    } else {
        --u;
    }
    D r;
    std::memcpy(&r, &u, sizeof r);
    return r;
}

template <class D> inline D round_float(double x, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    D r = FloatBits<D>::nearest(x);
    double rv = static_cast<double>(static_cast<float>(r));
    if (std::isnan(x) || rv == x || mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT) return r;
    D lo = rv < x ? r : step(r, false);
    D hi = rv < x ? step(r, true) : r;
    double lov = static_cast<float>(lo), hiv = static_cast<float>(hi);
    switch (mode) {
        case RoundMode::CAST_FLOOR: return lo;
        case RoundMode::CAST_CEIL: return hi;
        case RoundMode::CAST_TRUNC: return x > 0 ? lo : hi;
        case RoundMode::CAST_ROUND:
            if (x - lov == hiv - x) return x > 0 ? hi : lo;
            return r;
        case RoundMode::CAST_ODD: {
            typename FloatBits<D>::U u;
            std::memcpy(&u, &lo, sizeof u);
            return (u & 1) ? lo : hi;
        }
        default: return r;
    }
}

template <class D> inline D round_int(double x, AscendC::RoundMode mode)
{
    using AscendC::RoundMode;
    double v;
    switch (mode) {
        case RoundMode::CAST_FLOOR: v = std::floor(x); break;
        case RoundMode::CAST_CEIL: v = std::ceil(x); break;
        case RoundMode::CAST_TRUNC: v = std::trunc(x); break;
        case RoundMode::CAST_ROUND: v = std::round(x); break;
        default: v = std::nearbyint(x); break;
    }
    if (std::isnan(v)) return D(0);
    double lo = static_cast<double>(std::numeric_limits<D>::min());
    double hi = static_cast<double>(std::numeric_limits<D>::max());
    return static_cast<D>(std::min(std::max(v, lo), hi));
}

template <class D> inline D cast_value(double x, AscendC::RoundMode mode)
{
    if constexpr (std::is_integral<D>::value) {
        return round_int<D>(x, mode);
    } else {
        return round_float<D>(x, mode);
    }
}

}  // namespace ks_twin

namespace AscendC {

#define KS_TWIN_BINARY(NAME, EXPR)                                                                        \
    template <class T>                                                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1,   \
                     uint32_t count, ks_twin::Site site = ks_twin::Site())                                \
    {                                                                                                     \
        KS_TWIN_SITE(site);                                                                               \
        ks_twin::binary(#NAME, dst, src0, src1, count, [](auto a, auto b) { return EXPR; });             \
    }
KS_TWIN_BINARY(Add, a + b)
KS_TWIN_BINARY(Sub, a - b)
KS_TWIN_BINARY(Mul, a * b)
KS_TWIN_BINARY(Div, a / b)
KS_TWIN_BINARY(Max, a > b ? a : b)
KS_TWIN_BINARY(Min, a < b ? a : b)
#undef KS_TWIN_BINARY

#define KS_TWIN_SCALAR(NAME, EXPR)                                                                        \
    template <class T>                                                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, ks_twin::NoDeduce<T> scalar,   \
                     uint32_t count, ks_twin::Site site = ks_twin::Site())                                \
    {                                                                                                     \
        KS_TWIN_SITE(site);                                                                               \
        auto s = ks_twin::to_calc<T>(scalar);                                                             \
        ks_twin::unary(#NAME, dst, src, count, [s](auto a) { return EXPR; });                            \
    }
KS_TWIN_SCALAR(Adds, a + s)
KS_TWIN_SCALAR(Muls, a * s)
KS_TWIN_SCALAR(Maxs, a > s ? a : s)
KS_TWIN_SCALAR(Mins, a < s ? a : s)
KS_TWIN_SCALAR(LeakyRelu, a >= 0 ? a : a * s)
#undef KS_TWIN_SCALAR

#define KS_TWIN_UNARY(NAME, EXPR)                                                                         \
    template <class T>                                                                                    \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,                \
                     ks_twin::Site site = ks_twin::Site())                                                \
    {                                                                                                     \
        KS_TWIN_SITE(site);                                                                               \
        ks_twin::unary(#NAME, dst, src, count, [](auto a) { return EXPR; });                             \
    }
KS_TWIN_UNARY(Exp, std::exp(a))
KS_TWIN_UNARY(Ln, std::log(a))
KS_TWIN_UNARY(Sqrt, std::sqrt(a))
KS_TWIN_UNARY(Rsqrt, decltype(a)(1) / std::sqrt(a))
KS_TWIN_UNARY(Reciprocal, decltype(a)(1) / a)
KS_TWIN_UNARY(Relu, a > 0 ? a : decltype(a)(0))
KS_TWIN_UNARY(Abs, a < 0 ? -a : a)
#undef KS_TWIN_UNARY

template <class T>
inline void Duplicate(const LocalTensor<T>& dst, ks_twin::NoDeduce<T> scalar, uint32_t count, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_LOG_VEC("Duplicate", T, count);
    ks_twin::require_vector("Duplicate");
    ks_twin::vec_operand(dst, count, "Duplicate", "dst");
    T* d = dst.GetPhyAddr();
    for (uint32_t i = 0; i < count; ++i) d[i] = scalar;
}

// Cast(dst, src, mode, count): float targets round per mode (CAST_NONE = CAST_RINT when inexact),
// integer targets round per mode and saturate.
template <class D, class S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, uint32_t count,
                 ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, count * sizeof(D));
    KS_TWIN_OPERAND('r', src, count * sizeof(S));
    KS_TWIN_LOG("Cast", "dtype=%s src_dtype=%s mode=%d count=%u repeats=%u", ks_twin::type_name<D>(),
                ks_twin::type_name<S>(), static_cast<int>(mode), count,
                ks_twin::repeats_of<D>(count) > ks_twin::repeats_of<S>(count) ? ks_twin::repeats_of<D>(count)
                                                                                : ks_twin::repeats_of<S>(count));
    ks_twin::require_vector("Cast");
    ks_twin::vec_operand(dst, count, "Cast", "dst");
    ks_twin::vec_operand(src, count, "Cast", "src");
    D* d = dst.GetPhyAddr();
    const S* s = src.GetPhyAddr();
    for (uint32_t i = 0; i < count; ++i) {
        double x = static_cast<double>(static_cast<ks_twin::CalcT<S>>(s[i]));
        d[i] = ks_twin::cast_value<D>(x, mode);
    }
}

// Reductions keep the result in dst[0]; the sum runs in double and rounds once to T.
}  // namespace AscendC

namespace ks_twin::vec {
using namespace AscendC;
template <class T> inline void check_work(const char* api, const LocalTensor<T>& work, uint32_t count)
{
    uint32_t per_repeat = 256 / sizeof(T), per_block = 32 / sizeof(T);
    uint32_t need = (count + per_repeat - 1) / per_repeat;
    need = (need + per_block - 1) / per_block * per_block;
    if (work.GetSize() < need) {
        ks_twin::fail("bounds", "%s(count=%u) on %s: workLocal holds %u elements of %s but needs %u (one per "
                      "256-byte repeat, rounded to 32-byte blocks); give the work buffer more room",
                      api, count, ks_twin::core_name(), work.GetSize(), ks_twin::type_name<T>(), need);
    }
}
}  // namespace ks_twin::vec

namespace AscendC {

template <class T>
inline void ReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, uint32_t count,
                      ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, sizeof(T));
    KS_TWIN_OPERAND('r', src, count * sizeof(T));
    KS_TWIN_LOG_VEC("ReduceSum", T, count);
    ks_twin::require_vector("ReduceSum");
    ks_twin::vec_operand(src, count, "ReduceSum", "src");
    ks_twin::vec_operand(dst, 1, "ReduceSum", "dst");
    ::ks_twin::vec::check_work("ReduceSum", work, count);
    double acc = 0;
    const T* s = src.GetPhyAddr();
    for (uint32_t i = 0; i < count; ++i) acc += static_cast<double>(ks_twin::to_calc(s[i]));
    dst.GetPhyAddr()[0] = static_cast<T>(static_cast<ks_twin::CalcT<T>>(acc));
}

}  // namespace AscendC

namespace ks_twin::vec {
using namespace AscendC;
template <class T, bool IS_MAX>
inline void reduce_extreme(const char* api, const LocalTensor<T>& dst, const LocalTensor<T>& src,
                           const LocalTensor<T>& work, uint32_t count, bool calIndex)
{
    KS_TWIN_LOG_VEC(api, T, count);
    ks_twin::require_vector(api);
    ks_twin::vec_operand(src, count, api, "src");
    ks_twin::vec_operand(dst, calIndex ? 2 : 1, api, "dst");
    ::ks_twin::vec::check_work(api, work, count);
    if (count == 0) ks_twin::fail("bounds", "%s on %s with count 0", api, ks_twin::core_name());
    const T* s = src.GetPhyAddr();
    uint32_t best = 0;
    for (uint32_t i = 1; i < count; ++i) {
        auto v = ks_twin::to_calc(s[i]), b = ks_twin::to_calc(s[best]);
        if (IS_MAX ? v > b : v < b) best = i;
    }
    T* d = dst.GetPhyAddr();
    d[0] = s[best];
    if (calIndex) {  // the index is stored as the bit pattern of an unsigned integer of T's width
        if (sizeof(T) == 2) {
            uint16_t idx = static_cast<uint16_t>(best);
            std::memcpy(&d[1], &idx, 2);
        } else {
            uint32_t idx = best;
            std::memcpy(&d[1], &idx, 4);
        }
    }
}
}  // namespace ks_twin::vec

namespace AscendC {

template <class T>
inline void ReduceMax(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
                      uint32_t count, bool calIndex = false, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, (calIndex ? 2 : 1) * sizeof(T));
    KS_TWIN_OPERAND('r', src, count * sizeof(T));
    ::ks_twin::vec::reduce_extreme<T, true>("ReduceMax", dst, src, work, count, calIndex);
}

template <class T>
inline void ReduceMin(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,
                      uint32_t count, bool calIndex = false, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, (calIndex ? 2 : 1) * sizeof(T));
    KS_TWIN_OPERAND('r', src, count * sizeof(T));
    ::ks_twin::vec::reduce_extreme<T, false>("ReduceMin", dst, src, work, count, calIndex);
}

struct BrcbRepeatParams {
    uint16_t dstBlkStride = 1;  // 32-byte blocks between the 8 broadcast blocks of one repeat
    uint16_t dstRepStride = 8;  // 32-byte blocks between repeats
    BrcbRepeatParams() = default;
    BrcbRepeatParams(uint16_t blk, uint16_t rep) : dstBlkStride(blk), dstRepStride(rep) {}
};

// Brcb: each of 8 source elements per repeat fills one 32-byte block of dst.
template <class T>
inline void Brcb(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint8_t repeatTime, const BrcbRepeatParams& p,
                 ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('r', src, repeatTime * 8u * sizeof(T));
    KS_TWIN_OPERAND('w', dst, repeatTime == 0 ? 0ull : (static_cast<uint64_t>(repeatTime - 1) * p.dstRepStride + 7ull * p.dstBlkStride + 1) * 32ull);
    KS_TWIN_LOG("Brcb", "dtype=%s repeats=%u dstBlkStride=%u dstRepStride=%u", ks_twin::type_name<T>(),
                static_cast<unsigned>(repeatTime), static_cast<unsigned>(p.dstBlkStride),
                static_cast<unsigned>(p.dstRepStride));
    ks_twin::require_vector("Brcb");
    const uint32_t per_block = 32 / sizeof(T);
    ks_twin::vec_operand(src, repeatTime * 8u, "Brcb", "src");
    uint64_t last = 0;
    if (repeatTime > 0) {
        last = (static_cast<uint64_t>(repeatTime - 1) * p.dstRepStride + 7ull * p.dstBlkStride + 1) * per_block;
    }
    ks_twin::vec_operand(dst, static_cast<uint32_t>(last), "Brcb", "dst");
    for (uint32_t r = 0; r < repeatTime; ++r) {
        for (uint32_t j = 0; j < 8; ++j) {
            T v = src.GetPhyAddr()[r * 8 + j];
            T* blk = dst.GetPhyAddr() + (r * p.dstRepStride + j * p.dstBlkStride) * per_block;
            for (uint32_t e = 0; e < per_block; ++e) blk[e] = v;
        }
    }
}

// Compare writes one bit per element (bit i of byte i / 8) into dst.
}  // namespace AscendC

namespace ks_twin::vec {
using namespace AscendC;
template <class T, class U>
inline void compare_into(const char* api, const LocalTensor<U>& dst, const LocalTensor<T>& src0, const T* rhs,
                         bool scalar, CMPMODE mode, uint32_t count)
{
    KS_TWIN_LOG(api, "dtype=%s mode=%d count=%u repeats=%u", ks_twin::type_name<T>(), static_cast<int>(mode), count,
                ks_twin::repeats_of<T>(count));
    ks_twin::require_vector(api);
    ks_twin::vec_operand(src0, count, api, "src0");
    uint32_t bytes = (count + 7) / 8;
    LocalTensor<uint8_t> bits = dst.template ReinterpretCast<uint8_t>();
    ks_twin::vec_operand(bits, bytes, api, "dst");
    uint8_t* out = bits.GetPhyAddr();
    std::memset(out, 0, bytes);
    for (uint32_t i = 0; i < count; ++i) {
        auto a = ks_twin::to_calc(src0.GetPhyAddr()[i]);
        auto b = ks_twin::to_calc(scalar ? rhs[0] : rhs[i]);
        bool r = false;
        switch (mode) {
            case CMPMODE::LT: r = a < b; break;
            case CMPMODE::GT: r = a > b; break;
            case CMPMODE::EQ: r = a == b; break;
            case CMPMODE::LE: r = a <= b; break;
            case CMPMODE::GE: r = a >= b; break;
            case CMPMODE::NE: r = a != b; break;
        }
        if (r) out[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
    }
}
}  // namespace ks_twin::vec

namespace AscendC {

template <class T, class U>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& src0, const LocalTensor<T>& src1, CMPMODE mode,
                    uint32_t count, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, (count + 7) / 8);
    KS_TWIN_OPERAND('r', src0, count * sizeof(T));
    KS_TWIN_OPERAND('r', src1, count * sizeof(T));
    ks_twin::vec_operand(src1, count, "Compare", "src1");
    ::ks_twin::vec::compare_into("Compare", dst, src0, src1.GetPhyAddr(), false, mode, count);
}

template <class T, class U>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& src0, ks_twin::NoDeduce<T> scalar,
                          CMPMODE mode, uint32_t count, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, (count + 7) / 8);
    KS_TWIN_OPERAND('r', src0, count * sizeof(T));
    ::ks_twin::vec::compare_into("CompareScalar", dst, src0, &scalar, true, mode, count);
}

}  // namespace AscendC

namespace ks_twin::vec {
using namespace AscendC;
template <class T, class U>
inline void select_from(const char* api, const LocalTensor<T>& dst, const LocalTensor<U>& mask,
                        const LocalTensor<T>& src0, const T* other, bool scalar, uint32_t count)
{
    KS_TWIN_LOG_VEC(api, T, count);
    ks_twin::require_vector(api);
    ks_twin::vec_operand(dst, count, api, "dst");
    ks_twin::vec_operand(src0, count, api, "src0");
    LocalTensor<uint8_t> bits = mask.template ReinterpretCast<uint8_t>();
    ks_twin::vec_operand(bits, (count + 7) / 8, api, "selMask");
    for (uint32_t i = 0; i < count; ++i) {
        bool take = (bits.GetPhyAddr()[i / 8] >> (i % 8)) & 1;
        dst.GetPhyAddr()[i] = take ? src0.GetPhyAddr()[i] : (scalar ? other[0] : other[i]);
    }
}
}  // namespace ks_twin::vec

namespace AscendC {

// Select: dst[i] = mask bit i ? src0[i] : src1[i] (or the scalar in VSEL_TENSOR_SCALAR_MODE).
template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   const LocalTensor<T>& src1, SELMODE mode, uint32_t count, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_OPERAND('r', src0, count * sizeof(T));
    KS_TWIN_OPERAND('r', src1, count * sizeof(T));
    KS_TWIN_OPERAND('r', selMask, (count + 7) / 8);
    if (mode != SELMODE::VSEL_TENSOR_TENSOR_MODE) {
        ks_twin::fail("bounds", "Select on %s: a tensor src1 needs SELMODE::VSEL_TENSOR_TENSOR_MODE",
                      ks_twin::core_name());
    }
    ks_twin::vec_operand(src1, count, "Select", "src1");
    ::ks_twin::vec::select_from("Select", dst, selMask, src0, src1.GetPhyAddr(), false, count);
}

template <class T, class U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& src0,
                   ks_twin::NoDeduce<T> scalar, SELMODE mode, uint32_t count, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_OPERAND('r', src0, count * sizeof(T));
    KS_TWIN_OPERAND('r', selMask, (count + 7) / 8);
    if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
        ks_twin::fail("bounds", "Select on %s: a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE",
                      ks_twin::core_name());
    }
    ::ks_twin::vec::select_from("Select", dst, selMask, src0, &scalar, true, count);
}

// ---- high-level math (the shared tmp buffer overloads accept and ignore the buffer) ---------------
#define KS_TWIN_HIGH_LEVEL(NAME, EXPR)                                                                    \
    template <class T, bool isReuseSource = false>                                                        \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count,                \
                     ks_twin::Site site = ks_twin::Site())                                                \
    {                                                                                                     \
        KS_TWIN_SITE(site);                                                                               \
        ks_twin::unary(#NAME, dst, src, count, [](auto a) { return EXPR; });                             \
    }                                                                                                     \
    template <class T, bool isReuseSource = false>                                                        \
    inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& tmp, \
                     uint32_t count, ks_twin::Site site = ks_twin::Site())                                \
    {                                                                                                     \
        KS_TWIN_SITE(site);                                                                               \
        (void)tmp;                                                                                        \
        NAME<T, isReuseSource>(dst, src, count);                                                          \
    }
KS_TWIN_HIGH_LEVEL(Erf, std::erf(a))
KS_TWIN_HIGH_LEVEL(Tanh, std::tanh(a))
KS_TWIN_HIGH_LEVEL(Sigmoid, decltype(a)(1) / (decltype(a)(1) + std::exp(-a)))
// Gelu in its tanh form: x / (1 + exp(-sqrt(8/pi) * (x + 0.044715 x^3))).
KS_TWIN_HIGH_LEVEL(Gelu, a / (decltype(a)(1) + std::exp(decltype(a)(-1.5957691216057308) *
                                                         (a + decltype(a)(0.044715) * a * a * a))))
KS_TWIN_HIGH_LEVEL(FasterGelu, a / (decltype(a)(1) + std::exp(decltype(a)(-1.702) * a)))
#undef KS_TWIN_HIGH_LEVEL

}  // namespace AscendC

#endif
