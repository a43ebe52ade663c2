//! DWARF version 2 line programs in the form ptxas 13.0.88 writes them: `.debug_line` (code
//! address → CUDA source file and line, from the PTX's `.loc` directives) and
//! `.nv_debug_line_sass` (code address → line of the PTX text in `.nv_debug_ptx_txt`).
//!
//! One unit per section; one sequence per function, starting with `DW_LNE_set_address` (a
//! relocated 64-bit operand: the caller makes an `R_CUDA_64` relocation against the
//! function's symbol at each offset [`LineProgram::encode`] returns). Rows are encoded as
//! ptxas encodes them: a special opcode when both the line and the address move and it fits
//! one, otherwise `DW_LNS_advance_line` (when the line moves, the address does not, or it is
//! the sequence's first row), `DW_LNS_advance_pc` (when the address moves) and `DW_LNS_copy`;
//! ptxas writes `advance_pc`'s unsigned operand in the signed LEB128 form
//! ([`write_advance`]). The header
//! constants are ptxas's (`line_base` -5, `line_range` 14, `opcode_base` 10).

/// A `file_names` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineFile {
    pub name: Vec<u8>,
    /// 1-based index into the include directories, 0 for none.
    pub dir: u64,
    pub mtime: u64,
    pub size: u64,
}

/// One row of a line program, in address order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Row {
    pub address: u64,
    pub file: u32,
    pub line: u32,
    /// Only advance the address (`DW_LNS_set_file` when the file differs, then
    /// `DW_LNS_advance_pc`), appending no row: what ptxas writes before sm_90 where a
    /// function's first located instruction repeats its start line.
    pub advance_only: bool,
}

impl Row {
    pub fn new(address: u64, file: u32, line: u32) -> Row {
        Row {
            address,
            file,
            line,
            advance_only: false,
        }
    }
}

/// One function's rows and the function's size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sequence {
    pub rows: Vec<Row>,
    pub end: u64,
}

/// A line-program unit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineProgram {
    pub include_dirs: Vec<Vec<u8>>,
    pub files: Vec<LineFile>,
    /// Some `.loc` of the module names the function it was inlined from: ptxas then writes 4
    /// zero bytes (a `.debug_str` offset) after the file table.
    pub inline_names: bool,
    pub sequences: Vec<Sequence>,
}

const LINE_BASE: i64 = -5;
const LINE_RANGE: i64 = 14;
const OPCODE_BASE: u8 = 10;
const STANDARD_OPCODE_LENGTHS: [u8; 9] = [0, 1, 1, 1, 1, 0, 0, 0, 1];

const DW_LNS_COPY: u8 = 1;
const DW_LNS_ADVANCE_PC: u8 = 2;
const DW_LNS_ADVANCE_LINE: u8 = 3;
const DW_LNS_SET_FILE: u8 = 4;
const DW_LNE_END_SEQUENCE: u8 = 1;
const DW_LNE_SET_ADDRESS: u8 = 2;

pub fn write_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

pub fn write_sleb(out: &mut Vec<u8>, mut v: i64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0);
        out.push(if done { b } else { b | 0x80 });
        if done {
            return;
        }
    }
}

/// `DW_LNS_advance_pc`'s operand as ptxas writes it: in the signed LEB128 form (64 is
/// `c0 00`, not `40`), which reads as the same unsigned number.
fn write_advance(out: &mut Vec<u8>, v: u64) {
    write_sleb(out, v as i64);
}

