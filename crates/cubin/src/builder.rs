//! Building cubins from scratch (for the code generator).
//!
//! [`Builder`] collects kernels, device functions and variables and produces a [`Cubin`] laid
//! out with the same writer rule as read cubins ([`crate::write`]). The section set and order
//! follow what ptxas 13.0.88 writes for whole-program cubins:
//!
//! `.shstrtab .strtab .symtab .debug_frame .note.nv.tkinfo .note.nv.cuinfo .nv.info [.nv.compat]
//! .nv.info.<k>... .nv.callgraph .rela.text.<f>... .rela.debug_frame [.nv.constant3] .text.<f>...
//! [.nv.global.init] [.nv.global] .nv.shared.<k>... .nv.constant0.<k>...`
//!
//! Not modelled (ptxas writes them, the driver does not need them for a kernel without
//! debug info): the Mercury
//! (`.nv.merc.*`, `.nv.capmerc.*`) sections of sm_100+.

use crate::eiattr::{AttrValue, Format, KparamInfo, Record, code};
use crate::model::*;
use target::{BindlessBankAttrs, Profile};

/// kiln's version, written into `.note.nv.tkinfo`.
pub const KILN_VERSION: &str = env!("CARGO_PKG_VERSION");

/// ELF relocation type `R_CUDA_64` (a 64-bit absolute address; `cuobjdump -elf` names type 2
/// so).
pub const R_CUDA_64: u32 = 2;

/// ELF relocation type `R_CUDA_TEX_HEADER_INDEX` (type 6 in ptxas 13.0.88's cubins, as
/// `cuobjdump -elf` names it): the driver writes a bound texture reference's header index
/// into the 32-bit word.
pub const R_CUDA_TEX_HEADER_INDEX: u32 = 6;

/// `STT_CUDA_TEXTURE`: the ELF symbol type of a texture reference in ptxas's cubins.
pub const STT_CUDA_TEXTURE: u8 = 10;

/// A kernel parameter: size and alignment in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub size: u32,
    pub align: u32,
}

/// A relocation in a code section, against a symbol by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeReloc {
    pub offset: u64,
    pub symbol: String,
    /// The `R_CUDA_*` type number.
    pub rtype: u32,
    pub addend: i64,
}

/// A kernel entry (`.entry`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kernel {
    pub name: String,
    /// SASS bytes (a multiple of 16 bytes on sm_70+).
    pub code: Vec<u8>,
    pub params: Vec<Param>,
    pub registers: u32,
    /// Static shared memory in bytes (`.nv.shared.<k>`).
    pub shared_size: u64,
    /// Bytes of `.local` variables declared in the kernel (`.nv.local.<k>`); spills and the
    /// call stack are described by `frame_size`, not by this section.
    pub local_size: u64,
    /// Per-thread local frame in bytes (EIATTR_FRAME_SIZE).
    pub frame_size: u32,
    /// Byte offsets of EXIT instructions.
    pub exit_offsets: Vec<u32>,
    /// Byte offsets of `S2R SR_CTAID.*` instructions.
    pub s2rctaid_offsets: Vec<u32>,
    pub max_threads: Option<[u32; 3]>,
    pub reqntid: Option<[u32; 3]>,
    pub relocs: Vec<CodeReloc>,
    /// Named barriers used (`EIATTR_NUM_BARRIERS`, written after MAXREG_COUNT as ptxas does
    /// when non-zero).
    pub num_barriers: u8,
    /// The kernel reads a `%reserved_smem_offset_*` register: `EIATTR_RESERVED_SMEM_USED`
    /// (right after the KPARAM_INFO records, as ptxas places it on sm_80 and sm_90).
    pub reserved_smem_used: bool,
    /// sm_90+: the reserved-shared-memory symbols ptxas resolves in this kernel's code
    /// (`%reserved_smem_offset_0`/`_begin` become `MOV R, 0x0`, `_cap` `MOV R, 0x400`).
    /// ptxas then leaves an empty `.rela.text.<k>` and blanks each resolved symbol into a null
    /// local symbol; the builder writes the same (see [`ReservedSymbol`]).
    pub reserved_smem_resolved: Vec<ReservedSymbol>,
    /// The code traps (`BPT.TRAP`): `EIATTR_CRS_STACK_SIZE 0` right after EXIT_INSTR_OFFSETS.
    /// ptxas 13.0.88 (sm_80, sm_90) writes it for a kernel with a predicated `trap` and not
    /// for one whose `trap` sits alone in a block (test-data/codegen/trap.ptx); kiln writes
    /// it for any trap (a zero-sized call-return stack: no effect on the launch).
    pub traps: bool,
    /// System functions the kernel calls (names in [`Builder::extern_functions`]):
    /// `EIATTR_EXTERNS` and `.nv.callgraph` edges, as ptxas writes them for `vprintf`.
    pub externs: Vec<String>,
    /// Byte offsets of its system calls (`CALL.ABS.NOINC`): `EIATTR_SYSCALL_OFFSETS`, and
    /// `EIATTR_CRS_STACK_SIZE 0` as ptxas writes for such kernels.
    pub syscall_offsets: Vec<u32>,
    /// Bound texture references the kernel fetches through (names in
    /// [`Builder::texrefs`]) and the byte offsets of their words in `.nv.constant0.<k>`
    /// (after the parameters): ptxas relocates each word against the reference's symbol
    /// (`R_CUDA_TEX_HEADER_INDEX`, the driver writes the texture header index there) and marks
    /// the kernel with `EIATTR_BINDLESS_TEXTURE_BANK` (and, on sm_90,
    /// `EIATTR_BINDLESS_SURFACE_BANK`).
    pub texture_slots: Vec<(String, u32)>,
    /// `.debug_line` rows (CUDA source lines), empty without line tables.
    pub source_lines: Vec<crate::lines::Row>,
    /// `.nv_debug_line_sass` rows (lines of `.nv_debug_ptx_txt`, file 0).
    pub ptx_lines: Vec<crate::lines::Row>,
}

