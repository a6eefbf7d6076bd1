// Broadcast, the high-level API a CANN kernel includes as lib/pad/broadcast.h; the twin's
// implementation is ks_twin/pad.h (kernel_operator.h includes it too).
#ifndef KS_TWIN_LIB_PAD_BROADCAST_H
#define KS_TWIN_LIB_PAD_BROADCAST_H

#include "../../kernel_operator.h"
#include "../../ks_twin/pad.h"

#endif
