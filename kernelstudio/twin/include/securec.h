// The bounded memory functions of the secure C library CANN ships (securec.h), for host code: memcpy_s,
// memset_s, memmove_s. Each returns EOK, or an error code (and copies nothing) when the destination is null or
// smaller than the count, as the library documents.
#ifndef KS_TWIN_SECUREC_H
#define KS_TWIN_SECUREC_H

#include <cerrno>
#include <cstddef>
#include <cstring>

#ifndef EOK
#define EOK 0
#endif

typedef int errno_t;

inline errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count)
{
    if (dest == nullptr || src == nullptr) return EINVAL;
    if (count > destMax) return ERANGE;
    if (count != 0) std::memcpy(dest, src, count);
    return EOK;
}

inline errno_t memmove_s(void* dest, size_t destMax, const void* src, size_t count)
{
    if (dest == nullptr || src == nullptr) return EINVAL;
    if (count > destMax) return ERANGE;
    if (count != 0) std::memmove(dest, src, count);
    return EOK;
}

inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count)
{
    if (dest == nullptr) return EINVAL;
    if (count > destMax) return ERANGE;
    if (count != 0) std::memset(dest, c, count);
    return EOK;
}

#endif
