// TPipe memory accounting per on-chip memory, TQue depth semantics, TBuf, and sync no-ops.
#ifndef KS_TWIN_PIPE_H
#define KS_TWIN_PIPE_H

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "tensor.h"

namespace ks_twin {

enum MemKind { MEM_UB = 0, MEM_L1, MEM_L0A, MEM_L0B, MEM_L0C, MEM_COUNT };

inline MemKind mem_of(AscendC::TPosition p)
{
    using AscendC::TPosition;
    switch (p) {
        case TPosition::A1:
        case TPosition::B1:
        case TPosition::C1:
        case TPosition::TSCM: return MEM_L1;
        case TPosition::A2: return MEM_L0A;
        case TPosition::B2: return MEM_L0B;
        case TPosition::CO1: return MEM_L0C;
        case TPosition::VECIN:
        case TPosition::VECOUT:
        case TPosition::VECCALC:
        case TPosition::CO2: return MEM_UB;
        default:
            fail("capacity", "InitBuffer at position %s: the twin places buffers in UB, L1, L0A, L0B or L0C only",
                 position_name(p));
    }
}

inline const char* mem_name(int k)
{
    static const char* names[] = {"UB", "L1", "L0A", "L0B", "L0C"};
    return names[k];
}
inline const char* mem_macro(int k)
{
    static const char* names[] = {"KS_UB_BYTES", "KS_L1_BYTES", "KS_L0A_BYTES", "KS_L0B_BYTES", "KS_L0C_BYTES"};
    return names[k];
}
inline uint64_t mem_capacity(int k)
{
    static const uint64_t caps[] = {KS_UB_BYTES, KS_L1_BYTES, KS_L0A_BYTES, KS_L0B_BYTES, KS_L0C_BYTES};
    return caps[k];
}
inline uint64_t mem_alignment(int k)
{
    static const uint64_t al[] = {32, 32, 512, 512, 64};
    return al[k];
}

// InitBuffer rounds every buffer length up to whole 32-byte blocks (CANN does the same); placement in
// L0A/L0B/L0C additionally follows mem_alignment.
inline uint32_t round_len32(uint32_t len) { return static_cast<uint32_t>((static_cast<uint64_t>(len) + 31) / 32 * 32); }

inline const char* event_name(AscendC::HardEvent e)
{
    static const char* names[] = {
        "MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE2_V", "V_MTE2", "MTE3_V", "V_MTE3", "M_V", "V_M", "V_V",
        "MTE3_MTE1", "MTE1_MTE3", "MTE1_V", "MTE2_M", "M_MTE2", "V_MTE1", "M_FIX", "FIX_M", "MTE3_MTE2",
        "MTE2_MTE3", "S_V", "V_S", "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S", "MTE2_FIX", "FIX_MTE2", "FIX_S", "M_S",
        "FIX_MTE3", "MTE1_FIX", "FIX_MTE1", "FIX_FIX"};
    auto i = static_cast<size_t>(e);
    return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

inline const char* pipe_name(pipe_t p)
{
    static const char* names[] = {"PIPE_S", "PIPE_V", "PIPE_M", "PIPE_MTE1", "PIPE_MTE2", "PIPE_MTE3",
                                  "PIPE_ALL", "PIPE_MTE4", "PIPE_MTE5", "PIPE_V2", "PIPE_FIX"};
    auto i = static_cast<size_t>(p);
    return i < sizeof names / sizeof names[0] ? names[i] : "?";
}

enum class SlotState { FREE, ALLOCATED, QUEUED };

// Queue bookkeeping shared by every TQue/TQueBind instantiation.
struct QueState {
    bool ready = false;
    std::string label;  // e.g. "TQue<VECIN, depth 2>"
    AscendC::TPosition pos = AscendC::TPosition::VECIN;
    int32_t depth = 1;
    uint32_t len = 0;  // bytes per buffer
    const uint8_t* arena = nullptr;
    std::vector<uint8_t*> slots;
    std::vector<SlotState> state;
    std::deque<int> fifo;
    size_t next = 0;

    void require_ready(const char* api) const
    {
        if (!ready) fail("queue", "%s on %s before pipe.InitBuffer(...) gave it buffers", api, core_name());
    }

    int alloc(const char* api)
    {
        require_ready(api);
        for (size_t k = 0; k < slots.size(); ++k) {
            size_t i = (next + k) % slots.size();
            if (state[i] == SlotState::FREE) {
                state[i] = SlotState::ALLOCATED;
                next = i + 1;
                return static_cast<int>(i);
            }
        }
        fail("queue", "%s on %s: %s has all %zu buffers from InitBuffer in use (allocated or queued, not freed); "
             "FreeTensor each tensor after its last use, or InitBuffer the queue with more buffers",
             api, core_name(), label.c_str(), slots.size());
    }

    // The buffer an alloc would hand out next, or -1 (nothing is changed).
    int peek_free() const
    {
        for (size_t k = 0; k < slots.size(); ++k) {
            size_t i = (next + k) % slots.size();
            if (state[i] == SlotState::FREE) return static_cast<int>(i);
        }
        return -1;
    }
    // The buffer at `addr`, or -1 when it is none of this queue's.
    int slot_of(const void* addr) const
    {
        for (size_t i = 0; i < slots.size(); ++i) {
            if (slots[i] == addr) return static_cast<int>(i);
        }
        return -1;
    }

    int find(const void* addr, const char* api, const char* what) const
    {
        require_ready(api);
        for (size_t i = 0; i < slots.size(); ++i) {
            if (slots[i] == addr) return static_cast<int>(i);
        }
        fail("queue", "%s on %s: %s got a tensor at byte %lld of %s that is not one of its buffers; pass %s the "
             "tensor AllocTensor or DeQue returned (not a slice of it or another queue's tensor)",
             api, core_name(), label.c_str(), static_cast<long long>(static_cast<const uint8_t*>(addr) - arena),
             position_name(pos), what);
    }

    void enque(const void* addr)
    {
        int i = find(addr, "EnQue", "EnQue");
        if (state[i] != SlotState::ALLOCATED) {
            fail("queue", "EnQue on %s: %s buffer %d is %s; EnQue a tensor once after AllocTensor", core_name(),
                 label.c_str(), i, state[i] == SlotState::FREE ? "free (freed or never allocated)" : "already queued");
        }
        if (static_cast<int32_t>(fifo.size()) >= depth) {
            fail("queue", "EnQue on %s: %s already holds %zu tensors (depth %d); DeQue before enqueuing more or "
                 "raise the queue depth", core_name(), label.c_str(), fifo.size(), depth);
        }
        state[i] = SlotState::QUEUED;
        fifo.push_back(i);
    }

    int deque()
    {
        require_ready("DeQue");
        if (fifo.empty()) {
            fail("queue", "DeQue on %s: %s is empty (nothing was EnQue'd since the last DeQue); EnQue the tensor "
                 "in the producing stage before the consuming stage DeQues it", core_name(), label.c_str());
        }
        int i = fifo.front();
        fifo.pop_front();
        state[i] = SlotState::ALLOCATED;
        return i;
    }

    void free_slot(const void* addr)
    {
        int i = find(addr, "FreeTensor", "FreeTensor");
        if (state[i] != SlotState::ALLOCATED) {
            fail("queue", "FreeTensor on %s: %s buffer %d is %s; free a tensor once, after DeQue (or right after "
                 "AllocTensor)", core_name(), label.c_str(), i,
                 state[i] == SlotState::FREE ? "already free" : "still queued (DeQue it first)");
        }
        state[i] = SlotState::FREE;
    }
};

}  // namespace ks_twin

namespace AscendC {

template <TPosition SRC, TPosition DST, int32_t DEPTH, auto MASK = 0> class TQueBind {
public:
    template <class T> LocalTensor<T> AllocTensor(ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        note_queue(q_.peek_free());
        KS_TWIN_LOG("AllocTensor", "que=%s depth=%d", ks_twin::position_name(SRC), DEPTH);
        int i = q_.alloc("AllocTensor");
        return tensor<T>(i);
    }
    template <class T> bool EnQue(const LocalTensor<T>& t, ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        note_queue(q_.slot_of(t.GetPhyAddr()));
        KS_TWIN_LOG("EnQue", "que=%s depth=%d", ks_twin::position_name(SRC), DEPTH);
        q_.enque(t.GetPhyAddr());
        return true;
    }
    template <class T> LocalTensor<T> DeQue(ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        note_queue(q_.fifo.empty() ? -1 : q_.fifo.front());
        KS_TWIN_LOG("DeQue", "que=%s depth=%d", ks_twin::position_name(SRC), DEPTH);
        return tensor<T>(q_.deque());
    }
    template <class T> void FreeTensor(LocalTensor<T>& t, ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        note_queue(q_.slot_of(t.GetPhyAddr()));
        KS_TWIN_LOG("FreeTensor", "que=%s depth=%d", ks_twin::position_name(SRC), DEPTH);
        q_.free_slot(t.GetPhyAddr());
    }
    bool HasTensorInQue() const { return !q_.fifo.empty(); }
    int32_t GetTensorCountInQue() const { return static_cast<int32_t>(q_.fifo.size()); }
    bool VacantInQue() const { return static_cast<int32_t>(q_.fifo.size()) < DEPTH; }
    void FreeAllEvent() {}

    ks_twin::QueState& state() { return q_; }
    static constexpr TPosition kPos = SRC;
    static constexpr int32_t kDepth = DEPTH;

private:
    // The queue (its first buffer) and the buffer a call works on, for the call log's refs.
    void note_queue(int slot) const
    {
        if (__builtin_expect(ks_twin::g_call_log == nullptr || !q_.ready || q_.slots.empty(), 1)) return;
        const char* pos = ks_twin::position_name(SRC);
        ks_twin::note_ref("q=%s:%lld", pos, static_cast<long long>(q_.slots[0] - q_.arena));
        if (SRC != DST) ks_twin::note_ref("to=%s", ks_twin::position_name(DST));
        if (slot >= 0) ks_twin::note_ref("slot=%s:%lld", pos, static_cast<long long>(q_.slots[slot] - q_.arena));
    }
    template <class T> LocalTensor<T> tensor(int i)
    {
        return LocalTensor<T>(reinterpret_cast<T*>(q_.slots[i]), static_cast<uint32_t>(q_.len / sizeof(T)), SRC,
                              q_.arena);
    }
    ks_twin::QueState q_;
};

template <TPosition POS, int32_t DEPTH, auto MASK = 0> class TQue : public TQueBind<POS, POS, DEPTH, MASK> {};

template <TPosition POS = TPosition::VECCALC> class TBuf {
public:
    template <class T> LocalTensor<T> Get(ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("TBuf::Get", "buf=%s dtype=%s", ks_twin::position_name(POS), ks_twin::type_name<T>());
        require("TBuf::Get");
        return LocalTensor<T>(reinterpret_cast<T*>(addr_), static_cast<uint32_t>(len_ / sizeof(T)), POS, arena_);
    }
    template <class T> LocalTensor<T> Get(uint32_t count, ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("TBuf::Get", "buf=%s dtype=%s count=%u", ks_twin::position_name(POS), ks_twin::type_name<T>(),
                    count);
        require("TBuf::Get");
        if (static_cast<uint64_t>(count) * sizeof(T) > len_) {
            ks_twin::fail("bounds", "TBuf<%s>::Get<%s>(%u) on %s: %llu bytes asked from a buffer of %u bytes; "
                          "InitBuffer the TBuf larger or Get fewer elements", ks_twin::position_name(POS),
                          ks_twin::type_name<T>(), count, ks_twin::core_name(),
                          static_cast<unsigned long long>(count * sizeof(T)), len_);
        }
        return LocalTensor<T>(reinterpret_cast<T*>(addr_), count, POS, arena_);
    }
    template <class T> LocalTensor<T> GetWithOffset(uint32_t count, uint32_t bufOffset,
                                                    ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("TBuf::GetWithOffset", "buf=%s dtype=%s count=%u offset=%u", ks_twin::position_name(POS),
                    ks_twin::type_name<T>(), count, bufOffset);
        require("TBuf::GetWithOffset");
        if (bufOffset + static_cast<uint64_t>(count) * sizeof(T) > len_) {
            ks_twin::fail("bounds", "TBuf::GetWithOffset<%s>(%u, %u) on %s runs past the buffer's %u bytes",
                          ks_twin::type_name<T>(), count, bufOffset, ks_twin::core_name(), len_);
        }
        return LocalTensor<T>(reinterpret_cast<T*>(addr_ + bufOffset), count, POS, arena_);
    }

    void bind(uint8_t* addr, uint32_t len, const uint8_t* arena)
    {
        if (addr_ != nullptr) {
            ks_twin::fail("queue", "InitBuffer(TBuf<%s>) on %s: this TBuf already has a buffer",
                          ks_twin::position_name(POS), ks_twin::core_name());
        }
        addr_ = addr;
        len_ = len;
        arena_ = arena;
    }
    static constexpr TPosition kPos = POS;

private:
    void require(const char* api) const
    {
        if (addr_ == nullptr) {
            ks_twin::fail("queue", "%s on %s before pipe.InitBuffer(tbuf, bytes)", api, ks_twin::core_name());
        }
    }
    uint8_t* addr_ = nullptr;
    uint32_t len_ = 0;
    const uint8_t* arena_ = nullptr;
};

class TPipe {
public:
    TPipe() = default;
    // With KS_TWIN_MEMORY_REPORT set in the environment, each pipe reports the bytes its InitBuffer
    // calls took per memory on stderr when it goes away (tests compare them with lowering's plan).
    ~TPipe()
    {
        if (std::getenv("KS_TWIN_MEMORY_REPORT") == nullptr) return;
        char line[256];
        int n = std::snprintf(line, sizeof line, "KS_TWIN_MEMORY %s", ks_twin::core_name());
        for (int k = 0; k < ks_twin::MEM_COUNT && n > 0 && n < static_cast<int>(sizeof line); ++k) {
            n += std::snprintf(line + n, sizeof line - n, " %s=%llu", ks_twin::mem_name(k),
                               static_cast<unsigned long long>(used_[k]));
        }
        std::fprintf(stderr, "%s\n", line);  // one write per line: cores run as threads
    }
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;

