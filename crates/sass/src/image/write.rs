//! The writer of the compact table image: a `tables/<sm>.txt` text in, the bytes that
//! [`crate::image`] reads in place out.
//!
//! This file uses nothing but `std`: `build.rs` includes it (`#[path]`) to turn every
//! committed text table into an image at build time, and the crate compiles it as
//! `sass::image::write` so that tests can build images of their own. It parses the text
//! format line by line exactly as `Table::parse` does (the same lines accepted, the same
//! order), but keeps slot kinds, float formats and flag edits as their table-file words:
//! the reader turns those into types with the crate's own parsers. `tests/image.rs` checks,
//! for every committed table, that the image decodes to the structures `Table::parse`
//! builds from the text.
//!
//! Layout. An image is a *global part* and one *chunk part* per maximal run of encodings
//! with one 12-bit opcode (a chunk; the committed tables have one per opcode), each stored as
//! a blob that is compressed on its own (u8 method: 0 stored, 1 LZ4 with the size prepended,
//! then the bytes), so that a process decompresses the global part and the chunks it uses:
//!
//! ```text
//! image          u32 length of the global blob, the global blob, the chunk and bucket
//!                blobs
//! global part    magic "KILNSASS", u32 version, u32 encodings, u32 chunks, u32 offsets of
//!                the sections below, then the sections
//!   chunks       per chunk, in table order: u32 opcode, first encoding, count, offset and
//!                length of its blob (from the end of the global blob)
//!   buckets      u32 n, then n entries sorted by token: str first mnemonic token, offset
//!                and length of its bucket blob (also from the end of the global blob)
//!   dispatch     per opcode with encodings, ascending: u32 opcode, offset and length of
//!                its dispatch blob (from the end of the global blob)
//!   strings      UTF-8 bytes
//!   meta         u32 n + str per header line, slot-kind words, float-format words;
//!                u32 n + per `F` line: u32 opcode, u32 bit, u32 when (0/1), str token,
//!                str edit
//! bucket part    the assembler's indexes for templates with one first mnemonic token
//!                (`IMAD` for `IMAD.MOV.U32 %, %, %`): u32 offsets of the sections, then
//!   templates    u32 n, then n sorted entries: str key (template without `^k`), list
//!   shapes       u32 n, then n entries sorted by operand count: u32 count, list (the
//!                encodings with modifier flags of that shape)
//!   lists        u32 encoding indices, each list in table order
//!   strings      UTF-8 bytes
//! dispatch part  the decoder's index over one opcode's encodings (`Table::lookup_index`):
//!                u128 key mask (the bits every encoding of the opcode fixes), u32 n, u8
//!                key width w, n sorted keys (distinct `value & key mask`, the mask's bits
//!                gathered, w bytes each), n + 1 u16 group starts, then per group the
//!                u16 positions of its encodings in the opcode's list (table order)
//! chunk part     u32 offsets of its records and strings, then
//!   heads        per encoding: u128 mask, u128 value, u32 offset of its record (what the
//!                decoder's dispatch needs, without decoding records)
//!   records      per encoding: u128 defaults; u8 flags (guard 0 none / 1 P / 2 U, bit 2: a
//!                u128 of composable bits follows); str template; u8 slot count; per slot
//!                a tag: 0 linear (u8 kind, u8 pcrel, zigzag varint constant, u8 form: 0 =
//!                varint count + (u8 bit, zigzag varint weight) pairs, 1/2 = contiguous
//!                field of weights 1, 2, 4, ... (2: the top one negative), u8 lowest bit,
//!                u8 width), 1 float (u8 format, u8 count, bits), 2 constant (u8 kind,
//!                zigzag varint value, str)
//!   strings      UTF-8 bytes of the chunk's templates and constant texts
//! ```
//!
//! (`str` = u32 offset + u32 length into the part's string pool; `list` = u32 offset + u32
//! length into the u32 list pool.)

