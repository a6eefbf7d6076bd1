// Atomic stores to GM: SetAtomicAdd<T>() / SetAtomicMax<T>() / SetAtomicMin<T>() make the core's following
// moves into GM (DataCopy and DataCopyPad from a local tensor) combine with what GM holds, element by element
// in T, until SetAtomicNone(). The mode belongs to the core that set it; cores store under one lock, so
// concurrent accumulations into the same GM add up exactly as the hardware's atomic unit does (in an order
// the twin picks: for float sums, one of the orders the hardware may take). InitGlobalMemory fills GM.
#ifndef KS_TWIN_ATOMIC_H
#define KS_TWIN_ATOMIC_H

#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include "calllog.h"
#include "error.h"
#include "runtime.h"
#include "tensor.h"
#include "types.h"

namespace ks_twin {

enum class AtomicOp : uint8_t { NONE, ADD, MAX, MIN };

struct AtomicState {
    AtomicOp op = AtomicOp::NONE;
    const char* dtype = "";  // the element type named by SetAtomicXxx<T>
    size_t size = 0;
};

inline AtomicState& atomic_state()
{
    static thread_local AtomicState s;  // one core per thread
    return s;
}

inline std::mutex& gm_atomic_mutex()
{
    static std::mutex m;
    return m;
}

inline const char* atomic_name(AtomicOp op)
{
    switch (op) {
        case AtomicOp::ADD: return "add";
        case AtomicOp::MAX: return "max";
        case AtomicOp::MIN: return "min";
        default: return "none";
    }
}

template <class T> inline void atomic_set(AtomicOp op, const char* api)
{
    static_assert(std::is_same<T, float>::value || std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value ||
                      std::is_same<T, int32_t>::value || std::is_same<T, int16_t>::value ||
                      std::is_same<T, int8_t>::value,
                  "SetAtomicAdd/Max/Min take float, half, bfloat16_t, int32_t, int16_t or int8_t");
    KS_TWIN_LOG(api, "dtype=%s", type_name<T>());
    atomic_state() = AtomicState{op, type_name<T>(), sizeof(T)};
}

template <class T> inline T atomic_combine(AtomicOp op, T old, T v)
{
    if constexpr (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value) {
        const float a = static_cast<float>(old), b = static_cast<float>(v);
        return static_cast<T>(op == AtomicOp::ADD ? a + b : op == AtomicOp::MAX ? (a > b ? a : b) : (a < b ? a : b));
    } else if constexpr (std::is_integral<T>::value) {  // integer sums saturate, as the atomic unit does
        if (op != AtomicOp::ADD) return op == AtomicOp::MAX ? (old > v ? old : v) : (old < v ? old : v);
        const int64_t s = static_cast<int64_t>(old) + static_cast<int64_t>(v);
        const int64_t hi = static_cast<int64_t>(std::numeric_limits<T>::max());
        const int64_t lo = static_cast<int64_t>(std::numeric_limits<T>::min());
        return static_cast<T>(s > hi ? hi : s < lo ? lo : s);
    } else {
        return op == AtomicOp::ADD ? old + v : op == AtomicOp::MAX ? (old > v ? old : v) : (old < v ? old : v);
    }
}

// Stores `rows` rows of `row_bytes` from `src` (pitch `src_pitch`) to GM `dst` (pitch `dst_pitch`): a copy, or
// under an atomic mode each element combined with GM's. `api` names the move for the error.
template <class T>
inline void gm_store(uint8_t* dst, const uint8_t* src, uint32_t rows, uint64_t row_bytes, uint64_t src_pitch,
                     uint64_t dst_pitch, const char* api)
{
    const AtomicState& st = atomic_state();
    if (st.op == AtomicOp::NONE) {
        for (uint32_t r = 0; r < rows; ++r) std::memmove(dst + r * dst_pitch, src + r * src_pitch, row_bytes);
        return;
    }
    if (std::strcmp(st.dtype, type_name<T>()) != 0) {
        fail("launch", "%s on %s: atomic %s is set for %s (SetAtomic...<%s>) but the move stores %s; set it for "
             "%s, or SetAtomicNone() before a plain store", api, core_name(), atomic_name(st.op), st.dtype,
             st.dtype, type_name<T>(), type_name<T>());
    }
    std::lock_guard<std::mutex> lock(gm_atomic_mutex());
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint64_t i = 0; i < row_bytes / sizeof(T); ++i) {
            T old, v;
            std::memcpy(&old, dst + r * dst_pitch + i * sizeof(T), sizeof(T));
            std::memcpy(&v, src + r * src_pitch + i * sizeof(T), sizeof(T));
            const T out = atomic_combine<T>(st.op, old, v);
            std::memcpy(dst + r * dst_pitch + i * sizeof(T), &out, sizeof(T));
        }
    }
}

}  // namespace ks_twin

namespace AscendC {

template <typename T> inline void SetAtomicAdd() { ks_twin::atomic_set<T>(ks_twin::AtomicOp::ADD, "SetAtomicAdd"); }
template <typename T> inline void SetAtomicMax() { ks_twin::atomic_set<T>(ks_twin::AtomicOp::MAX, "SetAtomicMax"); }
template <typename T> inline void SetAtomicMin() { ks_twin::atomic_set<T>(ks_twin::AtomicOp::MIN, "SetAtomicMin"); }
inline void SetAtomicNone()
{
    KS_TWIN_LOG("SetAtomicNone", "was=%s", ks_twin::atomic_name(ks_twin::atomic_state().op));
    ks_twin::atomic_state() = ks_twin::AtomicState{};
}

// InitGlobalMemory(gm, size, value): the first `size` elements of `gm` set to `value`, from a vector core (CANN
// stages the value through UB). CANN asks for it before any InitBuffer and, when several cores fill memory
// others then read, a SyncAll after it; the twin's bounds check covers the GM range.
template <typename T>
inline void InitGlobalMemory(GlobalTensor<T>& gmWorkspaceAddr, const uint64_t size, const T value,
                             ks_twin::Site site = ks_twin::Site())
{
    static_assert(std::is_same<T, uint16_t>::value || std::is_same<T, int16_t>::value || std::is_same<T, half>::value ||
                      std::is_same<T, uint32_t>::value || std::is_same<T, int32_t>::value ||
                      std::is_same<T, float>::value,
                  "InitGlobalMemory takes uint16_t, int16_t, half, uint32_t, int32_t or float");
    KS_TWIN_SITE(site);
    KS_TWIN_GM(gmWorkspaceAddr, size * sizeof(T));
    KS_TWIN_LOG("InitGlobalMemory", "dst=GM dtype=%s count=%llu", ks_twin::type_name<T>(),
                static_cast<unsigned long long>(size));
    ks_twin::require_vector("InitGlobalMemory");
    gmWorkspaceAddr.check(0, size, "InitGlobalMemory");
    T* p = gmWorkspaceAddr.GetPhyAddr();
    for (uint64_t i = 0; i < size; ++i) p[i] = value;
}

}  // namespace AscendC

#endif
