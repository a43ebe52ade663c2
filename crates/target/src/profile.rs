//! What differs between the SMs kiln knows, one [`Profile`] per SM.

use crate::OccupancyLimits;

/// Bytes of shared memory ptxas reserves at the start of a CTA's window on sm_90 and later
/// (`.nv.shared.reserved.0`; user shared memory starts at 0x400: `UMOV UR4, 0x400` before
/// `ULEA UR4, UR5, UR4, 0x18` in ptxas 13.0.88's sm_90/sm_100/sm_120 code).
pub const RESERVED_SHARED_BYTES: u32 = 0x400;

/// Everything SM-dependent outside the SASS tables and the learned hazard tables (which are
/// data of their own, keyed by SM name).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Profile {
    /// The number after `sm_`.
    pub number: u16,
    /// Byte offset of the first kernel parameter in constant bank 0 (`.nv.constant0.<k>`;
    /// `ld.param` of the first parameter reads `c[0x0][0x160]` on sm_75–sm_89,
    /// `c[0x0][0x210]` on sm_90, `c[0x0][0x380]` on sm_100/sm_120).
    pub param_base: u32,
    /// The driver's words in bank 0 that code reads; `None` where kiln does not model the
    /// SM's bank-0 layout (sm_100 and sm_120 move them and index some).
    pub driver: Option<DriverWords>,
    /// Where the reserved shared memory lies relative to the user's.
    pub shared_reserve: SharedReserve,
    /// What a cubin for the SM contains beyond the common sections.
    pub cubin: CubinLayout,
    /// Bits of a uniform register number in an instruction word: 6 (`URZ` = 63) before
    /// sm_100, 8 (`URZ` = 255) from it (nvdisasm's `URZ` in each SM's table).
    pub uniform_register_bits: u8,
    /// ptxas's instruction forms for the SM, where kiln generates code for it (a checked SASS
    /// table, forms learned from ptxas); `None`: kiln reads and disassembles the SM's cubins
    /// but does not compile for it.
    pub codegen: Option<Forms>,
}

/// Offsets in constant bank 0 of the words the driver fills and ptxas's code reads (read from
/// ptxas 13.0.88's code for `ld.global`, `mov.u32 r, %envregN`, `cvta.const` and
/// `%reserved_smem_offset_end`/`_1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DriverWords {
    /// The 64-bit global memory descriptor (`ULDC.64 UR4, c[0x0][..]` before global loads and
    /// stores). sm_75's code reads none (it has no descriptors); the word stays where sm_80
    /// has it and reads as zero.
    pub global_desc: u32,
    /// `%envreg0`; `%envregN` is the word `4 * N` after it.
    pub envreg0: u32,
    /// The generic address of constant bank 3 (the module's `.const` variables), 64 bits.
    pub const_window: u32,
    /// `%reserved_smem_offset_end` (sm_75 has none: PTX requires sm_80; the word stays where
    /// sm_80 has it).
    pub reserved_smem_end: u32,
    /// `%reserved_smem_offset_1`.
    pub reserved_smem_offset1: u32,
    /// The driver writes the launch's cluster shape into bank 0 (sm_90, read from ptxas's
    /// code for the `%cluster*` registers): `0x140` whether the launch has explicit clusters,
    /// `0x144` the shape (x, y, z), `0x150` its reciprocals as f32, `0x15c` the grid of
    /// clusters, `0x188` the CTAs per cluster.
    pub cluster_words: bool,
}

/// The layout of a CTA's shared memory window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SharedReserve {
    /// Before sm_90: user shared memory at window offset 0, the reserved block after it.
    Last,
    /// sm_90 and later: the reserved [`RESERVED_SHARED_BYTES`] first, user shared memory
    /// after it; `%reserved_smem_offset_0`/`_begin` fold to 0 and `_cap` to 0x400, and the
    /// kernel's `.nv.shared.<k>` block covers the reserved bytes.
    First,
}