use std::collections::HashMap;

/// First bytes of the global part.
pub const MAGIC: &[u8; 8] = b"KILNSASS";
/// Bumped whenever the layout changes.
pub const VERSION: u32 = 4;
/// Bytes of the global part's fixed header: magic, version, two counts, five offsets.
pub const HEADER_LEN: usize = 8 + 4 * 3 + 4 * 5;
/// Most encodings in one chunk: decoding one encoding decompresses at most this many
/// encodings' records (`LDG` alone has 7,000 on sm_90).
pub const CHUNK_MAX: usize = 256;
/// Bytes of a dispatch-table entry: opcode, blob offset and length.
pub const DISPATCH_LEN: usize = 12;
/// Bytes of a head: mask, value, record offset.
pub const HEAD_LEN: usize = 36;
/// Bytes of a chunk-table entry.
pub const CHUNK_LEN: usize = 20;

/// Global fixed-header field positions (byte offsets).
pub const H_ENCODINGS: usize = 12;
pub const H_CHUNKS: usize = 16;
pub const H_CHUNK_TABLE: usize = 20;
pub const H_BUCKETS: usize = 24;
pub const H_STRINGS: usize = 28;
pub const H_META: usize = 32;
pub const H_DISPATCH: usize = 36;
/// A bucket part's header: offsets of its templates, shapes, lists and strings.
pub const B_TEMPLATES: usize = 0;
pub const B_SHAPES: usize = 4;
pub const B_LISTS: usize = 8;
pub const B_STRINGS: usize = 12;
pub const B_HEADER_LEN: usize = 16;
/// A chunk part's header: offsets of its records and strings (its heads start at 8).
pub const C_RECORDS: usize = 0;
pub const C_STRINGS: usize = 4;
pub const C_HEADS: usize = 8;

/// Blob methods.
pub const STORED: u8 = 0;
pub const LZ4: u8 = 1;

/// Slot tags of a record.
pub const SLOT_LINEAR: u8 = 0;
pub const SLOT_FLOAT: u8 = 1;
pub const SLOT_CONST: u8 = 2;
/// Forms of a linear slot's bits.
pub const BITS_LIST: u8 = 0;
pub const BITS_FIELD: u8 = 1;
pub const BITS_SIGNED_FIELD: u8 = 2;
/// Record flag: a u128 of composable flag bits follows.
pub const REC_COMPOSABLE: u8 = 4;

/// One slot as the text gives it (kinds and formats as their table-file words).
enum Slot<'a> {
    Linear {
        kind: &'a str,
        c: i128,
        pcrel: bool,
        bits: Vec<(u8, i128)>,
    },
    Float {
        format: &'a str,
        bits: Vec<u8>,
    },
    Const {
        kind: &'a str,
        value: i128,
        text: &'a str,
    },
}

struct Enc<'a> {
    mask: u128,
    value: u128,
    defaults: u128,
    guard: u8,
    template: &'a str,
    slots: Vec<Slot<'a>>,
    composable: u128,
}

/// Makes a blob of bytes: the method byte and the payload.
pub type Sealer = dyn Fn(&[u8]) -> (u8, Vec<u8>);

/// An `F` line: (opcode, bit, `when` token or none, edit text).
type FlagLine<'a> = (u16, u8, Option<&'a str>, &'a str);

