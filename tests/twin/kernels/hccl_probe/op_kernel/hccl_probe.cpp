// Hand-written probe of the twin's HCCL client: one AIV block per rank runs the collective `mode` selects on
// float data (x: 4 blocks of 8 floats per rank), or one misuse of the client.
#include "kernel_operator.h"
#include "lib/hccl/hccl.h"

extern "C" __global__ __aicore__ void hccl_probe(GM_ADDR mode, GM_ADDR x, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)workspace;
    (void)tiling;
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::GlobalTensor<int32_t> modeGm;
    modeGm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
    const int32_t m = modeGm.GetValue(0);
    AscendC::Hccl<AscendC::HCCL_SERVER_TYPE_AICPU> hccl;
    if (m != 6) hccl.Init(AscendC::GetHcclContext<0>());
    const uint32_t rank = hccl.GetRankId();
    if (AscendC::GetBlockIdx() != 0 && m != 4) return;
    const AscendC::HcclDataType f32 = AscendC::HCCL_DATA_TYPE_FP32;
    if (m == 0) {  // AllReduce of 2 repeats of 16 floats, committed and waited one by one
        AscendC::HcclHandle h = hccl.AllReduce(x, y, 16, f32, AscendC::HCCL_REDUCE_SUM, 2);
        for (int i = 0; i < 2; ++i) hccl.Commit(h);
        for (int i = 0; i < 2; ++i) hccl.Wait(h);
    } else if (m == 1) {  // ReduceScatter: 2 repeats of 4 floats per rank block, rank blocks 8 floats apart
        AscendC::HcclHandle h = hccl.ReduceScatter(x, y, 4, f32, AscendC::HCCL_REDUCE_SUM, 8, 2);
        hccl.Commit(h);
        hccl.Commit(h);
        hccl.Wait(h);
    } else if (m == 2) {  // AllGather committed when prepared: 8 floats of each rank, 8 apart
        AscendC::HcclHandle h = hccl.AllGather<true>(x, y, 8, f32, 8);
        hccl.Wait(h);
    } else if (m == 3) {  // one Commit too many
        AscendC::HcclHandle h = hccl.AllReduce(x, y, 16, f32, AscendC::HCCL_REDUCE_SUM, 1);
        hccl.Commit(h);
        hccl.Commit(h);
    } else if (m == 4) {  // block 1 prepares
        if (AscendC::GetBlockIdx() == 1) hccl.AllReduce(x, y, 16, f32, AscendC::HCCL_REDUCE_SUM, 1);
        return;
    } else if (m == 5) {  // rank 1 prepares another count
        AscendC::HcclHandle h = hccl.AllReduce(x, y, rank == 1 ? 8 : 16, f32, AscendC::HCCL_REDUCE_SUM, 1);
        hccl.Commit(h);
        hccl.Wait(h);
    } else if (m == 6) {  // Prepare before Init
        hccl.AllReduce(x, y, 16, f32, AscendC::HCCL_REDUCE_SUM, 1);
    } else if (m == 7) {  // ReduceScatter whose rank blocks reach past x (4 blocks 16 floats apart in 32 floats)
        AscendC::HcclHandle h = hccl.ReduceScatter(x, y, 4, f32, AscendC::HCCL_REDUCE_SUM, 16, 1);
        hccl.Commit(h);
        hccl.Wait(h);
    }
    hccl.Finalize();
}
