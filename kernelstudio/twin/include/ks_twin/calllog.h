// API-call log. With KS_TWIN_LOG=<path> in the environment the twin writes one line per Ascend C call it
// executes to <path>; without it every logging site costs one predictable branch on a null pointer and
// evaluates none of its arguments. Line format (tab-separated, see kernelstudio/twin/README.md):
//   L <kernel> <mode> <blockDim>                          one per ICPU_RUN_KF
//   C <kernel> <block> <core> <GetBlockIdx> <api> <args>  one per API call; args are key=value pairs
#ifndef KS_TWIN_CALLLOG_H
#define KS_TWIN_CALLLOG_H

#include <cstdio>
#include <cstdlib>

namespace ks_twin {

inline std::FILE* open_call_log()
{
    const char* path = std::getenv("KS_TWIN_LOG");
    if (path == nullptr || *path == '\0') return nullptr;
    std::FILE* f = std::fopen(path, "w");
    if (f == nullptr) {
        std::fprintf(stderr, "KS_TWIN_ERROR log: cannot open KS_TWIN_LOG=%s for writing; point it at a writable "
                     "file or unset it\n", path);
        std::fflush(stderr);
        std::_Exit(3);
    }
    static char buffer[1 << 16];
    std::setvbuf(f, buffer, _IOFBF, sizeof buffer);
    std::fputs("# ks_twin call log 1\n", f);
    return f;
}

// Opened before main() runs; null when logging is off. stdio locks each write, so lines from the cores'
// threads never mix inside a line, and each core's lines keep its program order.
inline std::FILE* const g_call_log = open_call_log();

// fail() ends the process with _Exit, which skips stdio's flush: keep the calls up to the failure.
inline void flush_call_log()
{
    if (g_call_log != nullptr) std::fflush(g_call_log);
}

}  // namespace ks_twin

// Logs one API call when logging is on; arguments are not evaluated otherwise.
#define KS_TWIN_LOG(...)                                                              \
    do {                                                                              \
        if (__builtin_expect(::ks_twin::g_call_log != nullptr, 0)) {                  \
            ::ks_twin::log_call(__VA_ARGS__);                                         \
        }                                                                             \
    } while (0)

#endif
