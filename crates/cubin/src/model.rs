//! The in-memory model of a cubin: header, sections (in section-header order), symbols,
//! relocations, notes, EIATTR records, program headers and the file layout facts needed to
//! write the same bytes back.

use crate::eiattr::Record;

/// ELF `e_ident[EI_OSABI]` ptxas writes (`0x41`, CUDA; ABI version 8, ptxas 13).
pub const ELFOSABI_CUDA: u8 = 0x41;
/// The OS/ABI byte of CUDA 12.x and earlier toolkits' cubins (`0x33`, ABI version 7; e.g. the
/// ptxas Triton 3.6 bundles). Their `e_flags` hold the SM in bits 0..8 (see [`Header::sm`]).
pub const ELFOSABI_CUDA_V1: u8 = 0x33;
/// `e_machine` for NVIDIA CUDA (190).
pub const EM_CUDA: u16 = 190;

/// Section types.
pub mod sht {
    pub const NULL: u32 = 0;
    pub const PROGBITS: u32 = 1;
    pub const SYMTAB: u32 = 2;
    pub const STRTAB: u32 = 3;
    pub const RELA: u32 = 4;
    pub const NOTE: u32 = 7;
    pub const NOBITS: u32 = 8;
    pub const REL: u32 = 9;
    /// `.nv.info`, `.nv.info.<f>`.
    pub const CUDA_INFO: u32 = 0x7000_0000;
    /// `.nv.callgraph`.
    pub const CUDA_CALLGRAPH: u32 = 0x7000_0001;
    /// `.nv.global` in relocatable objects (no file data).
    pub const CUDA_GLOBAL: u32 = 0x7000_0007;
    /// `.nv.shared.<f>` in relocatable objects (no file data).
    pub const CUDA_SHARED: u32 = 0x7000_000a;
    /// `.nv.rel.action`.
    pub const CUDA_RELOCINFO: u32 = 0x7000_000b;
    /// `.nv.capmerc.text.<f>` (sm_100+).
    pub const CUDA_CAPMERC: u32 = 0x7000_0016;
    /// `.nv.merc.nv.shared.reserved.*` (sm_100+).
    pub const CUDA_RESERVED_SHARED: u32 = 0x7000_0015;
    /// `.nv.merc.rela.*` (sm_100+).
    pub const CUDA_MERC_RELA: u32 = 0x7000_0082;
    /// `.nv.merc.nv.info*` (sm_100+).
    pub const CUDA_MERC_INFO: u32 = 0x7000_0083;
    /// `.nv.merc.symtab` (sm_100+).
    pub const CUDA_MERC_SYMTAB: u32 = 0x7000_0085;
    /// `.nv.compat`.
    pub const CUDA_COMPAT: u32 = 0x7000_0086;
}

/// Whether sections of this type occupy no file bytes: `SHT_NOBITS` and the NVIDIA types
/// that relocatable objects use for the same role (`.nv.global` as CUDA_GLOBAL,
/// `.nv.shared.<f>` as CUDA_SHARED) and `.nv.merc.nv.shared.reserved.*`.
pub fn is_nobits(sh_type: u32) -> bool {
    matches!(
        sh_type,
        sht::NOBITS | sht::CUDA_GLOBAL | sht::CUDA_SHARED | sht::CUDA_RESERVED_SHARED
    )
}

/// Section flags.
pub mod shf {
    pub const WRITE: u64 = 0x1;
    pub const ALLOC: u64 = 0x2;
    pub const EXECINSTR: u64 = 0x4;
    pub const INFO_LINK: u64 = 0x40;
}

/// `st_other` bit marking a kernel entry symbol.
pub const STO_CUDA_ENTRY: u8 = 0x10;

/// The ELF header fields that are not derived from the rest of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `e_ident[EI_OSABI]` (0x41 for ptxas output).
    pub os_abi: u8,
    /// `e_ident[EI_ABIVERSION]` (8 for ptxas 13.0).
    pub abi_version: u8,
    /// `e_type` (2 = ET_EXEC, 1 = ET_REL for `-c`).
    pub e_type: u16,
    pub e_machine: u16,
    pub e_version: u32,
    pub e_entry: u64,
    /// `e_flags`; see [`Header::sm`].
    pub e_flags: u32,
    /// `e_shstrndx`.
    pub shstrndx: u16,
    /// `e_phentsize`: 56 whenever there are program headers; ptxas also writes 56 for
    /// relocatable sm_75/sm_80 objects without any, and 0 for sm_90+ ones.
    pub phentsize: u16,
}