/// Converts a table text (`tables/<sm>.txt`) into its image, each blob made by `blob`
/// (which returns the method byte and the payload: [`stored`], or LZ4 in `build.rs`).
/// Errors name the line, as `Table::parse` does; a text that parser rejects is rejected
/// here too.
pub fn image_of(sm: &str, text: &str, blob: &Sealer) -> Result<Vec<u8>, String> {
    let mut header: Vec<&str> = Vec::new();
    let mut encs: Vec<Enc<'_>> = Vec::new();
    let mut flags: Vec<FlagLine<'_>> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let err = |m: &str| format!("{sm} table line {}: {m}: `{line}`", n + 1);
        if let Some(h) = line.strip_prefix("# ") {
            header.push(h);
        } else if let Some(r) = line.strip_prefix("E ") {
            let f: Vec<&str> = r.split(' ').collect();
            if f.len() != 4 {
                return Err(err("expected 4 fields"));
            }
            let hex = |s: &str| u128::from_str_radix(s, 16).map_err(|_| err("bad hex"));
            let guard = match f[3] {
                "-" => 0,
                "P" => 1,
                "U" => 2,
                _ => return Err(err("bad guard")),
            };
            encs.push(Enc {
                mask: hex(f[0])?,
                value: hex(f[1])?,
                defaults: hex(f[2])?,
                guard,
                template: "",
                slots: Vec::new(),
                composable: 0,
            });
        } else if let Some(x) = line.strip_prefix("X ") {
            let e = encs.last_mut().ok_or_else(|| err("X before E"))?;
            e.composable = u128::from_str_radix(x, 16).map_err(|_| err("bad hex"))?;
        } else if let Some(f) = line.strip_prefix("F ") {
            let mut it = f.splitn(3, ' ');
            let (Some(op), Some(bit), Some(edit)) = (it.next(), it.next(), it.next()) else {
                return Err(err("bad flag"));
            };
            let op = u16::from_str_radix(op, 16).map_err(|_| err("bad opcode"))?;
            let bit: u8 = bit.parse().map_err(|_| err("bad bit"))?;
            if let Some(rest) = edit.strip_prefix("when ") {
                let (token, edit) = rest.split_once(' ').ok_or_else(|| err("bad flag"))?;
                if !flags
                    .iter()
                    .any(|&(o, b, w, _)| (o, b) == (op, bit) && w.is_none())
                {
                    return Err(err("when before its flag"));
                }
                flags.push((op, bit, Some(token), edit));
            } else {
                flags.push((op, bit, None, edit));
            }
        } else if let Some(t) = line.strip_prefix("T ") {
            encs.last_mut().ok_or_else(|| err("T before E"))?.template = t;
        } else if let Some(r) = line.strip_prefix("S ") {
            let e = encs.last_mut().ok_or_else(|| err("S before E"))?;
            let f: Vec<&str> = r.splitn(4, ' ').collect();
            let slot = match (f.first(), f.len()) {
                (Some(&"L"), 4) => {
                    let rest: Vec<&str> = f[3].split(' ').collect();
                    if rest.len() != 2 {
                        return Err(err("bad linear slot"));
                    }
                    let mut bits = Vec::new();
                    for p in rest[1].split(',').filter(|p| !p.is_empty()) {
                        let (b, w) = p.split_once(':').ok_or_else(|| err("bad bit"))?;
                        bits.push((
                            b.parse().map_err(|_| err("bad bit"))?,
                            w.parse().map_err(|_| err("bad weight"))?,
                        ));
                    }
                    Slot::Linear {
                        kind: f[1],
                        c: f[2].parse().map_err(|_| err("bad constant"))?,
                        pcrel: rest[0] == "1",
                        bits,
                    }
                }
                (Some(&"F"), 3) => Slot::Float {
                    format: f[1],
                    bits: f[2]
                        .split(',')
                        .map(|b| b.parse().map_err(|_| err("bad bit")))
                        .collect::<Result<_, _>>()?,
                },
                (Some(&"C"), 3 | 4) => Slot::Const {
                    kind: f[1],
                    value: f[2].parse().map_err(|_| err("bad value"))?,
                    text: f.get(3).copied().unwrap_or(""),
                },
                _ => return Err(err("bad slot")),
            };
            e.slots.push(slot);
        } else if !line.trim().is_empty() {
            return Err(err("unknown line"));
        }
    }
    // Composable bits outside an encoding's mask mean nothing (`Table::set_flags` drops
    // them too).
    for e in &mut encs {
        e.composable &= e.mask;
    }
    Ok(Writer::default().write(&header, &encs, &flags, blob))
}

