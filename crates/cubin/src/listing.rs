//! A `cuobjdump -elf`-style listing of a cubin, and its JSON form.
//!
//! The listing holds the parts of `cuobjdump -elf` that describe the ELF structure and the
//! metadata the driver reads: the header line, the section table, `.symtab`, every
//! `.nv.info`, `.nv.info.<f>` and `.nv.compat` block with cuobjdump's attribute names, formats
//! and value texts, and the `.nv.callgraph` edges. It leaves out what cuobjdump prints as data dumps (hex words of code and
//! constant banks, notes, DWARF decoding, relocation lists).
//!
//! **Equivalence** ([`compare_with_cuobjdump`]): take from cuobjdump's output exactly those
//! blocks (a block runs from its title line to the next blank line), normalize every line by
//! collapsing runs of whitespace to one space and trimming, drop empty lines, and require the
//! two line sequences to be equal — same blocks in the same order, same rows, same records in
//! the same order with the same names and values.

use std::fmt::Write as _;

use crate::eiattr::{self, AttrValue, Format, Record, code};
use crate::model::*;

fn hex0(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// cuobjdump's name for a section type.
pub fn section_type_name(t: u32) -> String {
    match t {
        sht::NULL => "NULL".into(),
        sht::PROGBITS => "PROGBITS".into(),
        sht::SYMTAB | sht::CUDA_MERC_SYMTAB => "SYMTAB".into(),
        sht::STRTAB => "STRTAB".into(),
        sht::RELA | sht::CUDA_MERC_RELA => "RELA".into(),
        sht::NOTE => "NOTE".into(),
        sht::NOBITS => "NOBITS".into(),
        sht::REL => "REL".into(),
        sht::CUDA_INFO | sht::CUDA_MERC_INFO => "CUDA_INFO".into(),
        sht::CUDA_CALLGRAPH => "CUDA_CALLGRAPH".into(),
        0x7000_0002 => "CUDA_PROTOTYPE".into(),
        0x7000_0007 => "CUDA_GLOBAL".into(),
        0x7000_000a => "CUDA_SHARED".into(),
        0x7000_0064 => "CUDA_CONSTANT_B0".into(),
        0x7000_0008 => "CUDA_GLOBAL_INIT".into(),
        sht::CUDA_RELOCINFO => "CUDA_RELOCINFO".into(),
        sht::CUDA_RESERVED_SHARED => "CUDA_RESERVED_SHARED".into(),
        sht::CUDA_CAPMERC => "CUDA_CAPMERC".into(),
        0x7000_0079 => "CUDA_MERCURY_CONSTANT_IMGHDR".into(),
        0x7000_007c => "CUDA_MERCURY_CONSTANT_USER".into(),
        0x7000_007d => "CUDA_MERCURY_CONSTANT_PIC".into(),
        0x7000_0084 => "CUDA_MERCURY_CONSTANT_OPT".into(),
        sht::CUDA_COMPAT => "CUDA_COMPAT_INFO".into(),
        other => format!("{other:#x}"),
    }
}

/// The toolkit version from `.note.nv.cuinfo` (`13.0`), if present.
pub fn toolkit_version(c: &Cubin) -> Option<String> {
    let s = c.section(".note.nv.cuinfo")?;
    let SectionData::Notes(notes) = &s.data else {
        return None;
    };
    let d = &notes.first()?.desc;
    let v = u16::from_le_bytes([*d.get(4)?, *d.get(5)?]);
    Some(format!("{}.{}", v / 10, v % 10))
}

fn header_line(c: &Cubin) -> String {
    if c.header.os_abi == ELFOSABI_CUDA_V1 {
        // cuobjdump's line for CUDA 12.x and earlier cubins, whose `e_version` holds the
        // toolkit (128 for 12.8).
        return format!(
            "64bit elf: type={}, abi={}, sm={}, toolkit={}, flags = {:#x}",
            c.header.e_type,
            c.header.abi_version,
            c.arch_name(),
            c.header.e_version,
            c.header.e_flags
        );
    }
    let ty = match c.header.e_type {
        1 => "ET_REL".to_string(),
        2 => "ET_EXEC".to_string(),
        3 => "ET_DYN".to_string(),
        t => format!("{t}"),
    };
    format!(
        "64-bit ELF: type={ty}, ABI={}, sm={}, toolkit={}, flags={:#x}",
        c.header.abi_version,
        c.arch_name(),
        toolkit_version(c).unwrap_or_else(|| "?".into()),
        c.header.e_flags
    )
}

/// Whether a section's attribute records are listed (cuobjdump lists `.nv.info*` and
/// `.nv.compat`, not the `.nv.merc.nv.info*` copies).
fn listed_attributes(s: &Section) -> bool {
    matches!(s.sh_type, sht::CUDA_INFO | sht::CUDA_COMPAT)
        && matches!(s.data, SectionData::Attributes(_))
}

/// The edges of a `.nv.callgraph` section as `(caller, callee)` symbol indices (negative
/// callees are ptxas's placeholders), when it is one and decodes as pairs of `i32`.
pub fn callgraph_edges(s: &Section) -> Option<Vec<(i32, i32)>> {
    if s.sh_type != sht::CUDA_CALLGRAPH {
        return None;
    }
    let SectionData::Bytes(b) = &s.data else {
        return None;
    };
    if b.len() % 8 != 0 {
        return None;
    }
    Some(
        b.chunks_exact(8)
            .map(|c| {
                (
                    i32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                    i32::from_le_bytes([c[4], c[5], c[6], c[7]]),
                )
            })
            .collect(),
    )
}

fn callgraph_block(s: &Section) -> Option<Vec<(i32, i32)>> {
    callgraph_edges(s).filter(|_| s.name == ".nv.callgraph")
}

/// The listing text.
pub fn listing(c: &Cubin) -> String {
    let mut o = String::new();
    let offsets = crate::write::layout(c).0.offsets;
    let _ = writeln!(o, "\n{}", header_line(c));
    let _ = writeln!(o, "Sections:");
    let _ = writeln!(
        o,
        "Index Offset   Size ES Align                      Type    Flags Link     Info Name"
    );
    for (i, s) in c.sections.iter().enumerate().skip(1) {
        let _ = writeln!(
            o,
            "{:5x} {:6x} {:6x} {:2x} {:2x} {:>28} {:8x} {:4x} {:8x} {}",
            i,
            offsets[i],
            s.size(),
            s.entsize,
            s.addralign,
            section_type_name(s.sh_type),
            s.flags,
            s.link,
            s.info,
            s.name
        );
    }
    let _ = writeln!(o);
    let syms = c.symbols();
    if c.sections.iter().any(|s| s.sh_type == sht::SYMTAB) {
        let _ = writeln!(o, ".section .symtab");
        let _ = writeln!(
            o,
            " index           value           size      info    other  shndx    name  "
        );
        for (i, s) in syms.iter().enumerate() {
            let name = if s.name.is_empty() { "(null)" } else { &s.name };
            let _ = writeln!(
                o,
                "{:>4} {:>15} {:>15} {:>8} {:>8} {:>6}     {}",
                hex0(i as u64),
                hex0(s.value),
                hex0(s.size),
                hex0(u64::from(s.info)),
                hex0(u64::from(s.other)),
                hex0(u64::from(s.shndx)),
                name
            );
        }
        let _ = writeln!(o);
    }
    for s in &c.sections {
        if let Some(edges) = callgraph_block(s) {
            let _ = writeln!(o, "\n{}", s.name);
            for (a, b) in edges {
                let _ = writeln!(o, " <{a},{b}>");
            }
            let _ = writeln!(o);
            continue;
        }
        if !listed_attributes(s) {
            continue;
        }
        let SectionData::Attributes(recs) = &s.data else {
            continue;
        };
        let compat = s.sh_type == sht::CUDA_COMPAT;
        let _ = writeln!(o, "\n{}", s.name);
        for (k, r) in recs.iter().enumerate() {
            // cuobjdump prints the 1-based record number's decimal digits after `0x`.
            let _ = writeln!(o, "\t<0x{}>", k + 1);
            let name = if compat {
                eiattr::compat_name(r.code).unwrap_or("unknown Attribute")
            } else {
                eiattr::attr_name(r.code)
            };
            let _ = writeln!(o, "\tAttribute:\t{name}");
            let _ = writeln!(o, "\tFormat:\t{}", r.format.name());
            if let Some(v) = value_text(r, syms, compat) {
                let _ = writeln!(o, "\tValue:\t{v}");
            }
        }
        let _ = writeln!(o);
    }
    o
}

/// EIATTR_INDIRECT_BRANCH_TARGETS groups: `(branch offset, 0, count, targets...)*`.
pub(crate) fn indirect_branch_groups(w: &[u32]) -> Option<Vec<(u32, Vec<u32>)>> {
    let mut out = Vec::new();
    let mut i = 0usize;
    while i < w.len() {
        let (off, zero, n) = (*w.get(i)?, *w.get(i + 1)?, *w.get(i + 2)? as usize);
        if zero != 0 {
            return None;
        }
        let targets = w.get(i + 3..i + 3 + n)?.to_vec();
        out.push((off, targets));
        i += 3 + n;
    }
    Some(out)
}

fn func_ref(syms: &[Symbol], idx: u32) -> String {
    let name = syms
        .get(idx as usize)
        .map(|s| s.name.as_str())
        .unwrap_or("");
    format!("function: {name}({idx:#x})")
}

/// The text after `Value:` for one record (`None` for NVAL records, which have no value).
fn value_text(r: &Record, syms: &[Symbol], compat: bool) -> Option<String> {
    let v = r.value();
    Some(match (&v, r.format) {
        (_, Format::Nval) => return None,
        (AttrValue::MercuryIsaVersion { major, minor }, _) => format!("{major}.{minor}"),
        (_, Format::Hval) if compat && r.code == 0x07 => {
            format!("{}.{}", r.half & 0xff, r.half >> 8)
        }
        (_, Format::Bval | Format::Hval) => format!("{:#x}", r.half),
        (AttrValue::PerFunction { function, value }, _) => {
            let f = func_ref(syms, *function);
            match r.code {
                code::REGCOUNT => format!("{f}\tregister count: {value}"),
                code::FRAME_SIZE => format!("{f}\tframe size: {value:#x}"),
                code::MIN_STACK_SIZE => format!("{f}\tmin stack size: {value:#x}"),
                // cuobjdump prints the others (MAX_STACK_SIZE, ...) as plain words.
                _ => format!("{function:#x} {value:#x} "),
            }
        }
        (AttrValue::KparamInfo(k), _) => format!(
            "Index : {:#x}\tOrdinal : {:#x}\tOffset  : {:#x}\tSize    : {:#x}\n\t\tPointee's logAlignment : {:#x}\tSpace : {:#x}\tcbank : {:#x}\tParameter Space : {}\t",
            k.index,
            k.ordinal,
            k.offset,
            k.size,
            k.log_align,
            k.space,
            k.cbank,
            if k.in_smem { "SMEM" } else { "CBANK" }
        ),
        (AttrValue::Words(w), _) if r.code == code::ANNOTATIONS && !compat && w.len() % 2 == 0 => {
            let mut s = String::new();
            for (n, pair) in w.chunks_exact(2).enumerate() {
                if n > 0 {
                    s.push_str("\n\t\t");
                }
                let kind = match pair[0] {
                    1 => "SpillRefill".to_string(),
                    k => format!("unknown({k:#x})"),
                };
                let _ = write!(s, "{kind} : \tOffset : {:#x}", pair[1]);
            }
            s
        }
        (AttrValue::Words(w), _)
            if r.code == code::INDIRECT_BRANCH_TARGETS
                && !compat
                && indirect_branch_groups(w).is_some() =>
        {
            let mut s = String::new();
            for (off, targets) in indirect_branch_groups(w).unwrap_or_default() {
                let _ = write!(
                    s,
                    "\n\t\tOffset of Indirect Branch: {off:#x}\t Number of targets: {}\n\t\tTargets: ",
                    targets.len()
                );
                for t in targets {
                    let _ = write!(s, "{t:#x} ");
                }
            }
            s
        }
        (AttrValue::Words(w), _) if r.code == code::EXTERNS && !compat => {
            let mut s = String::from("externs:\t");
            for &i in w {
                let name = syms.get(i as usize).map(|s| s.name.as_str()).unwrap_or("");
                let _ = write!(s, "{name}({i:#x})\t");
            }
            s
        }
        (AttrValue::Words(w), _)
            if r.code == code::MBARRIER_INSTR_OFFSETS && !compat && w.len() % 4 == 0 =>
        {
            let mut s = String::new();
            for e in w.chunks_exact(4) {
                let kind = match e[3] & 0xff {
                    0 => "MBARRIER_INIT",
                    1 => "MBARRIER_ARRIVE",
                    5 => "MBARRIER_TEST_WAIT",
                    6 => "MBARRIER_TEST_WAIT_PARITY",
                    7 => "MBARRIER_CP_ASYNC_ARRIVE",
                    8 => "MBARRIER_INVAL",
                    9 => "MBARRIER_TRY_WAIT",
                    10 => "MBARRIER_TRY_WAIT_PARITY",
                    _ => "Unknown Instruction",
                };
                let stride = match (e[3] >> 8) & 0xff {
                    1 => "MBARRIER_STRIDE_X4".to_string(),
                    x => format!("unknown({x:#x})"),
                };
                let imm = if e[2] == 0 {
                    String::new()
                } else {
                    format!(" + {}", e[2] as i32)
                };
                let _ = write!(
                    s,
                    "\n\t{:#x}\t:\tInstruction Kind : {kind}\t(R{} + UR{}{imm})\tStride : {stride}",
                    e[0],
                    e[1],
                    (e[3] >> 16) & 0xff
                );
            }
            s
        }
        (AttrValue::Words(w), _)
            if r.code == code::KPARAM_INFO_V2 && !compat && w.len() == 3 && w[2] >> 16 == 0 =>
        {
            format!(
                "Index : {:#x}\tOrdinal : {:#x}\tOffset  : {:#x}\tSize    : {:#x}\n\t\tPointee's logAlignment : 0x0\tSpace : 0x0\t",
                w[0],
                w[1] & 0xffff,
                w[1] >> 16,
                w[2] & 0xffff
            )
        }
        (
            AttrValue::ParamCbank {
                symbol,
                offset,
                size,
            },
            _,
        ) => {
            format!(
                "{symbol:#x} {:#x} ",
                (u32::from(*size) << 16) | u32::from(*offset)
            )
        }
        (AttrValue::Dim3(d), _) => format!("{:#x} {:#x} {:#x} ", d[0], d[1], d[2]),
        (AttrValue::Words(w), _) => w.iter().map(|x| format!("{x:#x} ")).collect(),
        (AttrValue::Raw(b), _) => b.iter().map(|x| format!("{x:#x} ")).collect(),
        (AttrValue::Flag | AttrValue::Half(_), _) => format!("{:#x}", r.half),
    })
}

/// The normalized lines of a listing: whitespace runs collapsed, trimmed, empty lines dropped.
pub fn normalize(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect()
}

/// Extracts from `cuobjdump -elf` output the blocks our listing covers (see the module docs).
/// `attr_sections` are the names of the sections whose attribute blocks are listed.
pub fn cuobjdump_blocks(text: &str, attr_sections: &[&str]) -> String {
    let mut out = String::new();
    let mut in_block = false;
    let lines: Vec<&str> = text.lines().collect();
    for (i, &line) in lines.iter().enumerate() {
        if in_block {
            // A blank line ends a block unless the block goes on with an indented line
            // (cuobjdump puts blank lines inside EIATTR_INDIRECT_BRANCH_TARGETS values).
            let continues = lines.get(i + 1).is_some_and(|n| n.starts_with('\t'));
            if line.trim().is_empty() && !continues {
                in_block = false;
                out.push('\n');
            } else {
                out.push_str(line);
                out.push('\n');
            }
            continue;
        }
        let t = line.trim_end();
        if t.starts_with("64-bit ELF:")
            || t.starts_with("32-bit ELF:")
            || t.starts_with("64bit elf:")
        {
            out.push_str(t);
            out.push('\n');
        } else if t == "Sections:" || t == ".section .symtab" || attr_sections.contains(&t) {
            in_block = true;
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

/// Compares our listing of `c` with cuobjdump's output for the same file. `Ok(())` when equal,
/// otherwise the first differing line pair (ours, cuobjdump's).
pub fn compare_with_cuobjdump(c: &Cubin, cuobjdump_text: &str) -> Result<(), String> {
    let names: Vec<&str> = c
        .sections
        .iter()
        .filter(|s| listed_attributes(s) || callgraph_block(s).is_some())
        .map(|s| s.name.as_str())
        .collect();
    let ours = normalize(&listing(c));
    let theirs = normalize(&cuobjdump_blocks(cuobjdump_text, &names));
    if ours == theirs {
        return Ok(());
    }
    let i = ours
        .iter()
        .zip(&theirs)
        .position(|(a, b)| a != b)
        .unwrap_or(ours.len().min(theirs.len()));
    Err(format!(
        "line {}: ours `{}` / cuobjdump `{}`",
        i + 1,
        ours.get(i).map_or("<end>", String::as_str),
        theirs.get(i).map_or("<end>", String::as_str)
    ))
}

/// `s` as a JSON string literal (quotes, backslashes and control characters escaped).
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The listing as JSON: `{header, sections[], symbols[], attributes{section: [records]}}`.
pub fn json(c: &Cubin) -> String {
    let offsets = crate::write::layout(c).0.offsets;
    let mut o = String::from("{\n");
    let _ = writeln!(
        o,
        "  \"header\": {{\"type\": {}, \"abi_version\": {}, \"os_abi\": {}, \"sm\": {}, \"arch\": {}, \"toolkit\": {}, \"flags\": {}}},",
        c.header.e_type,
        c.header.abi_version,
        c.header.os_abi,
        c.header.sm(),
        json_str(&c.arch_name()),
        json_str(&toolkit_version(c).unwrap_or_default()),
        c.header.e_flags
    );
    o.push_str("  \"sections\": [\n");
    let n = c.sections.len();
    for (i, s) in c.sections.iter().enumerate().skip(1) {
        let _ = write!(
            o,
            "    {{\"index\": {i}, \"name\": {}, \"type\": {}, \"type_name\": {}, \"flags\": {}, \"offset\": {}, \"size\": {}, \"entsize\": {}, \"align\": {}, \"link\": {}, \"info\": {}}}",
            json_str(&s.name),
            s.sh_type,
            json_str(&section_type_name(s.sh_type)),
            s.flags,
            offsets[i],
            s.size(),
            s.entsize,
            s.addralign,
            s.link,
            s.info
        );
        o.push_str(if i + 1 < n { ",\n" } else { "\n" });
    }
    o.push_str("  ],\n  \"symbols\": [\n");
    let syms = c.symbols();
    for (i, s) in syms.iter().enumerate() {
        let _ = write!(
            o,
            "    {{\"index\": {i}, \"name\": {}, \"value\": {}, \"size\": {}, \"info\": {}, \"other\": {}, \"shndx\": {}, \"entry\": {}}}",
            json_str(&s.name),
            s.value,
            s.size,
            s.info,
            s.other,
            s.shndx,
            s.is_entry()
        );
        o.push_str(if i + 1 < syms.len() { ",\n" } else { "\n" });
    }
    o.push_str("  ],\n  \"attributes\": {\n");
    let listed: Vec<&Section> = c.sections.iter().filter(|s| listed_attributes(s)).collect();
    for (k, s) in listed.iter().enumerate() {
        let SectionData::Attributes(recs) = &s.data else {
            continue;
        };
        let compat = s.sh_type == sht::CUDA_COMPAT;
        let _ = writeln!(o, "    {}: [", json_str(&s.name));
        for (j, r) in recs.iter().enumerate() {
            let name = if compat {
                eiattr::compat_name(r.code).unwrap_or("unknown Attribute")
            } else {
                eiattr::attr_name(r.code)
            };
            let _ = write!(
                o,
                "      {{\"code\": {}, \"name\": {}, \"format\": {}, \"value\": {}}}",
                r.code,
                json_str(name),
                json_str(r.format.name()),
                json_str(&value_text(r, syms, compat).unwrap_or_default())
            );
            o.push_str(if j + 1 < recs.len() { ",\n" } else { "\n" });
        }
        o.push_str(if k + 1 < listed.len() {
            "    ],\n"
        } else {
            "    ]\n"
        });
    }
    o.push_str("  }\n}\n");
    o
}