impl LineProgram {
    /// The unit's bytes and, per sequence, the offset of its `DW_LNE_set_address` operand.
    pub fn encode(&self) -> (Vec<u8>, Vec<u64>) {
        let mut header = vec![1, 1, LINE_BASE as u8, LINE_RANGE as u8, OPCODE_BASE];
        header.extend_from_slice(&STANDARD_OPCODE_LENGTHS);
        for d in &self.include_dirs {
            header.extend_from_slice(d);
            header.push(0);
        }
        header.push(0);
        for f in &self.files {
            header.extend_from_slice(&f.name);
            header.push(0);
            write_uleb(&mut header, f.dir);
            write_uleb(&mut header, f.mtime);
            write_uleb(&mut header, f.size);
        }
        header.push(0);
        if self.inline_names {
            header.extend_from_slice(&[0; 4]);
        }
        // unit_length, version, header_length, then the header and the program.
        let program_start = 4 + 2 + 4 + header.len();
        let mut program = Vec::new();
        let mut relocs = Vec::new();
        for s in &self.sequences {
            program.extend_from_slice(&[0, 9, DW_LNE_SET_ADDRESS]);
            relocs.push((program_start + program.len()) as u64);
            program.extend_from_slice(&0u64.to_le_bytes());
            let (mut addr, mut file, mut line) = (0u64, 1u32, 1i64);
            for (k, row) in s.rows.iter().enumerate() {
                let (a, f, l) = (row.address, row.file, i64::from(row.line));
                if k == 0 || f != file {
                    program.push(DW_LNS_SET_FILE);
                    write_uleb(&mut program, u64::from(f));
                    file = f;
                }
                let (dl, da) = (l - line, a.saturating_sub(addr));
                if row.advance_only {
                    if da > 0 {
                        program.push(DW_LNS_ADVANCE_PC);
                        write_advance(&mut program, da);
                    }
                    addr = a;
                    continue;
                }
                let special = (dl - LINE_BASE) + LINE_RANGE * da as i64 + i64::from(OPCODE_BASE);
                if k > 0
                    && dl != 0
                    && da > 0
                    && (LINE_BASE..LINE_BASE + LINE_RANGE).contains(&dl)
                    && special <= 255
                {
                    program.push(special as u8);
                } else {
                    // The first row always advances the line (by 0 too); later ones only
                    // when the line moves or the address does not.
                    if k == 0 || dl != 0 || da == 0 {
                        program.push(DW_LNS_ADVANCE_LINE);
                        write_sleb(&mut program, dl);
                    }
                    if da > 0 {
                        program.push(DW_LNS_ADVANCE_PC);
                        write_advance(&mut program, da);
                    }
                    program.push(DW_LNS_COPY);
                }
                (addr, line) = (a, l);
            }
            if s.end > addr {
                program.push(DW_LNS_ADVANCE_PC);
                write_advance(&mut program, s.end - addr);
            }
            program.extend_from_slice(&[0, 1, DW_LNE_END_SEQUENCE]);
        }
        let mut out = Vec::with_capacity(program_start + program.len());
        let unit_length = (2 + 4 + header.len() + program.len()) as u32;
        out.extend_from_slice(&unit_length.to_le_bytes());
        out.extend_from_slice(&2u16.to_le_bytes());
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&program);
        (out, relocs)
    }
}

/// A decoded row: `(address, file, line)`, with the sequence's end as a last row of line 0.
pub type DecodedRow = (u64, u32, u32);