/// A link-time symbol ptxas uses for a `%reserved_smem_offset_*` register on sm_90+, resolved
/// (and blanked) within a whole-program cubin. Found by compiling kernels reading each register
/// with ptxas 13.0.88 and reading `cuobjdump -elf` and the string table: the blanked names'
/// lengths are those of `.nv.reservedSmem.offset0`, `.nv.reservedSmem.begin` and
/// `.nv.reservedSmem.cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReservedSymbol {
    /// `.nv.reservedSmem.offset0` (`%reserved_smem_offset_0`): the undefined weak symbol ptxas
    /// declares in every sm_90 cubin becomes a null local symbol (`other` = 1) in place.
    Offset0,
    /// `.nv.reservedSmem.begin` (`%reserved_smem_offset_begin`): a null local symbol after the
    /// section symbol of the first kernel that uses it.
    Begin,
    /// `.nv.reservedSmem.cap` (`%reserved_smem_offset_cap`, and the 0x400 base of the user's
    /// shared variables, which ptxas links through it in every kernel addressing shared
    /// memory): as `Begin`.
    Cap,
}

/// A device function (`.func`) in its own code section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub code: Vec<u8>,
    pub registers: u32,
    pub frame_size: u32,
    pub relocs: Vec<CodeReloc>,
}

/// A global-space variable: zero-initialized (`.nv.global`) or with an initializer
/// (`.nv.global.init`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Global {
    pub name: String,
    pub size: u64,
    pub align: u64,
    pub init: Option<Vec<u8>>,
}

/// A constant-space variable in `.nv.constant3` (bank 3, as ptxas places `.const` data).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    pub name: String,
    pub align: u64,
    pub bytes: Vec<u8>,
}

/// Builder errors (inconsistent input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for BuildError {}

/// Collects a program and builds a cubin.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    pub sm: u32,
    /// `sm_XXa` (arch-specific) target.
    pub accelerated: bool,
    pub kernels: Vec<Kernel>,
    pub functions: Vec<Function>,
    pub globals: Vec<Global>,
    pub constants: Vec<Constant>,
    /// Variables whose 64-bit addresses fill `.nv.constant4` (8 bytes each, in this order,
    /// through `R_CUDA_64` relocations): the table code reads global addresses from
    /// (`LDC.64 R, c[0x4][8 * slot]`), as ptxas does.
    pub address_table: Vec<String>,
    /// Functions the driver links in (`vprintf`, `__assertfail`): undefined global function
    /// symbols, which address-table entries may name.
    pub extern_functions: Vec<String>,
    /// Texture references (`.global .texref`) of the module: undefined global symbols of
    /// type `STT_CUDA_TEXTURE`, after every other symbol, in declaration order (ptxas's
    /// symbol table).
    pub texrefs: Vec<String>,
    /// Text for the tkinfo note's command-line field.
    pub command_line: String,
    /// Line tables (the PTX had `.loc`/`.file`): `.debug_line`, `.nv_debug_line_sass` and
    /// `.nv_debug_ptx_txt`, with each kernel's rows in [`Kernel::source_lines`] and
    /// [`Kernel::ptx_lines`].
    pub line_tables: Option<LineTables>,
}

/// The module-level part of the line tables ([`crate::lines`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineTables {
    /// `.debug_line`'s include directories and files (the PTX's `.file` directives).
    pub include_dirs: Vec<Vec<u8>>,
    pub files: Vec<crate::lines::LineFile>,
    /// Some `.loc` names an inlined function (`crate::lines::LineProgram::inline_names`).
    pub inline_names: bool,
    /// `.nv_debug_ptx_txt`: the PTX text the `.nv_debug_line_sass` lines count.
    pub ptx_text: Vec<u8>,
}

struct Sec {
    name: String,
    sh_type: u32,
    flags: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
    data: SectionData,
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 { v } else { v.div_ceil(a) * a }
}

fn sval(code: u8, value: AttrValue) -> Record {
    Record::from_value(code, Format::Sval, &value)
}

fn hval(code: u8, v: u16) -> Record {
    Record::from_value(code, Format::Hval, &AttrValue::Half(v))
}

fn bval(code: u8, v: u8) -> Record {
    Record::from_value(code, Format::Bval, &AttrValue::Half(u16::from(v)))
}

impl Builder {
    pub fn new(sm: u32) -> Builder {
        Builder {
            sm,
            ..Builder::default()
        }
    }

