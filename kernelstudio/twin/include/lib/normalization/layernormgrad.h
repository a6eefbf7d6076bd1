// LayerNormGrad (LayerNormGradTiling, LayerNormGradShapeInfo), the high-level API a CANN kernel includes as
// lib/normalization/layernormgrad.h; the twin's implementation is ks_twin/norm_grad.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_NORMALIZATION_LAYERNORMGRAD_H
#define KS_TWIN_LIB_NORMALIZATION_LAYERNORMGRAD_H

#include "../../kernel_operator.h"
#include "../../ks_twin/norm_grad.h"

#endif
