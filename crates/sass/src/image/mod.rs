//! The compact form of the encoding tables: what `build.rs` makes of each committed
//! `tables/<sm>.txt` ([`write`] says the layout) and the binary embeds instead of the text.
//!
//! An image is a small global part (chunk list, bucket list, dispatch list, modifier flags)
//! and, compressed one by one, a part per *chunk* (up to 256 encodings of one 12-bit opcode:
//! fixed-size heads with mask and value, then records with template and slots), a part per
//! opcode with the decoder's *dispatch* index (made at build time: keys, groups, positions),
//! and a part per *bucket* (the assembler's template and shape indexes for one first mnemonic
//! token, `IMAD`). [`crate::table`] decompresses the global part on the first use of an SM;
//! an opcode's dispatch part is decompressed and binary-searched in place the first time a
//! word of that opcode is decoded, and only the chunks holding the candidates it names are
//! opened (`LDG` has 7,000 encodings on sm_90; a lookup reads at most a handful); an
//! encoding's record is decoded the first time that encoding is used, and the assembler's
//! searches read templates, composable bits and slot kinds from records without decoding
//! them; a token's bucket is decompressed the first time the assembler looks up a template
//! with that token, then binary-searched in place. Compiling a kernel thus touches
//! the few dozen opcodes and tokens it uses and decodes the few hundred encodings it looks
//! at, not the ~16,000 of the table, and never the other SMs.
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

/// One run of encodings of one opcode, in table order, and where its blob is.
#[derive(Debug)]
struct Chunk {
    first: u32,
    count: u32,
    blob: std::ops::Range<usize>,
}

/// One encoding, decoded from its record.
#[derive(Debug)]
struct Decoded {
    encoding: Encoding,
    fields: Vec<Field>,
    composable: u128,
}

/// One opcode's encodings (indices, in table order).
#[derive(Debug)]
struct Group {
    indices: Vec<u32>,
}

/// A chunk's part and its encodings, each decoded on first use.
#[derive(Debug)]
struct Part {
    bytes: Blob,
    decoded: Box<[OnceLock<Box<Decoded>>]>,
}

/// The bytes of a blob: in the image when stored, else decompressed.
#[derive(Debug)]
enum Blob {
    Static(&'static [u8]),
    Owned(Box<[u8]>),
}

impl std::ops::Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Blob::Static(b) => b,
            Blob::Owned(b) => b,
        }
    }
}

impl Blob {
    fn open(b: &'static [u8]) -> Result<Blob, String> {
        match b.split_first() {
            Some((&STORED, rest)) => Ok(Blob::Static(rest)),
            Some((&LZ4, rest)) => lz4_flex::block::decompress_size_prepended(rest)
                .map(|v| Blob::Owned(v.into_boxed_slice()))
                .map_err(|e| format!("decompressing: {e}")),
            _ => Err("unknown blob method".to_string()),
        }
    }
}

/// A table image read in place (see the module docs).
#[derive(Debug)]
pub struct Image {
    /// The global part, decompressed at load.
    global: Blob,
    /// The chunk blobs (compressed).
    chunk_area: &'static [u8],
    len: usize,
    chunks: Vec<Chunk>,
    /// Per chunk: its part, decompressed on first use.
    parts: Vec<OnceLock<Part>>,
    /// Per 12-bit opcode: its slot in `groups` (`u16::MAX`: no encoding).
    group_of: Vec<u16>,
    /// Per group: the chunks of its opcode, in table order.
    group_chunks: Vec<Vec<u32>>,
    groups: Vec<OnceLock<Group>>,
    /// Per group: its dispatch blob, and the blob decompressed on first use.
    dispatch_blobs: Vec<std::ops::Range<usize>>,
    dispatch_parts: Vec<OnceLock<Blob>>,
    /// Per first mnemonic token (sorted): the token and its bucket blob.
    buckets: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    /// Per bucket: its part, decompressed on first use.
    bucket_parts: Vec<OnceLock<Blob>>,
    kinds: Vec<SlotKind>,
    formats: Vec<FloatFormat>,
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
    /// The string at (offset, length) of the global string pool.
    fn str_bytes(&self, off: u32, len: u32) -> &[u8] {
        let a = self.strings + off as usize;
        &self.global[a..a + len as usize]
    }

