// TopK (TopkTiling, TopKInfo, TopKMode), the high-level API a CANN kernel includes as lib/sort/topk.h; the
// twin's implementation is ks_twin/layout.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_SORT_TOPK_H
#define KS_TWIN_LIB_SORT_TOPK_H

#include "../../kernel_operator.h"
#include "../../ks_twin/layout.h"

#endif
