// Twin checks: one clear line on stderr, exit code 3, from any thread.
#ifndef KS_TWIN_ERROR_H
#define KS_TWIN_ERROR_H

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "calllog.h"

namespace ks_twin {

inline std::mutex& error_mutex()
{
    static std::mutex m;
    return m;
}

// Prints "KS_TWIN_ERROR <kind>: <message>" and ends the process with exit code 3.
// Kinds: capacity, alignment, queue, bounds, flag, launch, matmul.
[[noreturn]] __attribute__((format(printf, 2, 3))) inline void fail(const char* kind, const char* fmt, ...)
{
    error_mutex().lock();  // never unlocked: the first failing thread owns the last word
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char* p = msg; *p; ++p) {
        if (*p == '\n') *p = ' ';
    }
    std::fflush(stdout);
    std::fprintf(stderr, "KS_TWIN_ERROR %s: %s\n", kind, msg);
    std::fflush(stderr);
    flush_call_log();
    std::_Exit(3);
}

}  // namespace ks_twin

#endif
