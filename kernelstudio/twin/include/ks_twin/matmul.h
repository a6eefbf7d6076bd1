// Matmul high-level API: functional cube (fp32 accumulate, bias, transposes) with tiling checks.
#ifndef KS_TWIN_MATMUL_H
#define KS_TWIN_MATMUL_H

#include <vector>

#include "../kernel_tiling/kernel_tiling.h"
#include "copy.h"

namespace matmul {

template <AscendC::TPosition POS, CubeFormat FORMAT, class TYPE, bool ISTRANS = false> struct MatmulType {
    using T = TYPE;
    static constexpr AscendC::TPosition pos = POS;
    static constexpr CubeFormat format = FORMAT;
    static constexpr bool isTrans = ISTRANS;
};

struct MatmulConfig {
    bool doNorm = true;
    bool doMultiDataLoad = false;
    bool doIBShareNorm = false;
};
inline constexpr MatmulConfig CFG_NORM{true, false, false};
inline constexpr MatmulConfig CFG_MDL{false, true, false};
inline constexpr MatmulConfig CFG_IBSHARE_NORM{false, false, true};

}  // namespace matmul

namespace ks_twin {

inline std::mutex& atomic_mutex()
{
    static std::mutex m;
    return m;
}

// An operand given by SetTensorA/B or SetBias: a GM tensor or a local one.
template <class T> struct Operand {
    bool set = false;
    bool local = false;
    bool trans = false;
    AscendC::GlobalTensor<T> gm;
    AscendC::LocalTensor<T> ub;
    const T* data() const { return local ? ub.GetPhyAddr() : gm.GetPhyAddr(); }
    void check(uint64_t elems, const char* api) const
    {
        if (local) {
            ub.check(0, elems, api);
        } else {
            gm.check(0, elems, api);
        }
    }
};

// An operand slab resident in L1: rows x cols elements copied from GM (or UB) by the Matmul object, tagged
// with the block it holds (the index of its stepM (stepN) group of base blocks and of its stepKa (stepKb)
// group of k blocks). A tile that needs the slab already held uses it without a copy.
template <class T> struct L1Slab {
    bool valid = false;
    int blk = -1, kslab = -1;
    int r0 = 0, rows = 0, k0 = 0, klen = 0;
    std::vector<T> data;  // A: [rows (m)][klen]; B: [klen][rows (n)]
};

// Rounds an fp32/int32 accumulator into the C type.
template <class C, class Acc> inline C to_c(Acc v)
{
    if constexpr (std::is_same<C, bfloat16_t>::value) {
        return bfloat16_t(static_cast<float>(v));
    } else {
        return static_cast<C>(v);
    }
}

}  // namespace ks_twin

namespace matmul {

// The Matmul object. CUBE_ONLY says whether the translation unit that names it defined ASCENDC_CUBE_ONLY:
// it is a template argument (chosen by the `Matmul` alias below) rather than an #ifdef in a member function,
// so that kernels built with and without it can be linked into one program without two different
// definitions of the same inline function (an ODR violation the linker would resolve by picking one).
template <bool CUBE_ONLY, class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE, const auto& MM_CFG>
class MatmulImpl {
    using SrcA = typename A_TYPE::T;
    using SrcB = typename B_TYPE::T;
    // B in GM as FRACTAL_NZ: N/16 column bands of K rows x 16 (element (k, n) at (n/16)*Kb*16 + k*16 + n%16,
    // Kb the whole K of the matrix), copied to L1 in whole fractals without an ND -> NZ conversion
    static constexpr bool kBNz = B_TYPE::format == CubeFormat::NZ;
    static constexpr int kNz = 16;
    using DstC = typename C_TYPE::T;
    using BiasT = typename BIAS_TYPE::T;
    using Acc = std::conditional_t<std::is_integral<SrcA>::value, int32_t, float>;

public:
    void Init(const TCubeTiling* tiling, AscendC::TPipe* tpipe = nullptr)
    {
        (void)tpipe;
        KS_TWIN_LOG("Matmul::Init");
        if (tiling == nullptr) ks_twin::fail("matmul", "Matmul::Init on %s got no TCubeTiling", ks_twin::core_name());
        t_ = *tiling;
        validate();
        inited_ = true;
        orgM_ = t_.M;
        orgN_ = t_.N;
        orgKa_ = t_.Ka;
        orgKb_ = t_.Kb;
        orgKc_ = 0;
        singleM_ = t_.singleCoreM;
        singleN_ = t_.singleCoreN;
        singleK_ = t_.singleCoreK;
    }

    void SetTensorA(const AscendC::GlobalTensor<SrcA>& gm, bool isTransposeA = false)
    {
        KS_TWIN_LOG("Matmul::SetTensorA", "src=GM trans=%d", isTransposeA ? 1 : 0);
        set_gm(a_, gm, isTransposeA);
    }
    void SetTensorA(const AscendC::LocalTensor<SrcA>& ub, bool isTransposeA = false)
    {
        KS_TWIN_LOG("Matmul::SetTensorA", "src=%s trans=%d", ks_twin::position_name(ub.GetPosition()),
                    isTransposeA ? 1 : 0);
        set_ub(a_, ub, isTransposeA);
    }
    void SetTensorB(const AscendC::GlobalTensor<SrcB>& gm, bool isTransposeB = false)
    {
        KS_TWIN_LOG("Matmul::SetTensorB", "src=GM trans=%d", isTransposeB ? 1 : 0);
        set_gm(b_, gm, isTransposeB);
    }
    void SetTensorB(const AscendC::LocalTensor<SrcB>& ub, bool isTransposeB = false)
    {
        KS_TWIN_LOG("Matmul::SetTensorB", "src=%s trans=%d", ks_twin::position_name(ub.GetPosition()),
                    isTransposeB ? 1 : 0);
        set_ub(b_, ub, isTransposeB);
    }
    void SetBias(const AscendC::GlobalTensor<BiasT>& gm)
    {
        KS_TWIN_LOG("Matmul::SetBias", "src=GM");
        set_gm(bias_, gm, false);
    }
    void SetBias(const AscendC::LocalTensor<BiasT>& ub)
    {
        KS_TWIN_LOG("Matmul::SetBias", "src=%s", ks_twin::position_name(ub.GetPosition()));
        set_ub(bias_, ub, false);
    }
    void DisableBias() { bias_.set = false; }
    void ClearBias() { bias_.set = false; }
    void SetLocalWorkspace(const AscendC::LocalTensor<uint8_t>&) {}
    void SetWorkspace(const AscendC::GlobalTensor<uint8_t>&) {}

