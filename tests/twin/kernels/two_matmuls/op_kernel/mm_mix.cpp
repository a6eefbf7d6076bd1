// C = A x B called from the AIV of a MIX kernel (no ASCENDC_CUBE_ONLY: the AIC serves the AIV's Matmul
// calls and leaves at REGIST_MATMUL_OBJ). Same Matmul types as mm_cube.cpp.
#include "kernel_operator.h"
#include "lib/matmul_intf.h"

using AType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using BType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, half>;
using CType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;
using BiasType = matmul::MatmulType<AscendC::TPosition::GM, CubeFormat::ND, float>;

extern "C" __global__ __aicore__ void mm_mix(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    TCubeTiling t = *reinterpret_cast<__gm__ TCubeTiling*>(tiling);  // the tiling blob is the TCubeTiling
    AscendC::TPipe pipe;
    AscendC::GlobalTensor<half> aGm, bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer((__gm__ half*)a, t.M * t.Ka);
    bGm.SetGlobalBuffer((__gm__ half*)b, t.Kb * t.N);
    cGm.SetGlobalBuffer((__gm__ float*)c, t.M * t.N);
    matmul::Matmul<AType, BType, CType, BiasType> mm;
    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &t);
    if (AscendC::GetSubBlockIdx() != 0) return;  // one AIV computes C
    mm.SetTensorA(aGm);
    mm.SetTensorB(bGm);
    mm.IterateAll(cGm);
    mm.End();
}