    template <TPosition SRC, TPosition DST, int32_t DEPTH, auto MASK>
    bool InitBuffer(TQueBind<SRC, DST, DEPTH, MASK>& que, uint8_t num, uint32_t len,
                    ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_REF("q=%s:%llu", ks_twin::position_name(SRC),
                    static_cast<unsigned long long>(used_[ks_twin::mem_of(SRC)]));
        KS_TWIN_LOG("InitBuffer", "que=%s depth=%d num=%u len=%u", ks_twin::position_name(SRC), DEPTH, num, len);
        ks_twin::QueState& q = que.state();
        char label[64];
        std::snprintf(label, sizeof label, "TQue<%s, depth %d>", ks_twin::position_name(SRC), DEPTH);
        if (q.ready) ks_twin::fail("queue", "InitBuffer(%s) on %s: this queue already has buffers", label,
                                   ks_twin::core_name());
        if (num == 0 || len == 0) {
            ks_twin::fail("capacity", "InitBuffer(%s, num=%u, len=%u) on %s: need at least one buffer of at least "
                          "one byte", label, num, len, ks_twin::core_name());
        }
        int k = ks_twin::mem_of(SRC);
        q.label = label;
        q.pos = SRC;
        q.depth = DEPTH;
        q.len = ks_twin::round_len32(len);  // each buffer holds whole 32-byte blocks
        q.arena = arena(k);
        char what[160];
        std::snprintf(what, sizeof what, "InitBuffer(%s, num=%u, len=%u)", label, num, len);
        check_fits(k, static_cast<uint64_t>(num) * align(k, len), what);
        for (uint8_t i = 0; i < num; ++i) {
            q.slots.push_back(carve(k, len));
            q.state.push_back(ks_twin::SlotState::FREE);
        }
        q.ready = true;
        return true;
    }

