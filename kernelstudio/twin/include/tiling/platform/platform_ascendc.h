// Host platform queries (platform_ascendc::PlatformAscendC) of the kernelstudio twin.
//
// On CANN the runtime hands TilingFunc a platform description (context->GetPlatformInfo()) and
// PlatformAscendC answers core counts, on-chip memory sizes and the system workspace the high-level
// APIs need. In the twin the CPU launcher (main.cpp) fills fe::PlatFormInfos from the target profile.
#if defined(KS_TWIN_KERNEL_UNIT) && !defined(KS_TWIN_TILING_STRUCTS)
#error "tiling/platform/platform_ascendc.h is a host header (the platform queries of TilingFunc): a kernel source (op_kernel/*.cpp) cannot include it, as on CANN; kernels include kernel_operator.h and lib/... headers, and read their tiling with GET_TILING_DATA"
#endif
#if defined(KS_TWIN_KERNEL_UNIT)
// A kernel unit reads its op_host/<op>_tiling.h for the struct a CANN build generates from it: of this
// header it gets only what that struct needs.
#elif !defined(KS_TWIN_PLATFORM_ASCENDC_H)
#define KS_TWIN_PLATFORM_ASCENDC_H

#include <cctype>
#include <cstdint>

#include "../../ks_twin/chip.h"
#include "../../ks_twin/shared.h"

namespace fe {
// What the twin knows of a chip: the target profile's core counts and memory sizes (bytes); a default-made
// one is the chip the twin was compiled for (the KS_* defines kernelstudio.twin passes from the profile).
struct PlatFormInfos {
    const char* soc = KS_SOC_NAME;
    uint32_t aicNum = KS_AIC_CORES;
    uint32_t aivNum = KS_AIV_CORES;
    uint64_t l1 = KS_L1_BYTES;
    uint64_t l0a = KS_L0A_BYTES;
    uint64_t l0b = KS_L0B_BYTES;
    uint64_t l0c = KS_L0C_BYTES;
    uint64_t ub = KS_UB_BYTES;
    uint64_t l2 = KS_L2_BYTES;
    uint64_t hbm = KS_HBM_BYTES;
};
}  // namespace fe

namespace ks_twin {
// Chip names compared without case ("Ascend910B2" and "ascend910b2" are one chip).
inline bool same_soc(const char* a, const char* b)
{
    for (; *a != 0 && *b != 0; ++a, ++b) {
        if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
    }
    return *a == *b;
}
}  // namespace ks_twin

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };
enum class SocVersion { ASCEND910 = 0, ASCEND910B, ASCEND910_93, ASCEND310P, ASCEND310B, RESERVED_VERSION };

class PlatformAscendC {
public:
    PlatformAscendC() = default;
    explicit PlatformAscendC(const fe::PlatFormInfos* info) : info_(info != nullptr ? *info : fe::PlatFormInfos{}) {}

    // Cores an AIV kernel can use: on a chip with separate cube and vector cores, the vector cores.
    uint32_t GetCoreNum() const { return info_.aivNum; }
    uint32_t GetCoreNumAic() const { return info_.aicNum; }
    uint32_t GetCoreNumAiv() const { return info_.aivNum; }
    SocVersion GetSocVersion() const { return SocVersion::ASCEND910B; }
    uint32_t GetLibApiWorkSpaceSize() const { return ks_twin::LIB_WORKSPACE_BYTES; }
    void GetCoreMemSize(CoreMemType type, uint64_t& size) const
    {
        switch (type) {
            case CoreMemType::L0_A: size = info_.l0a; break;
            case CoreMemType::L0_B: size = info_.l0b; break;
            case CoreMemType::L0_C: size = info_.l0c; break;
            case CoreMemType::L1: size = info_.l1; break;
            case CoreMemType::L2: size = info_.l2; break;
            case CoreMemType::UB: size = info_.ub; break;
            case CoreMemType::HBM: size = info_.hbm; break;
            default: size = 0; break;
        }
    }
    // Block dim of a MIX launch: one block per AI Core (an AIC with its AIVs), at most sliceNum.
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) return sliceNum;
        uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }

private:
    fe::PlatFormInfos info_{};
};

// The platform of code that has no TilingContext (a high-level API's tiling function, a test's main): one
// PlatformAscendC of the chip the twin was compiled for. CANN's GetInstance(customSocVersion) picks a chip by
// name; the twin knows only the one it was built for, so a name other than it gives nullptr.
class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance()
    {
        static PlatformAscendC instance{};
        return &instance;
    }
    static PlatformAscendC* GetInstance(const char* customSocVersion)
    {
        if (customSocVersion == nullptr || ks_twin::same_soc(customSocVersion, KS_SOC_NAME)) return GetInstance();
        return nullptr;
    }
};

}  // namespace platform_ascendc

#endif
