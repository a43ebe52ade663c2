//! Reading a cubin into the [`Cubin`] model. All offsets are bounds-checked (through the
//! `object` crate's ELF structures and checked slicing): corrupt input gives an [`Error`],
//! never a panic.

use object::LittleEndian as LE;
use object::Wrap as _;
use object::elf::{FileHeader64, ProgramHeader64, SectionHeader64};
use object::read::elf::FileHeader as _;

use crate::Error;
use crate::eiattr;
use crate::model::*;

fn u32_at(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(o..o + 4)?.try_into().ok()?))
}
fn u64_at(d: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(o..o + 8)?.try_into().ok()?))
}

fn align_up(v: u64, a: u64) -> Option<u64> {
    if a <= 1 {
        return Some(v);
    }
    v.checked_add(a - 1).map(|x| x / a * a)
}

/// Parses `data` as a 64-bit little-endian cubin.
pub fn read(data: &[u8]) -> Result<Cubin, Error> {
    let fh = FileHeader64::<LE>::parse(data)
        .map_err(|e| Error::new(format!("not a 64-bit ELF file: {e}")))?;
    if !fh.is_little_endian() {
        return Err(Error::new("big-endian ELF is not a cubin"));
    }
    let e = LE;
    if fh.e_ehsize.get(e) != 64 {
        return Err(Error::new(format!(
            "ELF header size {} is not 64",
            fh.e_ehsize.get(e)
        )));
    }
    let shdrs: &[SectionHeader64<LE>] = fh
        .section_headers(e, data)
        .map_err(|err| Error::new(format!("section header table: {err}")))?;
    let phdrs: &[ProgramHeader64<LE>] = fh
        .program_headers(e, data)
        .map_err(|err| Error::new(format!("program header table: {err}")))?;
    if !shdrs.is_empty() && fh.e_shentsize.get(e) != 64 {
        return Err(Error::new("section header entry size is not 64"));
    }
    if !phdrs.is_empty() && fh.e_phentsize.get(e) != 56 {
        return Err(Error::new("program header entry size is not 56"));
    }
    let shstrndx = fh.e_shstrndx.get(e).into_inner();
    let header = Header {
        os_abi: fh.e_ident.os_abi.into_inner(),
        abi_version: fh.e_ident.abi_version,
        e_type: fh.e_type.get(e).into_inner(),
        e_machine: fh.e_machine.get(e).into_inner(),
        e_version: fh.e_version.get(e),
        e_entry: fh.e_entry.get(e),
        e_flags: fh.e_flags.get(e).into_inner(),
        shstrndx,
        phentsize: fh.e_phentsize.get(e),
    };
    let os_abi = fh.e_ident.os_abi.into_inner();
    if !matches!(os_abi, ELFOSABI_CUDA | ELFOSABI_CUDA_V1) || header.e_machine != EM_CUDA {
        return Err(Error::new(format!(
            "not a CUDA ELF (OS/ABI {:#x}, machine {})",
            fh.e_ident.os_abi.into_inner(),
            header.e_machine
        )));
    }
    // Raw bytes of each section (empty for NOBITS).
    let mut raw: Vec<&[u8]> = Vec::with_capacity(shdrs.len());
    for (i, sh) in shdrs.iter().enumerate() {
        if i == 0 || is_nobits(sh.sh_type.get(e).into_inner()) {
            raw.push(&[]);
            continue;
        }
        let off = sh.sh_offset.get(e);
        let size = sh.sh_size.get(e);
        let bytes = usize::try_from(off)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(o, s)| data.get(o..o.checked_add(s)?))
            .ok_or_else(|| {
                Error::new(format!(
                    "section {i}: data at {off:#x}+{size:#x} is outside the file ({:#x} bytes)",
                    data.len()
                ))
            })?;
        raw.push(bytes);
    }
    let shstr = raw
        .get(usize::from(shstrndx))
        .copied()
        .ok_or_else(|| Error::new(format!("e_shstrndx {shstrndx} has no section")))?;
    let shstr = StringTable {
        bytes: shstr.to_vec(),
    };
    let names: Vec<String> = shdrs
        .iter()
        .enumerate()
        .map(|(i, sh)| {
            if i == 0 && sh.sh_name.get(e) == 0 {
                return Ok(String::new());
            }
            shstr.get(sh.sh_name.get(e)).ok_or_else(|| {
                Error::new(format!(
                    "section {i}: name offset {:#x} is outside .shstrtab",
                    sh.sh_name.get(e)
                ))
            })
        })
        .collect::<Result<_, _>>()?;

    let mut sections = Vec::with_capacity(shdrs.len());
    let mut cursor: u64 = 64;
    for (i, sh) in shdrs.iter().enumerate() {
        let name = names[i].clone();
        let sh_type = sh.sh_type.get(e).into_inner();
        let bytes = raw[i];
        let sdata = if i == 0 {
            if sh.sh_size.get(e) != 0 || sh_type != sht::NULL || sh.sh_offset.get(e) != 0 {
                return Err(Error::new("section 0 is not a null section"));
            }
            SectionData::Null
        } else {
            decode(
                sh_type,
                &name,
                bytes,
                sh.sh_size.get(e),
                sh.sh_link.get(e),
                &raw,
                shdrs,
                e,
            )
            .map_err(|m| Error::new(format!("section {i} ({name}): {m}")))?
        };
        let off = sh.sh_offset.get(e);
        let align = sh.sh_addralign.get(e);
        let placement = if i == 0 {
            Placement::Packed { pad: 0 }
        } else {
            let aligned = align_up(cursor, align)
                .ok_or_else(|| Error::new(format!("section {i}: alignment overflow")))?;
            let size = if is_nobits(sh_type) {
                0
            } else {
                sh.sh_size.get(e)
            };
            // An alias: same offset and bytes as an earlier section with file data.
            // An alias: at the offset of an earlier section with file data and the same size
            // (ptxas's `.nv.merc.*` copies share identical bytes; empty copies may sit at the
            // offset of any earlier section, e.g. an empty `.debug_frame`).
            let alias = (!is_nobits(sh_type) && off < aligned)
                .then(|| {
                    (1..i).find(|&j| {
                        let o = &shdrs[j];
                        !is_nobits(o.sh_type.get(e).into_inner())
                            && o.sh_offset.get(e) == off
                            && (size == 0 || o.sh_size.get(e) == size)
                    })
                })
                .flatten();
            if let Some(j) = alias {
                Placement::Alias(j as u32)
            } else if off >= aligned && data_is_zero(data_range(data, aligned, off)) {
                // NOBITS sections (size 0 here) move the cursor to their aligned offset.
                cursor = off + size;
                Placement::Packed { pad: off - aligned }
            } else {
                cursor = cursor.max(off.saturating_add(size));
                Placement::At(off)
            }
        };
        sections.push(Section {
            name,
            name_offset: sh.sh_name.get(e),
            sh_type,
            flags: sh.sh_flags.get(e).into_inner(),
            addr: sh.sh_addr.get(e),
            link: sh.sh_link.get(e),
            info: sh.sh_info.get(e),
            addralign: align,
            entsize: sh.sh_entsize.get(e),
            data: sdata,
            placement,
        });
    }
    let shoff = fh.e_shoff.get(e);
    let phoff = fh.e_phoff.get(e);
    let std_shoff = align_up(cursor, 8).unwrap_or(u64::MAX);
    let std_phoff = std_shoff.saturating_add(64 * shdrs.len() as u64);
    let tables = if shoff == std_shoff
        && (phdrs.is_empty() && phoff == 0 || phoff == std_phoff)
        && data_is_zero(data_range(data, cursor, shoff))
    {
        TablePlacement::Standard
    } else {
        TablePlacement::At { shoff, phoff }
    };
    let program_headers = phdrs
        .iter()
        .map(|p| ProgramHeader {
            p_type: p.p_type.get(e).into_inner(),
            flags: p.p_flags.get(e).into_inner(),
            offset: p.p_offset.get(e),
            vaddr: p.p_vaddr.get(e),
            paddr: p.p_paddr.get(e),
            filesz: p.p_filesz.get(e),
            memsz: p.p_memsz.get(e),
            align: p.p_align.get(e),
        })
        .collect();
    Ok(Cubin {
        header,
        sections,
        program_headers,
        tables,
    })
}