/// A blob stored as it is.
pub fn stored(bytes: &[u8]) -> (u8, Vec<u8>) {
    (STORED, bytes.to_vec())
}

/// A template without its `^k` reuse markers (`Table`'s `strip_reuse_markers`).
fn template_key(t: &str) -> String {
    let b = t.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'^' {
            i += 1;
            if b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).expect("only ASCII bytes were removed")
}

/// The first mnemonic token and operand count of a template (`compose::shape`).
fn shape(t: &str) -> (&str, usize) {
    let (mnemonic, rest) = t.split_once(' ').unwrap_or((t, ""));
    let n = if rest.is_empty() {
        0
    } else {
        rest.split(", ").count()
    };
    (first_token(mnemonic), n)
}

/// The first mnemonic token of a template or key: its bucket (the reader computes it the
/// same way).
pub fn first_token(t: &str) -> &str {
    let mnemonic = t.split(' ').next().unwrap_or("");
    mnemonic.split('.').next().unwrap_or("")
}

/// A field of weights 1, 2, 4, ... on consecutive bits (the top weight negative when
/// `signed`), at most 64 wide: (lowest bit, width, signed).
fn field(bits: &[(u8, i128)]) -> Option<(u8, u8, bool)> {
    let lo = bits.first()?.0;
    if bits.len() > 64 {
        return None;
    }
    let mut signed = false;
    for (i, &(b, w)) in bits.iter().enumerate() {
        if usize::from(b) != usize::from(lo) + i {
            return None;
        }
        let p = 1i128 << i;
        if w == p {
            continue;
        }
        if i == bits.len() - 1 && w == -p {
            signed = true;
            continue;
        }
        return None;
    }
    Some((lo, bits.len() as u8, signed))
}

/// A string pool with each distinct string stored once.
#[derive(Default)]
struct Strings {
    bytes: Vec<u8>,
    at: HashMap<String, u32>,
}

impl Strings {
    fn add(&mut self, s: &str) -> [u32; 2] {
        let off = match self.at.get(s) {
            Some(&o) => o,
            None => {
                let o = self.bytes.len() as u32;
                self.bytes.extend_from_slice(s.as_bytes());
                self.at.insert(s.to_string(), o);
                o
            }
        };
        [off, s.len() as u32]
    }
}

#[derive(Default)]
struct Writer {
    strings: Strings,
}

/// A bucket part: the template and shape indexes of one first mnemonic token.
fn bucket_part(templates: &[(String, Vec<u32>)], shapes: &[(usize, Vec<u32>)]) -> Vec<u8> {
    let mut strings = Strings::default();
    let mut lists: Vec<u32> = Vec::new();
    let mut list = |l: &[u32]| {
        let off = lists.len() as u32;
        lists.extend_from_slice(l);
        [off, l.len() as u32]
    };
    let mut t = Vec::new();
    put_u32s(&mut t, &[templates.len() as u32]);
    for (k, l) in templates {
        let s = strings.add(k);
        let l = list(l);
        put_u32s(&mut t, &[s[0], s[1], l[0], l[1]]);
    }
    let mut sh = Vec::new();
    put_u32s(&mut sh, &[shapes.len() as u32]);
    for (n, l) in shapes {
        let l = list(l);
        put_u32s(&mut sh, &[*n as u32, l[0], l[1]]);
    }
    let mut out = Vec::new();
    let at_shapes = B_HEADER_LEN + t.len();
    let at_lists = at_shapes + sh.len();
    let at_strings = at_lists + 4 * lists.len();
    put_u32s(
        &mut out,
        &[
            B_HEADER_LEN as u32,
            at_shapes as u32,
            at_lists as u32,
            at_strings as u32,
        ],
    );
    out.extend_from_slice(&t);
    out.extend_from_slice(&sh);
    put_u32s(&mut out, &lists);
    out.extend_from_slice(&strings.bytes);
    out
}