impl Header {
    /// The SM number encoded in `e_flags` bits 8..16 (e.g. 90 for sm_90 and sm_90a; the `a`
    /// variant is recorded in `.nv.compat`'s CUDA_ACCELERATOR_TARGET, see
    /// [`Cubin::arch_name`]).
    /// CUDA 12.x and earlier cubins ([`ELFOSABI_CUDA_V1`]) hold it in bits 0..8 instead (the
    /// virtual SM in bits 16..24: `0x5a0d5a` for sm_90a).
    pub fn sm(&self) -> u32 {
        if self.os_abi == ELFOSABI_CUDA_V1 {
            self.e_flags & 0xff
        } else {
            (self.e_flags >> 8) & 0xff
        }
    }
    /// `e_flags` bits 0..8 (4 for sm_75..sm_90, 2 for sm_100+ in ptxas 13.0 output).
    pub fn flags_low(&self) -> u32 {
        self.e_flags & 0xff
    }
    /// `e_flags` bits 24..32 (6 in ptxas 13.0 output without `-lineinfo`; 9, 10 or 14 with it).
    pub fn flags_high(&self) -> u32 {
        self.e_flags >> 24
    }
}

/// A string table's bytes, with lookup and append.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StringTable {
    pub bytes: Vec<u8>,
}

impl StringTable {
    /// A table holding only the empty string.
    pub fn new() -> StringTable {
        StringTable { bytes: vec![0] }
    }
    /// The NUL-terminated string at `offset` (lossy UTF-8), or `None` out of bounds or
    /// unterminated.
    pub fn get(&self, offset: u32) -> Option<String> {
        let rest = self.bytes.get(offset as usize..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    }
    /// Appends `s` and returns its offset (the empty string is offset 0).
    pub fn add(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            if self.bytes.is_empty() {
                self.bytes.push(0);
            }
            return 0;
        }
        let off = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        off
    }
}

/// A symbol table entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Name (resolved through the linked string table).
    pub name: String,
    /// `st_name`.
    pub name_offset: u32,
    /// `st_info`: binding in the high nibble, type in the low nibble.
    pub info: u8,
    /// `st_other`: visibility in bits 0..2, [`STO_CUDA_ENTRY`] for kernels.
    pub other: u8,
    pub shndx: u16,
    pub value: u64,
    pub size: u64,
}

impl Symbol {
    pub fn bind(&self) -> u8 {
        self.info >> 4
    }
    pub fn kind(&self) -> u8 {
        self.info & 0xf
    }
    pub fn is_entry(&self) -> bool {
        self.other & STO_CUDA_ENTRY != 0
    }
}

/// A relocation (`.rela.*`: with addend; `.rel.*`: addend 0 and `has_addend` false).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reloc {
    pub offset: u64,
    pub sym: u32,
    pub rtype: u32,
    pub addend: i64,
}

/// A relocation of a code section with its symbol resolved ([`Cubin::code_relocs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeReloc {
    /// Offset of the patched instruction in the section.
    pub offset: u64,
    /// The `R_CUDA_*` type number.
    pub rtype: u32,
    /// The symbol's name.
    pub symbol: String,
    /// Symbol value + addend, when the symbol is defined in the patched section itself (a
    /// return address inside the same function).
    pub target_here: Option<u64>,
}

/// An ELF note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The owner name without its NUL (`NVIDIA Corp`).
    pub name: Vec<u8>,
    pub ntype: u32,
    pub desc: Vec<u8>,
}

/// What a section holds, decoded where the kind is understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionData {
    /// Section 0.
    Null,
    /// No file bytes (see [`is_nobits`]: `.nv.shared.*`, `.nv.local.*`, `.nv.global`): a size.
    NoBits { size: u64 },
    /// `SHT_STRTAB`.
    Strings(StringTable),
    /// `SHT_SYMTAB` (also `.nv.merc.symtab`): entries after the null entry are included, the
    /// null entry too (index 0).
    Symbols(Vec<Symbol>),
    /// `SHT_RELA` / `.nv.merc.rela.*` (`has_addend` true) and `SHT_REL` (false).
    Relocs {
        has_addend: bool,
        relocs: Vec<Reloc>,
    },
    /// `.nv.info*` and `.nv.compat`: attribute records.
    Attributes(Vec<Record>),
    /// `SHT_NOTE`.
    Notes(Vec<Note>),
    /// Everything else (code, constant banks, DWARF, callgraph, Mercury streams): bytes.
    Bytes(Vec<u8>),
}

/// Where a section's bytes are in the file relative to ptxas's packing rule (see
/// [`crate::write`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Placed at the packing cursor aligned to `sh_addralign`, plus `pad` zero bytes (ptxas
    /// leaves such gaps after `.shstrtab` and `.strtab`, whose sizes shrink after layout).
    Packed { pad: u64 },
    /// Shares the bytes of an earlier section with identical contents (ptxas does this for
    /// `.nv.merc.*` copies of debug sections); the cursor does not move.
    Alias(u32),
    /// At an explicit file offset that the packing rule does not explain.
    At(u64),
}