fn data_range(data: &[u8], from: u64, to: u64) -> Option<&[u8]> {
    let f = usize::try_from(from).ok()?;
    let t = usize::try_from(to).ok()?;
    data.get(f..t)
}

fn data_is_zero(r: Option<&[u8]>) -> bool {
    r.is_some_and(|r| r.iter().all(|&b| b == 0))
}

#[allow(clippy::too_many_arguments)]
fn decode(
    sh_type: u32,
    name: &str,
    bytes: &[u8],
    size: u64,
    link: u32,
    raw: &[&[u8]],
    shdrs: &[SectionHeader64<LE>],
    e: LE,
) -> Result<SectionData, String> {
    Ok(match sh_type {
        t if is_nobits(t) => SectionData::NoBits { size },
        sht::STRTAB => SectionData::Strings(StringTable {
            bytes: bytes.to_vec(),
        }),
        sht::SYMTAB | sht::CUDA_MERC_SYMTAB => {
            if !bytes.len().is_multiple_of(24) {
                return Err(format!(
                    "symbol table size {:#x} is not a multiple of 24",
                    bytes.len()
                ));
            }
            let strtab = raw
                .get(link as usize)
                .filter(|_| {
                    shdrs
                        .get(link as usize)
                        .is_some_and(|s| s.sh_type.get(e).into_inner() == sht::STRTAB)
                })
                .ok_or_else(|| format!("sh_link {link} is not a string table"))?;
            let strtab = StringTable {
                bytes: strtab.to_vec(),
            };
            let mut syms = Vec::with_capacity(bytes.len() / 24);
            for (k, c) in bytes.chunks_exact(24).enumerate() {
                let name_offset = u32_at(c, 0).unwrap_or(0);
                let name = if name_offset == 0 {
                    String::new()
                } else {
                    strtab.get(name_offset).ok_or_else(|| {
                        format!("symbol {k}: name offset {name_offset:#x} outside the string table")
                    })?
                };
                syms.push(Symbol {
                    name,
                    name_offset,
                    info: c[4],
                    other: c[5],
                    shndx: u16::from_le_bytes([c[6], c[7]]),
                    value: u64_at(c, 8).unwrap_or(0),
                    size: u64_at(c, 16).unwrap_or(0),
                });
            }
            SectionData::Symbols(syms)
        }
        sht::RELA | sht::CUDA_MERC_RELA | sht::REL => {
            let has_addend = sh_type != sht::REL;
            let ent = if has_addend { 24 } else { 16 };
            if !bytes.len().is_multiple_of(ent) {
                return Err(format!(
                    "relocation section size {:#x} is not a multiple of {ent}",
                    bytes.len()
                ));
            }
            let relocs = bytes
                .chunks_exact(ent)
                .map(|c| {
                    let info = u64_at(c, 8).unwrap_or(0);
                    Reloc {
                        offset: u64_at(c, 0).unwrap_or(0),
                        sym: (info >> 32) as u32,
                        rtype: info as u32,
                        addend: if has_addend {
                            u64_at(c, 16).unwrap_or(0) as i64
                        } else {
                            0
                        },
                    }
                })
                .collect();
            SectionData::Relocs { has_addend, relocs }
        }
        sht::CUDA_INFO | sht::CUDA_MERC_INFO | sht::CUDA_COMPAT => {
            SectionData::Attributes(eiattr::parse_records(bytes, name).map_err(|e| e.message)?)
        }
        sht::NOTE => SectionData::Notes(parse_notes(bytes)?),
        _ => SectionData::Bytes(bytes.to_vec()),
    })
}

