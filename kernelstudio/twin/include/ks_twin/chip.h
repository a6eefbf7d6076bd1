// The chip the twin runs as: on-chip memory sizes and core counts of the target's hardware profile.
//
// kernelstudio.twin passes every one as a -D define taken from the bundle's profile (kernelstudio.hw), so
// the profile is their only owner; the headers have no defaults of their own.
#ifndef KS_TWIN_CHIP_H
#define KS_TWIN_CHIP_H

#if !defined(KS_UB_BYTES) || !defined(KS_L1_BYTES) || !defined(KS_L0A_BYTES) || !defined(KS_L0B_BYTES) || \
    !defined(KS_L0C_BYTES)
#error "ks_twin: the on-chip memory sizes (KS_UB_BYTES, KS_L1_BYTES, KS_L0A_BYTES, KS_L0B_BYTES, KS_L0C_BYTES) are not defined; compile through kernelstudio.twin (twin.run / twin.compile / twin.compile_command), which passes them from the target's hardware profile"
#endif
#if !defined(KS_L2_BYTES) || !defined(KS_HBM_BYTES) || !defined(KS_AIC_CORES) || !defined(KS_AIV_CORES)
#error "ks_twin: the chip's L2 and HBM sizes and core counts (KS_L2_BYTES, KS_HBM_BYTES, KS_AIC_CORES, KS_AIV_CORES) are not defined; compile through kernelstudio.twin (twin.run / twin.compile / twin.compile_command), which passes them from the target's hardware profile"
#endif
#ifndef KS_SOC
#error "ks_twin: KS_SOC (the target's profile name) is not defined; compile through kernelstudio.twin, which passes it"
#endif
#define KS_TWIN_STR_(x) #x
#define KS_TWIN_STR(x) KS_TWIN_STR_(x)
// The profile name as a string ("ascend910b2"): KS_SOC is passed as a bare name, so no shell quoting.
#define KS_SOC_NAME KS_TWIN_STR(KS_SOC)

#endif