    void SetOrgShape(int orgM, int orgN, int orgK) { SetOrgShape(orgM, orgN, orgK, orgK, orgN); }
    void SetOrgShape(int orgM, int orgN, int orgKa, int orgKb, int orgKc = 0)
    {
        KS_TWIN_LOG("Matmul::SetOrgShape", "M=%d N=%d Ka=%d Kb=%d Kc=%d", orgM, orgN, orgKa, orgKb, orgKc);
        orgM_ = orgM;
        orgN_ = orgN;
        orgKa_ = orgKa;
        orgKb_ = orgKb;
        orgKc_ = orgKc;  // C's row width in GM; 0: B's N (orgN)
    }
    void SetSingleShape(int m, int n, int k)
    {
        KS_TWIN_LOG("Matmul::SetSingleShape", "m=%d n=%d k=%d", m, n, k);
        singleM_ = m;
        singleN_ = n;
        singleK_ = k;
    }
    void SetTail(int tailM = -1, int tailN = -1, int tailK = -1)
    {
        KS_TWIN_LOG("Matmul::SetTail", "m=%d n=%d k=%d", tailM, tailN, tailK);
        if (tailM > 0) singleM_ = tailM;
        if (tailN > 0) singleN_ = tailN;
        if (tailK > 0) singleK_ = tailK;
    }

    // Computes the next baseM x baseN tile of C; false once every tile of the single-core block is done.
    template <bool sync = true> bool Iterate(bool enPartialSum = false, ks_twin::Site site = ks_twin::Site())
    {
        (void)enPartialSum;
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("Matmul::Iterate");
        return next_tile();
    }

    // Writes the current tile densely (rows of baseN) into a local tensor.
    template <bool sync = true>
    void GetTensorC(const AscendC::LocalTensor<DstC>& dst, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    ks_twin::Site site = ks_twin::Site())
    {
        (void)enSequentialWrite;
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("Matmul::GetTensorC", "dst=%s", ks_twin::position_name(dst.GetPosition()));
        require_tile("GetTensorC(LocalTensor)");
        log_c_out_local(dst, static_cast<uint64_t>(rows_) * t_.baseN);
        dst.check(0, static_cast<uint64_t>(t_.baseM) * t_.baseN, "Matmul::GetTensorC(LocalTensor)");
        dst.check_aligned("Matmul::GetTensorC", "the destination");
        write_tile(dst.GetPhyAddr(), t_.baseN, enAtomic != 0);
    }

    // Writes the current tile into GM: at its place in C (row stride N) or densely if enSequentialWrite.
    template <bool sync = true>
    void GetTensorC(const AscendC::GlobalTensor<DstC>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("Matmul::GetTensorC", "dst=GM");
        put_tile(gm, enAtomic, enSequentialWrite);
    }

    // Computes the whole singleCoreM x singleCoreN block into GM (row stride N).
    template <bool sync = true>
    void IterateAll(const AscendC::GlobalTensor<DstC>& gm, uint8_t enAtomic = 0, bool enSequentialWrite = false,
                    bool waitIterateAll = false, bool fakeMsg = false, ks_twin::Site site = ks_twin::Site())
    {
        (void)enSequentialWrite;
        (void)waitIterateAll;
        (void)fakeMsg;
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("Matmul::IterateAll", "dst=GM");
        while (next_tile()) put_tile(gm, enAtomic, false);
    }

    template <bool sync = true>
    void IterateAll(const AscendC::LocalTensor<DstC>& ub, uint8_t enAtomic = 0, ks_twin::Site site = ks_twin::Site())
    {
        KS_TWIN_SITE(site);
        KS_TWIN_LOG("Matmul::IterateAll", "dst=%s", ks_twin::position_name(ub.GetPosition()));
        begin("IterateAll(LocalTensor)");
        ub.check(0, static_cast<uint64_t>(singleM_) * singleN_, "Matmul::IterateAll(LocalTensor)");
        while (next_tile()) {
            log_c_out_local(ub, static_cast<uint64_t>(rows_) * singleN_);
            write_tile(ub.GetPhyAddr() + static_cast<uint64_t>(tm_) * t_.baseM * singleN_ +
                           static_cast<uint64_t>(tn_) * t_.baseN,
                       singleN_, enAtomic != 0);
        }
    }

