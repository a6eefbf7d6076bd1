"""CANN operators written as composites of the DSL's ops: each builds its placeholders with CANN's names and
returns its outputs in CANN's order, so `ks.create_schedule(outs)` fuses it and `create_schedule(outs,
fuse=False)` is its one-kernel-per-op baseline.

Stage 3.5: it may import core/, ir/ and dsl/ (stage 3), nothing above (schedule/ is stage 4).
"""

from __future__ import annotations

from .flash_attention import FA_LAYOUTS, flash_attention, flash_attention_inputs
from .flash_reference import online_softmax_attention, plain_softmax_attention, split_softmax_attention
from .mla_prolog import MLA_CACHE_MODES, mla_prolog
from .mla_quant import MLA_QUANT_MODES, mla_prolog_inputs
from .moe import moe, moe_inputs

__all__ = ["mla_prolog", "MLA_CACHE_MODES", "MLA_QUANT_MODES", "mla_prolog_inputs", "moe", "moe_inputs",
           "flash_attention", "flash_attention_inputs",
           "FA_LAYOUTS", "online_softmax_attention", "plain_softmax_attention", "split_softmax_attention"]