    fn str(&self, off: u32, len: u32) -> &str {
        std::str::from_utf8(self.str_bytes(off, len)).expect("image strings are UTF-8")
    }

    /// The bucket part of templates whose first mnemonic token is `token`.
    fn bucket(&self, token: &str) -> Option<&[u8]> {
        let b = binary_search(self.buckets.len(), |k| {
            self.global[self.buckets[k].0.clone()].cmp(token.as_bytes())
        })?;
        Some(self.bucket_at(b))
    }

    fn bucket_at(&self, b: usize) -> &[u8] {
        self.bucket_parts[b].get_or_init(|| {
            Blob::open(&self.chunk_area[self.buckets[b].1.clone()])
                .expect("images made by build.rs open")
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The part of the chunk holding encoding `i` (decompressed on first use), and `i`'s
    /// position in it.
    fn part(&self, i: usize) -> (&Part, usize) {
        let c = self.chunks.partition_point(|c| c.first as usize <= i) - 1;
        let chunk = &self.chunks[c];
        let part = self.parts[c].get_or_init(|| Part {
            bytes: Blob::open(&self.chunk_area[chunk.blob.clone()])
                .expect("images made by build.rs open"),
            decoded: (0..chunk.count).map(|_| OnceLock::new()).collect(),
        });
        (part, i - chunk.first as usize)
    }

    /// Encoding `i`'s mask and value (no decoding).
    pub(crate) fn head(&self, i: usize) -> (u128, u128) {
        let (part, j) = self.part(i);
        let mut c = Cursor::new(&part.bytes, C_HEADS + HEAD_LEN * j);
        (c.u128(), c.u128())
    }

    /// Encoding `i`, decoded on first use.
    fn decoded(&self, i: usize) -> Option<&Decoded> {
        if i >= self.len {
            return None;
        }
        let (part, j) = self.part(i);
        Some(part.decoded[j].get_or_init(|| Box::new(self.decode(&part.bytes, j))))
    }

    /// Encoding `j` of a chunk's part.
    fn decode(&self, part: &[u8], j: usize) -> Decoded {
        let mut head = Cursor::new(part, C_HEADS + HEAD_LEN * j);
        let (mask, value) = (head.u128(), head.u128());
        let records = u32_at(part, C_RECORDS) as usize;
        let strings = u32_at(part, C_STRINGS) as usize;
        let text = |off: u32, len: u32| {
            let a = strings + off as usize;
            std::str::from_utf8(&part[a..a + len as usize])
                .expect("image strings are UTF-8")
                .to_string()
        };
        let mut cur = Cursor::new(part, records + head.u32() as usize);
        let defaults = cur.u128();
        let flags = cur.u8();
        let guard = match flags & 3 {
            0 => None,
            1 => Some(false),
            _ => Some(true),
        };
        let composable = if flags & REC_COMPOSABLE != 0 {
            cur.u128()
        } else {
            0
        };
        let (off, len) = (cur.u32(), cur.u32());
        let template = text(off, len);
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
                        text: text(off, len),
                    }
                }
            });
        }
        let encoding = Encoding {
            mask,
            value,
            defaults,
            guard,
            template,
            slots,
        };
        Decoded {
            fields: fields_of(&encoding),
            encoding,
            composable,
        }
    }

    /// Encoding `i`'s record cursor past its defaults and flags byte, and the flags byte.
    fn record(&self, i: usize) -> (&[u8], Cursor<'_>, u8) {
        let (part, j) = self.part(i);
        let bytes: &[u8] = &part.bytes;
        let mut head = Cursor::new(bytes, C_HEADS + HEAD_LEN * j + 32);
        let records = u32_at(bytes, C_RECORDS) as usize;
        let mut cur = Cursor::new(bytes, records + head.u32() as usize);
        cur.at += 16;
        let flags = cur.u8();
        (bytes, cur, flags)
    }

    /// Encoding `i`'s template, read from its record without decoding it.
    pub(crate) fn template(&self, i: usize) -> &str {
        if let Some(d) = self.decoded_if_any(i) {
            return &d.encoding.template;
        }
        let (bytes, mut cur, flags) = self.record(i);
        if flags & REC_COMPOSABLE != 0 {
            cur.at += 16;
        }
        let (off, len) = (cur.u32() as usize, cur.u32() as usize);
        let a = u32_at(bytes, C_STRINGS) as usize + off;
        std::str::from_utf8(&bytes[a..a + len]).expect("image strings are UTF-8")
    }

    /// Whether encoding `i`'s slots have these kinds (a constant or linear slot its kind, a
    /// float slot [`SlotKind::Float`]), read from its record without decoding it.
    pub(crate) fn slots_accept(&self, i: usize, kinds: &[SlotKind]) -> bool {
        if let Some(d) = self.decoded_if_any(i) {
            return crate::table::slots_accept(&d.encoding.slots, kinds);
        }
        let (_, mut cur, flags) = self.record(i);
        if flags & REC_COMPOSABLE != 0 {
            cur.at += 16;
        }
        cur.at += 8;
        if usize::from(cur.u8()) != kinds.len() {
            return false;
        }
        for &want in kinds {
            match cur.u8() {
                SLOT_LINEAR => {
                    if self.kinds[usize::from(cur.u8())] != want {
                        return false;
                    }
                    cur.at += 1;
                    cur.varint();
                    match cur.u8() {
                        BITS_LIST => {
                            for _ in 0..cur.varint() {
                                cur.at += 1;
                                cur.varint();
                            }
                        }
                        _ => cur.at += 2,
                    }
                }
                SLOT_FLOAT => {
                    if want != SlotKind::Float {
                        return false;
                    }
                    cur.at += 1;
                    let n = usize::from(cur.u8());
                    cur.at += n;
                }
                _ => {
                    if self.kinds[usize::from(cur.u8())] != want {
                        return false;
                    }
                    cur.varint();
                    cur.at += 8;
                }
            }
        }
        true
    }

    /// Encoding `i` if it has been decoded already.
    fn decoded_if_any(&self, i: usize) -> Option<&Decoded> {
        let (part, j) = self.part(i);
        part.decoded[j].get().map(|d| &**d)
    }

    pub(crate) fn encoding(&self, i: usize) -> Option<&Encoding> {
        self.decoded(i).map(|d| &d.encoding)
    }

    pub(crate) fn fields(&self, i: usize) -> &[Field] {
        &self.decoded(i).expect("encoding index in range").fields
    }

    /// Encoding `i`'s composable flag bits, read from its record without decoding it.
    pub(crate) fn composable(&self, i: usize) -> u128 {
        if i >= self.len {
            return 0;
        }
        if let Some(d) = self.decoded_if_any(i) {
            return d.composable;
        }
        let (_, mut cur, flags) = self.record(i);
        if flags & REC_COMPOSABLE != 0 {
            cur.u128()
        } else {
            0
        }
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
            Group { indices }
        }))
    }

    pub(crate) fn of_opcode(&self, opcode: usize) -> &[u32] {
        self.group(opcode).map_or(&[], |g| &g.indices)
    }

    /// The dispatch part of an opcode's group (decompressed on first use).
    fn dispatch_part(&self, opcode: usize) -> Option<&[u8]> {
        let g = usize::from(*self.group_of.get(opcode)?);
        let range = self.dispatch_blobs.get(g)?;
        Some(self.dispatch_parts[g].get_or_init(|| {
            Blob::open(&self.chunk_area[range.clone()]).expect("images made by build.rs open")
        }))
    }

    /// The encoding that decodes `word` ([`Dispatch::lookup`] over the dispatch part in
    /// place: only the chunks of the candidates' group are opened).
    pub(crate) fn lookup(&self, word: u128) -> Option<usize> {
        let part = self.dispatch_part((word & crate::table::OPCODE_MASK) as usize)?;
        let mut c = Cursor::new(part, 0);
        let key_mask = c.u128();
        let n = c.u32() as usize;
        let w = usize::from(c.u8());
        let key = gather_bits(word, key_mask);
        let g = binary_search(n, |k| key_at(part, 21 + w * k, w).cmp(&key))?;
        let starts = 21 + w * n;
        let (from, to) = (
            u16_at(part, starts + 2 * g),
            u16_at(part, starts + 2 * g + 2),
        );
        let entries = starts + 2 * (n + 1);
        let list = self.of_opcode((word & crate::table::OPCODE_MASK) as usize);
        (from..to)
            .map(|j| list[u16_at(part, entries + 2 * j)] as usize)
            .find(|&i| {
                let (mask, value) = self.head(i);
                word & mask == value
            })
    }

    /// The dispatch part of an opcode as the structure [`Dispatch::new`] builds (to compare
    /// an image with a parsed table).
    pub(crate) fn dispatch(&self, opcode: usize) -> Option<Dispatch> {
        let part = self.dispatch_part(opcode)?;
        let mut c = Cursor::new(part, 0);
        let key_mask = c.u128();
        let n = c.u32() as usize;
        let w = usize::from(c.u8());
        let keys: Vec<u128> = (0..n)
            .map(|k| scatter_bits(key_at(part, 21 + w * k, w), key_mask))
            .collect();
        let at = 21 + w * n;
        let starts: Vec<u32> = (0..=n).map(|k| u16_at(part, at + 2 * k) as u32).collect();
        let total = starts.last().copied().unwrap_or(0) as usize;
        let list = self.of_opcode(opcode);
        let entries = (0..total)
            .map(|j| {
                let i = list[u16_at(part, at + 2 * (n + 1) + 2 * j)];
                let (mask, value) = self.head(i as usize);
                (i, mask, value)
            })
            .collect();
        Some(Dispatch {
            key_mask,
            keys,
            starts,
            entries,
        })
    }

    pub(crate) fn by_template(&self, key: &str) -> Indices<'_> {
        let Some(part) = self.bucket(first_token(key)) else {
            return Indices::empty();
        };
        let at = u32_at(part, B_TEMPLATES) as usize;
        let strings = u32_at(part, B_STRINGS) as usize;
        let entry = |k: usize| Cursor::new(part, at + 4 + 16 * k);
        let found = binary_search(u32_at(part, at) as usize, |k| {
            let mut c = entry(k);
            let (off, len) = (c.u32() as usize, c.u32() as usize);
            part[strings + off..strings + off + len].cmp(key.as_bytes())
        });
        match found {
            Some(k) => {
                let mut c = entry(k);
                c.at += 8;
                bucket_list(part, c.u32(), c.u32())
            }
            None => Indices::empty(),
        }
    }

    pub(crate) fn template_keys(&self) -> Vec<String> {
        let mut out = Vec::new();
        for b in 0..self.buckets.len() {
            let part = self.bucket_at(b);
            let at = u32_at(part, B_TEMPLATES) as usize;
            let strings = u32_at(part, B_STRINGS) as usize;
            for k in 0..u32_at(part, at) as usize {
                let mut c = Cursor::new(part, at + 4 + 16 * k);
                let (off, len) = (c.u32() as usize, c.u32() as usize);
                let key = std::str::from_utf8(&part[strings + off..strings + off + len]);
                out.push(key.expect("image strings are UTF-8").to_string());
            }
        }
        out
    }

    pub(crate) fn by_shape(&self, first: &str, operands: usize) -> Indices<'_> {
        let Some(part) = self.bucket(first) else {
            return Indices::empty();
        };
        let at = u32_at(part, B_SHAPES) as usize;
        let entry = |k: usize| Cursor::new(part, at + 4 + 12 * k);
        let found = binary_search(u32_at(part, at) as usize, |k| {
            (entry(k).u32() as usize).cmp(&operands)
        });
        match found {
            Some(k) => {
                let mut c = entry(k);
                c.at += 4;
                bucket_list(part, c.u32(), c.u32())
            }
            None => Indices::empty(),
        }
    }

    pub(crate) fn shape_keys(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        for b in 0..self.buckets.len() {
            let token = std::str::from_utf8(&self.global[self.buckets[b].0.clone()])
                .expect("image strings are UTF-8");
            let part = self.bucket_at(b);
            let at = u32_at(part, B_SHAPES) as usize;
            for k in 0..u32_at(part, at) as usize {
                let n = u32_at(part, at + 4 + 12 * k) as usize;
                out.push((token.to_string(), n));
            }
        }
        out
    }
}