    void WaitIterateAll() {}
    void WaitGetTensorC() {}
    void End()
    {
        KS_TWIN_LOG("Matmul::End");
        release();
        a_.set = b_.set = bias_.set = false;
        a1_.valid = b1_.valid = false;
        running_ = false;
        has_tile_ = false;
    }
    uint8_t GetSubBlockIdx() const { return static_cast<uint8_t>(ks_twin::ctx().sub); }
    bool registered() const { return inited_; }

private:
    // Iterate without the log line (IterateAll's loop is one API call).
    bool next_tile()
    {
        begin("Iterate");
        free_c();
        if (cur_ >= roundM_ * roundN_) {
            running_ = false;
            has_tile_ = false;
            return false;
        }
        if (t_.iterateOrder == 1) {
            tm_ = cur_ / roundN_;
            tn_ = cur_ % roundN_;
        } else {
            tm_ = cur_ % roundM_;
            tn_ = cur_ / roundM_;
        }
        compute_tile();
        ++cur_;
        has_tile_ = true;
        return true;
    }

    void put_tile(const AscendC::GlobalTensor<DstC>& gm, uint8_t enAtomic, bool enSequentialWrite)
    {
        require_tile("GetTensorC(GlobalTensor)");
        if (enSequentialWrite) {
            gm.check(0, static_cast<uint64_t>(t_.baseM) * t_.baseN, "Matmul::GetTensorC(GlobalTensor)");
            log_fixpipe(gm.GetPhyAddr(), t_.baseN);
            write_tile(gm.GetPhyAddr(), t_.baseN, enAtomic != 0);
            return;
        }
        const int ldc = orgKc_ > 0 ? orgKc_ : orgN_;
        uint64_t off = static_cast<uint64_t>(tm_) * t_.baseM * ldc + static_cast<uint64_t>(tn_) * t_.baseN;
        gm.check(0, off + (rows_ - 1) * static_cast<uint64_t>(ldc) + cols_, "Matmul::GetTensorC(GlobalTensor)");
        log_fixpipe(gm.GetPhyAddr() + off, ldc);
        write_tile(gm.GetPhyAddr() + off, ldc, enAtomic != 0);
    }

    template <class T> void set_gm(ks_twin::Operand<T>& op, const AscendC::GlobalTensor<T>& gm, bool trans)
    {
        release();
        a1_.valid = b1_.valid = false;  // a new operand: what L1 holds is stale
        op.set = true;
        op.local = false;
        op.gm = gm;
        op.trans = trans;
        running_ = false;
    }
    template <class T> void set_ub(ks_twin::Operand<T>& op, const AscendC::LocalTensor<T>& ub, bool trans)
    {
        release();
        a1_.valid = b1_.valid = false;
        op.set = true;
        op.local = true;
        op.ub = ub;
        op.trans = trans;
        running_ = false;
    }

    void validate() const
    {
        const TCubeTiling& t = t_;
        if (t.baseM <= 0 || t.baseN <= 0 || t.baseK <= 0 || t.singleCoreM <= 0 || t.singleCoreN <= 0 ||
            t.singleCoreK <= 0 || t.M <= 0 || t.N <= 0 || t.Ka <= 0) {
            ks_twin::fail("matmul", "REGIST_MATMUL_OBJ on %s: TCubeTiling needs positive M, N, Ka, singleCoreM/N/K "
                          "and baseM/N/K (got M=%d N=%d Ka=%d singleCore %dx%dx%d base %dx%dx%d); fill the tiling",
                          ks_twin::core_name(), t.M, t.N, t.Ka, t.singleCoreM, t.singleCoreN, t.singleCoreK,
                          t.baseM, t.baseN, t.baseK);
        }
        if (t.Kb != 0 && t.Kb != t.Ka) {
            ks_twin::fail("matmul", "REGIST_MATMUL_OBJ on %s: TCubeTiling Ka=%d but Kb=%d; A and B must share K",
                          ks_twin::core_name(), t.Ka, t.Kb);
        }
        if (t.baseM % 16 || t.baseN % 16 || (t.baseK * sizeof(SrcA)) % 32) {
            ks_twin::fail("alignment", "REGIST_MATMUL_OBJ on %s: baseM=%d and baseN=%d must be multiples of 16 and "
                          "baseK=%d a multiple of %zu (32 bytes of %s); round the base tile",
                          ks_twin::core_name(), t.baseM, t.baseN, t.baseK, 32 / sizeof(SrcA),
                          ks_twin::type_name<SrcA>());
        }
        auto db = [](int v) { return static_cast<uint64_t>(v > 0 ? v : 1); };
        const int ska = t.stepKa > 0 ? t.stepKa : 1, skb = t.stepKb > 0 ? t.stepKb : 1;
        const int sm = t.stepM > 0 ? t.stepM : 1, sn = t.stepN > 0 ? t.stepN : 1;
        // the smaller slab reloads inside the larger, so their k boundaries must meet; a larger slab that holds
        // all of singleCoreK (a resident "full load" operand) has no inner boundary, only the smaller's tail
        const bool full = static_cast<int64_t>(std::max(ska, skb)) * t.baseK >= t.singleCoreK;
        if ((ska > skb ? ska % skb : skb % ska) != 0 && !full) {
            ks_twin::fail("matmul", "REGIST_MATMUL_OBJ on %s: stepKa=%d and stepKb=%d: the larger must be a multiple "
                          "of the smaller (the smaller slab reloads inside the larger) unless it holds all of "
                          "singleCoreK=%d; change one of them",
                          ks_twin::core_name(), ska, skb, t.singleCoreK);
        }
        if (db(t.depthA1) % (static_cast<uint64_t>(ska) * sm) || db(t.depthB1) % (static_cast<uint64_t>(skb) * sn)) {
            ks_twin::fail("matmul", "REGIST_MATMUL_OBJ on %s: depthA1=%d must be a multiple of stepKa x stepM = %d and "
                          "depthB1=%d of stepKb x stepN = %d (L1 holds whole slabs); use 1 or 2 slabs per operand",
                          ks_twin::core_name(), t.depthA1, ska * sm, t.depthB1, skb * sn);
        }
        check_cap("L0A", "baseM x baseK x sizeof(A) x dbL0A",
                  static_cast<uint64_t>(t.baseM) * t.baseK * sizeof(SrcA) * db(t.dbL0A), KS_L0A_BYTES, "KS_L0A_BYTES");
        check_cap("L0B", "baseK x baseN x sizeof(B) x dbL0B",
                  static_cast<uint64_t>(t.baseK) * t.baseN * sizeof(SrcB) * db(t.dbL0B), KS_L0B_BYTES, "KS_L0B_BYTES");
        check_cap("L0C", "baseM x baseN x 4 x dbL0C", static_cast<uint64_t>(t.baseM) * t.baseN * 4 * db(t.dbL0C),
                  KS_L0C_BYTES, "KS_L0C_BYTES");
        uint64_t l1 = db(t.depthA1) * t.baseM * t.baseK * sizeof(SrcA) + db(t.depthB1) * t.baseN * t.baseK * sizeof(SrcB) +
                      (t.isBias ? static_cast<uint64_t>(t.baseN) * sizeof(BiasT) : 0);
        check_cap("L1", "depthA1 x baseM x baseK x sizeof(A) + depthB1 x baseK x baseN x sizeof(B) + bias", l1,
                  KS_L1_BYTES, "KS_L1_BYTES");
    }