    template <TPosition POS> bool InitBuffer(TBuf<POS>& buf, uint32_t len, ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("InitBuffer", "buf=%s len=%u", ks_twin::position_name(POS), len);
        int k = ks_twin::mem_of(POS);
        char what[160];
        std::snprintf(what, sizeof what, "InitBuffer(TBuf<%s>, len=%u)", ks_twin::position_name(POS), len);
        check_fits(k, align(k, len), what);
        buf.bind(carve(k, len), ks_twin::round_len32(len), arena(k));
        return true;
    }

    // Bytes of a memory this pipe has handed out so far.
    uint64_t Used(int k) const { return used_[k]; }

    template <HardEvent EVT> TEventID AllocEventID()
    {
        TEventID id = static_cast<TEventID>(next_event_++ & 7);
        KS_TWIN_LOG("AllocEventID", "event=%s id=%d", ks_twin::event_name(EVT), id);
        return id;
    }
    template <HardEvent EVT> void ReleaseEventID(TEventID id)
    {
        KS_TWIN_LOG("ReleaseEventID", "event=%s id=%d", ks_twin::event_name(EVT), id);
    }
    template <HardEvent EVT> TEventID FetchEventID() { return 0; }
    TEventID FetchEventID(HardEvent) { return 0; }
    void Reset()
    {
        for (int k = 0; k < ks_twin::MEM_COUNT; ++k) used_[k] = 0;
        for (int k = 0; k < ks_twin::MEM_COUNT; ++k) calls_[k] = 0;
    }
    void Destroy() { Reset(); }
    void Init() {}

private:
    static uint64_t align(int k, uint64_t n)
    {
        uint64_t a = ks_twin::mem_alignment(k);
        return (n + a - 1) / a * a;
    }
    uint8_t* arena(int k)
    {
        if (!mem_[k]) {
            mem_[k].reset(new uint8_t[ks_twin::mem_capacity(k) + 512]());
        }
        return mem_[k].get();
    }
    void check_fits(int k, uint64_t total, const char* what) const
    {
        uint64_t cap = ks_twin::mem_capacity(k);
        if (used_[k] + total > cap) {
            ks_twin::fail("capacity", "%s on %s needs %llu bytes of %s, which holds %llu bytes (%s) with %llu "
                          "already taken by %d earlier InitBuffer calls: %llu bytes over; use smaller tiles, fewer "
                          "buffers (BUFFER_NUM 1) or share a TBuf",
                          what, ks_twin::core_name(), static_cast<unsigned long long>(total), ks_twin::mem_name(k),
                          static_cast<unsigned long long>(cap), ks_twin::mem_macro(k),
                          static_cast<unsigned long long>(used_[k]), calls_[k],
                          static_cast<unsigned long long>(used_[k] + total - cap));
        }
    }
    uint8_t* carve(int k, uint64_t len)
    {
        uint8_t* p = arena(k) + used_[k];
        used_[k] += align(k, len);
        ++calls_[k];
        return p;
    }

