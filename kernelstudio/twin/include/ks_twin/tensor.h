// GlobalTensor (GM view) and LocalTensor (view into one on-chip buffer) with bounds checks.
#ifndef KS_TWIN_TENSOR_H
#define KS_TWIN_TENSOR_H

#include "runtime.h"

namespace AscendC {

template <class T> class GlobalTensor {
public:
    GlobalTensor() = default;

    void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize)
    {
        addr_ = buffer;
        size_ = bufferSize;
        sized_ = true;
    }
    void SetGlobalBuffer(__gm__ T* buffer)
    {
        addr_ = buffer;
        size_ = 0;
        sized_ = false;
    }

    GlobalTensor operator[](uint64_t offset) const
    {
        if (sized_ && offset > size_) {
            ks_twin::fail("bounds", "GlobalTensor<%s>[%llu] on %s: offset past the %llu elements given to "
                          "SetGlobalBuffer; check the offset or SetGlobalBuffer a larger size",
                          ks_twin::type_name<T>(), static_cast<unsigned long long>(offset), ks_twin::core_name(),
                          static_cast<unsigned long long>(size_));
        }
        GlobalTensor r;
        r.addr_ = addr_ + offset;
        r.size_ = sized_ ? size_ - offset : 0;
        r.sized_ = sized_;
        return r;
    }

    T GetValue(uint64_t i) const
    {
        KS_TWIN_LOG("GlobalTensor::GetValue", "dtype=%s", ks_twin::type_name<T>());
        check(i, 1, "GlobalTensor::GetValue");
        return addr_[i];
    }
    void SetValue(uint64_t i, T v) const
    {
        KS_TWIN_LOG("GlobalTensor::SetValue", "dtype=%s", ks_twin::type_name<T>());
        check(i, 1, "GlobalTensor::SetValue");
        addr_[i] = v;
    }
    T& operator()(uint64_t i) const
    {
        check(i, 1, "GlobalTensor::operator()");
        return addr_[i];
    }

    __gm__ T* GetPhyAddr() const { return addr_; }
    __gm__ T* GetPhyAddr(uint64_t offset) const { return addr_ + offset; }
    uint64_t GetSize() const { return size_; }
    void SetL2CacheHint(int) {}

    // Checks elements [first, first + count) against the declared size and the GM allocation.
    void check(uint64_t first, uint64_t count, const char* api) const
    {
        if (addr_ == nullptr) {
            ks_twin::fail("bounds", "%s on %s: GlobalTensor<%s> has no buffer; call SetGlobalBuffer first", api,
                          ks_twin::core_name(), ks_twin::type_name<T>());
        }
        if (sized_ && first + count > size_) {
            ks_twin::fail("bounds", "%s on %s: elements [%llu, %llu) of a GlobalTensor<%s> of %llu elements "
                          "(SetGlobalBuffer size); shorten the copy or SetGlobalBuffer a larger size",
                          api, ks_twin::core_name(), static_cast<unsigned long long>(first),
                          static_cast<unsigned long long>(first + count), ks_twin::type_name<T>(),
                          static_cast<unsigned long long>(size_));
        }
        ks_twin::check_gm_range(addr_ + first, count * sizeof(T), api);
    }

private:
    T* addr_ = nullptr;
    uint64_t size_ = 0;
    bool sized_ = false;
};

