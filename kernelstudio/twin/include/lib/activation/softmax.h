// SoftMax (and its tiling struct SoftMaxTiling), the high-level API a CANN kernel includes as
// lib/activation/softmax.h; the twin's implementation is ks_twin/norm.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_ACTIVATION_SOFTMAX_H
#define KS_TWIN_LIB_ACTIVATION_SOFTMAX_H

#include "../../kernel_operator.h"
#include "../../ks_twin/norm.h"

#endif
