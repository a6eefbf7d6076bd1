// The tiling structs as a kernel reads them: plain structs of CANN's fields in CANN's order (TCubeTiling,
// SoftMaxTiling, LayerNormTiling, RmsNormTiling, TopkTiling), and GET_TILING_DATA, which copies a
// launch's tiling blob into the registered struct.
//
// On CANN the host fills the tiling-data classes of tiling/tiling_api.h (optiling::TCubeTiling, ...) and
// the kernel build makes plain structs of the same layout; the host header pins its classes to these
// structs with static_asserts. Every field starts at 0, as on CANN.
#ifndef KS_TWIN_KERNEL_TILING_H
#define KS_TWIN_KERNEL_TILING_H

#include <cstddef>
#include <cstdint>
#include <cstring>

// TCubeTiling: 50 int32_t fields, the order of CANN 8.x. The twin's Matmul reads the fields marked "read";
// the others are kept so that blobs and offsets match CANN, and are ignored here (batch matmul, layouts,
// MX types and UB/L1 sharing are not modelled). A 0 in stepM/stepN/stepKa/stepKb, depthA1/depthB1 or
// dbL0A/B/C is read as 1.
struct TCubeTiling {
    int32_t usedCoreNum = 0;      // ignored: blockDim comes from ICPU_RUN_KF
    int32_t M = 0;                // read: rows of A and C (org shape)
    int32_t N = 0;                // read: columns of B and C (org shape)
    int32_t Ka = 0;               // read: K of A (org shape)
    int32_t Kb = 0;               // read: K of B (org shape; 0 or equal to Ka)
    int32_t singleCoreM = 0;      // read
    int32_t singleCoreN = 0;      // read
    int32_t singleCoreK = 0;      // read
    int32_t baseM = 0;            // read
    int32_t baseN = 0;            // read
    int32_t baseK = 0;            // read
    int32_t depthA1 = 0;          // read: L1 capacity and slab checks
    int32_t depthB1 = 0;          // read
    int32_t stepM = 0;            // read
    int32_t stepN = 0;            // read
    int32_t isBias = 0;           // read: must match SetBias
    int32_t transLength = 0;      // ignored
    int32_t iterateOrder = 0;     // read: 0 walks M first, 1 walks N first
    int32_t shareMode = 0;        // ignored
    int32_t shareL1Size = 0;      // ignored
    int32_t shareL0CSize = 0;     // ignored
    int32_t shareUbSize = 0;      // ignored
    int32_t batchM = 0;           // ignored (batch matmul)
    int32_t batchN = 0;           // ignored
    int32_t singleBatchM = 0;     // ignored
    int32_t singleBatchN = 0;     // ignored
    int32_t stepKa = 0;           // read
    int32_t stepKb = 0;           // read
    int32_t depthAL1CacheUB = 0;  // ignored
    int32_t depthBL1CacheUB = 0;  // ignored
    int32_t dbL0A = 0;            // read: L0A capacity check
    int32_t dbL0B = 0;            // read: L0B capacity check
    int32_t dbL0C = 0;            // read: L0C capacity check
    int32_t ALayoutInfoB = 0;     // ignored (IterateBatch layouts)
    int32_t ALayoutInfoS = 0;
    int32_t ALayoutInfoN = 0;
    int32_t ALayoutInfoG = 0;
    int32_t ALayoutInfoD = 0;
    int32_t BLayoutInfoB = 0;
    int32_t BLayoutInfoS = 0;
    int32_t BLayoutInfoN = 0;
    int32_t BLayoutInfoG = 0;
    int32_t BLayoutInfoD = 0;
    int32_t CLayoutInfoB = 0;
    int32_t CLayoutInfoS1 = 0;
    int32_t CLayoutInfoN = 0;
    int32_t CLayoutInfoG = 0;
    int32_t CLayoutInfoS2 = 0;
    int32_t BatchNum = 0;         // ignored
    int32_t mxTypePara = 0;       // ignored (MX matmul; `reserved` in CANN 8.1)

};

static_assert(sizeof(TCubeTiling) == 50 * sizeof(int32_t), "TCubeTiling: CANN's 50 int32 fields, no padding");

// The high-level APIs' structs: their fields are CANN's documented ones (see ../../README.md); the twin
// fills the shape and size fields and its kernels read only those.
struct SoftMaxTiling {
    uint32_t srcM = 0;
    uint32_t srcK = 0;
    uint32_t srcSize = 0;
    uint32_t outMaxM = 0;
    uint32_t outMaxK = 0;
    uint32_t outMaxSize = 0;
    uint32_t splitM = 0;  // rows one pass works on (0: the work space was below the minimum)
    uint32_t splitK = 0;
    uint32_t splitSize = 0;
    uint32_t reduceM = 0;
    uint32_t reduceK = 0;
    uint32_t reduceSize = 0;
    uint32_t rangeM = 0;
    uint32_t tailM = 0;
    uint32_t tailSplitSize = 0;
    uint32_t tailReduceSize = 0;
};

