//! The compact form of the encoding tables: what `build.rs` makes of each committed
//! `tables/<sm>.txt` ([`write`] says the layout) and the binary embeds, LZ4-compressed,
//! instead of the text.
//!
//! [`crate::table`] decompresses an SM's image on the first use of that SM (about 1 MB for
//! sm_90) and reads it in place: loading reads the fixed header, the chunk list and the
//! modifier flags; an opcode's encodings are decoded from their records the first time a
//! word or a template of that opcode is looked up; the template and shape indexes are
//! binary-searched in the image. Compiling a kernel thus decodes the few dozen opcodes it
//! uses, not the ~16,000 encodings of the table, and never touches the other SMs.
//!
//! The text stays the reviewable source of truth; `tests/image.rs` checks that every
//! committed table's image decodes to exactly the structures [`Table::parse`] builds from
//! its text ([`compare`]).

pub mod write;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::compose::{Edit, FlagEdit};
use crate::table::{
    Dispatch, Encoding, Encodings, Field, FloatFormat, Indices, SlotSpec, Table, fields_of,
};
use crate::text::SlotKind;
use write::*;

/// One run of encodings of one opcode, in table order.
#[derive(Debug)]
struct ChunkInfo {
    first: u32,
    count: u32,
    /// Offset of its first record in the image.
    record: usize,
}

/// A chunk's encodings, decoded.
#[derive(Debug)]
struct Chunk {
    list: Vec<Encoding>,
    fields: Vec<Vec<Field>>,
    composable: Vec<u128>,
}

/// One opcode's encodings (indices, in table order) and the decoder's index over them.
#[derive(Debug)]
struct Group {
    indices: Vec<u32>,
    dispatch: Dispatch,
}

/// A table image read in place (see the module docs).
#[derive(Debug)]
pub struct Image {
    bytes: &'static [u8],
    len: usize,
    chunks: Vec<ChunkInfo>,
    chunk_data: Vec<OnceLock<Chunk>>,
    /// Per 12-bit opcode: its slot in `groups` (`u16::MAX`: no encoding).
    group_of: Vec<u16>,
    /// Per group: the chunks of its opcode, in table order.
    group_chunks: Vec<Vec<u32>>,
    groups: Vec<OnceLock<Group>>,
    kinds: Vec<SlotKind>,
    formats: Vec<FloatFormat>,
    templates: usize,
    shapes: usize,
    lists: usize,
    strings: usize,
}

