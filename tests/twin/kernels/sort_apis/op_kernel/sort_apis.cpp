// MrgSort of packed (score, index) lists, Extract, and a Gather that packs scores and indices again. `mode`:
// 0 two lists merged to the end, 1 three lists, 2 two lists stopping at the first exhausted one (the second
// list given 8 structures), 3..6 one misuse each (validBit 0b101, a list of 4096, dst overlapping a list, a
// Gather offset past its source).
#include "kernel_operator.h"

constexpr int32_t LEN = 32;
constexpr int32_t LISTS = 3;

extern "C" __global__ __aicore__ void sort_apis(GM_ADDR mode, GM_ADDR lists, GM_ADDR vals, GM_ADDR idx, GM_ADDR taken,
                                                GM_ADDR repacked, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::GlobalTensor<int32_t> modeGm, idxGm, takenGm;
    AscendC::GlobalTensor<float> listsGm, valsGm, repackedGm;
    modeGm.SetGlobalBuffer((__gm__ int32_t*)mode, 1);
    listsGm.SetGlobalBuffer((__gm__ float*)lists, 2 * LISTS * LEN);
    valsGm.SetGlobalBuffer((__gm__ float*)vals, LISTS * LEN);
    idxGm.SetGlobalBuffer((__gm__ int32_t*)idx, LISTS * LEN);
    takenGm.SetGlobalBuffer((__gm__ int32_t*)taken, 8);
    repackedGm.SetGlobalBuffer((__gm__ float*)repacked, 2 * LISTS * LEN);
    const int32_t m = modeGm.GetValue(0);

    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::QuePosition::VECCALC> inBuf, outBuf, valBuf, idxBuf, stageBuf, offBuf, packBuf;
    pipe.InitBuffer(inBuf, LISTS * LEN * 8);
    pipe.InitBuffer(outBuf, LISTS * LEN * 8);
    pipe.InitBuffer(valBuf, LISTS * LEN * 4);
    pipe.InitBuffer(idxBuf, LISTS * LEN * 4);
    pipe.InitBuffer(stageBuf, 2 * LISTS * LEN * 4);
    pipe.InitBuffer(offBuf, 2 * LISTS * LEN * 4);
    pipe.InitBuffer(packBuf, LISTS * LEN * 8);
    AscendC::LocalTensor<float> in = inBuf.Get<float>();
    AscendC::LocalTensor<float> out = outBuf.Get<float>();
    AscendC::LocalTensor<float> val = valBuf.Get<float>();
    AscendC::LocalTensor<uint32_t> ind = idxBuf.Get<uint32_t>();
    AscendC::LocalTensor<uint32_t> stage = stageBuf.Get<uint32_t>();
    AscendC::LocalTensor<uint32_t> off = offBuf.Get<uint32_t>();
    AscendC::LocalTensor<float> pack = packBuf.Get<float>();

    AscendC::DataCopy(in, listsGm, 2 * LISTS * LEN);
    AscendC::Duplicate(out, -1.0f, 2 * LISTS * LEN);
    uint16_t lengths[4] = {LEN, LEN, LEN, 0};
    uint16_t valid = m == 1 ? 0b111 : 0b11;
    bool suspend = false;
    if (m == 2) lengths[1] = 8, suspend = true;
    if (m == 3) valid = 0b101;
    if (m == 4) lengths[0] = 4096;
    AscendC::MrgSortSrcList<float> src(in, in[2 * LEN], in[4 * LEN], AscendC::LocalTensor<float>());
    AscendC::MrgSort4Info info(lengths, suspend, valid, 1);
    AscendC::MrgSort(m == 5 ? in[2 * LEN] : out, src, info);
    uint16_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    AscendC::GetMrgSortResult(t0, t1, t2, t3);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Extract(val, ind, out, LISTS);
    AscendC::PipeBarrier<PIPE_V>();
    // pack again: scores then indices in the stage, a Gather with offsets (j: score j, then index j)
    AscendC::DataCopy(stage, val.ReinterpretCast<uint32_t>(), LISTS * LEN);
    AscendC::DataCopy(stage[LISTS * LEN], ind, LISTS * LEN);
    for (int32_t j = 0; j < LISTS * LEN; ++j) {
        off.SetValue(2 * j, 4 * j);
        off.SetValue(2 * j + 1, 4 * (LISTS * LEN + j) + (m == 6 ? 4 * LISTS * LEN : 0));
    }
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Gather(pack.ReinterpretCast<uint32_t>(), stage, off, 0, 2 * LISTS * LEN);
    AscendC::PipeBarrier<PIPE_ALL>();
    takenGm.SetValue(0, t0);
    takenGm.SetValue(1, t1);
    takenGm.SetValue(2, t2);
    takenGm.SetValue(3, t3);
    AscendC::DataCopy(valsGm, val, LISTS * LEN);
    AscendC::DataCopy(idxGm, ind.ReinterpretCast<int32_t>(), LISTS * LEN);
    AscendC::DataCopy(repackedGm, pack, 2 * LISTS * LEN);
}