/// A dispatch part over `list` (one opcode's encodings, in table order): what
/// `table::Dispatch::new` builds, grouped by the bits all of them fix.
fn dispatch_part(encs: &[Enc<'_>], list: &[u32]) -> Vec<u8> {
    let key_mask = list.iter().fold(!0u128, |m, &i| m & encs[i as usize].mask);
    // Each encoding by its position in the opcode's list (u16: `LDG`, the largest, has
    // 7,000 encodings).
    assert!(
        list.len() <= usize::from(u16::MAX),
        "an opcode with 64K encodings"
    );
    let mut keyed: Vec<(u128, u32)> = list
        .iter()
        .enumerate()
        .map(|(j, &i)| (encs[i as usize].value & key_mask, j as u32))
        .collect();
    // Stable: table order is kept within a group.
    keyed.sort_by_key(|&(k, _)| k);
    let mut keys: Vec<u128> = Vec::new();
    let mut starts: Vec<u32> = Vec::new();
    for (j, &(k, _)) in keyed.iter().enumerate() {
        if keys.last() != Some(&k) {
            keys.push(k);
            starts.push(j as u32);
        }
    }
    starts.push(keyed.len() as u32);
    // Keys as the bits of the key mask gathered (order-preserving), in as few bytes as
    // they need.
    let width = key_width(key_mask);
    let mut out = Vec::with_capacity(21 + width * keys.len() + 4 * (starts.len() + keyed.len()));
    out.extend_from_slice(&key_mask.to_le_bytes());
    put_u32s(&mut out, &[keys.len() as u32]);
    out.push(width as u8);
    for k in &keys {
        out.extend_from_slice(&gather_bits(*k, key_mask).to_le_bytes()[..width]);
    }
    for x in starts.iter().copied().chain(keyed.iter().map(|&(_, j)| j)) {
        out.extend_from_slice(&(x as u16).to_le_bytes());
    }
    out
}

/// Bytes of a dispatch key under `mask`: its set bits, gathered.
pub fn key_width(mask: u128) -> usize {
    (mask.count_ones() as usize).div_ceil(8).max(1)
}

/// The bits of `value` where `mask` has ones, packed from bit 0 up (a parallel bit extract:
/// it keeps the order of values under one mask).
pub fn gather_bits(value: u128, mask: u128) -> u128 {
    let (mut out, mut k, mut m) = (0u128, 0, mask);
    while m != 0 {
        let b = m.trailing_zeros();
        out |= (value >> b & 1) << k;
        k += 1;
        m &= m - 1;
    }
    out
}

/// The inverse of [`gather_bits`]: gathered bits put back where `mask` has ones.
pub fn scatter_bits(gathered: u128, mask: u128) -> u128 {
    let (mut out, mut k, mut m) = (0u128, 0, mask);
    while m != 0 {
        let b = m.trailing_zeros();
        out |= (gathered >> k & 1) << b;
        k += 1;
        m &= m - 1;
    }
    out
}

/// A word's index in a dictionary of words, added on first use.
fn index_of<'a>(list: &mut Vec<&'a str>, w: &'a str) -> u8 {
    match list.iter().position(|x| *x == w) {
        Some(i) => i as u8,
        None => {
            list.push(w);
            (list.len() - 1) as u8
        }
    }
}

