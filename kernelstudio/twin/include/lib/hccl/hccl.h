// HCCL's kernel-side client (Ascend C high-level API) on the twin: Prepare a collective on core 0
// (AllReduce / AllGather / ReduceScatter, each with a repeat count), Commit it once per repeat, Wait once per
// repeat, Finalize. The ranks and their data exchange are ks_twin/hccl.h's; see kernelstudio/twin/README.md.
#ifndef KS_TWIN_LIB_HCCL_HCCL_H
#define KS_TWIN_LIB_HCCL_HCCL_H

#include "../../kernel_operator.h"
#include "../../ks_twin/hccl.h"

namespace AscendC {

using HcclHandle = int8_t;

enum HcclDataType : uint32_t {
    HCCL_DATA_TYPE_INT8 = 0,
    HCCL_DATA_TYPE_INT16 = 1,
    HCCL_DATA_TYPE_INT32 = 2,
    HCCL_DATA_TYPE_FP16 = 3,
    HCCL_DATA_TYPE_FP32 = 4,
    HCCL_DATA_TYPE_INT64 = 5,
    HCCL_DATA_TYPE_UINT64 = 6,
    HCCL_DATA_TYPE_UINT8 = 7,
    HCCL_DATA_TYPE_UINT16 = 8,
    HCCL_DATA_TYPE_UINT32 = 9,
    HCCL_DATA_TYPE_FP64 = 10,
    HCCL_DATA_TYPE_BFP16 = 11,
};

enum HcclReduceOp : uint32_t { HCCL_REDUCE_SUM = 0, HCCL_REDUCE_PROD = 1, HCCL_REDUCE_MAX = 2, HCCL_REDUCE_MIN = 3 };

enum HcclServerType : uint32_t { HCCL_SERVER_TYPE_AICPU = 0 };

// Which core sends the client's messages: DEFAULT (the kernel gates the calls itself, e.g. on GetBlockIdx()),
// or the core of that type and block id only; the client's calls on any other core do nothing.
enum class CoreType : uint8_t { DEFAULT, ON_AIV, ON_AIC };

struct HcclServerConfig {
    CoreType type;
    int64_t blockId;
};

static constexpr HcclServerConfig DEFAULT_CFG = {CoreType::DEFAULT, 0};

// The communication context the runtime hands a kernel (one per group); on the twin a marker: the rank's
// world lives in ks_twin::hccl.
template <int index> inline GM_ADDR GetHcclContext()
{
    static_assert(index == 0, "the twin has one communication group: GetHcclContext<0>()");
    static uint8_t context[32];
    return context;
}

template <HcclServerType serverType = HCCL_SERVER_TYPE_AICPU, const auto& config = DEFAULT_CFG> class Hccl {
public:
    __aicore__ inline void Init(GM_ADDR context, __gm__ void* initTiling = nullptr)
    {
        (void)context;
        (void)initTiling;
        if (config.type != CoreType::DEFAULT) {
            ks_twin::hccl::world().client_block.store(config.blockId, std::memory_order_relaxed);
        }
        ks_twin::hccl::init("Hccl::Init");
    }

    template <bool commit = false>
    __aicore__ inline HcclHandle AllReduce(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t count, HcclDataType dataType,
                                           HcclReduceOp op, uint8_t repeat = 1)
    {
        check_op("AllReduce", op);
        if (!working()) return -1;
        return ks_twin::hccl::prepare(ks_twin::hccl::Kind::AllReduce, sendBuf, recvBuf, count, 0, dataType,
                                      bytes_of("AllReduce", dataType), repeat, commit);
    }

    template <bool commit = false>
    __aicore__ inline HcclHandle AllGather(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t sendCount,
                                           HcclDataType dataType, uint64_t strideCount, uint8_t repeat = 1)
    {
        if (!working()) return -1;
        return ks_twin::hccl::prepare(ks_twin::hccl::Kind::AllGather, sendBuf, recvBuf, sendCount, strideCount,
                                      dataType, bytes_of("AllGather", dataType), repeat, commit);
    }

    template <bool commit = false>
    __aicore__ inline HcclHandle ReduceScatter(GM_ADDR sendBuf, GM_ADDR recvBuf, uint64_t recvCount,
                                               HcclDataType dataType, HcclReduceOp op, uint64_t strideCount,
                                               uint8_t repeat = 1)
    {
        check_op("ReduceScatter", op);
        if (!working()) return -1;
        return ks_twin::hccl::prepare(ks_twin::hccl::Kind::ReduceScatter, sendBuf, recvBuf, recvCount, strideCount,
                                      dataType, bytes_of("ReduceScatter", dataType), repeat, commit);
    }

    __aicore__ inline void Commit(HcclHandle handleId)
    {
        if (working()) ks_twin::hccl::commit(handleId);
    }
    __aicore__ inline int32_t Wait(HcclHandle handleId) { return working() ? ks_twin::hccl::wait(handleId) : 0; }
    __aicore__ inline void Finalize()
    {
        if (working()) ks_twin::hccl::finalize();
    }
    __aicore__ inline uint32_t GetRankId() const { return ks_twin::hccl::world().rank; }
    __aicore__ inline uint32_t GetRankDim() const
    {
        const auto* s = ks_twin::hccl::world().shared;
        return s == nullptr ? 1 : s->ranks;
    }

private:
    // The core the config names (every core with DEFAULT: the kernel gates the calls itself)
    static bool working()
    {
        if (config.type == CoreType::DEFAULT) return true;
        const ks_twin::CoreCtx& c = ks_twin::ctx();
        const bool aiv = c.type == ks_twin::CoreType::AIV;
        return (config.type == CoreType::ON_AIV) == aiv && c.block_idx == config.blockId;
    }
    static void check_op(const char* api, HcclReduceOp op)
    {
        if (op != HCCL_REDUCE_SUM) {
            ks_twin::fail("hccl", "%s with reduce op %u: the twin reduces with HCCL_REDUCE_SUM only", api,
                          static_cast<unsigned>(op));
        }
    }
    static uint32_t bytes_of(const char* api, HcclDataType t)
    {
        switch (t) {
            case HCCL_DATA_TYPE_FP16:
            case HCCL_DATA_TYPE_BFP16: return 2;
            case HCCL_DATA_TYPE_FP32: return 4;
            default:
                ks_twin::fail("hccl", "%s with data type %u: the twin moves and reduces HCCL_DATA_TYPE_FP16, _BFP16 "
                              "and _FP32", api, static_cast<unsigned>(t));
        }
    }
};

}  // namespace AscendC

#endif
