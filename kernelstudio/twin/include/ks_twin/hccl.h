// An in-memory HCCL for the twin: N ranks, one process each (forked by run_ranks), that exchange data through
// one shared anonymous mapping. A rank's Commit copies that repeat's send data into its staging area; a Wait
// (or Finalize) waits, bounded in time, until every rank has committed the same repeat and then computes this
// rank's result from all ranks' staged data: AllReduce sums (in float, rounded once to the dtype),
// ReduceScatter sums this rank's block, AllGather copies every rank's part. Misuse fails with `hccl` errors.
#ifndef KS_TWIN_HCCL_H
#define KS_TWIN_HCCL_H

#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <thread>

#include "error.h"
#include "runtime.h"
#include "types.h"

namespace ks_twin::hccl {

constexpr uint32_t kMaxRanks = 8;
constexpr uint32_t kMaxHandles = 16;  // handles one rank may prepare in a launch

enum class Kind : uint32_t { None = 0, AllReduce = 1, AllGather = 2, ReduceScatter = 3 };

inline const char* kind_name(Kind k)
{
    switch (k) {
        case Kind::AllReduce: return "AllReduce";
        case Kind::AllGather: return "AllGather";
        case Kind::ReduceScatter: return "ReduceScatter";
        default: return "?";
    }
}

// What one rank prepared under one handle, as its peers read it (written before `prepared` is released).
struct HandleShared {
    std::atomic<uint32_t> prepared;
    std::atomic<uint32_t> committed;  // repeats whose send data is staged
    Kind kind;
    uint32_t dtype;
    uint32_t elem_bytes;
    uint32_t repeat;
    uint64_t count;   // AllReduce count, AllGather sendCount, ReduceScatter recvCount (elements)
    uint64_t stride;  // AllGather / ReduceScatter strideCount (elements; 0: count)
    uint64_t staging_offset;  // bytes into this rank's staging area
    uint64_t repeat_bytes;    // staged bytes per repeat
};

struct RankShared {
    HandleShared handles[kMaxHandles];
};

struct Shared {
    uint32_t ranks;
    uint64_t staging_bytes;  // per rank
    RankShared rank[kMaxRanks];
};

struct World {
    Shared* shared = nullptr;
    uint8_t* staging = nullptr;  // ranks x staging_bytes, after the Shared header
    uint32_t rank = 0;
    bool in_rank = false;
    double timeout_s = 30.0;
    // this rank's own bookkeeping
    uint32_t handles = 0;
    uint64_t staging_used = 0;
    uint32_t waited[kMaxHandles] = {};
    uint8_t* send[kMaxHandles] = {};
    uint8_t* recv[kMaxHandles] = {};
    bool initialised = false;
    bool finalised = false;
    int prep_core = -1;  // 0: AIC, 1: AIV (the core type that prepared, which must commit and wait too)
    std::atomic<int64_t> client_block{0};  // the block whose core is HCCL's client (HcclServerConfig's blockId;
                                           // every core's Hccl::Init stores it)
};

inline World& world()
{
    static World w;
    return w;
}

inline uint8_t* staging_of(uint32_t rank) { return world().staging + rank * world().shared->staging_bytes; }

inline double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- element conversion for the reductions --------------------------------------------------------------
// dtype codes as HcclDataType numbers them (see lib/hccl/hccl.h)
constexpr uint32_t kFp16 = 3, kFp32 = 4, kBf16 = 11;

inline float load(const uint8_t* p, uint32_t dtype)
{
    if (dtype == kFp32) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    if (dtype == kBf16) {
        const uint32_t w = static_cast<uint32_t>(bits) << 16;
        float v;
        std::memcpy(&v, &w, 4);
        return v;
    }
    _Float16 h;
    std::memcpy(&h, &bits, 2);
    return static_cast<float>(h);
}

inline void store(uint8_t* p, uint32_t dtype, float v)
{
    if (dtype == kFp32) {
        std::memcpy(p, &v, 4);
        return;
    }
    uint16_t bits;
    if (dtype == kBf16) {
        uint32_t w;
        std::memcpy(&w, &v, 4);
        if ((w & 0x7f800000u) == 0x7f800000u && (w & 0x007fffffu)) {
            bits = static_cast<uint16_t>((w >> 16) | 0x40u);  // a NaN stays a NaN
        } else {
            w += 0x7fffu + ((w >> 16) & 1u);  // round to nearest even
            bits = static_cast<uint16_t>(w >> 16);
        }
    } else {
        const _Float16 h = static_cast<_Float16>(v);
        std::memcpy(&bits, &h, 2);
    }
    std::memcpy(p, &bits, 2);
}

// ---- the calls --------------------------------------------------------------------------------------------
inline void require_rank(const char* api)
{
    if (!world().in_rank) {
        fail("hccl", "%s outside a rank: the multi-device launcher runs each rank's main body through "
             "ks_twin::hccl::run_ranks(ranks, staging_bytes, body), which a single-device main.cpp does not", api);
    }
}

inline void require_core0(const char* api)
{
    const CoreCtx& c = ctx();
    if (!c.active) fail("hccl", "%s called outside a kernel launched by ICPU_RUN_KF", api);
    const int64_t client = world().client_block.load(std::memory_order_relaxed);
    if (c.block_idx != client) {
        fail("hccl", "%s on %s (block index %lld) of rank %u: HCCL's client works on core %lld only; guard the call "
             "with `if (AscendC::GetBlockIdx() == %lld)` (and ASCEND_IS_AIC or ASCEND_IS_AIV)", api, core_name(),
             static_cast<long long>(c.block_idx), world().rank, static_cast<long long>(client),
             static_cast<long long>(client));
    }
    const int type = c.type == CoreType::AIC ? 0 : 1;
    World& w = world();
    if (w.prep_core >= 0 && w.prep_core != type) {
        fail("hccl", "%s on %s of rank %u, but the handles were prepared on the %s: Prepare, Commit, Wait and "
             "Finalize must run on the same core", api, core_name(), w.rank, w.prep_core == 0 ? "AIC" : "AIV");
    }
    w.prep_core = type;
}

inline void init(const char* api)
{
    require_rank(api);
    world().initialised = true;
}

inline HandleShared& mine(uint32_t h) { return world().shared->rank[world().rank].handles[h]; }

inline int8_t prepare(Kind kind, uint8_t* send, uint8_t* recv, uint64_t count, uint64_t stride, uint32_t dtype,
                      uint32_t elem_bytes, uint32_t repeat, bool commit_now);
inline void commit(int8_t handle);

inline void check_handle(const char* api, int8_t handle)
{
    World& w = world();
    if (handle < 0 || static_cast<uint32_t>(handle) >= w.handles) {
        fail("hccl", "%s(%d) on rank %u: no such handle; this rank prepared %u handle(s) (0..%d); pass the value "
             "AllReduce/AllGather/ReduceScatter returned", api, handle, w.rank, w.handles,
             static_cast<int>(w.handles) - 1);
    }
}

inline int8_t prepare(Kind kind, uint8_t* send, uint8_t* recv, uint64_t count, uint64_t stride, uint32_t dtype,
                      uint32_t elem_bytes, uint32_t repeat, bool commit_now)
{
    const char* api = kind_name(kind);
    require_rank(api);
    require_core0(api);
    World& w = world();
    if (!w.initialised) fail("hccl", "%s on rank %u before Hccl::Init; call hccl.Init(GetHcclContext<0>()) first", api, w.rank);
    if (w.finalised) fail("hccl", "%s on rank %u after Finalize; prepare every task before Finalize", api, w.rank);
    if (w.handles >= kMaxHandles) {
        fail("hccl", "%s on rank %u: %u handles prepared already, the twin holds %u per launch", api, w.rank,
             w.handles, kMaxHandles);
    }
    if (repeat == 0 || count == 0) {
        fail("hccl", "%s on rank %u: count %llu, repeat %u; both must be at least 1", api, w.rank,
             static_cast<unsigned long long>(count), repeat);
    }
    const uint32_t p = w.shared->ranks;
    const uint64_t repeat_bytes = count * elem_bytes * (kind == Kind::ReduceScatter ? p : 1);
    const uint64_t need = repeat_bytes * repeat;
    if (w.staging_used + need > w.shared->staging_bytes) {
        fail("hccl", "%s on rank %u: %llu bytes to stage (count %llu x repeat %u) but the launcher gave each rank "
             "%llu bytes of which %llu are taken; pass a larger staging size to run_ranks", api, w.rank,
             static_cast<unsigned long long>(need), static_cast<unsigned long long>(count), repeat,
             static_cast<unsigned long long>(w.shared->staging_bytes),
             static_cast<unsigned long long>(w.staging_used));
    }
    const uint32_t h = w.handles++;
    HandleShared& s = mine(h);
    s.kind = kind;
    s.dtype = dtype;
    s.elem_bytes = elem_bytes;
    s.repeat = repeat;
    s.count = count;
    s.stride = stride == 0 ? count : stride;
    s.staging_offset = w.staging_used;
    s.repeat_bytes = repeat_bytes;
    w.staging_used += need;
    w.send[h] = send;
    w.recv[h] = recv;
    s.committed.store(0, std::memory_order_relaxed);
    s.prepared.store(1, std::memory_order_release);
    KS_TWIN_LOG(api, "handle=%u count=%llu stride=%llu repeat=%u rank=%u", h, static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(s.stride), repeat, w.rank);
    if (commit_now) {
        for (uint32_t i = 0; i < repeat; ++i) commit(static_cast<int8_t>(h));
    }
    return static_cast<int8_t>(h);
}

inline void commit(int8_t handle)
{
    require_rank("Commit");
    require_core0("Commit");
    check_handle("Commit", handle);
    World& w = world();
    HandleShared& s = mine(handle);
    const uint32_t i = s.committed.load(std::memory_order_relaxed);
    if (i >= s.repeat) {
        fail("hccl", "Commit(%d) on rank %u: %s handle %d was prepared with repeat %u and is committed %u times "
             "already; commit each handle exactly `repeat` times", handle, w.rank, kind_name(s.kind), handle,
             s.repeat, i);
    }
    const uint64_t e = s.elem_bytes;
    uint8_t* dst = staging_of(w.rank) + s.staging_offset + i * s.repeat_bytes;
    const char* api = kind_name(s.kind);
    if (s.kind == Kind::ReduceScatter) {  // one block per rank, strideCount apart
        const uint64_t span = ((w.shared->ranks - 1) * s.stride + s.count) * e;  // first to last rank block
        check_gm_range(w.send[handle] + i * s.count * e, span, api);
        for (uint32_t j = 0; j < w.shared->ranks; ++j) {
            std::memcpy(dst + j * s.count * e, w.send[handle] + (j * s.stride + i * s.count) * e, s.count * e);
        }
    } else {
        check_gm_range(w.send[handle] + i * s.count * e, s.count * e, api);
        std::memcpy(dst, w.send[handle] + i * s.count * e, s.count * e);
    }
    KS_TWIN_LOG("Commit", "handle=%d repeat=%u rank=%u", handle, i, w.rank);
    s.committed.store(i + 1, std::memory_order_release);
}

// Waits (bounded) until every rank committed repeat `i` of handle `h` with the same task; names the ranks
// that did not.
inline void await_peers(const char* api, uint32_t h, uint32_t i)
{
    World& w = world();
    const HandleShared& me = mine(h);
    const double deadline = now_s() + w.timeout_s;
    for (;;) {
        std::string missing;
        for (uint32_t j = 0; j < w.shared->ranks; ++j) {
            const HandleShared& o = w.shared->rank[j].handles[h];
            if (o.prepared.load(std::memory_order_acquire) == 0 || o.committed.load(std::memory_order_acquire) <= i) {
                missing += (missing.empty() ? "" : ", ") + std::to_string(j);
                continue;
            }
            if (o.kind != me.kind || o.count != me.count || o.repeat != me.repeat || o.dtype != me.dtype ||
                o.stride != me.stride) {
                fail("hccl", "%s(%u) on rank %u: rank %u prepared handle %u as %s count %llu repeat %u, this rank as "
                     "%s count %llu repeat %u; every rank must prepare the same tasks in the same order", api, h,
                     w.rank, j, h, kind_name(o.kind), static_cast<unsigned long long>(o.count), o.repeat,
                     kind_name(me.kind), static_cast<unsigned long long>(me.count), me.repeat);
            }
        }
        if (missing.empty()) return;
        if (now_s() > deadline) {
            fail("hccl", "%s(%u) on rank %u: rank(s) %s never committed repeat %u of %s handle %u (waited %.1f s); on "
                 "the device this rank would hang. Every rank must Commit each repeat its Prepare asked for (ranks that are "
                 "only slow need a longer bound: KS_TWIN_HCCL_TIMEOUT_S, hccl_timeout_s= of ks.multi.run_twin)", api, h,
                 w.rank, missing.c_str(), i, kind_name(me.kind), h, w.timeout_s);
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

// This rank's result of repeat `i` of handle `h`, from every rank's staged data.
inline void deliver(uint32_t h, uint32_t i)
{
    World& w = world();
    const HandleShared& s = mine(h);
    const uint32_t p = w.shared->ranks;
    const uint64_t e = s.elem_bytes;
    auto staged = [&](uint32_t j) { return staging_of(j) + s.staging_offset + i * s.repeat_bytes; };
    uint8_t* recv = w.recv[h];
    if (s.kind == Kind::AllGather) {
        check_gm_range(recv + i * s.count * e, ((p - 1) * s.stride + s.count) * e, "AllGather");
        for (uint32_t j = 0; j < p; ++j) {
            std::memcpy(recv + (j * s.stride + i * s.count) * e, staged(j), s.count * e);
        }
        return;
    }
    const uint64_t block = s.kind == Kind::ReduceScatter ? w.rank * s.count * e : 0;
    uint8_t* out = recv + i * s.count * e;
    check_gm_range(out, s.count * e, kind_name(s.kind));
    for (uint64_t k = 0; k < s.count; ++k) {
        float acc = 0.0f;
        for (uint32_t j = 0; j < p; ++j) acc += load(staged(j) + block + k * e, s.dtype);
        store(out + k * e, s.dtype, acc);
    }
}

inline int32_t wait(int8_t handle)
{
    require_rank("Wait");
    require_core0("Wait");
    check_handle("Wait", handle);
    World& w = world();
    HandleShared& s = mine(handle);
    const uint32_t i = w.waited[handle];
    const uint32_t committed = s.committed.load(std::memory_order_relaxed);
    if (i >= committed) {
        fail("hccl", "Wait(%d) on rank %u before Commit: %s handle %d is committed %u time(s) and waited %u time(s); "
             "on the device this Wait never returns. Commit the task (or prepare it with commit=true) before "
             "waiting for it", handle, w.rank, kind_name(s.kind), handle, committed, i);
    }
    await_peers("Wait", handle, i);
    deliver(handle, i);
    w.waited[handle] = i + 1;
    KS_TWIN_LOG("Wait", "handle=%d repeat=%u rank=%u", handle, i, w.rank);
    return 0;
}

inline void finalize()
{
    require_rank("Finalize");
    require_core0("Finalize");
    World& w = world();
    for (uint32_t h = 0; h < w.handles; ++h) {
        const HandleShared& s = mine(h);
        const uint32_t c = s.committed.load(std::memory_order_relaxed);
        if (c < s.repeat) {
            fail("hccl", "Finalize on rank %u: %s handle %u is committed %u of the %u times its Prepare asked for; the "
                 "other ranks would wait for the rest forever. Commit it once per repeat before Finalize", w.rank,
                 kind_name(s.kind), h, c, s.repeat);
        }
        while (w.waited[h] < c) {  // the client waits for the tasks still running before it leaves
            await_peers("Finalize", h, w.waited[h]);
            deliver(h, w.waited[h]);
            ++w.waited[h];
        }
    }
    w.finalised = true;
    KS_TWIN_LOG("Finalize", "rank=%u", w.rank);
}

// A rank whose kernel returned with tasks prepared and never finalised leaves its peers waiting.
inline void check_rank_done()
{
    World& w = world();
    if (w.handles > 0 && !w.finalised) {
        fail("hccl", "rank %u: the kernel returned with %u HCCL task(s) prepared and no Finalize; the server would "
             "wait for more tasks. Call hccl.Finalize() on core 0 after the last Wait", w.rank, w.handles);
    }
}

// ---- the launcher ------------------------------------------------------------------------------------------
// Runs body(rank) for ranks 0..ranks-1, each in its own process (working directory rank<r>/), with
// `staging_bytes` of shared staging per rank. The first rank to fail ends the others; its exit status (or a
// KS_TWIN_ERROR line for a signal) is the launcher's. KS_TWIN_HCCL_TIMEOUT_S bounds every wait (default 30 s).
inline int run_ranks(uint32_t ranks, uint64_t staging_bytes, const std::function<int(uint32_t)>& body)
{
    if (ranks < 1 || ranks > kMaxRanks) {
        fail("hccl", "run_ranks(%u): the twin runs 1 to %u ranks", ranks, kMaxRanks);
    }
    const size_t header = (sizeof(Shared) + 4095) / 4096 * 4096;
    const size_t bytes = header + static_cast<size_t>(ranks) * staging_bytes;
    void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) fail("capacity", "run_ranks: cannot map %zu bytes of shared memory for the ranks", bytes);
    World& w = world();
    w.shared = new (mem) Shared();
    w.shared->ranks = ranks;
    w.shared->staging_bytes = staging_bytes;
    w.staging = static_cast<uint8_t*>(mem) + header;
    if (const char* t = std::getenv("KS_TWIN_HCCL_TIMEOUT_S")) {
        const double v = std::atof(t);
        if (v > 0) w.timeout_s = v;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pids[kMaxRanks] = {};
    for (uint32_t r = 0; r < ranks; ++r) {
        const pid_t pid = fork();
        if (pid < 0) fail("launch", "run_ranks: fork failed for rank %u", r);
        if (pid == 0) {
            w.rank = r;
            w.in_rank = true;
            const std::string dir = "rank" + std::to_string(r);
            if (chdir(dir.c_str()) != 0) {
                fail("launch", "rank %u: no directory %s next to the binary's working directory; write each rank's "
                     "inputs into rank<r>/", r, dir.c_str());
            }
            const int rc = body(r);
            if (rc == 0) check_rank_done();
            std::fflush(stdout);
            std::fflush(stderr);
            std::_Exit(rc);
        }
        pids[r] = pid;
    }
    int result = 0;
    for (uint32_t left = ranks; left > 0; --left) {
        int status = 0;
        const pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) break;
        uint32_t r = 0;
        while (r < ranks && pids[r] != pid) ++r;
        if (r < ranks) pids[r] = 0;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (ok || result != 0) continue;
        result = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
        if (WIFSIGNALED(status)) {
            std::fprintf(stderr, "KS_TWIN_ERROR crash: rank %u died of signal %d (an access outside the buffers the "
                         "twin checks, or a bug in main.cpp)\n", r, WTERMSIG(status));
        }
        for (uint32_t o = 0; o < ranks; ++o) {  // the first failure is the run's: the others stop here
            if (pids[o] != 0) kill(pids[o], SIGKILL);
        }
    }
    munmap(mem, bytes);
    return result;
}

}  // namespace ks_twin::hccl

#endif
