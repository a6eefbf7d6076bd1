"""The project's settings in one place: the default target, tuning thresholds of the planner, cache limits
and every environment variable kernelstudio reads (read through the functions here, never `os.environ`
elsewhere)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "VERSION", "DEFAULT_TARGET", "AUTO_SWIZZLE_GAIN", "FUSION_CACHE_LIMIT", "TUNE_MEMO_LIMIT", "COST_MEMO_LIMIT",
    "ENV_DESIGN_DB", "ENV_TWIN_LOG", "ENV_VERIFY", "cache_home", "design_db_env", "verify_enabled",
]

VERSION = "0.1.0"
DEFAULT_TARGET = "ascend910b2"  # the hardware profile every entry point uses unless given a target

# assumed: an L1/L2 tile-walk swizzle is chosen only when the L2 model predicts at least 10 % fewer HBM reads
AUTO_SWIZZLE_GAIN = 0.10

FUSION_CACHE_LIMIT = 64  # cost-aware fusion decisions kept (by graph structure and target)
TUNE_MEMO_LIMIT = 20_000  # tuner results kept in memory per session
COST_MEMO_LIMIT = 1 << 16  # memoised instruction costs per cost model

ENV_DESIGN_DB = "KS_DESIGN_DB"  # path of the design database (ks.save_design / ks.designs)
ENV_TWIN_LOG = "KS_TWIN_LOG"  # set by the twin runner for a run that records its API call log
ENV_VERIFY = "KS_VERIFY"  # "1": check the TileIR after every pass of lower()


def cache_home() -> Path:
    """`$XDG_CACHE_HOME/kernelstudio`, else `~/.cache/kernelstudio`: where compiled twin binaries and the
    design database live."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kernelstudio"


def design_db_env() -> str | None:
    """The design database path the user set (`$KS_DESIGN_DB`), if any."""
    return os.environ.get(ENV_DESIGN_DB) or None


def verify_enabled() -> bool:
    """Whether `$KS_VERIFY` asks for the TileIR verifier after every pass."""
    return os.environ.get(ENV_VERIFY, "") not in ("", "0")