/// A reader over image bytes.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(b: &'a [u8], at: usize) -> Cursor<'a> {
        Cursor { b, at }
    }

    fn u8(&mut self) -> u8 {
        let v = self.b[self.at];
        self.at += 1;
        v
    }

    fn u32(&mut self) -> u32 {
        let v = u32_at(self.b, self.at);
        self.at += 4;
        v
    }

    fn u128(&mut self) -> u128 {
        let v = u128::from_le_bytes(self.b[self.at..self.at + 16].try_into().expect("16 bytes"));
        self.at += 16;
        v
    }

    fn varint(&mut self) -> i128 {
        let mut z = 0u128;
        let mut shift = 0;
        loop {
            let b = self.u8();
            z |= u128::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
        }
        (z >> 1) as i128 ^ -((z & 1) as i128)
    }

    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let v = &self.b[self.at..self.at + n];
        self.at += n;
        v
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl Image {
    /// The string at (offset, length) of the string pool.
    fn str_bytes(&self, off: u32, len: u32) -> &'static [u8] {
        let a = self.strings + off as usize;
        &self.bytes[a..a + len as usize]
    }

    fn str(&self, off: u32, len: u32) -> &'static str {
        std::str::from_utf8(self.str_bytes(off, len)).expect("image strings are UTF-8")
    }

    fn list(&self, off: u32, len: u32) -> Indices<'static> {
        let a = self.lists + 4 * off as usize;
        Indices::Bytes(self.bytes[a..a + 4 * len as usize].chunks_exact(4))
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The chunk holding encoding `i`, decoded, and `i`'s position in it.
    fn chunk(&self, i: usize) -> Option<(&Chunk, usize)> {
        if i >= self.len {
            return None;
        }
        let c = self.chunks.partition_point(|c| c.first as usize <= i) - 1;
        let info = &self.chunks[c];
        let chunk = self.chunk_data[c].get_or_init(|| self.decode_chunk(info));
        Some((chunk, i - info.first as usize))
    }

    fn decode_chunk(&self, info: &ChunkInfo) -> Chunk {
        let mut cur = Cursor::new(self.bytes, info.record);
        let n = info.count as usize;
        let mut list = Vec::with_capacity(n);
        let mut composable = Vec::with_capacity(n);
        for _ in 0..n {
            let mask = cur.u128();
            let value = cur.u128();
            let defaults = cur.u128();
            let flags = cur.u8();
            let guard = match flags & 3 {
                0 => None,
                1 => Some(false),
                _ => Some(true),
            };
            composable.push(if flags & REC_COMPOSABLE != 0 {
                cur.u128()
            } else {
                0
            });
            let (off, len) = (cur.u32(), cur.u32());
            let template = self.str(off, len).to_string();
            let nslots = usize::from(cur.u8());
            let mut slots = Vec::with_capacity(nslots);
            for _ in 0..nslots {
                slots.push(match cur.u8() {
                    SLOT_LINEAR => {
                        let kind = self.kinds[usize::from(cur.u8())];
                        let pcrel = cur.u8() == 1;
                        let c = cur.varint();
                        let bits = match cur.u8() {
                            BITS_LIST => {
                                let n = cur.varint() as usize;
                                (0..n).map(|_| (cur.u8(), cur.varint())).collect()
                            }
                            form => {
                                let (lo, n) = (cur.u8(), cur.u8());
                                (0..n)
                                    .map(|k| {
                                        let w = 1i128 << k;
                                        let top = k + 1 == n && form == BITS_SIGNED_FIELD;
                                        (lo + k, if top { -w } else { w })
                                    })
                                    .collect()
                            }
                        };
                        SlotSpec::Linear {
                            kind,
                            c,
                            pcrel,
                            bits,
                        }
                    }
                    SLOT_FLOAT => {
                        let format = self.formats[usize::from(cur.u8())];
                        let n = usize::from(cur.u8());
                        SlotSpec::Float {
                            format,
                            bits: cur.bytes(n).to_vec(),
                        }
                    }
                    _ => {
                        let kind = self.kinds[usize::from(cur.u8())];
                        let value = cur.varint();
                        let (off, len) = (cur.u32(), cur.u32());
                        SlotSpec::Const {
                            kind,
                            value,
                            text: self.str(off, len).to_string(),
                        }
                    }
                });
            }
            list.push(Encoding {
                mask,
                value,
                defaults,
                guard,
                template,
                slots,
            });
        }
        Chunk {
            fields: list.iter().map(fields_of).collect(),
            list,
            composable,
        }
    }

    pub(crate) fn encoding(&self, i: usize) -> Option<&Encoding> {
        self.chunk(i).map(|(c, j)| &c.list[j])
    }

    pub(crate) fn fields(&self, i: usize) -> &[Field] {
        let (c, j) = self.chunk(i).expect("encoding index in range");
        &c.fields[j]
    }

    pub(crate) fn composable(&self, i: usize) -> u128 {
        self.chunk(i).map_or(0, |(c, j)| c.composable[j])
    }

    fn group(&self, opcode: usize) -> Option<&Group> {
        let g = *self.group_of.get(opcode)?;
        if g == u16::MAX {
            return None;
        }
        Some(self.groups[usize::from(g)].get_or_init(|| {
            let indices: Vec<u32> = self.group_chunks[usize::from(g)]
                .iter()
                .flat_map(|&c| {
                    let c = &self.chunks[c as usize];
                    c.first..c.first + c.count
                })
                .collect();
            let dispatch = Dispatch::new(&indices, |i| {
                self.encoding(i as usize).expect("index in range")
            });
            Group { indices, dispatch }
        }))
    }

    pub(crate) fn of_opcode(&self, opcode: usize) -> &[u32] {
        self.group(opcode).map_or(&[], |g| &g.indices)
    }

    pub(crate) fn dispatch(&self, opcode: usize) -> Option<&Dispatch> {
        self.group(opcode).map(|g| &g.dispatch)
    }

    /// Entry `k` of a sorted index at `at` with `width` u32 fields.
    fn entry(&self, at: usize, width: usize, k: usize) -> Cursor<'static> {
        Cursor::new(self.bytes, at + 4 + 4 * width * k)
    }

    pub(crate) fn by_template(&self, key: &str) -> Indices<'static> {
        let n = u32_at(self.bytes, self.templates) as usize;
        let found = binary_search(n, |k| {
            let mut c = self.entry(self.templates, 4, k);
            let (off, len) = (c.u32(), c.u32());
            self.str_bytes(off, len).cmp(key.as_bytes())
        });
        match found {
            Some(k) => {
                let mut c = self.entry(self.templates, 4, k);
                c.at += 8;
                let (off, len) = (c.u32(), c.u32());
                self.list(off, len)
            }
            None => Indices::empty(),
        }
    }

    pub(crate) fn template_keys(&self) -> Vec<String> {
        let n = u32_at(self.bytes, self.templates) as usize;
        (0..n)
            .map(|k| {
                let mut c = self.entry(self.templates, 4, k);
                let (off, len) = (c.u32(), c.u32());
                self.str(off, len).to_string()
            })
            .collect()
    }

    pub(crate) fn by_shape(&self, first: &str, operands: usize) -> Indices<'static> {
        let n = u32_at(self.bytes, self.shapes) as usize;
        let found = binary_search(n, |k| {
            let mut c = self.entry(self.shapes, 5, k);
            let (off, len, ops) = (c.u32(), c.u32(), c.u32());
            (self.str_bytes(off, len), ops as usize).cmp(&(first.as_bytes(), operands))
        });
        match found {
            Some(k) => {
                let mut c = self.entry(self.shapes, 5, k);
                c.at += 12;
                let (off, len) = (c.u32(), c.u32());
                self.list(off, len)
            }
            None => Indices::empty(),
        }
    }

    pub(crate) fn shape_keys(&self) -> Vec<(String, usize)> {
        let n = u32_at(self.bytes, self.shapes) as usize;
        (0..n)
            .map(|k| {
                let mut c = self.entry(self.shapes, 5, k);
                let (off, len, ops) = (c.u32(), c.u32(), c.u32());
                (self.str(off, len).to_string(), ops as usize)
            })
            .collect()
    }
}

