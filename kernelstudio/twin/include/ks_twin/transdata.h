// The host step CANN's graph engine performs with TransData for an operator whose OpDef declares an input in
// a private format: the CPU launcher converts a logical buffer into a new GM buffer of the declared format
// before the launch. Element-size generic (C0 = 32 bytes of the element type); padding is zero.
//
//   NC1HWC0   from NCHW [N][C][H][W]:        [N][C1][H][W][C0],        C1 = ceil(C / C0)
//   FRACTAL_Z from [Cout][Cin][kh][kw]:      [C1 * kh * kw][N1][N0][C0], C1 = ceil(Cin / C0), N0 = 16,
//                                            N1 = ceil(Cout / 16)
//
// FRACTAL_Z is the NZ layout of the [N1 * N0, C1 * kh * kw * C0] weight matrix whose K axis runs (c1, kh, kw,
// c0): each C0-wide column block holds all N1 * N0 rows, one after another.
#ifndef KS_TWIN_TRANSDATA_H
#define KS_TWIN_TRANSDATA_H

#include <cstdint>
#include <cstring>

#include "error.h"

namespace ks_twin::host {

constexpr int64_t FRACTAL_N0 = 16;  // rows (output channels) of a FRACTAL_Z fractal

inline int64_t c0_for(size_t elem_bytes) { return 32 / static_cast<int64_t>(elem_bytes); }

inline int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// Bytes of the NC1HWC0 form of an [n, c, h, w] tensor of `elem_bytes`-byte elements.
inline size_t nc1hwc0_bytes(int64_t n, int64_t c, int64_t h, int64_t w, size_t elem_bytes)
{
    return static_cast<size_t>(n * round_up(c, c0_for(elem_bytes)) * h * w) * elem_bytes;
}

// Bytes of the FRACTAL_Z form of [cout, cin, kh, kw] weights of `elem_bytes`-byte elements.
inline size_t fractal_z_bytes(int64_t cout, int64_t cin, int64_t kh, int64_t kw, size_t elem_bytes)
{
    return static_cast<size_t>(round_up(cin, c0_for(elem_bytes)) * kh * kw * round_up(cout, FRACTAL_N0)) *
           elem_bytes;
}

inline void check_transdata(const char* what, size_t elem_bytes, size_t need, size_t have)
{
    if (elem_bytes == 0 || 32 % elem_bytes != 0) {
        fail("launch", "%s: elements of %zu bytes do not divide the 32-byte C0 block", what, elem_bytes);
    }
    if (have < need) {
        fail("bounds", "%s needs a %zu-byte destination but got %zu bytes; allocate it with the *_bytes helper",
             what, need, have);
    }
}

// NCHW -> NC1HWC0 into `dst` (`dst_bytes` long); channels beyond c are zero.
inline void nchw_to_nc1hwc0(const void* src, void* dst, size_t dst_bytes, int64_t n, int64_t c, int64_t h, int64_t w,
                            size_t elem_bytes)
{
    const size_t need = nc1hwc0_bytes(n, c, h, w, elem_bytes);
    check_transdata("NCHW -> NC1HWC0", elem_bytes, need, dst_bytes);
    const int64_t c0n = c0_for(elem_bytes), c1n = round_up(c, c0n) / c0n;
    const auto* s = static_cast<const uint8_t*>(src);
    auto* d = static_cast<uint8_t*>(dst);
    std::memset(d, 0, need);
    for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
            const int64_t c1 = ch / c0n, c0 = ch % c0n;
            for (int64_t y = 0; y < h; ++y) {
                for (int64_t x = 0; x < w; ++x) {
                    const int64_t from = ((b * c + ch) * h + y) * w + x;
                    const int64_t to = (((b * c1n + c1) * h + y) * w + x) * c0n + c0;
                    std::memcpy(d + to * elem_bytes, s + from * elem_bytes, elem_bytes);
                }
            }
        }
    }
}

// [Cout][Cin][kh][kw] -> FRACTAL_Z into `dst` (`dst_bytes` long); padded channels and output rows are zero.
inline void weights_to_fractal_z(const void* src, void* dst, size_t dst_bytes, int64_t cout, int64_t cin, int64_t kh,
                                 int64_t kw, size_t elem_bytes)
{
    const size_t need = fractal_z_bytes(cout, cin, kh, kw, elem_bytes);
    check_transdata("[Cout, Cin, kh, kw] -> FRACTAL_Z", elem_bytes, need, dst_bytes);
    const int64_t c0n = c0_for(elem_bytes), rows = round_up(cout, FRACTAL_N0);
    const auto* s = static_cast<const uint8_t*>(src);
    auto* d = static_cast<uint8_t*>(dst);
    std::memset(d, 0, need);
    for (int64_t co = 0; co < cout; ++co) {
        for (int64_t ci = 0; ci < cin; ++ci) {
            const int64_t c1 = ci / c0n, c0 = ci % c0n;
            for (int64_t i = 0; i < kh; ++i) {
                for (int64_t j = 0; j < kw; ++j) {
                    const int64_t from = ((co * cin + ci) * kh + i) * kw + j;
                    const int64_t block = (c1 * kh + i) * kw + j;  // the C0-wide column block (c1, kh, kw)
                    const int64_t to = (block * rows + co) * c0n + c0;
                    std::memcpy(d + to * elem_bytes, s + from * elem_bytes, elem_bytes);
                }
            }
        }
    }
}

}  // namespace ks_twin::host

#endif