fn parse_notes(bytes: &[u8]) -> Result<Vec<Note>, String> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    let pad4 = |n: usize| n.div_ceil(4) * 4;
    while pos < bytes.len() {
        let namesz = u32_at(bytes, pos).ok_or("truncated note header")? as usize;
        let descsz = u32_at(bytes, pos + 4).ok_or("truncated note header")? as usize;
        let ntype = u32_at(bytes, pos + 8).ok_or("truncated note header")?;
        pos += 12;
        let name = bytes
            .get(pos..pos.checked_add(namesz).ok_or("note name overflow")?)
            .ok_or("truncated note name")?;
        // The stored name includes its NUL; we keep the bytes before it and require it.
        let (name, nul) = match name.split_last() {
            Some((0, rest)) => (rest.to_vec(), true),
            _ => (name.to_vec(), false),
        };
        if !nul {
            return Err("note name is not NUL-terminated".into());
        }
        pos = pos.checked_add(pad4(namesz)).ok_or("note overflow")?;
        let desc = bytes
            .get(pos..pos.checked_add(descsz).ok_or("note desc overflow")?)
            .ok_or("truncated note description")?
            .to_vec();
        let padded = pad4(descsz);
        if bytes
            .get(pos + descsz..(pos + padded).min(bytes.len()))
            .is_some_and(|p| p.iter().any(|&b| b != 0))
        {
            return Err("non-zero note padding".into());
        }
        pos = pos.checked_add(padded).ok_or("note overflow")?;
        if pos > bytes.len() {
            return Err("truncated note padding".into());
        }
        out.push(Note { name, ntype, desc });
    }
    Ok(out)
}