    /// Builds the cubin.
    pub fn build(&self) -> Result<Cubin, BuildError> {
        let profile = Profile::of(self.sm)
            .ok_or_else(|| BuildError(format!("unsupported: cubins for sm_{}", self.sm)))?;
        let layout = profile.cubin;
        let mut names = std::collections::HashSet::new();
        for n in self
            .kernels
            .iter()
            .map(|k| &k.name)
            .chain(self.functions.iter().map(|f| &f.name))
            .chain(self.globals.iter().map(|g| &g.name))
            .chain(self.constants.iter().map(|c| &c.name))
            .chain(self.extern_functions.iter())
        {
            if n.is_empty() || n.contains('\0') {
                return Err(BuildError(format!("invalid symbol name {n:?}")));
            }
            if !names.insert(n.clone()) {
                return Err(BuildError(format!("symbol `{n}` defined twice")));
            }
        }
        // Section list (index 0 is the null section).
        let mut secs: Vec<Sec> = Vec::new();
        let push = |secs: &mut Vec<Sec>, s: Sec| -> u32 {
            secs.push(s);
            secs.len() as u32
        };
        let plain = |name: String, sh_type: u32, flags: u64, align: u64, data: SectionData| Sec {
            name,
            sh_type,
            flags,
            link: 0,
            info: 0,
            align,
            entsize: 0,
            data,
        };
        let shstrtab = push(
            &mut secs,
            plain(".shstrtab".into(), sht::STRTAB, 0, 1, SectionData::Null),
        );
        let strtab = push(
            &mut secs,
            plain(".strtab".into(), sht::STRTAB, 0, 1, SectionData::Null),
        );
        let symtab = push(
            &mut secs,
            plain(".symtab".into(), sht::SYMTAB, 0, 8, SectionData::Null),
        );
        // cuobjdump needs `.debug_frame` (it rejects sm_90+ cubins without one and reads no
        // toolkit version from older ones); the contents are filled in below.
        let debug_frame = push(
            &mut secs,
            plain(
                ".debug_frame".into(),
                sht::PROGBITS,
                0,
                1,
                SectionData::Bytes(Vec::new()),
            ),
        );
        // Line tables after `.debug_frame`, as ptxas orders them; filled in below.
        let line_secs = self.line_tables.as_ref().map(|_| {
            [".debug_line", ".nv_debug_line_sass", ".nv_debug_ptx_txt"].map(|name| {
                push(
                    &mut secs,
                    plain(
                        name.into(),
                        sht::PROGBITS,
                        0,
                        1,
                        SectionData::Bytes(Vec::new()),
                    ),
                )
            })
        });
        let tkinfo = push(
            &mut secs,
            plain(
                ".note.nv.tkinfo".into(),
                sht::NOTE,
                0x200_0000,
                4,
                SectionData::Notes(vec![self.tkinfo_note()]),
            ),
        );
        let mut cuinfo_sec = plain(
            ".note.nv.cuinfo".into(),
            sht::NOTE,
            0x100_0000,
            4,
            SectionData::Notes(vec![self.cuinfo_note()]),
        );
        cuinfo_sec.link = tkinfo;
        let cuinfo = push(&mut secs, cuinfo_sec);
        let mut info_sec = plain(".nv.info".into(), sht::CUDA_INFO, 0, 4, SectionData::Null);
        info_sec.link = symtab;
        let nvinfo = push(&mut secs, info_sec);
        if layout.compat_section {
            let compat = push(
                &mut secs,
                plain(
                    ".nv.compat".into(),
                    sht::CUDA_COMPAT,
                    0,
                    4,
                    SectionData::Attributes(self.compat_records()),
                ),
            );
            // ptxas links `.note.nv.cuinfo` to `.nv.compat` (sh_info + SHF_INFO_LINK) on
            // sm_90+; cuobjdump rejects sm_90+ cubins without that link.
            let cu = &mut secs[cuinfo as usize - 1];
            cu.info = compat;
            cu.flags |= shf::INFO_LINK;
        }
        let kinfo: Vec<u32> = self
            .kernels
            .iter()
            .map(|k| {
                let mut s = plain(
                    format!(".nv.info.{}", k.name),
                    sht::CUDA_INFO,
                    shf::INFO_LINK,
                    4,
                    SectionData::Null,
                );
                s.link = symtab;
                push(&mut secs, s)
            })
            .collect();
        let mut cg = plain(
            ".nv.callgraph".into(),
            sht::CUDA_CALLGRAPH,
            0,
            4,
            SectionData::Bytes(Vec::new()),
        );
        cg.link = symtab;
        cg.entsize = 8;
        let callgraph = push(&mut secs, cg);
        // Code units: kernels then functions.
        struct Unit<'a> {
            name: &'a str,
            code: &'a [u8],
            relocs: &'a [CodeReloc],
            /// sm_90+ reserved-smem symbols resolved in this unit (ptxas leaves an empty
            /// `.rela.text.<k>` behind them).
            resolved: &'a [ReservedSymbol],
        }
        let units: Vec<Unit<'_>> = self
            .kernels
            .iter()
            .map(|k| Unit {
                name: &k.name,
                code: &k.code,
                relocs: &k.relocs,
                resolved: if layout.reserved_smem_section {
                    &k.reserved_smem_resolved
                } else {
                    &[]
                },
            })
            .chain(self.functions.iter().map(|f| Unit {
                name: &f.name,
                code: &f.code,
                relocs: &f.relocs,
                resolved: &[],
            }))
            .collect();
        // A relocation section (with addends) over the symbol table; its data and target
        // section (`info`) are filled in once the symbols exist.
        let rela_section = |name: String| {
            let mut s = plain(name, sht::RELA, shf::INFO_LINK, 8, SectionData::Null);
            s.link = symtab;
            s.entsize = 24;
            s
        };
        let rela: Vec<Option<u32>> = units
            .iter()
            .map(|u| {
                (!u.relocs.is_empty() || !u.resolved.is_empty())
                    .then(|| push(&mut secs, rela_section(format!(".rela.text.{}", u.name))))
            })
            .collect();
        // Call frame information: one FDE per code unit, its start relocated against the
        // function symbol (R_CUDA_64 = 2) as ptxas does.
        let mut frame_sec = rela_section(".rela.debug_frame".into());
        frame_sec.info = debug_frame;
        let rela_const4 = (!self.address_table.is_empty())
            .then(|| push(&mut secs, rela_section(".rela.nv.constant4".into())));
        let rela_const0: Vec<Option<u32>> = self
            .kernels
            .iter()
            .map(|k| {
                (!k.texture_slots.is_empty()).then(|| {
                    push(
                        &mut secs,
                        rela_section(format!(".rela.nv.constant0.{}", k.name)),
                    )
                })
            })
            .collect();
        let rela_lines = line_secs.map(|[debug_line, sass_line, _]| {
            [
                (".rela.debug_line", debug_line),
                (".rela.nv_debug_line_sass", sass_line),
            ]
            .map(|(name, of)| {
                let mut s = rela_section(name.into());
                s.info = of;
                push(&mut secs, s)
            })
        });
        let rela_frame = push(&mut secs, frame_sec);
        let const4 = (!self.address_table.is_empty()).then(|| {
            push(
                &mut secs,
                plain(
                    ".nv.constant4".into(),
                    sht::PROGBITS,
                    shf::ALLOC,
                    8,
                    SectionData::Bytes(vec![0; 8 * self.address_table.len()]),
                ),
            )
        });
        let const_offsets = constant_offsets(&self.constants);
        let mut const3_bytes = Vec::new();
        for (c, &off) in self.constants.iter().zip(&const_offsets) {
            const3_bytes.resize(off as usize, 0);
            const3_bytes.extend_from_slice(&c.bytes);
        }
        let const3_align = self
            .constants
            .iter()
            .map(|c| c.align)
            .max()
            .unwrap_or(1)
            .max(4);
        let const3 = (!self.constants.is_empty()).then(|| {
            push(
                &mut secs,
                plain(
                    ".nv.constant3".into(),
                    sht::PROGBITS,
                    shf::ALLOC,
                    const3_align,
                    SectionData::Bytes(const3_bytes.clone()),
                ),
            )
        });
        let text: Vec<u32> = units
            .iter()
            .map(|u| {
                let mut s = plain(
                    format!(".text.{}", u.name),
                    sht::PROGBITS,
                    shf::ALLOC | shf::EXECINSTR,
                    128,
                    SectionData::Bytes(u.code.to_vec()),
                );
                s.link = symtab;
                push(&mut secs, s)
            })
            .collect();
        let (mut init_bytes, mut init_offs, mut bss_size, mut bss_offs) =
            (Vec::new(), Vec::new(), 0u64, Vec::new());
        for g in &self.globals {
            match &g.init {
                Some(b) => {
                    let off = align_up(init_bytes.len() as u64, g.align.max(1));
                    init_bytes.resize(off as usize, 0);
                    init_bytes.extend_from_slice(b);
                    init_bytes.resize((off + g.size.max(b.len() as u64)) as usize, 0);
                    init_offs.push(Some(off));
                    bss_offs.push(None);
                }
                None => {
                    let off = align_up(bss_size, g.align.max(1));
                    bss_size = off + g.size;
                    init_offs.push(None);
                    bss_offs.push(Some(off));
                }
            }
        }
        let galign = |init: bool| {
            self.globals
                .iter()
                .filter(|g| g.init.is_some() == init)
                .map(|g| g.align)
                .max()
                .unwrap_or(1)
                .max(1)
        };
        let ginit = init_offs.iter().any(Option::is_some).then(|| {
            push(
                &mut secs,
                plain(
                    ".nv.global.init".into(),
                    sht::PROGBITS,
                    shf::ALLOC | shf::WRITE,
                    galign(true),
                    SectionData::Bytes(init_bytes.clone()),
                ),
            )
        });
        let gbss = bss_offs.iter().any(Option::is_some).then(|| {
            push(
                &mut secs,
                plain(
                    ".nv.global".into(),
                    sht::NOBITS,
                    shf::ALLOC | shf::WRITE,
                    galign(false),
                    SectionData::NoBits { size: bss_size },
                ),
            )
        });
        let shared: Vec<Option<u32>> = self
            .kernels
            .iter()
            .enumerate()
            .map(|(i, k)| {
                (k.shared_size > 0).then(|| {
                    let mut s = plain(
                        format!(".nv.shared.{}", k.name),
                        sht::NOBITS,
                        shf::ALLOC | shf::WRITE | shf::INFO_LINK,
                        16,
                        SectionData::NoBits {
                            size: k.shared_size,
                        },
                    );
                    s.info = text[i];
                    push(&mut secs, s)
                })
            })
            .collect();
        // sm_90+: the reserved shared memory window ptxas always declares (size 0 when the
        // kernel uses none); cuobjdump refuses sm_90+ cubins without it.
        let reserved = layout.reserved_smem_section.then(|| {
            push(
                &mut secs,
                plain(
                    ".nv.shared.reserved.0".into(),
                    sht::NOBITS,
                    shf::ALLOC | shf::WRITE,
                    1,
                    SectionData::NoBits { size: 0 },
                ),
            )
        });
        // `.nv.local.<k>` for kernels with `.local` variables (ptxas places them here, between
        // the shared sections and the parameter banks).
        for (i, k) in self.kernels.iter().enumerate() {
            if k.local_size > 0 {
                let mut s = plain(
                    format!(".nv.local.{}", k.name),
                    sht::NOBITS,
                    shf::ALLOC | shf::WRITE | shf::INFO_LINK,
                    4,
                    SectionData::NoBits { size: k.local_size },
                );
                s.info = text[i];
                push(&mut secs, s);
            }
        }
        let base = profile.param_base;
        let mut param_layouts = Vec::new();
        let const0: Vec<u32> = self
            .kernels
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let (offs, size) = layout_params(&k.params);
                param_layouts.push((offs, size));
                // Texture-reference words follow the parameters.
                let end = k
                    .texture_slots
                    .iter()
                    .map(|(_, at)| at + 4)
                    .fold(base + size, u32::max);
                let mut s = plain(
                    format!(".nv.constant0.{}", k.name),
                    sht::PROGBITS,
                    shf::ALLOC | shf::INFO_LINK,
                    4,
                    SectionData::Bytes(vec![0; end as usize]),
                );
                s.info = text[i];
                push(&mut secs, s)
            })
            .collect();

        // Symbols: null, section symbols, then functions/objects (locals first).
        let mut syms: Vec<(String, u8, u8, u32, u64, u64)> = vec![(String::new(), 0, 0, 0, 0, 0)];
        let section_sym =
            |syms: &mut Vec<(String, u8, u8, u32, u64, u64)>, secs: &Vec<Sec>, idx: u32| {
                syms.push((secs[idx as usize - 1].name.clone(), 0x03, 0, idx, 0, 0));
                syms.len() as u32 - 1
            };
        section_sym(&mut syms, &secs, tkinfo);
        section_sym(&mut syms, &secs, cuinfo);
        // A resolved (blanked) link-time symbol as ptxas leaves it: no name, no binding or
        // type, `other` = 1.
        let blanked = || (String::new(), 0u8, 1u8, 0u32, 0u64, 0u64);
        let resolves = |s: ReservedSymbol| units.iter().any(|u| u.resolved.contains(&s));
        let mut placed: Vec<ReservedSymbol> = Vec::new();
        for (i, &t) in text.iter().enumerate() {
            section_sym(&mut syms, &secs, t);
            if i == 0
                && let Some(r) = reserved
            {
                // As ptxas: an undefined weak object and a weak alias in the window.
                if resolves(ReservedSymbol::Offset0) {
                    syms.push(blanked());
                } else {
                    syms.push((".nv.reservedSmem.offset0".into(), 0x21, 0, 0, 0, 4));
                }
                syms.push((
                    "__nv_reservedSMEM_offset_0_alias".into(),
                    0x20,
                    0xa0,
                    r,
                    0,
                    0,
                ));
            }
            for s in [ReservedSymbol::Begin, ReservedSymbol::Cap] {
                if units[i].resolved.contains(&s) && !placed.contains(&s) {
                    placed.push(s);
                    syms.push(blanked());
                }
            }
        }
        section_sym(&mut syms, &secs, debug_frame);
        for idx in line_secs.into_iter().flatten() {
            section_sym(&mut syms, &secs, idx);
        }
        section_sym(&mut syms, &secs, callgraph);
        for idx in [const4, const3, ginit, gbss].into_iter().flatten() {
            section_sym(&mut syms, &secs, idx);
        }
        let const0_syms: Vec<u32> = const0
            .iter()
            .map(|&c| section_sym(&mut syms, &secs, c))
            .collect();
        let first_global = syms.len() as u32;
        let mut func_sym = Vec::new();
        for (i, k) in self.kernels.iter().enumerate() {
            syms.push((
                k.name.clone(),
                0x12,
                STO_CUDA_ENTRY,
                text[i],
                0,
                k.code.len() as u64,
            ));
            func_sym.push(syms.len() as u32 - 1);
        }
        for (j, f) in self.functions.iter().enumerate() {
            let i = self.kernels.len() + j;
            syms.push((f.name.clone(), 0x12, 0, text[i], 0, f.code.len() as u64));
            func_sym.push(syms.len() as u32 - 1);
        }
        for name in &self.extern_functions {
            syms.push((name.clone(), 0x12, 0, 0, 0, 0));
        }
        for (g, (io, bo)) in self.globals.iter().zip(init_offs.iter().zip(&bss_offs)) {
            let (sec, off) = match (io, bo) {
                (Some(o), _) => (ginit.unwrap_or(0), *o),
                (_, Some(o)) => (gbss.unwrap_or(0), *o),
                _ => continue,
            };
            syms.push((g.name.clone(), 0x11, 0, sec, off, g.size));
        }
        for (c, off) in self.constants.iter().zip(&const_offsets) {
            syms.push((
                c.name.clone(),
                0x11,
                0,
                const3.unwrap_or(0),
                *off,
                c.bytes.len() as u64,
            ));
        }
        for name in &self.texrefs {
            syms.push((name.clone(), 0x10 | STT_CUDA_TEXTURE, 0, 0, 0, 0));
        }
        let sym_index = |name: &str| -> Option<u32> {
            syms.iter()
                .position(|s| !s.0.is_empty() && s.0 == name && s.1 != 0x03)
                .map(|p| p as u32)
        };

        // Relocations.
        for (u, r) in units.iter().zip(&rela) {
            let Some(r) = r else { continue };
            let mut relocs = Vec::new();
            for cr in u.relocs {
                let sym = sym_index(&cr.symbol).ok_or_else(|| {
                    BuildError(format!(
                        "relocation in `{}` against unknown symbol `{}`",
                        u.name, cr.symbol
                    ))
                })?;
                if cr.offset >= u.code.len() as u64 {
                    return Err(BuildError(format!(
                        "relocation offset {:#x} outside `{}`",
                        cr.offset, u.name
                    )));
                }
                relocs.push(Reloc {
                    offset: cr.offset,
                    sym,
                    rtype: cr.rtype,
                    addend: cr.addend,
                });
            }
            secs[*r as usize - 1].data = SectionData::Relocs {
                has_addend: true,
                relocs,
            };
        }
        if let (Some(r), Some(c4)) = (rela_const4, const4) {
            let mut relocs = Vec::new();
            for (slot, name) in self.address_table.iter().enumerate() {
                let sym = sym_index(name)
                    .filter(|&i| syms[i as usize].1 == 0x11 || self.extern_functions.contains(name))
                    .ok_or_else(|| {
                        BuildError(format!("address table entry `{name}` is not a variable"))
                    })?;
                relocs.push(Reloc {
                    offset: 8 * slot as u64,
                    sym,
                    rtype: R_CUDA_64,
                    addend: 0,
                });
            }
            let s = &mut secs[r as usize - 1];
            s.info = c4;
            s.data = SectionData::Relocs {
                has_addend: true,
                relocs,
            };
        }
        for (i, k) in self.kernels.iter().enumerate() {
            let Some(r) = rela_const0[i] else { continue };
            let mut relocs = Vec::new();
            // ptxas lists them from the last word to the first.
            for (name, at) in k.texture_slots.iter().rev() {
                let sym = sym_index(name)
                    .filter(|_| self.texrefs.contains(name))
                    .ok_or_else(|| {
                        BuildError(format!(
                            "`{}` fetches through `{name}`, not a texture reference",
                            k.name
                        ))
                    })?;
                relocs.push(Reloc {
                    offset: u64::from(*at),
                    sym,
                    rtype: R_CUDA_TEX_HEADER_INDEX,
                    addend: 0,
                });
            }
            let s = &mut secs[r as usize - 1];
            s.info = const0[i];
            s.data = SectionData::Relocs {
                has_addend: true,
                relocs,
            };
        }
        for (i, &r) in rela.iter().enumerate() {
            if let Some(r) = r {
                secs[r as usize - 1].info = text[i];
            }
        }
        for (i, &t) in text.iter().enumerate() {
            secs[t as usize - 1].info = func_sym[i];
        }
        let (frame, frame_relocs) = debug_frame_bytes(
            units
                .iter()
                .zip(&func_sym)
                .map(|(u, &sym)| (sym, u.code.len() as u64)),
        );
        secs[debug_frame as usize - 1].data = SectionData::Bytes(frame);
        if let (Some(t), Some(line_secs), Some(rela_lines)) =
            (&self.line_tables, line_secs, rela_lines)
        {
            let source = crate::lines::LineProgram {
                include_dirs: t.include_dirs.clone(),
                files: t.files.clone(),
                inline_names: t.inline_names,
                sequences: Vec::new(),
            };
            let tables = [
                (source, line_secs[0], rela_lines[0], true),
                (Default::default(), line_secs[1], rela_lines[1], false),
            ];
            for (mut program, sec, rela, of_source) in tables {
                let mut syms_of = Vec::new();
                for (k, &sym) in self.kernels.iter().zip(&func_sym) {
                    let rows = if of_source {
                        &k.source_lines
                    } else {
                        &k.ptx_lines
                    };
                    if rows.is_empty() {
                        continue;
                    }
                    program.sequences.push(crate::lines::Sequence {
                        rows: rows.clone(),
                        end: k.code.len() as u64,
                    });
                    syms_of.push(sym);
                }
                let (bytes, offsets) = program.encode();
                secs[sec as usize - 1].data = SectionData::Bytes(bytes);
                secs[rela as usize - 1].data = SectionData::Relocs {
                    has_addend: true,
                    relocs: offsets
                        .into_iter()
                        .zip(syms_of)
                        .map(|(offset, sym)| Reloc {
                            offset,
                            sym,
                            rtype: R_CUDA_64,
                            addend: 0,
                        })
                        .collect(),
                };
            }
            secs[line_secs[2] as usize - 1].data = SectionData::Bytes(t.ptx_text.clone());
        }
        let mut edges = Vec::new();
        for (i, k) in self.kernels.iter().enumerate() {
            for e in &k.externs {
                let callee = sym_index(e)
                    .filter(|_| self.extern_functions.contains(e))
                    .ok_or_else(|| {
                        BuildError(format!("`{}` calls `{e}`, not an extern function", k.name))
                    })?;
                edges.push((func_sym[i], callee));
            }
        }
        secs[callgraph as usize - 1].data = SectionData::Bytes(callgraph_bytes(&edges));
        secs[rela_frame as usize - 1].data = SectionData::Relocs {
            has_addend: true,
            relocs: frame_relocs,
        };
        // EIATTR: global .nv.info.
        let mut global = Vec::new();
        let per_fn = self
            .kernels
            .iter()
            .map(|k| (k.registers, k.frame_size))
            .chain(self.functions.iter().map(|f| (f.registers, f.frame_size)));
        for (i, (regs, frame)) in per_fn.enumerate() {
            let f = func_sym[i];
            global.push(sval(
                code::REGCOUNT,
                AttrValue::PerFunction {
                    function: f,
                    value: regs,
                },
            ));
            global.push(sval(
                code::FRAME_SIZE,
                AttrValue::PerFunction {
                    function: f,
                    value: frame,
                },
            ));
            if i < self.kernels.len() {
                global.push(sval(
                    code::MIN_STACK_SIZE,
                    AttrValue::PerFunction {
                        function: f,
                        value: frame,
                    },
                ));
            }
        }
        secs[nvinfo as usize - 1].data = SectionData::Attributes(global);
        for (i, k) in self.kernels.iter().enumerate() {
            let (offs, size) = &param_layouts[i];
            let mut r = Vec::new();
            if let Some(w) = layout.sw_war {
                r.push(sval(code::SW_WAR, AttrValue::Words(vec![w])));
            }
            r.push(sval(code::CUDA_API_VERSION, AttrValue::Words(vec![130])));
            for (ord, p) in k.params.iter().enumerate().rev() {
                r.push(sval(
                    code::KPARAM_INFO,
                    AttrValue::KparamInfo(KparamInfo {
                        index: 0,
                        ordinal: ord as u16,
                        offset: offs[ord] as u16,
                        log_align: 0,
                        space: 0,
                        cbank: 0x1f,
                        in_smem: false,
                        size: p.size as u16,
                    }),
                ));
            }
            if k.reserved_smem_used {
                r.push(Record::from_value(
                    code::RESERVED_SMEM_USED,
                    Format::Nval,
                    &AttrValue::Flag,
                ));
            }
            r.push(hval(code::MAXREG_COUNT, 0xff));
            let textures = !k.texture_slots.is_empty();
            if textures && layout.bindless_bank_attrs == BindlessBankAttrs::TextureBeforeBarriers {
                r.push(bval(code::BINDLESS_TEXTURE_BANK, 0));
            }
            if k.num_barriers > 0 {
                r.push(bval(code::NUM_BARRIERS, k.num_barriers));
            }
            if !k.externs.is_empty() {
                let ids = k
                    .externs
                    .iter()
                    .filter_map(|e| sym_index(e))
                    .collect::<Vec<u32>>();
                r.push(sval(code::EXTERNS, AttrValue::Words(ids)));
            }
            if let Some(d) = k.max_threads {
                r.push(sval(code::MAX_THREADS, AttrValue::Dim3(d)));
            }
            if let Some(d) = k.reqntid {
                r.push(sval(code::REQNTID, AttrValue::Dim3(d)));
            }
            if !k.s2rctaid_offsets.is_empty() {
                r.push(sval(
                    code::S2RCTAID_INSTR_OFFSETS,
                    AttrValue::Words(k.s2rctaid_offsets.clone()),
                ));
            }
            if !k.syscall_offsets.is_empty() {
                r.push(sval(
                    code::SYSCALL_OFFSETS,
                    AttrValue::Words(k.syscall_offsets.clone()),
                ));
            }
            if !k.exit_offsets.is_empty() {
                r.push(sval(
                    code::EXIT_INSTR_OFFSETS,
                    AttrValue::Words(k.exit_offsets.clone()),
                ));
            }
            if k.traps || !k.syscall_offsets.is_empty() {
                r.push(sval(code::CRS_STACK_SIZE, AttrValue::Words(vec![0])));
            }
            r.push(hval(code::CBANK_PARAM_SIZE, *size as u16));
            r.push(sval(
                code::PARAM_CBANK,
                AttrValue::ParamCbank {
                    symbol: const0_syms[i],
                    offset: base as u16,
                    size: *size as u16,
                },
            ));
            if textures
                && layout.bindless_bank_attrs == BindlessBankAttrs::TextureAndSurfaceAfterParams
            {
                r.push(bval(code::BINDLESS_TEXTURE_BANK, 0));
                r.push(bval(code::BINDLESS_SURFACE_BANK, 0));
            }
            let s = &mut secs[kinfo[i] as usize - 1];
            s.info = text[i];
            s.data = SectionData::Attributes(r);
        }
        let _ = shared;

        // String tables.
        let mut shstr = StringTable::new();
        let mut strtab_t = StringTable::new();
        let mut sections = vec![Section {
            name: String::new(),
            name_offset: 0,
            sh_type: sht::NULL,
            flags: 0,
            addr: 0,
            link: 0,
            info: 0,
            addralign: 0,
            entsize: 0,
            data: SectionData::Null,
            placement: Placement::Packed { pad: 0 },
        }];
        for s in &secs {
            let name_offset = shstr.add(&s.name);
            sections.push(Section {
                name: s.name.clone(),
                name_offset,
                sh_type: s.sh_type,
                flags: s.flags,
                addr: 0,
                link: s.link,
                info: s.info,
                addralign: s.align,
                entsize: s.entsize,
                data: s.data.clone(),
                placement: Placement::Packed { pad: 0 },
            });
        }
        let symbols: Vec<Symbol> = syms
            .iter()
            .map(|(name, info, other, shndx, value, size)| Symbol {
                name: name.clone(),
                name_offset: strtab_t.add(name),
                info: *info,
                other: *other,
                shndx: *shndx as u16,
                value: *value,
                size: *size,
            })
            .collect();
        sections[shstrtab as usize].data = SectionData::Strings(shstr);
        sections[strtab as usize].data = SectionData::Strings(strtab_t);
        sections[symtab as usize].link = strtab;
        sections[symtab as usize].info = first_global;
        sections[symtab as usize].entsize = 24;
        sections[symtab as usize].data = SectionData::Symbols(symbols);

        // The top byte of `e_flags`: ptxas 13.0.88 writes 6, and 9 when the cubin has line
        // tables (0xb with `-g`), on sm_80 and sm_90; cuobjdump refuses a cubin with line
        // tables and 6 ("Invalid ELF").
        let elf_flags_high = if self.line_tables.is_some() { 9 } else { 6 };
        let mut cubin = Cubin {
            header: Header {
                os_abi: ELFOSABI_CUDA,
                abi_version: 8,
                e_type: 2,
                e_machine: EM_CUDA,
                e_version: 1,
                e_entry: 0,
                e_flags: (elf_flags_high << 24) | (self.sm << 8) | layout.elf_abi_version,
                shstrndx: shstrtab as u16,
                phentsize: 56,
            },
            sections,
            program_headers: Vec::new(),
            tables: TablePlacement::Standard,
        };
        cubin.program_headers = program_headers(&cubin);
        Ok(cubin)
    }

    fn tkinfo_note(&self) -> Note {
        let strings = [
            "kiln".to_string(),
            format!("kiln PTX compiler, release 13.0, V{KILN_VERSION}"),
            String::new(),
            self.command_line.clone(),
        ];
        let mut pool = vec![0u8];
        let mut offs = Vec::new();
        for s in &strings {
            offs.push(pool.len() as u32);
            pool.extend_from_slice(s.as_bytes());
            pool.push(0);
        }
        let mut desc = Vec::new();
        for w in [2u32, 0, offs[0], offs[1], offs[2], offs[3]] {
            desc.extend_from_slice(&w.to_le_bytes());
        }
        desc.extend_from_slice(&pool);
        desc.resize(desc.len().div_ceil(4) * 4, 0);
        Note {
            name: b"NVIDIA Corp".to_vec(),
            ntype: 2000,
            desc,
        }
    }

    fn cuinfo_note(&self) -> Note {
        let mut desc = Vec::new();
        desc.extend_from_slice(&2u16.to_le_bytes());
        desc.extend_from_slice(&(self.sm as u16).to_le_bytes());
        desc.extend_from_slice(&130u32.to_le_bytes());
        Note {
            name: b"NVIDIA Corp".to_vec(),
            ntype: 1000,
            desc,
        }
    }

    fn compat_records(&self) -> Vec<Record> {
        vec![
            bval(0x09, u8::from(self.accelerated)),
            bval(0x02, 1),
            bval(0x05, 5),
            Record::from_value(
                0x07,
                Format::Hval,
                &AttrValue::MercuryIsaVersion { major: 1, minor: 1 },
            ),
            bval(0x03, 0),
            bval(0x06, 1),
            sval(0x0b, AttrValue::Words(vec![0, 0])),
        ]
    }
}

