// Sorted-list APIs of the Atlas A2 vector unit: MrgSort (merge up to four sorted lists of 8-byte (score, index)
// structures, scores descending), Extract (split such a list into scores and indices) and the count form of
// Gather (dst[i] = the element at byte offset srcBaseAddr + offset[i] of src), which packs scores and indices
// into the 8-byte layout. For float, a structure is the float score in its first 4 bytes and the uint32 index in
// its last 4 (codegen/merge.py names the sources).
#ifndef KS_TWIN_SORT_H
#define KS_TWIN_SORT_H

#include <cstdint>
#include <cstring>

#include "pipe.h"
#include "vector.h"

namespace AscendC {

// The lists MrgSort merges: src1..srcN for validBit's lowest N bits; the rest may be empty tensors.
template <class T> struct MrgSortSrcList {
    MrgSortSrcList() = default;
    MrgSortSrcList(const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<T>& c,
                   const LocalTensor<T>& d)
        : src1(a), src2(b), src3(c), src4(d)
    {
    }
    LocalTensor<T> src1;
    LocalTensor<T> src2;
    LocalTensor<T> src3;
    LocalTensor<T> src4;
};

// elementLengths: structures in each list (at most 4095); validBit: which lists take part (0b11, 0b111 or
// 0b1111); ifExhaustedSuspension: stop when the first list runs out; repeatTimes: 1 (lists of several
// repeats need the four lists to be one block each and are not modelled here).
struct MrgSort4Info {
    MrgSort4Info() = default;
    MrgSort4Info(const uint16_t lengths[4], bool suspend, uint16_t valid, uint16_t repeat)
        : ifExhaustedSuspension(suspend), validBit(valid), repeatTimes(repeat)
    {
        for (int i = 0; i < 4; ++i) elementLengths[i] = lengths[i];
    }
    uint16_t elementLengths[4] = {0, 0, 0, 0};
    bool ifExhaustedSuspension = false;
    uint16_t validBit = 0;
    uint16_t repeatTimes = 1;
};

}  // namespace AscendC

namespace ks_twin {

// Structures each list contributed to the last MrgSort (GetMrgSortResult reads them).
inline uint16_t (&mrgsort_result())[4]
{
    thread_local uint16_t taken[4] = {0, 0, 0, 0};
    return taken;
}

}  // namespace ks_twin

namespace AscendC {

// MrgSort(dst, lists, info): merges the valid lists, each sorted by score descending, into dst by score
// descending; equal scores go to the lower-numbered list first (within a list, its own order). With
// ifExhaustedSuspension the merge stops as soon as one list is exhausted.
template <class T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& list, const MrgSort4Info& info,
                    ks_twin::Site site = ks_twin::Site())
{
    static_assert(std::is_same<T, float>::value, "the twin's MrgSort merges float (score, index) lists");
    KS_TWIN_SITE(site);
    const char* api = "MrgSort";
    const char* core = ks_twin::core_name();
    const LocalTensor<T>* src[4] = {&list.src1, &list.src2, &list.src3, &list.src4};
    const uint16_t v = info.validBit;
    int lists = 0;
    if (v == 0b11) lists = 2;
    if (v == 0b111) lists = 3;
    if (v == 0b1111) lists = 4;
    KS_TWIN_LOG("MrgSort", "dtype=%s validBit=%u lengths=%u,%u,%u,%u suspend=%d repeat=%u", ks_twin::type_name<T>(),
                static_cast<unsigned>(v), static_cast<unsigned>(info.elementLengths[0]),
                static_cast<unsigned>(info.elementLengths[1]), static_cast<unsigned>(info.elementLengths[2]),
                static_cast<unsigned>(info.elementLengths[3]), info.ifExhaustedSuspension ? 1 : 0,
                static_cast<unsigned>(info.repeatTimes));
    ks_twin::require_vector(api);
    if (lists == 0) {
        ks_twin::fail("bounds", "MrgSort on %s: validBit=0x%x; merge 2, 3 or 4 lists (0b11, 0b111 or 0b1111)", core,
                      static_cast<unsigned>(v));
    }
    if (info.repeatTimes != 1) {
        ks_twin::fail("bounds", "MrgSort on %s: repeatTimes=%u; the twin merges one set of lists per call (1)",
                      core, static_cast<unsigned>(info.repeatTimes));
    }
    uint32_t total = 0;
    for (int l = 0; l < lists; ++l) {
        const uint32_t n = info.elementLengths[l];
        if (n > 4095) {
            ks_twin::fail("bounds", "MrgSort on %s: list %d holds %u structures, more than 4095; merge shorter "
                          "lists", core, l + 1, n);
        }
        KS_TWIN_OPERAND('r', *src[l], n * 8ull);
        ks_twin::vec_operand(*src[l], 2 * n, api, "src");
        total += n;
    }
    KS_TWIN_OPERAND('w', dst, total * 8ull);
    ks_twin::vec_operand(dst, 2 * total, api, "dst");
    for (int l = 0; l < lists; ++l) {
        const T* s = src[l]->GetPhyAddr();
        const T* d = dst.GetPhyAddr();
        if (d < s + 2 * info.elementLengths[l] && s < d + 2 * total) {
            ks_twin::fail("bounds", "MrgSort on %s: dst (byte %llu) overlaps list %d (byte %llu, %u structures); "
                          "merge into a separate buffer", core, static_cast<unsigned long long>(dst.ByteOffset()),
                          l + 1, static_cast<unsigned long long>(src[l]->ByteOffset()),
                          static_cast<unsigned>(info.elementLengths[l]));
        }
    }
    uint32_t at[4] = {0, 0, 0, 0};
    T* out = dst.GetPhyAddr();
    for (uint32_t o = 0; o < total; ++o) {
        int best = -1;
        T bs = 0;
        bool exhausted = false;
        for (int l = 0; l < lists; ++l) {
            if (at[l] >= info.elementLengths[l]) {
                exhausted = true;
                continue;
            }
            const T sc = src[l]->GetPhyAddr()[2 * at[l]];
            if (best < 0 || sc > bs) best = l, bs = sc;  // strict: equal scores stay with the lower list
        }
        if (exhausted && info.ifExhaustedSuspension) break;
        std::memcpy(out + 2 * o, src[best]->GetPhyAddr() + 2 * at[best], 8);
        ++at[best];
    }
    for (int l = 0; l < 4; ++l) ks_twin::mrgsort_result()[l] = static_cast<uint16_t>(l < lists ? at[l] : 0);
}