/// The `k` in `0..n` at which `cmp(k)` is `Equal`, for `cmp` ascending in `k`.
fn binary_search(n: usize, cmp: impl Fn(usize) -> std::cmp::Ordering) -> Option<usize> {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match cmp(mid) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Some(mid),
        }
    }
    None
}

impl Table {
    /// A table read from an (uncompressed) image made by [`write::image_of`]. Loading reads
    /// the header, the chunk list and the flags; encodings are decoded per opcode on first
    /// use.
    pub fn from_image(sm: &str, bytes: &'static [u8]) -> Result<Table, String> {
        let bad = |m: &str| format!("{sm} table image: {m}");
        if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
            return Err(bad("not an image"));
        }
        let h = |at: usize| u32_at(bytes, at) as usize;
        if h(8) != VERSION as usize {
            return Err(bad(&format!("version {}, expected {VERSION}", h(8))));
        }
        let (len, nchunks) = (h(H_ENCODINGS), h(H_CHUNKS));
        let mut cur = Cursor::new(bytes, h(H_CHUNK_TABLE));
        let mut chunks = Vec::with_capacity(nchunks);
        let mut group_of = vec![u16::MAX; 1 << 12];
        let mut group_chunks: Vec<Vec<u32>> = Vec::new();
        for c in 0..nchunks {
            let (opcode, first, count) = (cur.u32() as u16, cur.u32(), cur.u32());
            let record = h(H_RECORDS) + cur.u32() as usize;
            let g = &mut group_of[usize::from(opcode & 0xfff)];
            if *g == u16::MAX {
                *g = group_chunks.len() as u16;
                group_chunks.push(Vec::new());
            }
            group_chunks[usize::from(*g)].push(c as u32);
            chunks.push(ChunkInfo {
                first,
                count,
                record,
            });
        }
        let mut image = Image {
            bytes,
            len,
            chunk_data: (0..nchunks).map(|_| OnceLock::new()).collect(),
            groups: (0..group_chunks.len()).map(|_| OnceLock::new()).collect(),
            chunks,
            group_of,
            group_chunks,
            kinds: Vec::new(),
            formats: Vec::new(),
            templates: h(H_TEMPLATES),
            shapes: h(H_SHAPES),
            lists: h(H_LISTS),
            strings: h(H_STRINGS),
        };
        let mut meta = Cursor::new(bytes, h(H_META));
        let words = |meta: &mut Cursor<'_>| -> Vec<&'static str> {
            let n = meta.u32();
            (0..n)
                .map(|_| {
                    let (off, len) = (meta.u32(), meta.u32());
                    image.str(off, len)
                })
                .collect()
        };
        let header: Vec<String> = words(&mut meta).into_iter().map(String::from).collect();
        let kinds = words(&mut meta)
            .into_iter()
            .map(|w| SlotKind::from_name(w).ok_or_else(|| bad(&format!("bad kind `{w}`"))))
            .collect::<Result<Vec<_>, _>>()?;
        let formats = words(&mut meta)
            .into_iter()
            .map(|w| FloatFormat::from_name(w).ok_or_else(|| bad(&format!("bad format `{w}`"))))
            .collect::<Result<Vec<_>, _>>()?;
        // `F` lines, replayed as `Table::parse` reads them.
        let mut flags = BTreeMap::new();
        for _ in 0..meta.u32() {
            let (op, bit, when) = (meta.u32() as u16, meta.u32() as u8, meta.u32() == 1);
            let (toff, tlen, eoff, elen) = (meta.u32(), meta.u32(), meta.u32(), meta.u32());
            let text = image.str(eoff, elen);
            let edit = Edit::parse(text).ok_or_else(|| bad(&format!("bad edit `{text}`")))?;
            if when {
                let flag: &mut FlagEdit = flags
                    .get_mut(&(op, bit))
                    .ok_or_else(|| bad("when before its flag"))?;
                flag.when = Some((image.str(toff, tlen).to_string(), edit));
            } else {
                flags.insert((op, bit), FlagEdit::plain(edit));
            }
        }
        image.kinds = kinds;
        image.formats = formats;
        Ok(Table::with_encodings(
            sm,
            header,
            Encodings::from_image(image),
            flags,
        ))
    }
}