/// Parameter offsets (relative to the parameter base) and the block size: each parameter at
/// its alignment, the block size the end of the last one (not rounded: ptxas 13.0.88 reports
/// 5 bytes for `(.u32, .u8)` and 11 for `(.u64, .s8, .u8, .u8)`, checked with cuobjdump).
/// The offsets of constant variables in `.nv.constant3` (bank 3): declaration order, each
/// aligned. Code addresses a `.const` variable at `c[0x3][offset]`.
pub fn constant_offsets(constants: &[Constant]) -> Vec<u64> {
    let mut end = 0u64;
    constants
        .iter()
        .map(|c| {
            let off = align_up(end, c.align.max(1));
            end = off + c.bytes.len() as u64;
            off
        })
        .collect()
}

fn layout_params(params: &[Param]) -> (Vec<u32>, u32) {
    let mut off = 0u32;
    let mut offs = Vec::with_capacity(params.len());
    for p in params {
        let a = p.align.max(1);
        off = off.div_ceil(a) * a;
        offs.push(off);
        off += p.size;
    }
    (offs, off)
}

/// The CIE ptxas 13.0.88 writes at the start of `.debug_frame` (64-bit DWARF, version 3, code
/// alignment 4, data alignment -4, return address register 0xffffffff, initial instructions
/// `DW_CFA_def_cfa R1+0; DW_CFA_same_value R255; DW_CFA_same_value R1`), as decoded by
/// `cuobjdump -elf`.
const PTXAS_CIE: [u8; 48] = [
    0xff, 0xff, 0xff, 0xff, 0x24, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0x03, 0x00, 0x04, 0x7c, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0c, 0x81, 0x80, 0x80, 0x28, 0x00,
    0x08, 0xff, 0x81, 0x80, 0x28, 0x08, 0x81, 0x80, 0x80, 0x28, 0x00, 0x00, 0x00,
];