/// What a cubin for the SM contains beyond the common sections (checked byte for byte
/// against ptxas's cubins by `cubin/tests/oracle.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CubinLayout {
    /// A `.nv.compat` section.
    pub compat_section: bool,
    /// The reserved shared-memory symbols are resolved in the cubin (their relocations are
    /// not emitted) and `.nv.shared.reserved.0` is declared for every kernel.
    pub reserved_smem_section: bool,
    /// Where a kernel with textures records its bindless bank attributes.
    pub bindless_bank_attrs: BindlessBankAttrs,
    /// The low byte of `e_flags` (the ELF ABI version: 4 before sm_100, 2 from it).
    pub elf_abi_version: u32,
    /// ptxas's `-v` report lists `cmem[0]` bytes (it does only before sm_90).
    pub reports_cmem0: bool,
    /// Line tables: where a function's first instruction with a line repeats the line its
    /// sequence started with, ptxas writes a bare `DW_LNS_advance_pc` (before sm_90) or
    /// nothing (sm_90 and later).
    pub line_start_advance: bool,
    /// The value of the `EIATTR_SW_WAR` record kiln writes first in every kernel's
    /// `.nv.info.<k>`, where it does: ptxas 13.0.88 writes `0x1` for every sm_75 kernel (a
    /// driver-side workaround request; kiln copies it without knowing what it selects). ptxas
    /// also writes `0x8` on sm_90, which kiln omits: on an H100 its presence changed nothing
    /// (docs/arch/hardware.md).
    pub sw_war: Option<u32>,
}

/// Where a kernel with textures records `EIATTR_BINDLESS_TEXTURE_BANK` (and on sm_90
/// `EIATTR_BINDLESS_SURFACE_BANK`) in its `.nv.info.<k>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BindlessBankAttrs {
    /// The texture bank only, after `EIATTR_MAXREG_COUNT`.
    TextureBeforeBarriers,
    /// Texture and surface banks, after the parameter attributes.
    TextureAndSurfaceAfterParams,
}