template <class T> class LocalTensor {
public:
    LocalTensor() = default;
    LocalTensor(T* addr, uint32_t size, TPosition pos, const uint8_t* arena)
        : addr_(addr), size_(size), pos_(pos), arena_(arena)
    {
    }

    LocalTensor operator[](uint32_t offset) const
    {
        if (offset > size_) {
            ks_twin::fail("bounds", "LocalTensor<%s>[%u] on %s: offset past the %u elements of this %s tensor",
                          ks_twin::type_name<T>(), offset, ks_twin::core_name(), size_,
                          ks_twin::position_name(pos_));
        }
        return LocalTensor(addr_ + offset, size_ - offset, pos_, arena_);
    }

    T GetValue(uint32_t i, ks_twin::Site site = ks_twin::Site()) const
    {
        KS_TWIN_SITE(site);
        KS_TWIN_REF("r=%s:%llu+%zu", ks_twin::position_name(pos_),
                    static_cast<unsigned long long>(ByteOffset() + static_cast<uint64_t>(i) * sizeof(T)), sizeof(T));
        KS_TWIN_LOG("LocalTensor::GetValue", "dtype=%s pos=%s", ks_twin::type_name<T>(), ks_twin::position_name(pos_));
        check(i, 1, "LocalTensor::GetValue");
        return addr_[i];
    }
    template <class U> void SetValue(uint32_t i, U v, ks_twin::Site site = ks_twin::Site()) const
    {
        KS_TWIN_SITE(site);
        KS_TWIN_REF("w=%s:%llu+%zu", ks_twin::position_name(pos_),
                    static_cast<unsigned long long>(ByteOffset() + static_cast<uint64_t>(i) * sizeof(T)), sizeof(T));
        KS_TWIN_LOG("LocalTensor::SetValue", "dtype=%s pos=%s", ks_twin::type_name<T>(), ks_twin::position_name(pos_));
        check(i, 1, "LocalTensor::SetValue");
        addr_[i] = static_cast<T>(v);
    }
    T& operator()(uint32_t i) const
    {
        check(i, 1, "LocalTensor::operator()");
        return addr_[i];
    }

    uint32_t GetSize() const { return size_; }
    uint32_t GetLength() const { return size_ * sizeof(T); }
    void SetSize(uint32_t n)
    {
        size_ = n;
    }
    T* GetPhyAddr() const { return addr_; }
    T* GetPhyAddr(uint32_t offset) const { return addr_ + offset; }
    TPosition GetPosition() const { return pos_; }
    const uint8_t* Arena() const { return arena_; }
    uint64_t ByteOffset() const { return reinterpret_cast<const uint8_t*>(addr_) - arena_; }

    template <class U> LocalTensor<U> ReinterpretCast() const
    {
        return LocalTensor<U>(reinterpret_cast<U*>(addr_), static_cast<uint32_t>(size_ * sizeof(T) / sizeof(U)),
                              pos_, arena_);
    }

    void check(uint64_t first, uint64_t count, const char* api) const
    {
        if (addr_ == nullptr) {
            ks_twin::fail("bounds", "%s on %s: LocalTensor<%s> holds no buffer; take it from AllocTensor, DeQue "
                          "or TBuf::Get", api, ks_twin::core_name(), ks_twin::type_name<T>());
        }
        if (first + count > size_) {
            ks_twin::fail("bounds", "%s on %s: elements [%llu, %llu) of a %s LocalTensor<%s> of %u elements; "
                          "shorten the count or give the buffer more room in InitBuffer",
                          api, ks_twin::core_name(), static_cast<unsigned long long>(first),
                          static_cast<unsigned long long>(first + count), ks_twin::position_name(pos_),
                          ks_twin::type_name<T>(), size_);
        }
    }

    // On-chip operands start on 32-byte boundaries.
    void check_aligned(const char* api, const char* role) const
    {
        if (ByteOffset() % 32 != 0) {
            ks_twin::fail("alignment", "%s on %s: %s starts at byte %llu of %s, not on a 32-byte boundary; offset "
                          "local tensors by whole 32-byte blocks (%u elements of %s)",
                          api, ks_twin::core_name(), role, static_cast<unsigned long long>(ByteOffset()),
                          ks_twin::position_name(pos_), static_cast<unsigned>(32 / sizeof(T)),
                          ks_twin::type_name<T>());
        }
    }

private:
    T* addr_ = nullptr;
    uint32_t size_ = 0;
    TPosition pos_ = TPosition::VECCALC;
    const uint8_t* arena_ = nullptr;
};

}  // namespace AscendC

namespace ks_twin {

// Notes a local operand (`w` written, `r` read) for the call log: its position, byte offset and bytes.
template <class T> inline void note_operand(char rw, const AscendC::LocalTensor<T>& t, uint64_t bytes)
{
    note_ref("%c=%s:%llu+%llu", rw, position_name(t.GetPosition()), static_cast<unsigned long long>(t.ByteOffset()),
             static_cast<unsigned long long>(bytes));
}

}  // namespace ks_twin

#define KS_TWIN_OPERAND(rw, tensor, bytes)                                            \
    do {                                                                              \
        if (__builtin_expect(::ks_twin::g_call_log != nullptr, 0)) {                  \
            ::ks_twin::note_operand(rw, tensor, bytes);                               \
        }                                                                             \
    } while (0)

// Notes the GM side of a copy (`gm=<parameter>:<offset>+<bytes>`) for the next log line; nothing when logging is off.
#define KS_TWIN_GM(gtensor, bytes)                                                    \
    do {                                                                              \
        if (__builtin_expect(::ks_twin::g_call_log != nullptr, 0)) {                  \
            ::ks_twin::note_gm((gtensor).GetPhyAddr(), (bytes));                      \
        }                                                                             \
    } while (0)

// Notes the row form of a strided GM access (`gmrows=<rows>x<row bytes>/<pitch bytes>`) after its KS_TWIN_GM, so a
// reader knows which bytes it touches: nothing for one row or rows that follow one another.
#define KS_TWIN_GM_ROWS(rows, row_bytes, pitch_bytes)                                 \
    do {                                                                              \
        if (__builtin_expect(::ks_twin::g_call_log != nullptr, 0)) {                  \
            ::ks_twin::note_gm_rows((rows), (row_bytes), (pitch_bytes));              \
        }                                                                             \
    } while (0)

#endif