/// A chunk part: heads, records and strings of `encs` (one chunk).
fn chunk_part<'a>(
    encs: &[Enc<'a>],
    kinds: &mut Vec<&'a str>,
    formats: &mut Vec<&'a str>,
) -> Vec<u8> {
    let mut strings = Strings::default();
    let mut records = Vec::new();
    let mut heads = Vec::with_capacity(encs.len() * HEAD_LEN);
    for e in encs {
        heads.extend_from_slice(&e.mask.to_le_bytes());
        heads.extend_from_slice(&e.value.to_le_bytes());
        put_u32s(&mut heads, &[records.len() as u32]);
        records.extend_from_slice(&e.defaults.to_le_bytes());
        let composable = if e.composable != 0 { REC_COMPOSABLE } else { 0 };
        records.push(e.guard | composable);
        if e.composable != 0 {
            records.extend_from_slice(&e.composable.to_le_bytes());
        }
        put_u32s(&mut records, &strings.add(e.template));
        records.push(u8::try_from(e.slots.len()).expect("at most 255 slots"));
        for s in &e.slots {
            match s {
                Slot::Linear {
                    kind,
                    c,
                    pcrel,
                    bits,
                } => {
                    records.push(SLOT_LINEAR);
                    records.push(index_of(kinds, kind));
                    records.push(u8::from(*pcrel));
                    put_varint(&mut records, *c);
                    match field(bits) {
                        Some((lo, n, signed)) => {
                            records.push(if signed {
                                BITS_SIGNED_FIELD
                            } else {
                                BITS_FIELD
                            });
                            records.push(lo);
                            records.push(n);
                        }
                        None => {
                            records.push(BITS_LIST);
                            put_varint(&mut records, bits.len() as i128);
                            for &(b, w) in bits {
                                records.push(b);
                                put_varint(&mut records, w);
                            }
                        }
                    }
                }
                Slot::Float { format, bits } => {
                    records.push(SLOT_FLOAT);
                    records.push(index_of(formats, format));
                    records.push(u8::try_from(bits.len()).expect("at most 128 bits"));
                    records.extend_from_slice(bits);
                }
                Slot::Const { kind, value, text } => {
                    records.push(SLOT_CONST);
                    records.push(index_of(kinds, kind));
                    put_varint(&mut records, *value);
                    put_u32s(&mut records, &strings.add(text));
                }
            }
        }
    }
    let mut out = Vec::with_capacity(C_HEADS + heads.len() + records.len());
    let at_records = C_HEADS + heads.len();
    put_u32s(
        &mut out,
        &[at_records as u32, (at_records + records.len()) as u32],
    );
    out.extend_from_slice(&heads);
    out.extend_from_slice(&records);
    out.extend_from_slice(&strings.bytes);
    out
}