/// ptxas 13.0.88's instruction-form choices for an SM with code generation. Each was read
/// from ptxas's code for the PTX named; `db/tests/codegen.rs` compares kiln's listings with
/// ptxas's on every form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Forms {
    /// Constant bank words load with `LDC`/`LDC.64` (otherwise one `MOV R, c[b][o]` per
    /// word).
    pub ldc: bool,
    /// 32-bit integer `min`/`max` select `VIMNMX` (otherwise `IMNMX`).
    pub vimnmx: bool,
    /// `cvt.rn.f32.{s,u}32` is the fixed-latency `I2FP.F32.{S,U}32` (otherwise `I2F`).
    pub i2fp: bool,
    /// Global `red` is `REDG.E` (otherwise `RED.E`).
    pub redg: bool,
    /// Global memory operands name their descriptor (`desc[UR4][R2.64]`); otherwise the
    /// descriptor register is an implicit use.
    pub desc_operand: bool,
    /// Thread-block clusters: a CTA's shared window starts at `(SR_CgaCtaId << 24) + 0x400`,
    /// generic shared addresses are window addresses in their low word, and fences and
    /// releases beyond the CTA add `CGAERRBAR` after `ERRBAR`.
    pub clusters: bool,
    /// `griddepcontrol` (PTX: sm_90 and later).
    pub griddepcontrol: bool,
    /// A full-warp `WARPSYNC` is `WARPSYNC.ALL` (otherwise `WARPSYNC 0xffffffff`).
    pub warpsync_all: bool,
    /// `LEPC Rd, target` gives a return address directly (otherwise `LEPC` gives its own
    /// address and the distance is added).
    pub lepc_target: bool,
    /// `fma.rn.f16x2` is `HFMA2` (otherwise `HFMA2.MMA`).
    pub hfma2_plain: bool,
    /// `cvt.rn.f16x2.f32`/`.bf16x2.f32` name their source type: `F2FP.F16.F32.PACK_AB`,
    /// `F2FP.BF16.F32.PACK_AB` (otherwise `F2FP.PACK_AB`, `F2FP.BF16.PACK_AB`).
    pub f2fp_source_type: bool,
    /// `add`/`sub`/`mul.bf16x2` (PTX: sm_90 and later; ptxas refuses them for sm_80).
    pub bf16x2_arith: bool,
    /// Texture instructions take the texture header from a uniform register pair (`ULDC`,
    /// `UMOV`), with the coordinates in the A group and the rest in B (otherwise the header
    /// is bound and the values are split evenly).
    pub tex_uniform_header: bool,
    /// `DADD`/`DMUL`/`DFMA`/`DSETP` are fixed-latency (ptxas's sm_90 schedules; scoreboarded
    /// on sm_80).
    pub fp64_fixed_latency: bool,
    /// A non-coherent load's `.L2::256B` prefetch is `LTC128B` (ptxas 13.0.88 on sm_80;
    /// otherwise `LTC256B`, as for every coherent load).
    pub nc_prefetch_128: bool,
    /// `%nwarpid` reads `SR_VIRTCFG` (bits 8..15); otherwise it is the constant 64.
    pub nwarpid_virtcfg: bool,
    /// `barrier.sync` without `.aligned` is `BAR.SYNC.DEFER_BLOCKING` like `bar.sync`
    /// (otherwise plain `BAR.SYNC`).
    pub barrier_sync_deferred: bool,
    /// Vector atomic adds (`atom.global.v4.f32.add`; PTX: sm_90 and later).
    pub vector_atomics: bool,
    /// `elect.sync` (`ELECT`; PTX: sm_90 and later).
    pub elect: bool,
    /// Three never-executed `@!PT LDS RZ, [RZ]` precede an `LDGSTS` (`cp.async`) unless the
    /// block's previous memory instruction is one (ptxas 13.0.88 on sm_86, sm_89 and sm_90,
    /// not on sm_80: `test-data/codegen/cp_async.ptx`).
    pub ldgsts_lds_guard: bool,
    /// `mma.m8n8k4.f64` is `DMMA.8x8x4` (otherwise `DMMA.884`; ptxas 13.0.88 on sm_90).
    pub dmma_8x8x4: bool,
    /// Global and generic accesses read a memory descriptor that the kernel loads once
    /// (`ULDC.64 UR4, c[0x0][0x118]`); sm_75 has none.
    pub memory_descriptor: bool,
    /// A 64-bit address register prints with `.64` (`[R2.64]`); otherwise bare (`[R2]`: on
    /// sm_75 the instruction's `.E` alone says the address is 64-bit).
    pub wide_address_suffix: bool,
    /// Weak global and generic accesses name their scope `.SYS` (`LDG.E.SYS`,
    /// `STG.E.U8.SYS`, `LDG.E.CONSTANT.SYS`, `LDG.E.NA.SYS`: ptxas 13.0.88 on sm_75).
    pub weak_access_sys: bool,
    /// A `.cta`-scoped strong access or atomic is `.STRONG.CTA` (sm_75); otherwise
    /// `.STRONG.SM`.
    pub strong_cta: bool,
    /// Shared-memory loads are `LDS.U` (`LDS.U.64`, `LDS.U.U8`; ptxas on sm_75).
    pub lds_u: bool,
    /// `bar.sync`/`bar.red` are `BAR.SYNC.DEFER_BLOCKING`/`BAR.RED.*.DEFER_BLOCKING`;
    /// otherwise plain `BAR.SYNC`/`BAR.RED.*` (ptxas on sm_75).
    pub bar_defer_blocking: bool,
    /// Tensor-core instructions (`mma.sync`, `ldmatrix`) are generated. sm_75's `HMMA` and
    /// `IMMA` are variable-latency (`crates/hazard/tables/sm_75.txt`), which kiln's scheduler
    /// does not model: kiln refuses them there.
    pub tensor_cores: bool,
    /// Every `BSSY Bn` follows a `BMOV.32.CLEAR RZ, Bn` (ptxas 13.0.88 on sm_75: 127 of the
    /// 128 `BSSY`s in its code for `test-data/codegen/*.ptx`, in 152 corpus files; never on
    /// sm_80 and later).
    pub bssy_clears_barrier: bool,
    /// `nanosleep` is `NANOSLEEP.WARP` (ptxas 13.0.88 on sm_75; plain `NANOSLEEP` on sm_80
    /// and later).
    pub nanosleep_warp: bool,
    /// `mbarrier` objects are driven by the `SYNCS` unit: `SYNCS.EXCH.64` initialises one,
    /// `SYNCS.ARRIVE.TRANS64.*` arrives and counts transaction bytes, `SYNCS.PHASECHK.TRANS64`
    /// tests a phase (ptxas 13.0.88 on sm_90; `docs/arch/codegen.md`, "mbarrier").
    pub mbarrier_syncs: bool,
    /// `R2UR` is fixed-latency (`crates/hazard/tables/sm_90.txt`: `class R2UR fixed`; a
    /// scoreboarded `class R2UR variable` on sm_75, sm_80, sm_86 and sm_89).
    pub r2ur_fixed_latency: bool,
}

const BEFORE_SM90_DRIVER: DriverWords = DriverWords {
    global_desc: 0x118,
    envreg0: 0x88,
    const_window: 0x50,
    reserved_smem_end: 0x120,
    reserved_smem_offset1: 0x124,
    cluster_words: false,
};

const BEFORE_SM90_CUBIN: CubinLayout = CubinLayout {
    compat_section: false,
    reserved_smem_section: false,
    bindless_bank_attrs: BindlessBankAttrs::TextureBeforeBarriers,
    elf_abi_version: 4,
    reports_cmem0: true,
    line_start_advance: true,
    sw_war: None,
};