    static void check_cap(const char* mem, const char* formula, uint64_t need, uint64_t cap, const char* macro)
    {
        if (need > cap) {
            ks_twin::fail("capacity", "REGIST_MATMUL_OBJ on %s: the TCubeTiling needs %llu bytes of %s (%s) but it "
                          "holds %llu (%s); lower baseM/baseN/baseK, depths or double buffering",
                          ks_twin::core_name(), static_cast<unsigned long long>(need), mem, formula,
                          static_cast<unsigned long long>(cap), macro);
        }
    }

    void begin(const char* api)
    {
        if (!inited_) {
            ks_twin::fail("matmul", "Matmul::%s on %s before REGIST_MATMUL_OBJ(&pipe, workspace, obj, &tiling) or "
                          "obj.Init(&tiling)", api, ks_twin::core_name());
        }
        if constexpr (CUBE_ONLY) {
            if (ks_twin::ctx().active && ks_twin::ctx().type == ks_twin::CoreType::AIV) {
                ks_twin::fail("launch", "Matmul::%s on the %s with ASCENDC_CUBE_ONLY: the matmul runs on the AIC; "
                              "guard it with `if ASCEND_IS_AIC { ... }`", api, ks_twin::core_name());
            }
        }
        if (running_) return;
        if (!a_.set || !b_.set) {
            ks_twin::fail("matmul", "Matmul::%s on %s without SetTensorA and SetTensorB", api, ks_twin::core_name());
        }
        if (t_.isBias && !bias_.set) {
            ks_twin::fail("matmul", "Matmul::%s on %s: TCubeTiling.isBias=1 but SetBias was not called; call "
                          "SetBias or set isBias=0", api, ks_twin::core_name());
        }
        if (!t_.isBias && bias_.set) {
            ks_twin::fail("matmul", "Matmul::%s on %s: SetBias was called but TCubeTiling.isBias=0; set isBias=1",
                          api, ks_twin::core_name());
        }
        uint64_t M = singleM_, N = singleN_, K = singleK_;
        a_.check(a_.trans ? (K - 1) * orgM_ + M : (M - 1) * orgKa_ + K, "Matmul A (SetTensorA)");
        if constexpr (kBNz) {
            if (b_.trans || orgKb_ % kNz || singleN_ % kNz) {
                ks_twin::fail("matmul", "Matmul::%s on %s: B is CubeFormat::NZ, which takes an untransposed [K, N] "
                              "matrix with K=%d and singleCoreN/tail N=%d multiples of %d; use CubeFormat::ND",
                              api, ks_twin::core_name(), orgKb_, singleN_, kNz);
            }
            b_.check((N + kNz - 1) / kNz * static_cast<uint64_t>(orgKb_) * kNz, "Matmul B (SetTensorB, NZ)");
        } else {
            b_.check(b_.trans ? (N - 1) * orgKb_ + K : (K - 1) * orgN_ + N, "Matmul B (SetTensorB)");
        }
        if (bias_.set) bias_.check(N, "Matmul bias (SetBias)");
        roundM_ = static_cast<int>((M + t_.baseM - 1) / t_.baseM);
        roundN_ = static_cast<int>((N + t_.baseN - 1) / t_.baseN);
        cur_ = 0;
        running_ = true;
        declare_queues();
    }

