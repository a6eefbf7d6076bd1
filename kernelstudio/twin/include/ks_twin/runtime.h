// Launch machinery: per-thread core context, GM allocations, cross-core flags, ICPU_RUN_KF.
#ifndef KS_TWIN_RUNTIME_H
#define KS_TWIN_RUNTIME_H

#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "error.h"
#include "types.h"

namespace ks_twin {

enum class CoreType { AIC, AIV };

constexpr int kFlagIds = 16;
constexpr int kFlagMax = 15;  // the hardware flag counter saturates here

struct BlockSync;

struct CoreCtx {
    bool active = false;  // inside a launched kernel
    CoreType type = CoreType::AIV;
    int64_t block_idx = 0;  // what GetBlockIdx() returns
    int64_t block_num = 1;
    int64_t group = 0;  // index of the AI Core (AIC + its AIVs)
    int sub = 0;        // AIV index inside its group
    int ratio = 1;      // GetTaskRation()
    bool mix = false;
    BlockSync* sync = nullptr;
};

inline CoreCtx& ctx()
{
    static thread_local CoreCtx c;
    return c;
}

inline const char* core_name()
{
    static thread_local char buf[48];
    const CoreCtx& c = ctx();
    if (c.type == CoreType::AIC) {
        std::snprintf(buf, sizeof buf, "AIC of block %lld", static_cast<long long>(c.group));
    } else if (c.mix) {
        std::snprintf(buf, sizeof buf, "AIV%d of block %lld", c.sub, static_cast<long long>(c.group));
    } else {
        std::snprintf(buf, sizeof buf, "AIV of block %lld", static_cast<long long>(c.group));
    }
    return buf;
}

// ---- launch-wide state set by main.cpp --------------------------------------------------------
// As on CANN, a launcher that never calls SetKernelMode runs its kernels in MIX mode (1 AIC : 2 AIV).
struct LaunchState {
    KernelMode mode = KernelMode::MIX_MODE;
    bool mode_set = false;  // SetKernelMode was called
    uint64_t tiling_key = 0;
    uint8_t* sys_workspace = nullptr;
    std::string kernel_name;
    // set by host::run_tiling (a custom-operator launch): the chip's cores run one round of blocks at once,
    // and the TilingFunc's workspace (the hard SyncAll needs one)
    bool tiled = false;
    uint32_t aic_cores = 0;
    uint32_t aiv_cores = 0;
    size_t workspace_bytes = 0;
    std::vector<const void*> args;  // the launch's pointer arguments, in parameter order (the call log's gm refs)
};

inline LaunchState& launch_state()
{
    static LaunchState s;
    return s;
}

inline const char* mode_name(KernelMode m)
{
    switch (m) {
        case KernelMode::MIX_MODE: return "MIX_MODE";
        case KernelMode::AIC_MODE: return "AIC_MODE";
        case KernelMode::AIV_MODE: return "AIV_MODE";
        case KernelMode::MIX_AIC_1_1: return "MIX_AIC_1_1";
    }
    return "?";
}

// ---- API-call log (calllog.h): one line per call, naming the kernel and the core ----------------
inline const char* log_core_name()
{
    const CoreCtx& c = ctx();
    if (!c.active) return "host";
    if (c.type == CoreType::AIC) return "AIC";
    if (!c.mix) return "AIV";
    return c.sub == 0 ? "AIV0" : "AIV1";
}

__attribute__((format(printf, 2, 3))) inline void log_call(const char* api, const char* fmt, ...)
{
    char args[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    const CoreCtx& c = ctx();
    SiteState& s = site_state();
    char site[320] = "-";
    if (s.file != nullptr) std::snprintf(site, sizeof site, "%s:%d", s.file, s.line);
    std::fprintf(g_call_log, "C\t%s\t%lld\t%s\t%lld\t%s\t%s\t%s\t%s\n",
                 c.active ? launch_state().kernel_name.c_str() : "-", static_cast<long long>(c.active ? c.group : -1),
                 log_core_name(), static_cast<long long>(c.active ? c.block_idx : -1), api, args, site,
                 s.refs_len > 0 ? s.refs : "-");
    s.refs_len = 0;
    s.refs[0] = '\0';
}
inline void log_call(const char* api) { log_call(api, "%s", ""); }

// ---- GM allocations: every GmAlloc buffer is registered so copies can be bounds-checked -------
struct GmRegistry {
    std::mutex m;
    std::map<uintptr_t, size_t> blocks;  // start -> bytes
};

inline GmRegistry& gm_registry()
{
    static GmRegistry r;
    return r;
}

// Checks that [p, p + bytes) stays inside the GmAlloc buffer that holds p (if any).
inline void check_gm_range(const void* p, uint64_t bytes, const char* api)
{
    GmRegistry& r = gm_registry();
    std::lock_guard<std::mutex> lk(r.m);
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = r.blocks.upper_bound(a);
    if (it == r.blocks.begin()) return;
    --it;
    uintptr_t start = it->first;
    size_t size = it->second;
    if (a >= start + size) return;
    if (a + bytes > start + size) {
        fail("bounds",
             "%s on %s touches GM bytes [%llu, %llu) of a GmAlloc buffer of %zu bytes, %llu bytes past its end; "
             "check the offsets and lengths of this copy against the tensor size",
             api, core_name(), static_cast<unsigned long long>(a - start),
             static_cast<unsigned long long>(a - start + bytes), size,
             static_cast<unsigned long long>(a + bytes - start - size));
    }
}

// ---- cross-core flags of one AI Core (AIC + 2 AIVs), with exact deadlock detection -------------
struct BlockSync {
    std::mutex m;
    std::condition_variable cv;
    int64_t group = 0;
    int cores = 0;                       // threads of this block
    bool alive[3] = {false, false, false};  // slot 0 = AIC, 1 = AIV0, 2 = AIV1
    bool waiting[3] = {false, false, false};
    int wait_id[3] = {0, 0, 0};
    int aiv_from_aic[2][kFlagIds] = {};      // mode 2: AIC set -> each AIV
    int aic_from_aiv[2][kFlagIds] = {};      // mode 2: AIV set -> the AIC, per AIV
    int aiv_from_aiv[2][2][kFlagIds] = {};   // mode 1: [target][source]
    bool aic_became_server = false;          // AIC returned at REGIST_MATMUL_OBJ

    static const char* slot_name(int s) { return s == 0 ? "AIC" : (s == 1 ? "AIV0" : "AIV1"); }

    bool mode1_ready(int slot) const
    {
        int id = wait_id[slot];
        return slot != 0 && aiv_from_aiv[slot - 1][0][id] > 0 && aiv_from_aiv[slot - 1][1][id] > 0;
    }

    bool satisfied(int slot) const
    {
        int id = wait_id[slot];
        if (slot == 0) return aic_from_aiv[0][id] > 0 && aic_from_aiv[1][id] > 0;
        return aiv_from_aic[slot - 1][id] > 0 || mode1_ready(slot);
    }

    // A wait does not name its mode: an AIV takes a mode-1 group set when one is complete, else the AIC's.
    void consume(int slot)
    {
        int id = wait_id[slot];
        if (slot == 0) {
            --aic_from_aiv[0][id];
            --aic_from_aiv[1][id];
        } else if (mode1_ready(slot)) {
            --aiv_from_aiv[slot - 1][0][id];
            --aiv_from_aiv[slot - 1][1][id];
        } else {
            --aiv_from_aic[slot - 1][id];
        }
    }

    // Called with m held: every live core waits and no wait can be met -> report and exit.
    void check_deadlock()
    {
        int n_wait = 0, live = 0;
        for (int s = 0; s < 3; ++s) {
            if (!alive[s]) continue;
            ++live;
            if (!waiting[s]) return;
            if (satisfied(s)) return;
            ++n_wait;
        }
        if (live == 0 || n_wait != live) return;
        std::string who;
        for (int s = 0; s < 3; ++s) {
            if (!alive[s]) continue;
            char part[160];
            std::snprintf(part, sizeof part, "%s%s waits CrossCoreWaitFlag(%d) that is never set", who.empty() ? "" : "; ",
                          slot_name(s), wait_id[s]);
            who += part;
        }
        std::string hint = aic_became_server
            ? " The AIC returned at REGIST_MATMUL_OBJ (in MIX kernels it serves the AIVs' Matmul calls); define "
              "ASCENDC_CUBE_ONLY before including lib/matmul_intf.h to run Matmul on the AIC and set flags there."
            : "";
        fail("flag",
             "deadlock in block %lld of kernel %s: %s; no running core of the block can set these flags any more. "
             "Add the matching CrossCoreSetFlag<mode, pipe>(id) on the other side (mode 2: one AIC set wakes both "
             "AIVs; the AIC's wait needs a set from each AIV).%s",
             static_cast<long long>(group), launch_state().kernel_name.c_str(), who.c_str(), hint.c_str());
    }
};

inline int my_slot() { return ctx().type == CoreType::AIC ? 0 : 1 + ctx().sub; }

inline void bump(int& counter, int id, const char* target)
{
    if (counter >= kFlagMax) {
        fail("flag",
             "CrossCoreSetFlag(%d) on %s: flag %d toward %s was already set %d times and never waited for; the "
             "hardware counter holds %d. Pair every CrossCoreSetFlag with a CrossCoreWaitFlag on the other side",
             id, core_name(), id, target, counter, kFlagMax);
    }
    ++counter;
}

inline void check_flag_args(const char* api, int mode, int id)
{
    if (id < 0 || id >= kFlagIds) {
        fail("flag", "%s(%d) on %s: flag ids are 0..%d; use a smaller id", api, id, core_name(), kFlagIds - 1);
    }
    if (mode != 1 && mode != 2) {
        fail("flag",
             "%s mode %d on %s: the twin implements mode 1 (AIVs of one AI Core) and mode 2 (AIC with its two "
             "AIVs); mode 0 (all cores) needs every block at once, which it does not run; use mode 2",
             api, mode, core_name());
    }
    if (!ctx().active || ctx().sync == nullptr) {
        fail("flag", "%s(%d) called outside a kernel launched by ICPU_RUN_KF", api, id);
    }
}

inline void cross_core_set(int mode, int id)
{
    check_flag_args("CrossCoreSetFlag", mode, id);
    BlockSync& s = *ctx().sync;
    std::lock_guard<std::mutex> lk(s.m);
    int slot = my_slot();
    if (mode == 2) {
        if (slot == 0) {
            bump(s.aiv_from_aic[0][id], id, "AIV0");
            bump(s.aiv_from_aic[1][id], id, "AIV1");
        } else {
            bump(s.aic_from_aiv[slot - 1][id], id, "the AIC");
        }
    } else {
        if (slot == 0) fail("flag", "CrossCoreSetFlag<1>(%d) on the AIC: mode 1 syncs AIVs only; use mode 2", id);
        bump(s.aiv_from_aiv[0][slot - 1][id], id, "AIV0");
        bump(s.aiv_from_aiv[1][slot - 1][id], id, "AIV1");
    }
    s.cv.notify_all();
}

inline void cross_core_wait(int id)
{
    check_flag_args("CrossCoreWaitFlag", 2, id);
    BlockSync& s = *ctx().sync;
    std::unique_lock<std::mutex> lk(s.m);
    int slot = my_slot();
    s.wait_id[slot] = id;
    s.waiting[slot] = true;
    while (!s.satisfied(slot)) {
        s.check_deadlock();
        s.cv.wait(lk);
    }
    s.consume(slot);
    s.waiting[slot] = false;
}

// ---- SyncAll (hard sync): every core of the launch (every AIV with isAIVOnly) meets at a barrier ----------
struct LaunchSync {
    std::mutex m;
    std::condition_variable cv;
    int64_t cores = 0;          // cores of the launch
    int64_t aivs = 0;           // of which AIVs
    int64_t arrived = 0;        // at the current barrier
    int64_t finished = 0;       // cores that returned from the kernel
    int64_t finished_aiv = 0;
    uint64_t round = 0;
    bool aiv_only = false;      // the current barrier's isAIVOnly
};

inline LaunchSync& launch_sync()
{
    static LaunchSync s;
    return s;
}

// Called with m held: a barrier that the cores still running can no longer complete is a hang on the device.
inline void check_sync_deadlock(LaunchSync& s)
{
    if (s.arrived == 0) return;
    const int64_t need = s.aiv_only ? s.aivs : s.cores;
    const int64_t gone = s.aiv_only ? s.finished_aiv : s.finished;
    if (s.arrived + gone < need || gone == 0) return;
    fail("sync", "kernel %s: SyncAll waits for %lld cores but %lld of them returned without calling it (%lld "
         "arrived): on the device the waiting cores hang. Every %s of the launch must call SyncAll the same number "
         "of times", launch_state().kernel_name.c_str(), static_cast<long long>(need), static_cast<long long>(gone),
         static_cast<long long>(s.arrived), s.aiv_only ? "AIV" : "core (AIC and AIV)");
}

inline void sync_all(bool aiv_only)
{
    const LaunchState& ls = launch_state();
    const CoreCtx& c = ctx();
    if (!c.active) fail("sync", "SyncAll() called outside a kernel launched by ICPU_RUN_KF");
    if (!ls.tiled || ls.workspace_bytes == 0) {
        fail("sync", "SyncAll() (the hard sync) in kernel %s: CANN supports it only in a custom-operator project whose "
             "TilingFunc sets a non-zero workspace (context->GetWorkspaceSizes(1)[0] > 0); %s",
             ls.kernel_name.c_str(), ls.tiled ? "this launch's workspace is 0 bytes" :
             "this launch did not run a TilingFunc (a kernel-direct launch)");
    }
    const uint32_t cores = ls.mode == KernelMode::AIV_MODE ? ls.aiv_cores : ls.aic_cores;
    if (c.block_num > static_cast<int64_t>(cores)) {
        fail("sync", "SyncAll() in kernel %s launched with blockDim %lld on a chip of %u %s cores: the blocks past the "
             "first %u run in a later round and never reach the barrier the first round waits at (the kernel hangs); "
             "launch at most %u blocks", ls.kernel_name.c_str(), static_cast<long long>(c.block_num), cores,
             ls.mode == KernelMode::AIV_MODE ? "vector" : "AI", cores, cores);
    }
    if (!aiv_only && ls.mode != KernelMode::MIX_MODE) {
        fail("sync", "SyncAll<false>() in kernel %s: isAIVOnly=false syncs the cube and vector cores of a mixed kernel; "
             "this launch is %s: use SyncAll() (isAIVOnly=true) for a vector kernel", ls.kernel_name.c_str(),
             mode_name(ls.mode));
    }
    if (aiv_only && c.type == CoreType::AIC) {
        fail("sync", "SyncAll<true>() on %s in kernel %s: isAIVOnly=true syncs the vector cores only; a mixed kernel "
             "that syncs its cube cores too calls SyncAll<false>()", core_name(), ls.kernel_name.c_str());
    }
    LaunchSync& s = launch_sync();
    std::unique_lock<std::mutex> lk(s.m);
    if (s.arrived == 0) s.aiv_only = aiv_only;
    if (s.aiv_only != aiv_only) {
        fail("sync", "kernel %s: %s calls SyncAll<%s>() while other cores wait in SyncAll<%s>(); every core must call "
             "the same one", ls.kernel_name.c_str(), core_name(), aiv_only ? "true" : "false",
             aiv_only ? "false" : "true");
    }
    const uint64_t mine = s.round;
    const int64_t need = aiv_only ? s.aivs : s.cores;
    if (++s.arrived == need) {
        s.arrived = 0;
        ++s.round;
        s.cv.notify_all();
        return;
    }
    check_sync_deadlock(s);
    while (s.round == mine) s.cv.wait(lk);
}

inline void core_finished()
{
    BlockSync* s = ctx().sync;
    if (s == nullptr) return;
    {
        LaunchSync& ls = launch_sync();
        std::lock_guard<std::mutex> lk(ls.m);
        ++ls.finished;
        if (ctx().type == CoreType::AIV) ++ls.finished_aiv;
        check_sync_deadlock(ls);
    }
    std::lock_guard<std::mutex> lk(s->m);
    s->alive[my_slot()] = false;
    s->check_deadlock();
    s->cv.notify_all();
}

// ---- ICPU_RUN_KF ----------------------------------------------------------------------------
inline void run_core(const std::function<void()>& body, CoreCtx c)
{
    ctx() = c;
    body();
    core_finished();
    ctx() = CoreCtx{};
}

inline void run_kernel(const char* name, int64_t block_dim, const std::function<void()>& body,
                       std::vector<const void*> args = {})
{
    LaunchState& ls = launch_state();
    ls.kernel_name = name;
    ls.args = std::move(args);
    if (g_call_log != nullptr) {
        std::fprintf(g_call_log, "L\t%s\t%s\t%lld\n", name, mode_name(ls.mode), static_cast<long long>(block_dim));
    }
    if (block_dim <= 0 || block_dim > 65535) {
        fail("launch", "ICPU_RUN_KF(%s, blockDim=%lld): blockDim must be 1..65535", name,
             static_cast<long long>(block_dim));
    }
    if (ls.mode == KernelMode::MIX_AIC_1_1) {
        fail("launch", "SetKernelMode(MIX_AIC_1_1) is not supported by the twin; use MIX_MODE (1 AIC : 2 AIV)");
    }
    const bool mix = ls.mode == KernelMode::MIX_MODE;
    {
        LaunchSync& s = launch_sync();
        std::lock_guard<std::mutex> lk(s.m);
        s.cores = block_dim * (mix ? 3 : 1);
        s.aivs = block_dim * (mix ? 2 : (ls.mode == KernelMode::AIV_MODE ? 1 : 0));
        s.arrived = s.finished = s.finished_aiv = 0;
        s.round = 0;
    }
    // as on the device, a round of as many blocks as the chip has cores runs at once (a launch without a
    // TilingFunc, whose chip is unknown, runs its blocks one at a time)
    int64_t per_round = 1;
    if (ls.tiled) per_round = std::max<int64_t>(1, ls.mode == KernelMode::AIV_MODE ? ls.aiv_cores : ls.aic_cores);
    for (int64_t first = 0; first < block_dim; first += per_round) {
        const int64_t last = std::min(block_dim, first + per_round);
        std::vector<std::unique_ptr<BlockSync>> syncs;
        std::vector<std::thread> threads;
        for (int64_t b = first; b < last; ++b) {
            syncs.push_back(std::make_unique<BlockSync>());
            BlockSync& sync = *syncs.back();
            sync.group = b;
            CoreCtx base;
            base.active = true;
            base.block_num = block_dim;
            base.group = b;
            base.sync = &sync;
            if (mix) {
                sync.cores = 3;
                sync.alive[0] = sync.alive[1] = sync.alive[2] = true;
                base.mix = true;
                CoreCtx aic = base, aiv0 = base, aiv1 = base;
                aic.type = CoreType::AIC;
                aic.block_idx = b;
                aiv0.block_idx = 2 * b;
                aiv1.block_idx = 2 * b + 1;
                aiv1.sub = 1;
                aiv0.ratio = aiv1.ratio = 2;
                threads.emplace_back(run_core, std::cref(body), aic);
                threads.emplace_back(run_core, std::cref(body), aiv0);
                threads.emplace_back(run_core, std::cref(body), aiv1);
            } else {
                base.type = ls.mode == KernelMode::AIC_MODE ? CoreType::AIC : CoreType::AIV;
                base.block_idx = b;
                sync.cores = 1;
                sync.alive[base.type == CoreType::AIC ? 0 : 1] = true;
                threads.emplace_back(run_core, std::cref(body), base);
            }
        }
        for (std::thread& t : threads) t.join();
    }
}

inline const char* task_type_name(KernelMetaType t)
{
    switch (t) {
        case KERNEL_TYPE_AIV_ONLY: return "KERNEL_TYPE_AIV_ONLY";
        case KERNEL_TYPE_AIC_ONLY: return "KERNEL_TYPE_AIC_ONLY";
        case KERNEL_TYPE_MIX_AIV_1_0: return "KERNEL_TYPE_MIX_AIV_1_0";
        case KERNEL_TYPE_MIX_AIC_1_0: return "KERNEL_TYPE_MIX_AIC_1_0";
        case KERNEL_TYPE_MIX_AIC_1_1: return "KERNEL_TYPE_MIX_AIC_1_1";
        case KERNEL_TYPE_MIX_AIC_1_2: return "KERNEL_TYPE_MIX_AIC_1_2";
    }
    return "KERNEL_TYPE_?";
}

inline void check_task_type(KernelMetaType t)
{
    KernelMode m = launch_state().mode;
    const char* need = nullptr;
    if (t == KERNEL_TYPE_MIX_AIC_1_2 && m != KernelMode::MIX_MODE) need = "KernelMode::MIX_MODE";
    if (t == KERNEL_TYPE_AIV_ONLY && m != KernelMode::AIV_MODE) need = "KernelMode::AIV_MODE";
    if (t == KERNEL_TYPE_AIC_ONLY && m != KernelMode::AIC_MODE) need = "KernelMode::AIC_MODE";
    if (t != KERNEL_TYPE_MIX_AIC_1_2 && t != KERNEL_TYPE_AIV_ONLY && t != KERNEL_TYPE_AIC_ONLY) {
        fail("launch", "KERNEL_TASK_TYPE_DEFAULT(%s) in %s: the twin runs KERNEL_TYPE_AIV_ONLY, AIC_ONLY and "
             "MIX_AIC_1_2", task_type_name(t), launch_state().kernel_name.c_str());
    }
    if (need != nullptr) {
        fail("launch", "kernel %s declares KERNEL_TASK_TYPE_DEFAULT(%s) but main.cpp launched it in KernelMode::%s%s; "
             "call AscendC::SetKernelMode(%s) before ICPU_RUN_KF",
             launch_state().kernel_name.c_str(), task_type_name(t), mode_name(m),
             launch_state().mode_set ? "" : " (the default: main.cpp never called SetKernelMode)", need);
    }
}

// Vector units exist only on AIVs: vector instructions on a cube core are a kernel bug.
inline void require_vector(const char* api)
{
    if (ctx().active && ctx().type == CoreType::AIC) {
        fail("launch", "%s runs on the %s, which has no vector unit or UB; guard vector code with "
             "`if ASCEND_IS_AIV { ... }`, or for a pure-vector kernel call AscendC::SetKernelMode(KernelMode::"
             "AIV_MODE) before ICPU_RUN_KF (without it the launch is MIX_MODE, as on CANN)", api, core_name());
    }
}

inline void* gm_alloc(size_t bytes)
{
    size_t rounded = (bytes + 511) / 512 * 512;
    if (rounded == 0) rounded = 512;
    void* p = std::aligned_alloc(512, rounded);
    if (p == nullptr) fail("capacity", "GmAlloc(%zu) failed: out of host memory", bytes);
    std::memset(p, 0, rounded);
    GmRegistry& r = gm_registry();
    std::lock_guard<std::mutex> lk(r.m);
    r.blocks[reinterpret_cast<uintptr_t>(p)] = bytes;
    return p;
}

inline void gm_free(void* p)
{
    if (p == nullptr) return;
    {
        GmRegistry& r = gm_registry();
        std::lock_guard<std::mutex> lk(r.m);
        if (r.blocks.erase(reinterpret_cast<uintptr_t>(p)) == 0) {
            fail("bounds", "GmFree got a pointer that GmAlloc did not return (or that was freed already)");
        }
    }
    std::free(p);
}

// The call log's `gm=<parameter>:<byte offset>+<bytes>` ref of a GM access starting at `p` that moves `bytes`:
// the kernel parameter whose GmAlloc buffer holds p (so a reader can name the tensor a copy moves), `gm=?`
// when none does.
inline void note_gm(const void* p, uint64_t bytes)
{
    const LaunchState& ls = launch_state();
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    GmRegistry& r = gm_registry();
    std::lock_guard<std::mutex> lk(r.m);
    for (size_t i = 0; i < ls.args.size(); ++i) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(ls.args[i]);
        auto it = r.blocks.upper_bound(base);
        if (base == 0 || it == r.blocks.begin()) continue;
        --it;
        if (base >= it->first + it->second || a < it->first || a >= it->first + it->second) continue;
        note_ref("gm=%zu:%lld+%llu", i, static_cast<long long>(a) - static_cast<long long>(base),
                 static_cast<unsigned long long>(bytes));
        return;
    }
    note_ref("gm=?+%llu", static_cast<unsigned long long>(bytes));
}

// The row form of a strided GM access, after its note_gm: `gmrows=<rows>x<row bytes>/<pitch bytes>` (rows
// `pitch` bytes apart from the gm= offset); nothing when the rows are contiguous or there is one.
inline void note_gm_rows(uint64_t rows, uint64_t row_bytes, uint64_t pitch_bytes)
{
    if (rows <= 1 || pitch_bytes == row_bytes) return;
    note_ref("gmrows=%llux%llu/%llu", static_cast<unsigned long long>(rows), static_cast<unsigned long long>(row_bytes),
             static_cast<unsigned long long>(pitch_bytes));
}

template <class T> inline const void* gm_arg(const T& v)
{
    if constexpr (std::is_pointer_v<T>) {
        return reinterpret_cast<const void*>(v);
    } else {
        return nullptr;
    }
}
template <class... A> inline std::vector<const void*> gm_args(const A&... a) { return {gm_arg(a)...}; }

}  // namespace ks_twin

#endif
