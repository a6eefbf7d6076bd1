// API-call log. With KS_TWIN_LOG=<path> in the environment the twin writes one line per Ascend C call it
// executes to <path>; without it every logging site costs one predictable branch on a null pointer and
// evaluates none of its arguments. Line format (tab-separated, see kernelstudio/twin/README.md):
//   L <kernel> <mode> <blockDim>                                         one per ICPU_RUN_KF
//   C <kernel> <block> <core> <GetBlockIdx> <api> <args> <site> <refs>  one per API call; args are key=value
//     pairs; site is the user's `file:line` of the call (`-` when unknown); refs the on-chip operands and
//     queue buffers it touches (`w=VECOUT:0+2048 r=VECIN:4096+2048 q=VECIN:0 slot=VECIN:0`, `-` for none)
#ifndef KS_TWIN_CALLLOG_H
#define KS_TWIN_CALLLOG_H

#include <algorithm>
#include <cstdarg>
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
    std::fputs("# ks_twin call log 2\n", f);
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

// Where the user's code made the API call being executed: public API functions take a trailing
// `ks_twin::Site site = ks_twin::Site()`, whose default arguments g++ evaluates at the caller's line, and
// open a SiteScope for the call. Only the outermost scope of a thread counts, so calls one API makes into
// another are logged at the user's line too.
struct Site {
    const char* file;
    int line;
    explicit Site(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};

struct SiteState {
    const char* file = nullptr;
    int line = 0;
    char refs[256] = {};  // operands noted for the next log line (note_ref)
    size_t refs_len = 0;
};

inline SiteState& site_state()
{
    static thread_local SiteState s;
    return s;
}

class SiteScope {
public:
    explicit SiteScope(const Site& site) : outer_(site_state().file == nullptr)
    {
        if (outer_) {
            site_state().file = site.file;
            site_state().line = site.line;
        }
    }
    ~SiteScope()
    {
        if (outer_) site_state().file = nullptr;
    }
    SiteScope(const SiteScope&) = delete;
    SiteScope& operator=(const SiteScope&) = delete;

private:
    bool outer_;
};

// Adds one `key=value` token to the refs of the next log line of this thread (only when logging is on).
__attribute__((format(printf, 1, 2))) inline void note_ref(const char* fmt, ...)
{
    SiteState& s = site_state();
    if (s.refs_len + 2 >= sizeof s.refs) return;
    if (s.refs_len > 0) s.refs[s.refs_len++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(s.refs + s.refs_len, sizeof s.refs - s.refs_len, fmt, ap);
    va_end(ap);
    if (n > 0) s.refs_len = std::min(sizeof s.refs - 1, s.refs_len + static_cast<size_t>(n));
    s.refs[s.refs_len] = '\0';
}

}  // namespace ks_twin

// The user's call site for the rest of this API call (see Site).
#define KS_TWIN_SITE(site) const ::ks_twin::SiteScope ks_twin_site_scope_(site)

// Notes an operand for the next KS_TWIN_LOG line of this thread; nothing is evaluated when logging is off.
#define KS_TWIN_REF(...)                                                              \
    do {                                                                              \
        if (__builtin_expect(::ks_twin::g_call_log != nullptr, 0)) {                  \
            ::ks_twin::note_ref(__VA_ARGS__);                                         \
        }                                                                             \
    } while (0)

// Logs one API call when logging is on; arguments are not evaluated otherwise.
#define KS_TWIN_LOG(...)                                                              \
    do {                                                                              \
        if (__builtin_expect(::ks_twin::g_call_log != nullptr, 0)) {                  \
            ::ks_twin::log_call(__VA_ARGS__);                                         \
        }                                                                             \
    } while (0)

#endif