    // The L1 level. A reaches L0A through a slab of stepM x stepKa base blocks (baseM x baseK) held in L1,
    // B through one of stepKb x stepN (baseK x baseN). A tile loads the slab of each k block it needs
    // unless L1 holds it already: when stepKa covers the whole singleCoreK, A's slab of a tile row stays
    // resident while the row's tiles along n (iterateOrder 1) use it; B's likewise along m when stepKb
    // covers K. The products read the slabs only, never GM.
    void load_a1(int kb)
    {
        const int sm = t_.stepM > 0 ? t_.stepM : 1, ska = t_.stepKa > 0 ? t_.stepKa : 1;
        const int blk = tm_ / sm, ks = kb / ska;
        if (a1_.valid && a1_.blk == blk && a1_.kslab == ks) return;
        a1_.r0 = blk * sm * t_.baseM;
        a1_.rows = std::min(sm * t_.baseM, singleM_ - a1_.r0);
        a1_.k0 = ks * ska * t_.baseK;
        a1_.klen = std::min(ska * t_.baseK, singleK_ - a1_.k0);
        a1_.data.resize(static_cast<size_t>(a1_.rows) * a1_.klen);
        const SrcA* A = a_.data();
        for (int i = 0; i < a1_.rows; ++i) {
            for (int k = 0; k < a1_.klen; ++k) {
                const int64_t m = a1_.r0 + i, kk = a1_.k0 + k;
                a1_.data[static_cast<size_t>(i) * a1_.klen + k] = a_.trans ? A[kk * orgM_ + m] : A[m * orgKa_ + kk];
            }
        }
        a1_.blk = blk;
        a1_.kslab = ks;
        a1_.valid = true;
        KS_TWIN_LOG("Matmul::LoadA1", "m0=%d rows=%d k0=%d cols=%d bytes=%llu", a1_.r0, a1_.rows, a1_.k0, a1_.klen,
                    static_cast<unsigned long long>(a1_.data.size() * sizeof(SrcA)));
        log_load_l1(qa1_, a_, a_.trans ? static_cast<uint64_t>(a1_.k0) * orgM_ + a1_.r0
                                       : static_cast<uint64_t>(a1_.r0) * orgKa_ + a1_.k0,
                    a1_.data.size());
    }
    void load_b1(int kb)
    {
        const int sn = t_.stepN > 0 ? t_.stepN : 1, skb = t_.stepKb > 0 ? t_.stepKb : 1;
        const int blk = tn_ / sn, ks = kb / skb;
        if (b1_.valid && b1_.blk == blk && b1_.kslab == ks) return;
        b1_.r0 = blk * sn * t_.baseN;
        b1_.rows = std::min(sn * t_.baseN, singleN_ - b1_.r0);
        b1_.k0 = ks * skb * t_.baseK;
        b1_.klen = std::min(skb * t_.baseK, singleK_ - b1_.k0);
        b1_.data.resize(static_cast<size_t>(b1_.rows) * b1_.klen);
        const SrcB* B = b_.data();
        for (int k = 0; k < b1_.klen; ++k) {
            for (int j = 0; j < b1_.rows; ++j) {
                const int64_t n = b1_.r0 + j, kk = b1_.k0 + k;
                b1_.data[static_cast<size_t>(k) * b1_.rows + j] =
                    kBNz ? B[(n / kNz) * orgKb_ * kNz + kk * kNz + n % kNz]
                         : b_.trans ? B[n * orgKb_ + kk] : B[kk * orgN_ + n];
            }
        }
        b1_.blk = blk;
        b1_.kslab = ks;
        b1_.valid = true;
        KS_TWIN_LOG("Matmul::LoadB1", "n0=%d cols=%d k0=%d rows=%d bytes=%llu", b1_.r0, b1_.rows, b1_.k0, b1_.klen,
                    static_cast<unsigned long long>(b1_.data.size() * sizeof(SrcB)));
        log_load_l1(qb1_, b_, kBNz ? static_cast<uint64_t>(b1_.r0) * orgKb_ + static_cast<uint64_t>(b1_.k0) * kNz
                              : b_.trans ? static_cast<uint64_t>(b1_.r0) * orgKb_ + b1_.k0
                                       : static_cast<uint64_t>(b1_.k0) * orgN_ + b1_.r0,
                    b1_.data.size(), kBNz);
    }

    void compute_tile()
    {
        rows_ = std::min(t_.baseM, singleM_ - tm_ * t_.baseM);
        cols_ = std::min(t_.baseN, singleN_ - tn_ * t_.baseN);
        acc_.assign(static_cast<size_t>(t_.baseM) * t_.baseN, Acc(0));
        const int64_t m0 = static_cast<int64_t>(tm_) * t_.baseM, n0 = static_cast<int64_t>(tn_) * t_.baseN;
        // k block by k block, each from the L1 slabs that hold it: every C element still sums its
        // products in k order, as one pass over K would
        alloc_c();
        const bool b_outer = (t_.stepKb > 0 ? t_.stepKb : 1) >= (t_.stepKa > 0 ? t_.stepKa : 1);
        for (int kb = 0; kb * t_.baseK < singleK_; ++kb) {
            if (b_outer) load_b1(kb);
            load_a1(kb);
            if (!b_outer) load_b1(kb);
            const int k_lo = kb * t_.baseK, k_hi = std::min(singleK_, k_lo + t_.baseK);
            log_mmad(m0 - a1_.r0, k_lo - a1_.k0, n0 - b1_.r0, k_lo - b1_.k0, k_hi - k_lo, kb == 0);
            for (int i = 0; i < rows_; ++i) {
                const SrcA* arow = a1_.data.data() + static_cast<size_t>(m0 + i - a1_.r0) * a1_.klen;
                for (int j = 0; j < cols_; ++j) {
                    const int64_t bj = n0 + j - b1_.r0;
                    Acc s = acc_[static_cast<size_t>(i) * t_.baseN + j];
                    for (int k = k_lo; k < k_hi; ++k) {
                        Acc av = static_cast<Acc>(ks_twin::to_calc(arow[k - a1_.k0]));
                        Acc bv = static_cast<Acc>(ks_twin::to_calc(
                            b1_.data[static_cast<size_t>(k - b1_.k0) * b1_.rows + bj]));
                        if constexpr (std::is_integral<Acc>::value) {
                            s = ks_twin::acc_add(s, ks_twin::acc_mul(av, bv));  // int32 wraps, as L0C does
                        } else {
                            s += av * bv;
                        }
                    }
                    acc_[static_cast<size_t>(i) * t_.baseN + j] = s;
                }
            }
        }
        if (bias_.set) {
            for (int i = 0; i < rows_; ++i) {
                for (int j = 0; j < cols_; ++j) {
                    Acc& s = acc_[static_cast<size_t>(i) * t_.baseN + j];
                    s = ks_twin::acc_add(s, static_cast<Acc>(ks_twin::to_calc(bias_.data()[n0 + j])));
                }
            }
        }
        if (ks_twin::g_call_log != nullptr) {
            queue_op("EnQue", qc_, qc_.cur);
            queue_op("DeQue", qc_, qc_.cur);
        }
    }

