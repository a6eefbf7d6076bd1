// Ascend C basic API as implemented by the kernelstudio CPU twin (see ../README.md).
#ifndef KS_TWIN_KERNEL_OPERATOR_H
#define KS_TWIN_KERNEL_OPERATOR_H

#include "kernel_tiling/kernel_tiling.h"
#include "ks_twin/atomic.h"
#include "ks_twin/copy.h"
#include "ks_twin/cube_basic.h"
#include "ks_twin/layout.h"
#include "ks_twin/norm.h"
#include "ks_twin/norm_grad.h"
#include "ks_twin/pad.h"
#include "ks_twin/pipe.h"
#include "ks_twin/repeat.h"
#include "ks_twin/runtime.h"
#include "ks_twin/sort.h"
#include "ks_twin/shared.h"
#include "ks_twin/tensor.h"
#include "ks_twin/types.h"
#include "ks_twin/vector.h"

namespace AscendC {

inline int64_t GetBlockIdx() { return ks_twin::ctx().block_idx; }
inline int64_t GetBlockNum() { return ks_twin::ctx().block_num; }
inline int64_t GetSubBlockIdx() { return ks_twin::ctx().sub; }
inline int64_t GetSubBlockNum() { return ks_twin::ctx().mix ? 2 : 1; }
inline int64_t GetTaskRation() { return ks_twin::ctx().ratio; }
inline int64_t GetTaskRatio() { return ks_twin::ctx().ratio; }

// Without a call, kernels launch in MIX_MODE (as on CANN).
inline void SetKernelMode(KernelMode mode)
{
    KS_TWIN_LOG("SetKernelMode", "mode=%s", ks_twin::mode_name(mode));
    ks_twin::launch_state().mode = mode;
    ks_twin::launch_state().mode_set = true;
}
inline void* GmAlloc(size_t bytes) { return ks_twin::gm_alloc(bytes); }
inline void GmFree(void* p) { ks_twin::gm_free(p); }

// The workspace a kernel gets starts with the system part the host reserved with
// PlatformAscendC::GetLibApiWorkSpaceSize(); the user part follows it. The twin's Matmul itself needs no
// system workspace: it is the buffer given to SetSysWorkspace, or a small placeholder.
inline void SetSysWorkspace(GM_ADDR workspace) { ks_twin::launch_state().sys_workspace = workspace; }
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace)
{
    return workspace == nullptr ? nullptr : workspace + ks_twin::LIB_WORKSPACE_BYTES;
}

// Cross-core flags of one AI Core. Mode 2: an AIC set wakes both of its AIVs; an AIV set counts toward
// the AIC, whose wait needs a set from each AIV. Mode 1: barrier between the two AIVs.
template <uint8_t MODE, pipe_t PIPE> inline void CrossCoreSetFlag(uint16_t flagId, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("CrossCoreSetFlag", "mode=%u pipe=%s id=%u", static_cast<unsigned>(MODE), ks_twin::pipe_name(PIPE),
                static_cast<unsigned>(flagId));
    ks_twin::cross_core_set(MODE, flagId);
}
template <uint8_t MODE = 0, pipe_t PIPE = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("CrossCoreWaitFlag", "id=%u", static_cast<unsigned>(flagId));
    ks_twin::cross_core_wait(flagId);
}

// The hard all-core sync: every core of the launch (isAIVOnly: every AIV) waits until all have called it.
// As on CANN: a custom-operator launch with a non-zero workspace, blockDim at most the chip's cores.
template <bool isAIVOnly = true> inline void SyncAll(ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("SyncAll", "isAIVOnly=%d", isAIVOnly ? 1 : 0);
    ks_twin::sync_all(isAIVOnly);
}
inline void CrossCoreWaitFlag(uint16_t flagId, ks_twin::Site site = ks_twin::Site())
{
    KS_TWIN_SITE(site);
    KS_TWIN_LOG("CrossCoreWaitFlag", "id=%u", static_cast<unsigned>(flagId));
    ks_twin::cross_core_wait(flagId);
}

}  // namespace AscendC

// CANN declares the system workspace pointer at global scope (not in AscendC): a kernel that writes
// AscendC::GetSysWorkSpacePtr() does not build there, so it does not build here either.
inline GM_ADDR GetSysWorkSpacePtr()
{
    static uint8_t placeholder[512];
    GM_ADDR p = ks_twin::launch_state().sys_workspace;
    return p != nullptr ? p : placeholder;
}

#define ASCEND_IS_AIC (::ks_twin::ctx().type == ::ks_twin::CoreType::AIC)
#define ASCEND_IS_AIV (::ks_twin::ctx().type == ::ks_twin::CoreType::AIV)
#define KERNEL_TASK_TYPE_DEFAULT(type) ::ks_twin::check_task_type(type)
// ASSERT(cond) in kernel code: a false condition stops the run with the condition, its line and the core.
#define ASSERT(cond)                                                                                        \
    ((cond) ? (void)0                                                                                       \
            : ::ks_twin::fail("assert", "ASSERT(%s) failed at %s:%d on %s", #cond, __FILE__, __LINE__,      \
                              ::ks_twin::core_name()))
#define TILING_KEY_IS(k) (::ks_twin::launch_state().tiling_key == static_cast<uint64_t>(k))

#endif