inline void GetMrgSortResult(uint16_t& list1, uint16_t& list2, uint16_t& list3, uint16_t& list4)
{
    list1 = ks_twin::mrgsort_result()[0], list2 = ks_twin::mrgsort_result()[1];
    list3 = ks_twin::mrgsort_result()[2], list4 = ks_twin::mrgsort_result()[3];
}

// Extract(dstValue, dstIndex, sorted, repeatTime): each repeat splits 32 structures (64 floats) of `sorted`
// into 32 scores and 32 indices.
template <class T>
inline void Extract(const LocalTensor<T>& dstValue, const LocalTensor<uint32_t>& dstIndex, const LocalTensor<T>& sorted,
                    const int32_t repeatTime, ks_twin::Site site = ks_twin::Site())
{
    static_assert(std::is_same<T, float>::value, "the twin's Extract splits float (score, index) lists");
    KS_TWIN_SITE(site);
    const char* api = "Extract";
    if (repeatTime < 0 || repeatTime > 255) {
        ks_twin::fail("bounds", "Extract(repeatTime=%d) on %s: repeatTime must be in 0..255 (32 structures each)",
                      repeatTime, ks_twin::core_name());
    }
    const uint32_t n = 32u * static_cast<uint32_t>(repeatTime);
    KS_TWIN_OPERAND('w', dstValue, n * 4ull);
    KS_TWIN_OPERAND('w', dstIndex, n * 4ull);
    KS_TWIN_OPERAND('r', sorted, n * 8ull);
    KS_TWIN_LOG("Extract", "dtype=%s repeat=%d", ks_twin::type_name<T>(), repeatTime);
    ks_twin::require_vector(api);
    ks_twin::vec_operand(dstValue, n, api, "dstValue");
    ks_twin::vec_operand(dstIndex, n, api, "dstIndex");
    ks_twin::vec_operand(sorted, 2 * n, api, "sorted");
    const T* s = sorted.GetPhyAddr();
    for (uint32_t i = 0; i < n; ++i) {
        dstValue.GetPhyAddr()[i] = s[2 * i];
        std::memcpy(dstIndex.GetPhyAddr() + i, s + 2 * i + 1, 4);
    }
}

// Gather(dst, src, srcOffset, srcBaseAddr, count): dst[i] = the T at byte srcBaseAddr + srcOffset[i] of src.
template <class T>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint32_t>& srcOffset,
                   const uint32_t srcBaseAddr, const uint32_t count, ks_twin::Site site = ks_twin::Site())
{
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "Gather moves 2- or 4-byte elements on Atlas A2");
    KS_TWIN_SITE(site);
    const char* api = "Gather";
    KS_TWIN_OPERAND('w', dst, count * sizeof(T));
    KS_TWIN_OPERAND('r', srcOffset, count * 4ull);
    KS_TWIN_LOG_VEC("Gather", T, count);
    ks_twin::require_vector(api);
    ks_twin::vec_operand(dst, count, api, "dst");
    ks_twin::vec_operand(src, 0, api, "src");
    ks_twin::vec_operand(srcOffset, count, api, "srcOffset");
    const uint8_t* base = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
    const uint64_t bytes = src.GetLength();
    for (uint32_t i = 0; i < count; ++i) {
        const uint64_t at = static_cast<uint64_t>(srcBaseAddr) + srcOffset.GetPhyAddr()[i];
        if (at % sizeof(T) != 0 || at + sizeof(T) > bytes) {
            ks_twin::fail("bounds", "Gather on %s: element %u reads byte %llu of a %llu-byte src (%s elements of %u "
                          "bytes); offsets are bytes from src, multiples of the element size, inside it",
                          ks_twin::core_name(), i, static_cast<unsigned long long>(at),
                          static_cast<unsigned long long>(bytes), ks_twin::type_name<T>(),
                          static_cast<unsigned>(sizeof(T)));
        }
        std::memcpy(dst.GetPhyAddr() + i, base + at, sizeof(T));
    }
}

}  // namespace AscendC

#endif