    // ---- the log of the work the object does for its caller, as the basic-API calls it stands for ------
    // With the call log on, each tile's L1 loads (DataCopy Nd2Nz GM -> A1 / B1), L0 loads (LoadData A1 -> A2,
    // B1 -> B2), Mmad (baseM x baseK x baseN, k tile by k tile) and its C move (Fixpipe L0C -> GM, or L0C -> a
    // local tensor) are logged at the user's Iterate / IterateAll / GetTensorC line, each with `internal=1`,
    // in queue buffers of the object's own (InitBuffer'd on its first tile, A1 / B1 at the top of L1, A2 / B2
    // / CO1 from the start of L0A / L0B / L0C), handed over as the API does inside: a slab is allocated,
    // copied, EnQue'd and DeQue'd before its loads read it and freed when the next slab replaces it; each L0
    // tile is allocated, loaded, EnQue'd, DeQue'd by the Mmad and freed after it; C is allocated before the
    // first Mmad, EnQue'd / DeQue'd after the last, and freed after its move out.
    struct IQue {
        const char* pos = "A1";
        uint64_t start = 0, slot = 32;
        int num = 1, next = 0, cur = -1;
    };

    static uint64_t round32(uint64_t b) { return (b + 31) / 32 * 32; }

    void declare_queues()
    {
        if (ks_twin::g_call_log == nullptr || declared_) return;
        declared_ = true;
        const int ska = t_.stepKa > 0 ? t_.stepKa : 1, skb = t_.stepKb > 0 ? t_.stepKb : 1;
        const int sm = t_.stepM > 0 ? t_.stepM : 1, sn = t_.stepN > 0 ? t_.stepN : 1;
        auto slabs = [](int depth, int per) { return std::max(1, std::min(2, depth / per)); };
        qa1_ = IQue{"A1", 0, round32(static_cast<uint64_t>(sm) * t_.baseM * ska * t_.baseK * sizeof(SrcA)),
                    slabs(t_.depthA1, ska * sm)};
        qb1_ = IQue{"B1", 0, round32(static_cast<uint64_t>(sn) * t_.baseN * skb * t_.baseK * sizeof(SrcB)),
                    slabs(t_.depthB1, skb * sn)};
        qb1_.start = KS_L1_BYTES - qb1_.slot * qb1_.num;
        qa1_.start = qb1_.start - qa1_.slot * qa1_.num;
        qa2_ = IQue{"A2", 0, round32(static_cast<uint64_t>(t_.baseM) * t_.baseK * sizeof(SrcA)), t_.dbL0A > 1 ? 2 : 1};
        qb2_ = IQue{"B2", 0, round32(static_cast<uint64_t>(t_.baseK) * t_.baseN * sizeof(SrcB)), t_.dbL0B > 1 ? 2 : 1};
        qc_ = IQue{"CO1", 0, round32(static_cast<uint64_t>(t_.baseM) * t_.baseN * sizeof(Acc)), t_.dbL0C > 1 ? 2 : 1};
        for (const IQue* q : {&qa1_, &qb1_, &qa2_, &qb2_, &qc_}) {
            KS_TWIN_REF("q=%s:%llu", q->pos, static_cast<unsigned long long>(q->start));
            KS_TWIN_LOG("InitBuffer", "que=%s depth=%d num=%d len=%llu internal=1", q->pos, q->num, q->num,
                        static_cast<unsigned long long>(q->slot));
        }
    }

    static void queue_op(const char* api, const IQue& q, int i)
    {
        KS_TWIN_REF("q=%s:%llu", q.pos, static_cast<unsigned long long>(q.start));
        KS_TWIN_REF("slot=%s:%llu", q.pos, static_cast<unsigned long long>(q.start + i * q.slot));
        KS_TWIN_LOG(api, "que=%s depth=%d internal=1", q.pos, q.num);
    }
    static int alloc(IQue& q)
    {
        q.cur = q.next;
        q.next = (q.next + 1) % q.num;
        queue_op("AllocTensor", q, q.cur);
        return q.cur;
    }
    static void free_q(IQue& q)
    {
        if (q.cur < 0) return;
        queue_op("FreeTensor", q, q.cur);
        q.cur = -1;
    }
    void alloc_c()
    {
        if (ks_twin::g_call_log != nullptr) alloc(qc_);
    }
    void free_c()
    {
        if (ks_twin::g_call_log != nullptr) free_q(qc_);
    }
    // every internal buffer still held (End, a new operand)
    void release()
    {
        if (ks_twin::g_call_log == nullptr || !declared_) return;
        free_q(qc_);
        free_q(qa1_);
        free_q(qb1_);
    }