const SM100_CUBIN: CubinLayout = CubinLayout {
    compat_section: true,
    reserved_smem_section: true,
    bindless_bank_attrs: BindlessBankAttrs::TextureAndSurfaceAfterParams,
    elf_abi_version: 2,
    reports_cmem0: false,
    line_start_advance: false,
    sw_war: None,
};

/// sm_80's forms (ptxas 13.0.88's sm_80 code).
const SM80_FORMS: Forms = Forms {
    ldc: false,
    vimnmx: false,
    i2fp: false,
    redg: false,
    desc_operand: false,
    clusters: false,
    griddepcontrol: false,
    warpsync_all: false,
    lepc_target: false,
    hfma2_plain: false,
    f2fp_source_type: false,
    bf16x2_arith: false,
    tex_uniform_header: false,
    fp64_fixed_latency: false,
    nc_prefetch_128: true,
    nwarpid_virtcfg: false,
    barrier_sync_deferred: false,
    vector_atomics: false,
    elect: false,
    ldgsts_lds_guard: false,
    dmma_8x8x4: false,
    memory_descriptor: true,
    wide_address_suffix: true,
    weak_access_sys: false,
    strong_cta: false,
    lds_u: false,
    bar_defer_blocking: true,
    tensor_cores: true,
    bssy_clears_barrier: false,
    nanosleep_warp: false,
    mbarrier_syncs: false,
    r2ur_fixed_latency: false,
};

/// sm_75 (TU10x) differs from sm_80 in the spelling of memory and barrier instructions
/// (ptxas 13.0.88's sm_75 code for `test-data/codegen/*.ptx` and the corpus, `cargo xtask
/// sm-forms --base sm_80 --arch sm_75`): no memory descriptor, 64-bit addresses without
/// `.64`, weak accesses `.SYS`, `.STRONG.CTA` for `.STRONG.SM`, `LDS.U`, `BAR.SYNC` without
/// `.DEFER_BLOCKING`, `BMOV.32.CLEAR` before `BSSY`; and `fma.rn.f16x2` is plain `HFMA2`, as on
/// sm_86 (sm_75's table has no `HFMA2.MMA`). The PTX features of sm_80 (`cp.async`, `redux.sync`, bf16, ...) are
/// refused by the semantic checker for `.target sm_75`.
const SM75_FORMS: Forms = Forms {
    memory_descriptor: false,
    wide_address_suffix: false,
    weak_access_sys: true,
    strong_cta: true,
    lds_u: true,
    bar_defer_blocking: false,
    tensor_cores: false,
    bssy_clears_barrier: true,
    nanosleep_warp: true,
    hfma2_plain: true,
    ..SM80_FORMS
};

/// sm_86 (GA10x) differs from sm_80 where ptxas 13.0.88's sm_86 code does: `cvt.rn.f32.{s,u}32`
/// is `I2FP.F32.{S,U}32` and `fma.rn.f16x2` is plain `HFMA2` (ptxas writes no `HFMA2.MMA`
/// for sm_86), found by comparing the mnemonics of ptxas's sm_80 and sm_86 code for the
/// corpus (`cargo xtask sm-forms`); and a non-coherent load's `.L2::256B` prefetch is
/// `LTC256B` as on sm_90 (ptxas's code for `test-data/codegen/cache_hints.ptx`). The hazard
/// tables (`crates/hazard/tables/sm_86.txt`) give every other instruction the same latency
/// class as on sm_80.
const SM86_FORMS: Forms = Forms {
    i2fp: true,
    ldgsts_lds_guard: true,
    hfma2_plain: true,
    nc_prefetch_128: false,
    ..SM80_FORMS
};

/// sm_89 (AD10x): sm_86's forms, and `cvt.rn.f16x2.f32` names its source type
/// (`F2FP.F16.F32.PACK_AB`) as on sm_90.
const SM89_FORMS: Forms = Forms {
    f2fp_source_type: true,
    ..SM86_FORMS
};

const fn before_sm90(number: u16, codegen: Option<Forms>) -> Profile {
    Profile {
        number,
        param_base: 0x160,
        driver: Some(BEFORE_SM90_DRIVER),
        shared_reserve: SharedReserve::Last,
        cubin: BEFORE_SM90_CUBIN,
        uniform_register_bits: 6,
        codegen,
    }
}