/// Checks that two tables hold the same structures: header, flags, every encoding with its
/// composable bits and fast-decoding fields, and every index (per opcode: the encodings and
/// the decoder's dispatch; per template; per shape). `Err` names the first difference.
pub fn compare(a: &Table, b: &Table) -> Result<(), String> {
    let sm = &a.sm;
    let fail = |what: String| Err(format!("{sm}: {what} differs"));
    if a.sm != b.sm {
        return fail("SM".into());
    }
    if a.header != b.header {
        return fail("header".into());
    }
    if a.flags != b.flags {
        return fail("flags".into());
    }
    let (ea, eb) = (&a.encodings, &b.encodings);
    if ea.len() != eb.len() {
        return fail(format!("encoding count ({} vs {})", ea.len(), eb.len()));
    }
    for i in 0..ea.len() {
        if ea[i] != eb[i] {
            return fail(format!("encoding {i} (`{}`)", ea[i].template));
        }
        if ea.composable(i) != eb.composable(i) {
            return fail(format!("composable bits of encoding {i}"));
        }
        if ea.fields(i) != eb.fields(i) {
            return fail(format!("fields of encoding {i}"));
        }
    }
    for op in 0..1 << 12 {
        if ea.of_opcode(op) != eb.of_opcode(op) {
            return fail(format!("encodings of opcode {op:#x}"));
        }
        fn nonempty(d: Option<&Dispatch>) -> Option<&Dispatch> {
            d.filter(|d| !d.entries.is_empty())
        }
        if nonempty(ea.dispatch(op)) != nonempty(eb.dispatch(op)) {
            return fail(format!("dispatch of opcode {op:#x}"));
        }
    }
    let mut ka = ea.template_keys();
    let mut kb = eb.template_keys();
    ka.sort();
    kb.sort();
    if ka != kb {
        return fail("template keys".into());
    }
    for k in &ka {
        if !ea.by_template(k).eq(eb.by_template(k)) {
            return fail(format!("encodings of template `{k}`"));
        }
        if !a.template_indices(k).eq(b.template_indices(k)) {
            return fail(format!("assembler order of template `{k}`"));
        }
    }
    let mut sa = ea.shape_keys();
    let mut sb = eb.shape_keys();
    sa.sort();
    sb.sort();
    if sa != sb {
        return fail("shape keys".into());
    }
    for (first, n) in &sa {
        if !ea.by_shape(first, *n).eq(eb.by_shape(first, *n)) {
            return fail(format!("encodings with flags of shape `{first}`/{n}"));
        }
    }
    if a.shadows != b.shadows {
        return fail("shadows".into());
    }
    Ok(())
}