struct LayerNormTiling {
    uint32_t bLength = 0;
    uint32_t sLength = 0;
    uint32_t hLength = 0;
    uint32_t originalHLength = 0;
    uint32_t inputXSize = 0;
    uint32_t meanVarSize = 0;
    uint32_t numberOfTmpBuf = 0;
    uint32_t meanTmpTensorPos = 0;
    uint32_t meanTmpTensorSize = 0;
    uint32_t varianceTmpTensorPos = 0;
    uint32_t varianceTmpTensorSize = 0;
    uint32_t tmpBufSize = 0;  // twin: the bytes the tiling was made for (stackBufferSize)
    uint32_t oneTmpSize = 0;
    uint32_t firstTmpStartPos = 0;
    uint32_t secondTmpStartPos = 0;
    uint32_t thirdTmpStartPos = 0;
    // The fields below complete the struct as the twin remembers CANN's header; the documentation page
    // read for the twin shows the fields above (see README). The twin neither fills nor reads these.
    uint32_t loopRound = 0;
    uint32_t inputRoundSize = 0;
    uint32_t inputTailSize = 0;
    uint32_t inputTailPos = 0;
    uint32_t meanVarRoundSize = 0;
    uint32_t meanVarTailSize = 0;
    uint32_t meanVarTailPos = 0;
    uint32_t bshCurLength = 0;
    uint32_t bsCurLength = 0;
    float lastDimValueBack = 0;
};

struct RmsNormTiling {
    uint32_t bLength = 0;
    uint32_t sLength = 0;
    uint32_t hLength = 0;
    uint32_t originalHLength = 0;
    float reciprocalOfHLength = 0;
    uint32_t mainBshLength = 0;
    uint32_t mainBsLength = 0;
    uint32_t mainBsLengthAlign = 0;
    uint32_t loopRound = 0;
    uint32_t inputTailPos = 0;
    uint32_t tailBshLength = 0;
    uint32_t tailBsLength = 0;
};

// The documented TopkTiling fields; the twin fills and reads the size fields only.
struct TopkTiling {
    int32_t tmpLocalSize = 0;   // bytes of tmpLocal the kernel call needs
    int32_t allDataSize = 0;    // outter * inner
    int32_t innerDataSize = 0;  // inner
    uint32_t sortRepeat = 0;    // inner / 32 (Sort32 repeats per row)
    int32_t mrgSortRepeat = 0;
    int32_t kAlignFourBytes = 0;  // k rounded up to 32 bytes of 4-byte elements
    int32_t kAlignTwoBytes = 0;   // k rounded up to 32 bytes of 2-byte elements
    int32_t maskOffset = 0;
    int32_t maskVreducev2FourBytes = 0;
    int32_t maskVreducev2TwoBytes = 0;
    int32_t mrgSortSrc1offset = 0;
    int32_t mrgSortSrc2offset = 0;
    int32_t mrgSortSrc3offset = 0;
    int32_t mrgSortTwoQueueSrc1Offset = 0;
    int32_t mrgFourQueueTailPara1 = 0;
    int32_t mrgFourQueueTailPara2 = 0;
    int32_t srcIndexOffset = 0;
    int32_t topkMrgSrc1MaskSizeOffset = 0;
    int32_t topkNSmallSrcIndexOffset = 0;
    uint32_t vreduceValMask0 = 0;
    uint32_t vreduceValMask1 = 0;
    uint32_t vreduceIdxMask0 = 0;
    uint32_t vreduceIdxMask1 = 0;
};

// LayerNormGradTiling and LayerNormGradBetaTiling: CANN's fields in CANN's order (asc-devkit
// include/adv_api/normalization/layernorm_grad_tilingdata.h, layernorm_grad_beta_tilingdata.h); the twin fills
// the shape fields and stackBufferSize and reads those.
struct LayerNormGradTiling {
    uint32_t stackBufferSize = 0;
    uint32_t bLength = 0;
    uint32_t sLength = 0;
    uint32_t hLength = 0;
    uint32_t originalHLength = 0;
    uint32_t oneCalSize = 0;
    uint32_t nohCalSize = 0;
    uint32_t loopNum = 0;
    uint32_t tailSize = 0;
    uint32_t nohTailSize = 0;
    uint32_t tmpTensorBSHPos = 0;
    uint32_t tmpTensorBSHSize = 0;
    uint32_t pdVarTensorPos = 0;
    uint32_t pdVarTensorSize = 0;
    uint32_t pdMeanTensorPos = 0;
    uint32_t pdMeanTensorSize = 0;
    uint32_t x1TensorPos = 0;
    uint32_t x1TensorSize = 0;
    uint32_t x2TensorPos = 0;
    uint32_t x2TensorSize = 0;
    uint32_t x3TensorPos = 0;
    uint32_t x3TensorSize = 0;
    uint32_t tmpTensorPos = 0;
    uint32_t tmpTensorSize = 0;
    uint32_t tmpTensor1Pos = 0;
    uint32_t tmpTensor1Size = 0;
    uint32_t tmpTensor2Pos = 0;
    uint32_t tmpTensor2Size = 0;
    uint32_t lastDimValueBack = 0;
    uint32_t lastDimValueBackMulTwo = 0;
};

