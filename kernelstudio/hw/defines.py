"""A chip as C preprocessor defines: the sizes and core counts the twin headers check kernels against
(`ks_twin/chip.h` has no defaults). The twin runner passes them to g++; an exported project's CMakeLists.txt
writes them; both read this one table."""

from __future__ import annotations

from .profile import HardwareProfile

__all__ = ["CHIP_DEFINES", "chip_defines"]

# define -> the profile field it carries
CHIP_DEFINES: dict[str, str] = {
    "KS_UB_BYTES": "ub_bytes",
    "KS_L1_BYTES": "l1_bytes",
    "KS_L0A_BYTES": "l0a_bytes",
    "KS_L0B_BYTES": "l0b_bytes",
    "KS_L0C_BYTES": "l0c_bytes",
    "KS_L2_BYTES": "l2_bytes",
    "KS_HBM_BYTES": "hbm_bytes",
    "KS_AIC_CORES": "aic_cores",
    "KS_AIV_CORES": "aiv_cores",
}


def chip_defines(profile: HardwareProfile) -> dict[str, int | str]:
    """Every define of `CHIP_DEFINES` with the profile's value, and KS_SOC (the profile's name)."""
    out: dict[str, int | str] = {macro: int(getattr(profile, name)) for macro, name in CHIP_DEFINES.items()}
    out["KS_SOC"] = str(profile.name)
    return out
