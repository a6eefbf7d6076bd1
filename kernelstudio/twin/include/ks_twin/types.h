// Scalar types, qualifiers and enums of the Ascend C subset the twin implements.
#ifndef KS_TWIN_TYPES_H
#define KS_TWIN_TYPES_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "chip.h"

#define __aicore__
#define __global__
#define __gm__
#define GM_ADDR uint8_t*


using half = _Float16;

// 16-bit brain float; conversions from float round to nearest even, NaN stays NaN.
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) : bits(from_float(f)) {}
    bfloat16_t(double d) : bfloat16_t(static_cast<float>(d)) {}
    bfloat16_t(int v) : bfloat16_t(static_cast<float>(v)) {}
    bfloat16_t(half h) : bfloat16_t(static_cast<float>(h)) {}
    operator float() const
    {
        uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    static bfloat16_t from_bits(uint16_t b)
    {
        bfloat16_t r;
        r.bits = b;
        return r;
    }
    static uint16_t from_float(float f)
    {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
        return static_cast<uint16_t>((static_cast<uint64_t>(u) + 0x7FFF + ((u >> 16) & 1)) >> 16);
    }
};

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
};

enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2, PIPE_FIX };

enum class CubeFormat { ND = 0, NZ, ZN, ZZ, NN, ND_ALIGN, SCALAR, VECTOR };

namespace AscendC {

enum class TPosition : uint8_t { GM, A1, A2, B1, B2, C1, C2, CO1, CO2, VECIN, VECOUT, VECCALC, LCM = VECCALC, SPM, SHM, TSCM, MAX };
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
    MTE2_MTE1, MTE1_MTE2, MTE1_M, M_MTE1, MTE2_V, V_MTE2, MTE3_V, V_MTE3, M_V, V_M, V_V, MTE3_MTE1, MTE1_MTE3,
    MTE1_V, MTE2_M, M_MTE2, V_MTE1, M_FIX, FIX_M, MTE3_MTE2, MTE2_MTE3, S_V, V_S, S_MTE2, MTE2_S, S_MTE3,
    MTE3_S, MTE2_FIX, FIX_MTE2, FIX_S, M_S, FIX_MTE3, MTE1_FIX, FIX_MTE1, FIX_FIX, MAX
};

enum class RoundMode { CAST_NONE = 0, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };

enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

using ::KernelMode;
using TEventID = int8_t;
constexpr int32_t DEFAULT_C0_SIZE = 32;
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;

}  // namespace AscendC

namespace ks_twin {

template <class T> struct IsFloatLike : std::false_type {};
template <> struct IsFloatLike<float> : std::true_type {};
template <> struct IsFloatLike<double> : std::true_type {};
template <> struct IsFloatLike<half> : std::true_type {};
template <> struct IsFloatLike<bfloat16_t> : std::true_type {};

// The type vector math runs in: float for 16-bit floats, the type itself otherwise.
template <class T> struct Calc { using type = T; };
template <> struct Calc<half> { using type = float; };
template <> struct Calc<bfloat16_t> { using type = float; };
template <class T> using CalcT = typename Calc<T>::type;

template <class T> inline CalcT<T> to_calc(T v) { return static_cast<CalcT<T>>(v); }
template <class T> inline T from_calc(CalcT<T> v) { return static_cast<T>(v); }

// The cube's L0C accumulation: float adds in float; int32 (int8 x int8) wraps modulo 2^32 as the
// hardware does, computed in uint32_t so it never is C++ signed overflow.
template <class Acc> inline Acc acc_add(Acc s, Acc v)
{
    if constexpr (std::is_integral<Acc>::value) {
        return static_cast<Acc>(static_cast<uint32_t>(s) + static_cast<uint32_t>(v));
    } else {
        return s + v;
    }
}
template <class Acc> inline Acc acc_mul(Acc a, Acc b)
{
    if constexpr (std::is_integral<Acc>::value) {
        return static_cast<Acc>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
    } else {
        return a * b;
    }
}

template <class T> struct Identity { using type = T; };
template <class T> using NoDeduce = typename Identity<T>::type;

inline const char* position_name(AscendC::TPosition p)
{
    using AscendC::TPosition;
    switch (p) {
        case TPosition::GM: return "GM";
        case TPosition::A1: return "A1";
        case TPosition::A2: return "A2";
        case TPosition::B1: return "B1";
        case TPosition::B2: return "B2";
        case TPosition::C1: return "C1";
        case TPosition::C2: return "C2";
        case TPosition::CO1: return "CO1";
        case TPosition::CO2: return "CO2";
        case TPosition::VECIN: return "VECIN";
        case TPosition::VECOUT: return "VECOUT";
        case TPosition::VECCALC: return "VECCALC";
        default: return "OTHER";
    }
}

template <class T> inline const char* type_name()
{
    if (std::is_same<T, half>::value) return "half";
    if (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
    if (std::is_same<T, float>::value) return "float";
    if (std::is_same<T, int32_t>::value) return "int32_t";
    if (std::is_same<T, uint32_t>::value) return "uint32_t";
    if (std::is_same<T, int16_t>::value) return "int16_t";
    if (std::is_same<T, uint16_t>::value) return "uint16_t";
    if (std::is_same<T, int8_t>::value) return "int8_t";
    if (std::is_same<T, uint8_t>::value) return "uint8_t";
    return "T";
}

}  // namespace ks_twin

#endif