/// `.debug_frame` with the CIE and one FDE per `(function symbol, code size)` (CFA = R1 + 0
/// for the whole function), and the relocations of the FDEs' start addresses.
fn debug_frame_bytes(units: impl Iterator<Item = (u32, u64)>) -> (Vec<u8>, Vec<Reloc>) {
    let mut out = PTXAS_CIE.to_vec();
    let mut relocs = Vec::new();
    for (sym, size) in units {
        out.extend_from_slice(&[0xff; 4]);
        out.extend_from_slice(&32u64.to_le_bytes()); // length after this field
        out.extend_from_slice(&0u64.to_le_bytes()); // CIE pointer
        relocs.push(Reloc {
            offset: out.len() as u64,
            sym,
            rtype: R_CUDA_64,
            addend: 0,
        });
        out.extend_from_slice(&0u64.to_le_bytes()); // initial location (relocated)
        out.extend_from_slice(&size.to_le_bytes()); // address range
        out.extend_from_slice(&[0x0c, 0x81, 0x80, 0x80, 0x28, 0x00, 0x00, 0x00]); // def_cfa R1+0; nops
    }
    (out, relocs)
}

/// The callgraph ptxas writes for a program without calls: four `(0, -n)` edges.
/// `.nv.callgraph`: ptxas's four `<0, -n>` entries, with the (caller, callee) symbol pairs of
/// calls after the first of them.
fn callgraph_bytes(edges: &[(u32, u32)]) -> Vec<u8> {
    let mut v = Vec::new();
    let mut entry = |a: u32, b: u32| {
        v.extend_from_slice(&a.to_le_bytes());
        v.extend_from_slice(&b.to_le_bytes());
    };
    entry(0, (-1i32) as u32);
    for &(a, b) in edges {
        entry(a, b);
    }
    for n in 2..=4i32 {
        entry(0, (-n) as u32);
    }
    v
}