impl Writer {
    fn write<'a>(
        mut self,
        header: &[&'a str],
        encs: &[Enc<'a>],
        flags: &[FlagLine<'a>],
        blob: &Sealer,
    ) -> Vec<u8> {
        let sealed = |bytes: &[u8]| {
            let (method, payload) = blob(bytes);
            let mut b = Vec::with_capacity(1 + payload.len());
            b.push(method);
            b.extend_from_slice(&payload);
            b
        };
        // Words used as slot kinds and float formats, by first use.
        let mut kinds: Vec<&'a str> = Vec::new();
        let mut formats: Vec<&'a str> = Vec::new();
        // Chunks: runs of one opcode, at most `CHUNK_MAX` long, each a blob of its own.
        let mut chunk_area = Vec::new();
        let mut chunk_table = Vec::new();
        let mut nchunks = 0u32;
        let mut start = 0;
        while start < encs.len() {
            let opcode = encs[start].value & 0xfff;
            let end = (start..encs.len().min(start + CHUNK_MAX))
                .find(|&j| encs[j].value & 0xfff != opcode)
                .unwrap_or(encs.len().min(start + CHUNK_MAX));
            let part = sealed(&chunk_part(&encs[start..end], &mut kinds, &mut formats));
            put_u32s(
                &mut chunk_table,
                &[
                    opcode as u32,
                    start as u32,
                    (end - start) as u32,
                    chunk_area.len() as u32,
                    part.len() as u32,
                ],
            );
            chunk_area.extend_from_slice(&part);
            nchunks += 1;
            start = end;
        }
        // The decoder's index per opcode.
        let mut by_opcode: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
        for (i, e) in encs.iter().enumerate() {
            by_opcode
                .entry((e.value & 0xfff) as u32)
                .or_default()
                .push(i as u32);
        }
        let mut dispatch_table = Vec::new();
        for (opcode, list) in &by_opcode {
            let part = sealed(&dispatch_part(encs, list));
            put_u32s(
                &mut dispatch_table,
                &[*opcode, chunk_area.len() as u32, part.len() as u32],
            );
            chunk_area.extend_from_slice(&part);
        }
        // Buckets by first mnemonic token: template keys sorted by their bytes, shapes by
        // operand count, each list in table order.
        type Bucket = (Vec<(String, Vec<u32>)>, Vec<(usize, Vec<u32>)>);
        let mut by_key: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, e) in encs.iter().enumerate() {
            by_key
                .entry(template_key(e.template))
                .or_default()
                .push(i as u32);
        }
        let mut buckets: std::collections::BTreeMap<String, Bucket> = Default::default();
        for (k, l) in by_key {
            let token = first_token(&k).to_string();
            buckets.entry(token).or_default().0.push((k, l));
        }
        let mut by_shape: HashMap<(&str, usize), Vec<u32>> = HashMap::new();
        for (i, e) in encs.iter().enumerate() {
            if e.composable != 0 {
                by_shape
                    .entry(shape(e.template))
                    .or_default()
                    .push(i as u32);
            }
        }
        for ((tok, n), l) in by_shape {
            buckets.entry(tok.to_string()).or_default().1.push((n, l));
        }
        let mut bucket_table = Vec::new();
        put_u32s(&mut bucket_table, &[buckets.len() as u32]);
        for (token, (mut templates, mut shapes)) in buckets {
            templates.sort();
            shapes.sort();
            let part = sealed(&bucket_part(&templates, &shapes));
            let s = self.strings.add(&token);
            put_u32s(
                &mut bucket_table,
                &[s[0], s[1], chunk_area.len() as u32, part.len() as u32],
            );
            chunk_area.extend_from_slice(&part);
        }
        let mut meta = Vec::new();
        for words in [header, &kinds, &formats] {
            put_u32s(&mut meta, &[words.len() as u32]);
            for w in words {
                let s = self.strings.add(w);
                put_u32s(&mut meta, &s);
            }
        }
        put_u32s(&mut meta, &[flags.len() as u32]);
        for &(op, bit, when, edit) in flags {
            let tok = self.strings.add(when.unwrap_or(""));
            let ed = self.strings.add(edit);
            put_u32s(
                &mut meta,
                &[
                    u32::from(op),
                    u32::from(bit),
                    u32::from(when.is_some()),
                    tok[0],
                    tok[1],
                    ed[0],
                    ed[1],
                ],
            );
        }
        // The global part: header, then the sections in the order of their offsets.
        let mut global = Vec::new();
        global.extend_from_slice(MAGIC);
        put_u32s(&mut global, &[VERSION, encs.len() as u32, nchunks]);
        let sections = [
            &chunk_table,
            &bucket_table,
            &self.strings.bytes,
            &meta,
            &dispatch_table,
        ];
        let mut at = HEADER_LEN;
        for s in sections {
            put_u32s(&mut global, &[at as u32]);
            at += s.len();
        }
        assert_eq!(global.len(), HEADER_LEN);
        for s in sections {
            global.extend_from_slice(s);
        }
        let global = sealed(&global);
        let mut out = Vec::with_capacity(4 + global.len() + chunk_area.len());
        put_u32s(&mut out, &[global.len() as u32]);
        out.extend_from_slice(&global);
        out.extend_from_slice(&chunk_area);
        out
    }
}

fn put_u32s(out: &mut Vec<u8>, v: &[u32]) {
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

/// A signed integer as a zigzag LEB128 varint.
fn put_varint(out: &mut Vec<u8>, v: i128) {
    let mut z = ((v << 1) ^ (v >> 127)) as u128;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}
