// LayerNorm (LayerNormTiling), the high-level API a CANN kernel includes as lib/normalization/layernorm.h;
// the twin's implementation is ks_twin/norm.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_NORMALIZATION_LAYERNORM_H
#define KS_TWIN_LIB_NORMALIZATION_LAYERNORM_H

#include "../../kernel_operator.h"
#include "../../ks_twin/norm.h"

#endif