/// The SMs kiln knows: those with SASS tables (`crates/sass/tables`).
static PROFILES: [Profile; 7] = [
    Profile {
        cubin: CubinLayout {
            sw_war: Some(1),
            ..BEFORE_SM90_CUBIN
        },
        ..before_sm90(75, Some(SM75_FORMS))
    },
    before_sm90(80, Some(SM80_FORMS)),
    before_sm90(86, Some(SM86_FORMS)),
    before_sm90(89, Some(SM89_FORMS)),
    Profile {
        number: 90,
        param_base: 0x210,
        driver: Some(DriverWords {
            global_desc: 0x208,
            envreg0: 0x40,
            const_window: 0xd0,
            reserved_smem_end: 0x68,
            reserved_smem_offset1: 0x6c,
            cluster_words: true,
        }),
        shared_reserve: SharedReserve::First,
        cubin: CubinLayout {
            elf_abi_version: 4,
            ..SM100_CUBIN
        },
        uniform_register_bits: 6,
        codegen: Some(Forms {
            ldc: true,
            vimnmx: true,
            i2fp: true,
            redg: true,
            desc_operand: true,
            clusters: true,
            griddepcontrol: true,
            warpsync_all: true,
            lepc_target: true,
            hfma2_plain: true,
            f2fp_source_type: true,
            bf16x2_arith: true,
            tex_uniform_header: true,
            fp64_fixed_latency: true,
            nc_prefetch_128: false,
            nwarpid_virtcfg: true,
            barrier_sync_deferred: true,
            vector_atomics: true,
            elect: true,
            ldgsts_lds_guard: true,
            dmma_8x8x4: true,
            mbarrier_syncs: true,
            r2ur_fixed_latency: true,
            // sm_80's memory, barrier and convergence spelling.
            ..SM80_FORMS
        }),
    },
    Profile {
        number: 100,
        param_base: 0x380,
        driver: None,
        shared_reserve: SharedReserve::First,
        cubin: SM100_CUBIN,
        uniform_register_bits: 8,
        codegen: None,
    },
    Profile {
        number: 120,
        param_base: 0x380,
        driver: None,
        shared_reserve: SharedReserve::First,
        cubin: SM100_CUBIN,
        uniform_register_bits: 8,
        codegen: None,
    },
];

impl Profile {
    /// The profile of `sm_<number>` (and its `a`/`f` variants), if kiln knows the SM.
    pub fn of(number: u32) -> Option<&'static Profile> {
        PROFILES.iter().find(|p| u32::from(p.number) == number)
    }

    /// Every SM kiln knows, oldest first.
    pub fn all() -> &'static [Profile] {
        &PROFILES
    }

    /// Whether kiln generates code for the SM.
    pub fn has_codegen(&self) -> bool {
        self.codegen.is_some()
    }

    /// The SMs kiln generates code for, as a list for messages (`sm_80, sm_90`).
    pub fn codegen_names() -> String {
        let names: Vec<String> = PROFILES
            .iter()
            .filter(|p| p.has_codegen())
            .map(Profile::name)
            .collect();
        names.join(", ")
    }

    /// The SM's name (`sm_90`).
    pub fn name(&self) -> String {
        format!("sm_{}", self.number)
    }

    /// The SM's occupancy limits (`data/occupancy.tsv`): registers, warps, blocks and shared
    /// memory per SM, and CUDA's occupancy function over them.
    pub fn occupancy_limits(&self) -> &'static OccupancyLimits {
        OccupancyLimits::of(u32::from(self.number))
            .expect("data/occupancy.tsv has a column for every profile (tested)")
    }

    /// Bytes of the reserved block at the start of the shared window (0 when it lies after
    /// the user's shared memory).
    pub fn reserved_shared_first(&self) -> u32 {
        match self.shared_reserve {
            SharedReserve::Last => 0,
            SharedReserve::First => RESERVED_SHARED_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_unique_and_sorted() {
        let numbers: Vec<u16> = Profile::all().iter().map(|p| p.number).collect();
        assert_eq!(numbers, [75, 80, 86, 89, 90, 100, 120]);
        assert_eq!(Profile::of(90).map(|p| p.param_base), Some(0x210));
        assert!(Profile::of(52).is_none());
    }

    #[test]
    fn code_generation_is_for_turing_ampere_ada_and_hopper() {
        let with: Vec<u16> = Profile::all()
            .iter()
            .filter(|p| p.has_codegen())
            .map(|p| p.number)
            .collect();
        assert_eq!(with, [75, 80, 86, 89, 90]);
    }
}