/// Decodes a unit written by [`LineProgram::encode`] (or by ptxas): each sequence's rows with
/// addresses relative to its `DW_LNE_set_address` (relocations not applied). For tests and
/// `kiln objdump`; `None` for bytes that are not such a unit.
pub fn decode(bytes: &[u8]) -> Option<(LineProgram, Vec<Vec<DecodedRow>>)> {
    let mut r = Reader { bytes, at: 0 };
    let unit_length = r.u32()? as usize;
    let end = 4 + unit_length;
    if end > bytes.len() || r.u16()? != 2 {
        return None;
    }
    let header_length = r.u32()? as usize;
    let program_start = r.at + header_length;
    let (min_inst, _default_is_stmt, line_base, line_range, opcode_base) =
        (r.u8()?, r.u8()?, r.u8()? as i8, r.u8()?, r.u8()?);
    if line_range == 0 || opcode_base == 0 {
        return None;
    }
    let mut lengths = Vec::new();
    for _ in 1..opcode_base {
        lengths.push(r.u8()?);
    }
    let mut unit = LineProgram::default();
    loop {
        let s = r.cstr()?;
        if s.is_empty() {
            break;
        }
        unit.include_dirs.push(s.to_vec());
    }
    loop {
        let name = r.cstr()?;
        if name.is_empty() {
            break;
        }
        unit.files.push(LineFile {
            name: name.to_vec(),
            dir: r.uleb()?,
            mtime: r.uleb()?,
            size: r.uleb()?,
        });
    }
    r.at = program_start;
    let mut sequences = Vec::new();
    let (mut addr, mut file, mut line) = (0u64, 1u32, 1i64);
    let mut rows = Vec::new();
    while r.at < end {
        let op = r.u8()?;
        if op >= opcode_base {
            let adj = i64::from(op - opcode_base);
            addr += (adj / i64::from(line_range)) as u64 * u64::from(min_inst);
            line += i64::from(line_base) + adj % i64::from(line_range);
            rows.push((addr, file, line as u32));
            continue;
        }
        match op {
            0 => {
                let len = r.uleb()? as usize;
                let next = r.at + len;
                match r.u8()? {
                    DW_LNE_END_SEQUENCE => {
                        rows.push((addr, file, 0));
                        sequences.push(std::mem::take(&mut rows));
                        (addr, file, line) = (0, 1, 1);
                    }
                    DW_LNE_SET_ADDRESS => addr = r.u64()?,
                    _ => {}
                }
                r.at = next;
            }
            DW_LNS_COPY => rows.push((addr, file, line as u32)),
            DW_LNS_ADVANCE_PC => addr += r.uleb()? * u64::from(min_inst),
            DW_LNS_ADVANCE_LINE => line += r.sleb()?,
            DW_LNS_SET_FILE => file = r.uleb()? as u32,
            8 => {
                let adj = i64::from(255 - opcode_base);
                addr += (adj / i64::from(line_range)) as u64 * u64::from(min_inst);
            }
            9 => addr += u64::from(r.u16()?),
            _ => {
                for _ in 0..*lengths.get(usize::from(op) - 1)? {
                    r.uleb()?;
                }
            }
        }
    }
    Some((unit, sequences))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.bytes.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn cstr(&mut self) -> Option<&[u8]> {
        let rest = self.bytes.get(self.at..)?;
        let n = rest.iter().position(|&b| b == 0)?;
        self.at += n + 1;
        Some(&rest[..n])
    }
    fn uleb(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }
    fn sleb(&mut self) -> Option<i64> {
        let mut v = 0i64;
        let mut shift = 0;
        loop {
            let b = self.u8()?;
            v |= i64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                if shift < 64 && b & 0x40 != 0 {
                    v |= -1 << shift;
                }
                return Some(v);
            }
            if shift >= 64 {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as_rows(rows: &[DecodedRow]) -> Vec<Row> {
        rows.iter().map(|&(a, f, l)| Row::new(a, f, l)).collect()
    }

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    /// ptxas 13.0.88's `.debug_line` for an sm_90 saxpy compiled by nvcc -lineinfo
    /// (`/tmp/li/k.cu`, 158 bytes): decoded, re-encoded, equal.
    #[test]
    fn ptxas_debug_line_round_trips() {
        let ptxas = hex(
            "53 00 00 00 02 00 25 00 00 00 01 01 fb 0e 0a 00 01 01 01 01 00 00 00 01 2f 74 6d 70 2f 6c 69 00 \
             00 6b 2e 63 75 00 01 e1 86 ab d8 06 9e 01 00 00 09 02 00 00 00 00 00 00 00 00 04 01 03 00 01 f0 \
             03 01 02 c0 00 01 03 01 02 30 01 03 01 02 a0 01 01 02 e0 01 00 01 01",
        );
        let (unit, seqs) = decode(&ptxas).expect("decodes");
        assert_eq!(unit.include_dirs, vec![b"/tmp/li".to_vec()]);
        assert_eq!(unit.files[0].name, b"k.cu");
        assert_eq!(unit.files[0].size, 158);
        let rows: Vec<(u64, u32, u32)> = seqs[0].clone();
        assert_eq!(
            rows,
            vec![
                (0, 1, 1),
                (0x10, 1, 2),
                (0x50, 1, 3),
                (0x80, 1, 4),
                (0x120, 1, 5),
                (0x200, 1, 0)
            ]
        );
        let again = LineProgram {
            include_dirs: unit.include_dirs.clone(),
            files: unit.files.clone(),
            inline_names: false,
            sequences: vec![Sequence {
                rows: as_rows(&rows[..rows.len() - 1]),
                end: 0x200,
            }],
        };
        let (bytes, relocs) = again.encode();
        assert_eq!(bytes, ptxas);
        assert_eq!(relocs, vec![0x32]);
    }

    /// ptxas 13.0.88's `.nv_debug_line_sass` for the same kernel: PTX lines, no file table,
    /// file 0; decoded, re-encoded, equal.
    #[test]
    fn ptxas_sass_lines_round_trip() {
        let ptxas = hex(
            "4d 00 00 00 02 00 10 00 00 00 01 01 fb 0e 0a 00 01 01 01 01 00 00 00 01 00 00 00 09 02 00 00 00 \
             00 00 00 00 00 04 00 03 14 01 03 0f 02 10 01 ed f0 f1 f1 03 01 02 20 01 f6 03 66 02 10 01 03 1e \
             02 10 01 ed ed f0 f0 f0 f0 f0 f3 02 e0 01 00 01 01",
        );
        let (unit, seqs) = decode(&ptxas).expect("decodes");
        assert!(unit.include_dirs.is_empty() && unit.files.is_empty());
        let rows = seqs[0].clone();
        assert_eq!(rows[0], (0, 0, 21));
        assert_eq!(rows[1], (0x10, 0, 36));
        assert_eq!(rows[rows.len() - 2], (0x120, 0, 56));
        let again = LineProgram {
            sequences: vec![Sequence {
                rows: as_rows(&rows[..rows.len() - 1]),
                end: 0x200,
            }],
            ..LineProgram::default()
        };
        let (bytes, relocs) = again.encode();
        assert_eq!(bytes, ptxas);
        assert_eq!(relocs, vec![0x1d]);
    }
}
