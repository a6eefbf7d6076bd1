// ReadFile / WriteFile for CPU launches: raw binary tensors in the working directory.
#ifndef KS_TWIN_DATA_UTILS_H
#define KS_TWIN_DATA_UTILS_H

#include <cstdio>
#include <string>

#include "securec.h"

// Reads exactly bufferSize bytes; a missing or short file is reported on stderr and returns false.
inline bool ReadFile(const std::string& filePath, size_t& fileSize, void* buffer, size_t bufferSize)
{
    std::FILE* f = std::fopen(filePath.c_str(), "rb");
    if (f == nullptr) {
        std::fprintf(stderr, "ReadFile: cannot open %s\n", filePath.c_str());
        return false;
    }
    fileSize = std::fread(buffer, 1, bufferSize, f);
    std::fclose(f);
    if (fileSize != bufferSize) {
        std::fprintf(stderr, "ReadFile: %s has %zu bytes, expected %zu\n", filePath.c_str(), fileSize, bufferSize);
        return false;
    }
    return true;
}

inline bool WriteFile(const std::string& filePath, const void* buffer, size_t size)
{
    std::FILE* f = std::fopen(filePath.c_str(), "wb");
    if (f == nullptr) {
        std::fprintf(stderr, "WriteFile: cannot open %s\n", filePath.c_str());
        return false;
    }
    size_t n = std::fwrite(buffer, 1, size, f);
    std::fclose(f);
    return n == size;
}

#endif