struct LayerNormGradBetaTiling {
    uint32_t stackBufferSize = 0;
    uint32_t bLength = 0;
    uint32_t sLength = 0;
    uint32_t hLength = 0;
    uint32_t originalHLength = 0;
    uint32_t bshLength = 0;
    uint32_t bsLength = 0;
    uint32_t oneCalSize = 0;
    uint32_t numberOfTmpBuf = 0;
    uint32_t loopRound = 0;
    uint32_t inputTailSize = 0;
    uint32_t inputTailPos = 0;
    uint32_t bsTailSize = 0;
    uint32_t bshCurLength = 0;
    uint32_t bsCurLength = 0;
    uint32_t gammaTempTensorPos = 0;
    uint32_t betaTempTensorPos = 0;
    uint32_t inputDyTmpTensorPos = 0;
    uint32_t resForGammaTmpTensorPos = 0;
    uint32_t reserved = 0;
};

// PadTiling: the fields CANN's PadTilingFunc sets, in the order it sets them (CANN's open host tiling source,
// asc-devkit impl/adv_api/tiling/pad/pad_tiling_impl.cpp); the twin fills the shape fields (srcHeight,
// srcWidth, srcOriWidth) and the work space it was made for (tmpBuffer2Offset: twin, bytes) and reads those.
struct PadTiling {
    uint32_t srcHeight = 0;
    uint32_t srcWidth = 0;
    uint32_t srcOriWidth = 0;
    uint32_t widthWithoutLastBlock = 0;
    uint32_t blocksPerRow = 0;
    uint32_t heightTiling = 0;
    uint32_t heightFractal = 0;
    uint32_t heightFractalTail = 0;
    uint32_t mainLoopOffset = 0;
    uint32_t tailBlockOffset = 0;
    uint32_t tmpBuffer1BlockNum = 0;
    uint32_t tmpBuffer1RowNum = 0;
    uint32_t tmpBuffer2Offset = 0;
    uint32_t widthTiling = 0;
    uint32_t widthFractal = 0;
    uint32_t widthFractalTail = 0;
    uint32_t widthFractalTailAlingned = 0;  // CANN's spelling
    uint32_t brcbTiling = 0;
    uint32_t brcbFractal = 0;
    uint32_t brcbFractalTail = 0;
    uint32_t maxRepeatTimes = 0;
    uint32_t brcbTilingRepeatTimes = 0;
    uint32_t brcbTilingRepeatTimesTail = 0;
    uint32_t brcbFractalTailRepeatTimes = 0;
    uint32_t brcbFractalTailRepeatTimesTail = 0;
};

namespace optiling {}  // GET_TILING_DATA looks the registered struct up there

// CANN also names the kernel structs in AscendC::tiling.
namespace AscendC {
namespace tiling {
using ::LayerNormGradBetaTiling;
using ::LayerNormGradTiling;
using ::LayerNormTiling;
using ::PadTiling;
using ::RmsNormTiling;
using ::SoftMaxTiling;
using ::TCubeTiling;
using ::TopkTiling;
}  // namespace tiling
}  // namespace AscendC

namespace ks_twin {
template <class T> inline T load_tiling(const void* src)
{
    T t;
    std::memcpy(static_cast<void*>(&t), src, sizeof(T));
    return t;
}
}  // namespace ks_twin

// GET_TILING_DATA(var, tiling): the struct REGISTER_TILING_DATA_CLASS named for this kernel, copied from
// the launch's tiling blob.
#define GET_TILING_DATA(var, tiling_arg)                                                   \
    auto var = [&]() {                                                                     \
        using namespace ::optiling;                                                        \
        return ::ks_twin::load_tiling<KsTwinTilingData>(tiling_arg); /* needs REGISTER_TILING_DATA_CLASS */ \
    }()
#define GET_TILING_DATA_WITH_STRUCT(struct_name, var, tiling_arg) \
    auto var = ::ks_twin::load_tiling<struct_name>(tiling_arg)

#endif