    // A slab of `elems` elements from the operand at element `first`: GM -> L1 (ND -> NZ), or UB -> L1.
    template <class T>
    void log_load_l1(IQue& q, const ks_twin::Operand<T>& op, uint64_t first, uint64_t elems, bool nz = false)
    {
        if (ks_twin::g_call_log == nullptr) return;
        free_q(q);
        const int i = alloc(q);
        KS_TWIN_REF("w=%s:%llu+%llu", q.pos, static_cast<unsigned long long>(q.start + i * q.slot),
                    static_cast<unsigned long long>(elems * sizeof(T)));
        if (op.local) {
            KS_TWIN_OPERAND('r', op.ub, elems * sizeof(T));
            KS_TWIN_LOG("DataCopy", "dst=%s src=%s dtype=%s internal=1", q.pos,
                        ks_twin::position_name(op.ub.GetPosition()), ks_twin::type_name<T>());
        } else {
            ks_twin::note_gm(op.gm.GetPhyAddr() + first, elems * sizeof(T));
            KS_TWIN_LOG("DataCopy", "dst=%s src=GM dtype=%s format=%s internal=1", q.pos, ks_twin::type_name<T>(),
                        nz ? "NZ" : "Nd2Nz");
        }
        queue_op("EnQue", q, i);
        queue_op("DeQue", q, i);
    }

    // One k tile: A (rows_ x klen from row `ar`, column `ak` of the A1 slab) -> L0A, B likewise -> L0B, Mmad.
    void log_mmad(int ar, int ak, int bc, int bk, int klen, bool first)
    {
        if (ks_twin::g_call_log == nullptr) return;
        const uint64_t a_bytes = static_cast<uint64_t>(rows_) * klen * sizeof(SrcA);
        const uint64_t b_bytes = static_cast<uint64_t>(cols_) * klen * sizeof(SrcB);
        const uint64_t a_src = qa1_.start + qa1_.cur * qa1_.slot +
                               (static_cast<uint64_t>(ar) * a1_.klen + ak) * sizeof(SrcA);
        const uint64_t b_src = qb1_.start + qb1_.cur * qb1_.slot +
                               (static_cast<uint64_t>(bk) * b1_.rows + bc) * sizeof(SrcB);
        const int ia = alloc(qa2_);
        KS_TWIN_REF("w=A2:%llu+%llu", static_cast<unsigned long long>(qa2_.start + ia * qa2_.slot),
                    static_cast<unsigned long long>(a_bytes));
        KS_TWIN_REF("r=A1:%llu+%llu", static_cast<unsigned long long>(a_src), static_cast<unsigned long long>(a_bytes));
        KS_TWIN_LOG("LoadData", "dst=A2 src=A1 dtype=%s format=2D internal=1", ks_twin::type_name<SrcA>());
        queue_op("EnQue", qa2_, ia);
        const int ib = alloc(qb2_);
        KS_TWIN_REF("w=B2:%llu+%llu", static_cast<unsigned long long>(qb2_.start + ib * qb2_.slot),
                    static_cast<unsigned long long>(b_bytes));
        KS_TWIN_REF("r=B1:%llu+%llu", static_cast<unsigned long long>(b_src), static_cast<unsigned long long>(b_bytes));
        KS_TWIN_LOG("LoadData", "dst=B2 src=B1 dtype=%s format=2D internal=1", ks_twin::type_name<SrcB>());
        queue_op("EnQue", qb2_, ib);
        queue_op("DeQue", qa2_, ia);
        queue_op("DeQue", qb2_, ib);
        const uint64_t c_at = qc_.start + qc_.cur * qc_.slot, c_bytes = static_cast<uint64_t>(rows_) * cols_ * sizeof(Acc);
        KS_TWIN_REF("w=CO1:%llu+%llu", static_cast<unsigned long long>(c_at), static_cast<unsigned long long>(c_bytes));
        if (!first) {
            KS_TWIN_REF("r=CO1:%llu+%llu", static_cast<unsigned long long>(c_at), static_cast<unsigned long long>(c_bytes));
        }
        KS_TWIN_REF("r=A2:%llu+%llu", static_cast<unsigned long long>(qa2_.start + ia * qa2_.slot),
                    static_cast<unsigned long long>(a_bytes));
        KS_TWIN_REF("r=B2:%llu+%llu", static_cast<unsigned long long>(qb2_.start + ib * qb2_.slot),
                    static_cast<unsigned long long>(b_bytes));
        KS_TWIN_LOG("Mmad", "dtype=%s m=%d n=%d k=%d cmatrixInitVal=%d internal=1", ks_twin::type_name<SrcA>(), rows_,
                    cols_, klen, first ? 1 : 0);
        queue_op("FreeTensor", qa2_, ia);
        queue_op("FreeTensor", qb2_, ib);
        qa2_.cur = qb2_.cur = -1;
    }

