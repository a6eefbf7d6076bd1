// LayerNormGradBeta (LayerNormGradBetaTiling), the high-level API a CANN kernel includes as
// lib/normalization/layernormgradbeta.h; the twin's implementation is ks_twin/norm_grad.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_NORMALIZATION_LAYERNORMGRADBETA_H
#define KS_TWIN_LIB_NORMALIZATION_LAYERNORMGRADBETA_H

#include "../../kernel_operator.h"
#include "../../ks_twin/norm_grad.h"

#endif
