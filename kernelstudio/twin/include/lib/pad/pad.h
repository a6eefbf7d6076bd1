// Pad (PadParams, PadTiling), the high-level API a CANN kernel includes as lib/pad/pad.h; the twin's
// implementation is ks_twin/pad.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_PAD_PAD_H
#define KS_TWIN_LIB_PAD_PAD_H

#include "../../kernel_operator.h"
#include "../../ks_twin/pad.h"

#endif