/// One section: header fields plus decoded data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    /// `sh_name` (offset in `.shstrtab`).
    pub name_offset: u32,
    pub sh_type: u32,
    pub flags: u64,
    pub addr: u64,
    pub link: u32,
    pub info: u32,
    pub addralign: u64,
    pub entsize: u64,
    pub data: SectionData,
    pub placement: Placement,
}

impl Section {
    /// The section size (`sh_size`) implied by the data.
    pub fn size(&self) -> u64 {
        match &self.data {
            SectionData::NoBits { size } => *size,
            _ => crate::write::encode_data(&self.data).len() as u64,
        }
    }
}

/// A program header, kept as its raw fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgramHeader {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub paddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

/// Where the section and program header tables go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TablePlacement {
    /// ptxas's rule: section headers at the end of the section data aligned to 8, program
    /// headers right after them.
    Standard,
    /// Explicit offsets (`e_shoff`, `e_phoff`) for files that do not follow the rule.
    At { shoff: u64, phoff: u64 },
}

/// A whole cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cubin {
    pub header: Header,
    /// All sections in section-header order, including the null section 0.
    pub sections: Vec<Section>,
    pub program_headers: Vec<ProgramHeader>,
    pub tables: TablePlacement,
}

impl Cubin {
    /// The section named `name`, if any.
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The relocations that patch section `target` (from every `.rel`/`.rela` section whose
    /// `sh_info` names it), sorted by offset.
    pub fn relocs_of(&self, target: usize) -> Vec<Reloc> {
        let mut v: Vec<Reloc> = self
            .sections
            .iter()
            .filter(|s| s.info as usize == target)
            .filter_map(|s| match &s.data {
                SectionData::Relocs { relocs, .. } => Some(relocs.iter().cloned()),
                _ => None,
            })
            .flatten()
            .collect();
        v.sort_by_key(|r| r.offset);
        v
    }

    /// The relocations of code section `section` with their symbols resolved, sorted by
    /// offset (what a disassembler prints at the patched instructions).
    pub fn code_relocs(&self, section: usize) -> Vec<CodeReloc> {
        let syms = self.symbols();
        self.relocs_of(section)
            .into_iter()
            .map(|r| {
                let sym = syms.get(r.sym as usize);
                CodeReloc {
                    offset: r.offset,
                    rtype: r.rtype,
                    symbol: sym.map(|s| s.name.clone()).unwrap_or_default(),
                    target_here: sym
                        .filter(|s| usize::from(s.shndx) == section)
                        .map(|s| s.value.wrapping_add_signed(r.addend)),
                }
            })
            .collect()
    }

    /// The `.symtab` entries (empty if there is none).
    pub fn symbols(&self) -> &[Symbol] {
        self.sections
            .iter()
            .find(|s| s.sh_type == sht::SYMTAB)
            .and_then(|s| match &s.data {
                SectionData::Symbols(v) => Some(v.as_slice()),
                _ => None,
            })
            .unwrap_or(&[])
    }

    /// The value of a `.nv.compat` record with the given code, if present.
    pub fn compat_value(&self, code: u8) -> Option<u16> {
        let s = self.section(".nv.compat")?;
        match &s.data {
            SectionData::Attributes(r) => r.iter().find(|r| r.code == code).map(|r| r.half),
            _ => None,
        }
    }

    /// The target as cuobjdump names it: `90`, `90a`, `100a`, ... (`a` when `.nv.compat`
    /// carries CUDA_ACCELERATOR_TARGET = 1).
    pub fn arch_name(&self) -> String {
        // CUDA 12.x and earlier: the `a` variant is `e_flags` bit 11
        // (`EF_CUDA_ACCELERATORS_V1`, as LLVM's `BinaryFormat/ELF.h` names it); cuobjdump
        // prints `sm=90a` for Triton 3.6's sm_90a cubins, whose flags are 0x5a0d5a.
        let accelerator = if self.header.os_abi == ELFOSABI_CUDA_V1 {
            self.header.e_flags & 0x800 != 0
        } else {
            self.compat_value(0x09) == Some(1)
        };
        let a = if accelerator { "a" } else { "" };
        format!("{}{a}", self.header.sm())
    }

    /// Whether every section follows the packing rule with no unexplained offset.
    pub fn layout_is_rule_based(&self) -> bool {
        self.tables == TablePlacement::Standard
            && self
                .sections
                .iter()
                .all(|s| !matches!(s.placement, Placement::At(_)))
    }
}
