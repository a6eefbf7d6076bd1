// Matmul high-level API (matmul::Matmul, MatmulType, REGIST_MATMUL_OBJ) of the kernelstudio CPU twin.
#ifndef KS_TWIN_MATMUL_INTF_H
#define KS_TWIN_MATMUL_INTF_H

#include "../kernel_operator.h"
#include "../ks_twin/matmul.h"

#endif