    // The current C tile out of L0C: to GM at `dst` (Fixpipe, rows `ldc` elements apart), or into a local tensor.
    void log_fixpipe(const DstC* dst, int ldc)
    {
        if (ks_twin::g_call_log == nullptr || qc_.cur < 0) return;
        const uint64_t c_at = qc_.start + qc_.cur * qc_.slot, c_bytes = static_cast<uint64_t>(rows_) * cols_ * sizeof(Acc);
        KS_TWIN_REF("r=CO1:%llu+%llu", static_cast<unsigned long long>(c_at), static_cast<unsigned long long>(c_bytes));
        ks_twin::note_gm(dst, static_cast<uint64_t>(rows_) * cols_ * sizeof(DstC));
        ks_twin::note_gm_rows(rows_, cols_ * sizeof(DstC), static_cast<uint64_t>(ldc) * sizeof(DstC));
        KS_TWIN_LOG("Fixpipe", "dst=GM src=CO1 dtype=%s nSize=%d mSize=%d internal=1", ks_twin::type_name<DstC>(),
                    cols_, rows_);
        free_c();
    }
    void log_c_out_local(const AscendC::LocalTensor<DstC>& dst, uint64_t elems)
    {
        if (ks_twin::g_call_log == nullptr || qc_.cur < 0) return;
        const uint64_t c_at = qc_.start + qc_.cur * qc_.slot, c_bytes = static_cast<uint64_t>(rows_) * cols_ * sizeof(Acc);
        KS_TWIN_OPERAND('w', dst, elems * sizeof(DstC));
        KS_TWIN_REF("r=CO1:%llu+%llu", static_cast<unsigned long long>(c_at), static_cast<unsigned long long>(c_bytes));
        KS_TWIN_LOG("Fixpipe", "dst=%s src=CO1 dtype=%s nSize=%d mSize=%d internal=1",
                    ks_twin::position_name(dst.GetPosition()), ks_twin::type_name<DstC>(), cols_, rows_);
        free_c();
    }

    void require_tile(const char* api) const
    {
        if (!has_tile_) {
            ks_twin::fail("matmul", "Matmul::%s on %s without a tile: call it after Iterate() returned true", api,
                          ks_twin::core_name());
        }
    }

    void write_tile(DstC* dst, int64_t stride, bool atomic)
    {
        std::unique_lock<std::mutex> lk(ks_twin::atomic_mutex(), std::defer_lock);
        if (atomic) lk.lock();
        for (int i = 0; i < rows_; ++i) {
            for (int j = 0; j < cols_; ++j) {
                Acc v = acc_[static_cast<size_t>(i) * t_.baseN + j];
                DstC& out = dst[i * stride + j];
                out = atomic ? ks_twin::to_c<DstC>(ks_twin::acc_add(static_cast<Acc>(ks_twin::to_calc(out)), v))
                             : ks_twin::to_c<DstC>(v);
            }
        }
    }

    TCubeTiling t_{};
    bool inited_ = false, running_ = false, has_tile_ = false;
    int orgM_ = 0, orgN_ = 0, orgKa_ = 0, orgKb_ = 0, orgKc_ = 0, singleM_ = 0, singleN_ = 0, singleK_ = 0;
    int roundM_ = 0, roundN_ = 0, cur_ = 0, tm_ = 0, tn_ = 0, rows_ = 0, cols_ = 0;
    ks_twin::Operand<SrcA> a_;
    ks_twin::Operand<SrcB> b_;
    ks_twin::Operand<BiasT> bias_;
    std::vector<Acc> acc_;
    ks_twin::L1Slab<SrcA> a1_;
    ks_twin::L1Slab<SrcB> b1_;
    bool declared_ = false;
    IQue qa1_, qb1_, qa2_, qb2_, qc_;
};

// `matmul::Matmul` as kernels name it. Each translation unit sees exactly one of these inline namespaces
// (the header is included once per unit), so the alias is never defined twice with different meanings.
#ifdef ASCENDC_CUBE_ONLY
inline namespace ks_cube_only {
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM>
using Matmul = MatmulImpl<true, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG>;
}  // namespace ks_cube_only
#else
inline namespace ks_mix {
template <class A_TYPE, class B_TYPE, class C_TYPE, class BIAS_TYPE = C_TYPE, const auto& MM_CFG = CFG_NORM>
using Matmul = MatmulImpl<false, A_TYPE, B_TYPE, C_TYPE, BIAS_TYPE, MM_CFG>;
}  // namespace ks_mix
#endif

}  // namespace matmul

namespace AscendC {
using matmul::CFG_IBSHARE_NORM;
using matmul::CFG_MDL;
using matmul::CFG_NORM;
using matmul::Matmul;
using matmul::MatmulConfig;
using matmul::MatmulType;
}  // namespace AscendC

namespace ks_twin {

// In a MIX kernel the AIC serves the AIVs' Matmul calls and leaves the kernel at REGIST_MATMUL_OBJ.
inline bool matmul_server_returns()
{
    CoreCtx& c = ctx();
    if (!(c.active && c.mix && c.type == CoreType::AIC)) return false;
    std::lock_guard<std::mutex> lk(c.sync->m);
    c.sync->aic_became_server = true;
    return true;
}

inline void regist_matmul(AscendC::TPipe*, GM_ADDR) {}

template <class MM, class... Rest>
inline void regist_matmul(AscendC::TPipe* pipe, GM_ADDR ws, MM& obj, const TCubeTiling* tiling, Rest&&... rest)
{
    if (ctx().active && !ctx().mix && ctx().type == CoreType::AIV) {
        fail("launch", "REGIST_MATMUL_OBJ on the %s of an AIV_ONLY kernel: Matmul needs a cube core; launch with "
             "KERNEL_TYPE_MIX_AIC_1_2 (SetKernelMode(KernelMode::MIX_MODE)) or AIC_ONLY", core_name());
    }
    if (tiling != nullptr) obj.Init(tiling, pipe);
    regist_matmul(pipe, ws, rest...);
}

}  // namespace ks_twin

#ifdef ASCENDC_CUBE_ONLY
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...) ::ks_twin::regist_matmul(tpipe, workspace, __VA_ARGS__)
#else
#define REGIST_MATMUL_OBJ(tpipe, workspace, ...)   \
    if (::ks_twin::matmul_server_returns()) return; \
    ::ks_twin::regist_matmul(tpipe, workspace, __VA_ARGS__)
#endif

#endif
