//! Writing a [`Cubin`] model to bytes with ptxas's layout rule:
//!
//! 1. The 64-byte ELF header.
//! 2. Section data in section-header order. Each section with file data starts at the cursor
//!    aligned up to its `sh_addralign` (plus the recorded zero `pad`, see
//!    [`Placement::Packed`]); `SHT_NOBITS` sections get the aligned cursor as offset without
//!    moving it; an [`Placement::Alias`] section reuses an earlier section's offset.
//! 3. The section header table at the cursor aligned to 8, then the program header table.
//!
//! Gaps are zero-filled. The same rule lays out cubins made by [`crate::builder`].

use crate::eiattr;
use crate::model::*;

/// The bytes a section's data occupies in the file (empty for NOBITS/null).
pub fn encode_data(d: &SectionData) -> Vec<u8> {
    let mut out = Vec::new();
    match d {
        SectionData::Null | SectionData::NoBits { .. } => {}
        SectionData::Strings(t) => out.extend_from_slice(&t.bytes),
        SectionData::Symbols(syms) => {
            for s in syms {
                out.extend_from_slice(&s.name_offset.to_le_bytes());
                out.push(s.info);
                out.push(s.other);
                out.extend_from_slice(&s.shndx.to_le_bytes());
                out.extend_from_slice(&s.value.to_le_bytes());
                out.extend_from_slice(&s.size.to_le_bytes());
            }
        }
        SectionData::Relocs { has_addend, relocs } => {
            for r in relocs {
                out.extend_from_slice(&r.offset.to_le_bytes());
                let info = (u64::from(r.sym) << 32) | u64::from(r.rtype);
                out.extend_from_slice(&info.to_le_bytes());
                if *has_addend {
                    out.extend_from_slice(&r.addend.to_le_bytes());
                }
            }
        }
        SectionData::Attributes(recs) => eiattr::encode_records(recs, &mut out),
        SectionData::Notes(notes) => {
            for n in notes {
                let namesz = n.name.len() + 1;
                out.extend_from_slice(&(namesz as u32).to_le_bytes());
                out.extend_from_slice(&(n.desc.len() as u32).to_le_bytes());
                out.extend_from_slice(&n.ntype.to_le_bytes());
                out.extend_from_slice(&n.name);
                out.push(0);
                out.resize(out.len().div_ceil(4) * 4, 0);
                out.extend_from_slice(&n.desc);
                out.resize(out.len().div_ceil(4) * 4, 0);
            }
        }
        SectionData::Bytes(b) => out.extend_from_slice(b),
    }
    out
}

fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 { v } else { v.div_ceil(a) * a }
}

/// File offsets computed by the layout rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// `sh_offset` per section.
    pub offsets: Vec<u64>,
    pub shoff: u64,
    pub phoff: u64,
}

/// Computes the layout of `c` (section data encoded once and returned alongside).
pub fn layout(c: &Cubin) -> (Layout, Vec<Vec<u8>>) {
    let datas: Vec<Vec<u8>> = c.sections.iter().map(|s| encode_data(&s.data)).collect();
    let mut offsets = Vec::with_capacity(c.sections.len());
    let mut cursor = 64u64;
    for (i, s) in c.sections.iter().enumerate() {
        if i == 0 {
            offsets.push(0);
            continue;
        }
        let size = datas[i].len() as u64; // 0 for NOBITS
        let off = match s.placement {
            Placement::Packed { pad } => {
                let o = align_up(cursor, s.addralign) + pad;
                // NOBITS sections take the aligned cursor as offset and leave it there.
                cursor = o + size;
                o
            }
            Placement::Alias(j) => offsets.get(j as usize).copied().unwrap_or(cursor),
            Placement::At(o) => {
                if !is_nobits(s.sh_type) {
                    cursor = cursor.max(o + size);
                }
                o
            }
        };
        offsets.push(off);
    }
    let (shoff, phoff) = match c.tables {
        TablePlacement::Standard => {
            let shoff = align_up(cursor, 8);
            let phoff = if c.program_headers.is_empty() {
                0
            } else {
                shoff + 64 * c.sections.len() as u64
            };
            (shoff, phoff)
        }
        TablePlacement::At { shoff, phoff } => (shoff, phoff),
    };
    (
        Layout {
            offsets,
            shoff,
            phoff,
        },
        datas,
    )
}