fn u16_at(b: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// The `w`-byte dispatch key at `at`.
fn key_at(part: &[u8], at: usize, w: usize) -> u128 {
    let mut b = [0u8; 16];
    b[..w].copy_from_slice(&part[at..at + w]);
    u128::from_le_bytes(b)
}

/// A list of a bucket part.
fn bucket_list(part: &[u8], off: u32, len: u32) -> Indices<'_> {
    let a = u32_at(part, B_LISTS) as usize + 4 * off as usize;
    Indices::Bytes(part[a..a + 4 * len as usize].chunks_exact(4))
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
    pub fn from_image(sm: &str, image: &'static [u8]) -> Result<Table, String> {
        let bad = |m: &str| format!("{sm} table image: {m}");
        if image.len() < 4 {
            return Err(bad("truncated"));
        }
        let global_len = u32_at(image, 0) as usize;
        let (global, chunk_area) = image[4..]
            .split_at_checked(global_len)
            .ok_or_else(|| bad("truncated"))?;
        let global = Blob::open(global).map_err(|e| bad(&e))?;
        let bytes: &[u8] = &global;
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
            let (off, blen) = (cur.u32() as usize, cur.u32() as usize);
            if off + blen > chunk_area.len() {
                return Err(bad("chunk out of range"));
            }
            let g = &mut group_of[usize::from(opcode & 0xfff)];
            if *g == u16::MAX {
                *g = group_chunks.len() as u16;
                group_chunks.push(Vec::new());
            }
            group_chunks[usize::from(*g)].push(c as u32);
            chunks.push(Chunk {
                first,
                count,
                blob: off..off + blen,
            });
        }
        let mut dispatch_blobs = vec![0..0; group_chunks.len()];
        let mut cur = Cursor::new(bytes, h(H_DISPATCH));
        let dispatch_end = bytes.len();
        while cur.at + DISPATCH_LEN <= dispatch_end {
            let (opcode, off, blen) = (cur.u32() as usize, cur.u32() as usize, cur.u32() as usize);
            let g = *group_of
                .get(opcode)
                .ok_or_else(|| bad("dispatch opcode out of range"))?;
            if g == u16::MAX || off + blen > chunk_area.len() {
                return Err(bad("dispatch out of range"));
            }
            dispatch_blobs[usize::from(g)] = off..off + blen;
        }
        let (strings, meta_at) = (h(H_STRINGS), h(H_META));
        let mut cur = Cursor::new(bytes, h(H_BUCKETS));
        let mut buckets = Vec::new();
        for _ in 0..cur.u32() {
            let (toff, tlen) = (strings + cur.u32() as usize, cur.u32() as usize);
            let (off, blen) = (cur.u32() as usize, cur.u32() as usize);
            if off + blen > chunk_area.len() || toff + tlen > bytes.len() {
                return Err(bad("bucket out of range"));
            }
            buckets.push((toff..toff + tlen, off..off + blen));
        }
        let mut image = Image {
            global,
            chunk_area,
            len,
            parts: (0..nchunks).map(|_| OnceLock::new()).collect(),
            groups: (0..group_chunks.len()).map(|_| OnceLock::new()).collect(),
            dispatch_parts: (0..group_chunks.len()).map(|_| OnceLock::new()).collect(),
            dispatch_blobs,
            chunks,
            group_of,
            group_chunks,
            bucket_parts: (0..buckets.len()).map(|_| OnceLock::new()).collect(),
            buckets,
            kinds: Vec::new(),
            formats: Vec::new(),
            strings,
        };
        let mut meta = Cursor::new(&image.global, meta_at);
        let words = |meta: &mut Cursor<'_>| -> Vec<&str> {
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
        fn nonempty(d: Option<std::borrow::Cow<'_, Dispatch>>) -> Option<Dispatch> {
            d.map(std::borrow::Cow::into_owned)
                .filter(|d| !d.entries.is_empty())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's lookup over an image's dispatch parts finds, for every encoding's own
    /// word and for that word with its free bits set, the encoding the parsed table's
    /// in-memory index finds.
    #[test]
    fn image_lookup_equals_the_parsed_tables_lookup() {
        let sm = "sm_90";
        let text = std::fs::read_to_string(crate::table_source_path(sm)).expect("table text");
        let parsed = Table::parse(sm, &text).expect("parses");
        let (_, bytes) = crate::TABLES
            .iter()
            .find(|(n, _)| *n == sm)
            .expect("embedded");
        let image = Table::from_image(sm, bytes).expect("loads");
        for e in parsed.encodings.iter() {
            for word in [e.value, e.value | !e.mask] {
                assert_eq!(
                    image.lookup_index(word),
                    parsed.lookup_index(word),
                    "{word:032x}"
                );
            }
        }
    }

    /// What the assembler's searches read from an encoding's record without decoding it (its
    /// template, composable bits, mask and value, whether its slots take given kinds) equals
    /// the decoded encoding, for every encoding of every embedded image.
    #[test]
    fn raw_record_reads_equal_the_decoded_encodings() {
        for (sm, bytes) in crate::TABLES {
            let table = Table::from_image(sm, bytes).expect("loads");
            let im = table.encodings.image().expect("an image table");
            // Read first, while nothing is decoded.
            let raw: Vec<(String, u128, (u128, u128))> = (0..im.len())
                .map(|i| (im.template(i).to_string(), im.composable(i), im.head(i)))
                .collect();
            let kinds = |e: &Encoding| -> Vec<SlotKind> {
                e.slots
                    .iter()
                    .map(|s| match s {
                        SlotSpec::Const { kind, .. } | SlotSpec::Linear { kind, .. } => *kind,
                        SlotSpec::Float { .. } => SlotKind::Float,
                    })
                    .collect()
            };
            let fresh = Table::from_image(sm, bytes).expect("loads");
            let im2 = fresh.encodings.image().expect("an image table");
            for (i, (template, composable, head)) in raw.iter().enumerate() {
                let k = kinds(&table.encodings[i]);
                // Kinds read raw from the fresh table (nothing decoded there yet).
                assert!(im2.slots_accept(i, &k), "{sm} encoding {i}");
                let mut other = k.clone();
                match other.first_mut() {
                    Some(first) => {
                        *first = if *first == SlotKind::Hex {
                            SlotKind::R
                        } else {
                            SlotKind::Hex
                        };
                        assert!(!im2.slots_accept(i, &other), "{sm} encoding {i}");
                    }
                    None => assert!(!im2.slots_accept(i, &[SlotKind::R]), "{sm} encoding {i}"),
                }
                let e = &table.encodings[i];
                assert_eq!(template, &e.template, "{sm} encoding {i}");
                assert_eq!(
                    *composable,
                    table.encodings.composable(i),
                    "{sm} encoding {i}"
                );
                assert_eq!(*head, (e.mask, e.value), "{sm} encoding {i}");
            }
        }
    }
}