/// Program headers in ptxas's shape: PHDR and a LOAD of the header table itself, a LOAD of
/// all code sections (R E), one of the NOBITS data (RW) and one of the constant banks (R).
fn program_headers(c: &Cubin) -> Vec<ProgramHeader> {
    let (lay, _) = crate::write::layout(&Cubin {
        program_headers: vec![ProgramHeader {
            p_type: 0,
            flags: 0,
            offset: 0,
            vaddr: 0,
            paddr: 0,
            filesz: 0,
            memsz: 0,
            align: 0,
        }],
        ..c.clone()
    });
    let span = |pred: &dyn Fn(&Section) -> bool| -> Option<(u64, u64, u64)> {
        let mut lo = u64::MAX;
        let mut hi_file = 0u64;
        let mut hi_mem = 0u64;
        for (i, s) in c.sections.iter().enumerate() {
            if i == 0 || !pred(s) {
                continue;
            }
            let o = lay.offsets[i];
            lo = lo.min(o);
            let size = s.size();
            if !is_nobits(s.sh_type) {
                hi_file = hi_file.max(o + size);
            }
            hi_mem = hi_mem.max(o + size);
        }
        (lo != u64::MAX).then(|| (lo, hi_file.saturating_sub(lo), hi_mem - lo))
    };
    let mut ph = Vec::new();
    let n = 5u64;
    let table = ProgramHeader {
        p_type: 6,
        flags: 4,
        offset: lay.phoff,
        vaddr: 0,
        paddr: 0,
        filesz: 56 * n,
        memsz: 56 * n,
        align: 8,
    };
    ph.push(table);
    ph.push(ProgramHeader { p_type: 1, ..table });
    let code = span(&|s| s.flags & shf::EXECINSTR != 0).unwrap_or((0, 0, 0));
    ph.push(ProgramHeader {
        p_type: 1,
        flags: 5,
        offset: code.0,
        vaddr: 0,
        paddr: 0,
        filesz: code.1,
        memsz: code.2,
        align: 8,
    });
    let bss = span(&|s| is_nobits(s.sh_type)).unwrap_or((code.0 + code.2, 0, 0));
    ph.push(ProgramHeader {
        p_type: 1,
        flags: 6,
        offset: bss.0,
        vaddr: 0,
        paddr: 0,
        filesz: 0,
        memsz: bss.2,
        align: 8,
    });
    let cst = span(&|s| {
        s.flags & shf::ALLOC != 0 && s.flags & shf::EXECINSTR == 0 && !is_nobits(s.sh_type)
    })
    .unwrap_or((bss.0, 0, 0));
    ph.push(ProgramHeader {
        p_type: 1,
        flags: 4,
        offset: cst.0,
        vaddr: 0,
        paddr: 0,
        filesz: cst.1,
        memsz: cst.2,
        align: 8,
    });
    ph
}
