// CPU launch of the kernelstudio twin: ICPU_RUN_KF runs each block; in MIX mode the block's AIC and
// two AIVs run as concurrent threads.
#ifndef KS_TWIN_TIKICPULIB_H
#define KS_TWIN_TIKICPULIB_H

#include "kernel_operator.h"
#include "securec.h"  // memcpy_s and friends, which CPU-debug launchers use to fill tiling

#define ICPU_SET_TILING_KEY(key) (::ks_twin::launch_state().tiling_key = static_cast<uint64_t>(key))
#define ICPU_RUN_KF(func, blockdim, ...) \
    ::ks_twin::run_kernel(#func, static_cast<int64_t>(blockdim), [&]() { func(__VA_ARGS__); }, \
                          ::ks_twin::gm_args(__VA_ARGS__))

#endif