    std::unique_ptr<uint8_t[]> mem_[ks_twin::MEM_COUNT];
    uint64_t used_[ks_twin::MEM_COUNT] = {};
    int calls_[ks_twin::MEM_COUNT] = {};
    int next_event_ = 0;
};

// Pipeline sync: the twin runs each core's instructions in program order, so these only check ids.
template <HardEvent EVT> inline void SetFlag(int32_t id, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("SetFlag", "event=%s id=%d", ks_twin::event_name(EVT), id);
    if (id < 0 || id > 7) ks_twin::fail("flag", "SetFlag(%d) on %s: event ids are 0..7", id, ks_twin::core_name());
}
template <HardEvent EVT> inline void WaitFlag(int32_t id, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("WaitFlag", "event=%s id=%d", ks_twin::event_name(EVT), id);
    if (id < 0 || id > 7) ks_twin::fail("flag", "WaitFlag(%d) on %s: event ids are 0..7", id, ks_twin::core_name());
}
template <pipe_t PIPE> inline void PipeBarrier(ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("PipeBarrier", "pipe=%s", ks_twin::pipe_name(PIPE));
}

}  // namespace AscendC

inline void pipe_barrier(pipe_t p, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("pipe_barrier", "pipe=%s", ks_twin::pipe_name(p));
}

#endif