fn put(out: &mut Vec<u8>, at: u64, bytes: &[u8]) {
    let at = at as usize;
    if out.len() < at + bytes.len() {
        out.resize(at + bytes.len(), 0);
    }
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

/// Serializes the cubin.
pub fn write(c: &Cubin) -> Vec<u8> {
    let (lay, datas) = layout(c);
    let mut out = Vec::new();
    // ELF header.
    let h = &c.header;
    let mut eh = Vec::with_capacity(64);
    eh.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, h.os_abi, h.abi_version]);
    eh.resize(16, 0);
    eh.extend_from_slice(&h.e_type.to_le_bytes());
    eh.extend_from_slice(&h.e_machine.to_le_bytes());
    eh.extend_from_slice(&h.e_version.to_le_bytes());
    eh.extend_from_slice(&h.e_entry.to_le_bytes());
    eh.extend_from_slice(&lay.phoff.to_le_bytes());
    eh.extend_from_slice(&lay.shoff.to_le_bytes());
    eh.extend_from_slice(&h.e_flags.to_le_bytes());
    eh.extend_from_slice(&64u16.to_le_bytes());
    eh.extend_from_slice(&h.phentsize.to_le_bytes());
    eh.extend_from_slice(&(c.program_headers.len() as u16).to_le_bytes());
    eh.extend_from_slice(&64u16.to_le_bytes());
    eh.extend_from_slice(&(c.sections.len() as u16).to_le_bytes());
    eh.extend_from_slice(&h.shstrndx.to_le_bytes());
    put(&mut out, 0, &eh);
    for (i, s) in c.sections.iter().enumerate() {
        if i == 0 || is_nobits(s.sh_type) || matches!(s.placement, Placement::Alias(_)) {
            continue;
        }
        put(&mut out, lay.offsets[i], &datas[i]);
    }
    let mut sh = Vec::with_capacity(64 * c.sections.len());
    for (i, s) in c.sections.iter().enumerate() {
        let size = match &s.data {
            SectionData::NoBits { size } => *size,
            _ => datas[i].len() as u64,
        };
        sh.extend_from_slice(&s.name_offset.to_le_bytes());
        sh.extend_from_slice(&s.sh_type.to_le_bytes());
        sh.extend_from_slice(&s.flags.to_le_bytes());
        sh.extend_from_slice(&s.addr.to_le_bytes());
        sh.extend_from_slice(&lay.offsets[i].to_le_bytes());
        sh.extend_from_slice(&size.to_le_bytes());
        sh.extend_from_slice(&s.link.to_le_bytes());
        sh.extend_from_slice(&s.info.to_le_bytes());
        sh.extend_from_slice(&s.addralign.to_le_bytes());
        sh.extend_from_slice(&s.entsize.to_le_bytes());
    }
    put(&mut out, lay.shoff, &sh);
    let mut ph = Vec::with_capacity(56 * c.program_headers.len());
    for p in &c.program_headers {
        ph.extend_from_slice(&p.p_type.to_le_bytes());
        ph.extend_from_slice(&p.flags.to_le_bytes());
        ph.extend_from_slice(&p.offset.to_le_bytes());
        ph.extend_from_slice(&p.vaddr.to_le_bytes());
        ph.extend_from_slice(&p.paddr.to_le_bytes());
        ph.extend_from_slice(&p.filesz.to_le_bytes());
        ph.extend_from_slice(&p.memsz.to_le_bytes());
        ph.extend_from_slice(&p.align.to_le_bytes());
    }
    if !ph.is_empty() {
        put(&mut out, lay.phoff, &ph);
    }
    out
}
