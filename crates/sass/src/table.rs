//! Encoding tables: per SM, a list of encodings learned from nvdisasm by `cargo xtask
//! sass-probe`, stored as text in `tables/<sm>.txt` and embedded in the crate.
//!
//! An [`Encoding`] says: a word whose bits under `mask` equal `value` prints as `template`,
//! where each `%` is filled from a [`SlotSpec`] (a linear function of some bits, a float
//! literal taken from some bits, or a constant) and each `^k` prints `.reuse` when reuse flag
//! `k` of the control field is set. Bits 12..=15 are the guard predicate when `guard` is set.
//! When several encodings match a word, the first in the table wins: the probe orders them so
//! that aliases (`IMAD.MOV` when an operand is `RZ`, `IMAD.SHL` for a power-of-two immediate)
//! come before the general forms they override.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

use crate::compose::{Edit, FlagEdit};
use crate::text::{SlotKind, format_float};

/// How a slot's value is obtained from the word.
#[derive(Debug, Clone, PartialEq)]
pub enum SlotSpec {
    /// `value = c + Σ weight_i · bit_i (+ pc when pc-relative)`, printed as `kind`.
    Linear {
        kind: SlotKind,
        c: i128,
        pcrel: bool,
        bits: Vec<(u8, i128)>,
    },
    /// A float literal whose encoding is the given bits (least significant first).
    Float { format: FloatFormat, bits: Vec<u8> },
    /// Printed the same for every word this encoding matches.
    Const {
        kind: SlotKind,
        value: i128,
        text: String,
    },
}

/// Encodings of float immediates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloatFormat {
    F16,
    /// bfloat16: the high 16 bits of an IEEE single (`HFMA2.BF16_V2 R5, R8, R11, 1.25, 1.25`).
    Bf16,
    F32,
    /// The high 32 bits of an IEEE double (the low 32 are zero).
    F64Hi,
}

impl FloatFormat {
    pub fn name(self) -> &'static str {
        match self {
            FloatFormat::F16 => "f16",
            FloatFormat::Bf16 => "bf16",
            FloatFormat::F32 => "f32",
            FloatFormat::F64Hi => "f64hi",
        }
    }

    pub fn from_name(s: &str) -> Option<FloatFormat> {
        Some(match s {
            "f16" => FloatFormat::F16,
            "bf16" => FloatFormat::Bf16,
            "f32" => FloatFormat::F32,
            "f64hi" => FloatFormat::F64Hi,
            _ => return None,
        })
    }

    /// Prints raw bits of this format as nvdisasm does.
    pub fn render(self, raw: u64) -> String {
        match self {
            FloatFormat::F32 => {
                let f = f32::from_bits(raw as u32);
                format_float(f64::from(f), raw >> 22 & 1 == 1)
            }
            FloatFormat::F64Hi => {
                let f = f64::from_bits(raw << 32);
                format_float(f, raw >> 19 & 1 == 1)
            }
            FloatFormat::F16 => {
                let (f, quiet) = f16_to_f64(raw as u16);
                format_float(f, quiet)
            }
            FloatFormat::Bf16 => FloatFormat::F32.render((raw & 0xffff) << 16),
        }
    }
}

/// A binary16 value as a double, and whether a NaN is quiet.
pub fn f16_to_f64(h: u16) -> (f64, bool) {
    let sign = if h >> 15 == 1 { -1.0 } else { 1.0 };
    let exp = i32::from(h >> 10 & 0x1f);
    let man = f64::from(h & 0x3ff);
    let quiet = h >> 9 & 1 == 1;
    let v = match exp {
        0 => sign * man * 2f64.powi(-24),
        31 if man == 0.0 => sign * f64::INFINITY,
        31 => return (if sign < 0.0 { -f64::NAN } else { f64::NAN }, quiet),
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    };
    (v, quiet)
}

/// One learned encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoding {
    /// Bits that must equal `value` (opcode, modifiers, pinned operands).
    pub mask: u128,
    pub value: u128,
    /// Bits nvdisasm ignores for this form, as ptxas set them in the sampled word; used only
    /// when encoding.
    pub defaults: u128,
    /// `None`: bits 12..=15 are ordinary bits; `Some(uniform)`: they are the guard predicate
    /// (`@UPn` when uniform).
    pub guard: Option<bool>,
    /// Text with `%` for slots and `^k` (k = 0..=3) for reuse-flag positions.
    pub template: String,
    pub slots: Vec<SlotSpec>,
}

impl Encoding {
    /// Bits the text determines: fixed bits, operand fields, guard, control field.
    pub fn determined_mask(&self) -> u128 {
        let mut m = self.mask | crate::control::CONTROL_MASK;
        if self.guard.is_some() {
            m |= GUARD_MASK;
        }
        for s in &self.slots {
            match s {
                SlotSpec::Linear { bits, .. } => bits.iter().for_each(|(b, _)| m |= 1u128 << b),
                SlotSpec::Float { bits, .. } => bits.iter().for_each(|b| m |= 1u128 << b),
                SlotSpec::Const { .. } => {}
            }
        }
        m
    }
}

/// Which flag sets near the shown one [`Table::find_composed_with`] tries: the pruned ones (what
/// the assembler uses), all of them, or none (the last two for the test that the pruning
/// loses nothing and that the flips matter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Flips {
    Pruned,
    All,
    None,
}

/// All encodings known for one SM.
///
/// A table is either built from encodings ([`Table::new`], [`Table::parse`]: the probe and
/// tests) or read lazily from the compact image `build.rs` makes of the committed text
/// ([`crate::table`]: each opcode's encodings are decoded from the image on first use; see
/// [`crate::image`]). Both answer every query the same way (`tests/image.rs`).
#[derive(Debug, Default)]
pub struct Table {
    pub sm: String,
    /// Header comment lines (generator, input hash).
    pub header: Vec<String>,
    /// The encodings in table (priority) order, with the indexes over them.
    pub encodings: Encodings,
    /// Modifier flags ([`crate::compose`]): (12-bit opcode, bit) -> the edit setting the bit
    /// makes (`F` lines).
    pub flags: BTreeMap<(u16, u8), FlagEdit>,
    /// Encodings built from a base encoding and a set of flags, made on first use and kept
    /// for the life of the process (a handful per table: words no encoding matches).
    composed: Mutex<HashMap<(u32, u128), &'static Encoding>>,
    /// [`Table::composed_by_template`]'s answers: template -> (encoding, flag set).
    composed_keys: Mutex<HashMap<String, Vec<(u32, u128)>>>,
    /// Per shape (first mnemonic token, operand count): its flagged encodings grouped by
    /// [`crate::compose::slot_spans`], which no flag changes, so that
    /// [`Table::composed_by_template`] looks only at encodings that may make its key.
    shape_groups: Mutex<HashMap<(String, usize), ShapeGroups>>,
    /// [`Table::composed_by_template`]'s toggled templates (reuse markers removed), which do
    /// not depend on the key: a kernel asks about many keys of one shape (an instruction
    /// with each immediate or operand form `opt` tries), and each search tries the same
    /// encodings with the same flag sets.
    toggled_keys: Mutex<HashMap<(u32, u128), Option<String>>>,
    /// Templates whose assembler order [`crate::prefer`] changed: the whole list, in the
    /// order the assembler tries it.
    preferred: HashMap<String, Vec<u32>>,
    /// Encodings that print like one ptxas writes but that ptxas never writes
    /// ([`crate::prefer::Shadow`]).
    pub(crate) shadows: std::collections::BTreeSet<u32>,
}

/// [`Table`]'s `shape_groups` entry: slot spans -> encodings (table order).
type ShapeGroups = std::sync::Arc<HashMap<String, Vec<u32>>>;

/// Per encoding and slot: `(lo, width, signed)` when a linear slot is a plain contiguous bit
/// field (weights 1, 2, 4, ..., the top one negative when signed), for fast decoding.
pub(crate) type Field = Option<(u8, u8, bool)>;

/// The decoder's index for one opcode (see [`Table::lookup_index`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Dispatch {
    /// Bits fixed by every encoding of the opcode.
    pub(crate) key_mask: u128,
    /// Sorted distinct values of `value & key_mask`.
    pub(crate) keys: Vec<u128>,
    /// Group `g` is `entries[starts[g]..starts[g + 1]]`.
    pub(crate) starts: Vec<u32>,
    /// (encoding index, mask, value), each group in table order.
    pub(crate) entries: Vec<(u32, u128, u128)>,
}

impl Dispatch {
    /// The index over `list` (indices of one opcode's encodings, in table order); `head`
    /// gives an encoding's mask and value.
    pub(crate) fn new(list: &[u32], head: impl Fn(u32) -> (u128, u128)) -> Dispatch {
        let heads: Vec<(u32, u128, u128)> = list
            .iter()
            .map(|&i| {
                let (mask, value) = head(i);
                (i, mask, value)
            })
            .collect();
        let key_mask = heads.iter().fold(!0u128, |m, h| m & h.1);
        let mut keyed: Vec<(u128, (u32, u128, u128))> =
            heads.into_iter().map(|h| (h.2 & key_mask, h)).collect();
        // Stable: table order is kept within a group.
        keyed.sort_by_key(|&(k, _)| k);
        let mut keys = Vec::new();
        let mut starts = Vec::new();
        for (j, &(k, _)) in keyed.iter().enumerate() {
            if keys.last() != Some(&k) {
                keys.push(k);
                starts.push(j as u32);
            }
        }
        starts.push(keyed.len() as u32);
        Dispatch {
            key_mask,
            keys,
            starts,
            entries: keyed.into_iter().map(|(_, e)| e).collect(),
        }
    }

    /// The first encoding (in table order) of the word's group that matches it.
    fn lookup(&self, word: u128) -> Option<usize> {
        let g = self.keys.binary_search(&(word & self.key_mask)).ok()?;
        self.entries[self.starts[g] as usize..self.starts[g + 1] as usize]
            .iter()
            .find(|&&(_, mask, value)| word & mask == value)
            .map(|&(i, _, _)| i as usize)
    }
}

/// A table's encodings (in table order) and the indexes over them: built in memory, or read
/// from an image one opcode at a time. Indexing (`encodings[i]`), [`Encodings::len`] and
/// [`Encodings::iter`] work on both (iterating an image decodes all of it).
#[derive(Debug)]
pub struct Encodings(Store);

#[derive(Debug)]
enum Store {
    Owned(Box<Owned>),
    Image(Box<crate::image::Image>),
}

impl Default for Encodings {
    fn default() -> Encodings {
        Encodings(Store::Owned(Box::new(Owned::new(Vec::new()))))
    }
}

/// Encodings held in memory, with every index built up front.
#[derive(Debug)]
struct Owned {
    list: Vec<Encoding>,
    fields: Vec<Vec<Field>>,
    /// Per encoding: its composable flag bits (0 for most).
    composable: Vec<u128>,
    /// For each 12-bit opcode value, indices of encodings in table (priority) order.
    by_opcode: Vec<Vec<u32>>,
    /// Per 12-bit opcode: the decoder's index.
    dispatch: Vec<Dispatch>,
    /// Template without reuse markers -> indices of encodings, in table order.
    by_template: HashMap<String, Vec<u32>>,
    /// Encodings with flags by (first mnemonic token, operand count), for the assembler;
    /// built on first use.
    by_shape: OnceLock<HashMap<(String, usize), Vec<u32>>>,
}

impl Owned {
    fn new(list: Vec<Encoding>) -> Owned {
        let mut by = vec![Vec::new(); 1 << 12];
        // Decode priority is the order of the list (the probe writes it learned: aliases
        // before the general forms they override).
        for (i, e) in list.iter().enumerate() {
            by[(e.value & OPCODE_MASK) as usize].push(i as u32);
        }
        let dispatch = by
            .iter()
            .map(|l| {
                Dispatch::new(l, |i| {
                    let e = &list[i as usize];
                    (e.mask, e.value)
                })
            })
            .collect();
        let mut by_template: HashMap<String, Vec<u32>> = Default::default();
        // Table order here too: among encodings that print the same text (e.g. sm_80 `STL
        // [R1+0x8]` from opcode 0x387, and from 0x987 with `URZ` pinned), the assembler takes
        // the first that prints the text back, and the table lists opcodes in increasing
        // order with aliases before general forms.
        for (i, e) in list.iter().enumerate() {
            by_template
                .entry(strip_reuse_markers(&e.template))
                .or_default()
                .push(i as u32);
        }
        Owned {
            fields: list.iter().map(fields_of).collect(),
            composable: vec![0; list.len()],
            by_opcode: by,
            dispatch,
            by_template,
            by_shape: OnceLock::new(),
            list,
        }
    }
}

/// The fast-decoding fields of an encoding's slots.
pub(crate) fn fields_of(e: &Encoding) -> Vec<Field> {
    e.slots
        .iter()
        .map(|s| match s {
            SlotSpec::Linear { bits, .. } => contiguous(bits),
            _ => None,
        })
        .collect()
}

/// Whether slots of these specs take operands of these kinds, whatever their values: what a
/// text's kinds rule out for an encoding and for every encoding composed from it (flags
/// change bits and the template's text, never the slots).
pub(crate) fn slots_accept(specs: &[SlotSpec], kinds: &[SlotKind]) -> bool {
    specs.len() == kinds.len()
        && specs.iter().zip(kinds).all(|(spec, &kind)| match spec {
            SlotSpec::Const { kind: k, .. } | SlotSpec::Linear { kind: k, .. } => *k == kind,
            SlotSpec::Float { .. } => kind == SlotKind::Float,
        })
}

/// Encoding indices from an index: a list in memory or one in an image (u32 LE each).
#[derive(Clone)]
pub(crate) enum Indices<'a> {
    Slice(std::slice::Iter<'a, u32>),
    Bytes(std::slice::ChunksExact<'a, u8>),
}

impl Iterator for Indices<'_> {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        match self {
            Indices::Slice(it) => it.next().map(|&i| i as usize),
            Indices::Bytes(it) => it
                .next()
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        }
    }
}

impl Indices<'_> {
    pub(crate) fn empty() -> Indices<'static> {
        Indices::Slice([].iter())
    }
}

impl Encodings {
    pub(crate) fn from_image(image: crate::image::Image) -> Encodings {
        Encodings(Store::Image(Box::new(image)))
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Store::Owned(o) => o.list.len(),
            Store::Image(im) => im.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Encoding `i` (decoded from the image on its first use).
    pub fn get(&self, i: usize) -> Option<&Encoding> {
        match &self.0 {
            Store::Owned(o) => o.list.get(i),
            Store::Image(im) => im.encoding(i),
        }
    }

    /// All encodings in table order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            encodings: self,
            range: 0..self.len(),
        }
    }

    /// The image the encodings are read from, if any.
    #[cfg(test)]
    pub(crate) fn image(&self) -> Option<&crate::image::Image> {
        match &self.0 {
            Store::Owned(_) => None,
            Store::Image(im) => Some(im),
        }
    }

    /// Whether the encodings are read from an image (not built in memory).
    pub fn is_image(&self) -> bool {
        matches!(self.0, Store::Image(_))
    }

    pub(crate) fn fields(&self, i: usize) -> &[Field] {
        match &self.0 {
            Store::Owned(o) => &o.fields[i],
            Store::Image(im) => im.fields(i),
        }
    }

    /// Encoding `i`'s template (from an image, read without decoding the encoding).
    pub(crate) fn template(&self, i: usize) -> &str {
        match &self.0 {
            Store::Owned(o) => &o.list[i].template,
            Store::Image(im) => im.template(i),
        }
    }

    /// Whether encoding `i`'s slots take operands of these kinds ([`slots_accept`]; from an
    /// image, read without decoding the encoding).
    pub(crate) fn slots_accept(&self, i: usize, kinds: &[SlotKind]) -> bool {
        match &self.0 {
            Store::Owned(o) => slots_accept(&o.list[i].slots, kinds),
            Store::Image(im) => im.slots_accept(i, kinds),
        }
    }

    /// Encoding `i`'s mask and value (from an image, read without decoding the encoding).
    pub(crate) fn head(&self, i: usize) -> (u128, u128) {
        match &self.0 {
            Store::Owned(o) => (o.list[i].mask, o.list[i].value),
            Store::Image(im) => im.head(i),
        }
    }

    /// Encoding `i`'s composable flag bits (`X` lines; 0 for most).
    pub fn composable(&self, i: usize) -> u128 {
        match &self.0 {
            Store::Owned(o) => o.composable.get(i).copied().unwrap_or(0),
            Store::Image(im) => im.composable(i),
        }
    }

    /// Indices of the encodings whose opcode bits are `opcode`, in table order.
    pub(crate) fn of_opcode(&self, opcode: usize) -> &[u32] {
        match &self.0 {
            Store::Owned(o) => o.by_opcode.get(opcode).map_or(&[], Vec::as_slice),
            Store::Image(im) => im.of_opcode(opcode),
        }
    }

    /// The decoder's index of an opcode (built from an image's dispatch part: for
    /// comparisons, not for decoding).
    pub(crate) fn dispatch(&self, opcode: usize) -> Option<std::borrow::Cow<'_, Dispatch>> {
        match &self.0 {
            Store::Owned(o) => o.dispatch.get(opcode).map(std::borrow::Cow::Borrowed),
            Store::Image(im) => im.dispatch(opcode).map(std::borrow::Cow::Owned),
        }
    }

    /// The index of the encoding that decodes `word` (see [`Table::lookup_index`]).
    pub(crate) fn lookup(&self, word: u128) -> Option<usize> {
        match &self.0 {
            Store::Owned(o) => o.dispatch.get((word & OPCODE_MASK) as usize)?.lookup(word),
            Store::Image(im) => im.lookup(word),
        }
    }

    /// Indices of the encodings whose template without reuse markers is `key`.
    pub(crate) fn by_template(&self, key: &str) -> Indices<'_> {
        match &self.0 {
            Store::Owned(o) => match o.by_template.get(key) {
                Some(l) => Indices::Slice(l.iter()),
                None => Indices::empty(),
            },
            Store::Image(im) => im.by_template(key),
        }
    }

    /// Every template key (without reuse markers), in no particular order.
    pub(crate) fn template_keys(&self) -> Vec<String> {
        match &self.0 {
            Store::Owned(o) => o.by_template.keys().cloned().collect(),
            Store::Image(im) => im.template_keys(),
        }
    }

    /// Indices of the encodings with modifier flags whose template has this first mnemonic
    /// token and operand count.
    pub(crate) fn by_shape(&self, first: &str, operands: usize) -> Indices<'_> {
        match &self.0 {
            Store::Owned(o) => {
                let m = o.by_shape.get_or_init(|| {
                    let mut m: HashMap<(String, usize), Vec<u32>> = HashMap::new();
                    for (i, e) in o.list.iter().enumerate() {
                        if o.composable[i] != 0 {
                            let (f, n) = crate::compose::shape(&e.template);
                            m.entry((f.to_string(), n)).or_default().push(i as u32);
                        }
                    }
                    m
                });
                match m.get(&(first.to_string(), operands)) {
                    Some(l) => Indices::Slice(l.iter()),
                    None => Indices::empty(),
                }
            }
            Store::Image(im) => im.by_shape(first, operands),
        }
    }

    /// Every shape with flagged encodings.
    pub(crate) fn shape_keys(&self) -> Vec<(String, usize)> {
        match &self.0 {
            Store::Owned(o) => {
                // Built by `by_shape` on first use.
                let _ = self.by_shape("", 0);
                o.by_shape
                    .get()
                    .map(|m| m.keys().cloned().collect())
                    .unwrap_or_default()
            }
            Store::Image(im) => im.shape_keys(),
        }
    }

    /// The in-memory form (an image is decoded whole), for changes.
    fn owned(&mut self) -> &mut Owned {
        if let Store::Image(im) = &self.0 {
            let list: Vec<Encoding> = (0..im.len())
                .map(|i| im.encoding(i).expect("in range").clone())
                .collect();
            let composable = (0..im.len()).map(|i| im.composable(i)).collect();
            let mut o = Owned::new(list);
            o.composable = composable;
            self.0 = Store::Owned(Box::new(o));
        }
        match &mut self.0 {
            Store::Owned(o) => o,
            Store::Image(_) => unreachable!("made owned above"),
        }
    }
}

impl std::ops::Index<usize> for Encodings {
    type Output = Encoding;
    fn index(&self, i: usize) -> &Encoding {
        self.get(i)
            .unwrap_or_else(|| panic!("encoding index {i} out of range ({} encodings)", self.len()))
    }
}

impl<'a> IntoIterator for &'a Encodings {
    type Item = &'a Encoding;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// [`Encodings::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    encodings: &'a Encodings,
    range: std::ops::Range<usize>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Encoding;
    fn next(&mut self) -> Option<&'a Encoding> {
        self.range.next().map(|i| &self.encodings[i])
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.range.next_back().map(|i| &self.encodings[i])
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Recognizes a contiguous (possibly two's-complement) bit field among linear weights.
fn contiguous(bits: &[(u8, i128)]) -> Option<(u8, u8, bool)> {
    let lo = bits.first()?.0;
    let n = bits.len();
    if n > 64 {
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
        if i == n - 1 && w == -p {
            signed = true;
            continue;
        }
        return None;
    }
    Some((lo, n as u8, signed))
}

/// Bits of the guard predicate.
pub const GUARD_MASK: u128 = 0xf << 12;
/// Bits of the primary opcode, always part of an encoding's mask.
pub const OPCODE_MASK: u128 = 0xfff;

impl Table {
    /// Builds a table (and its lookup index) from encodings.
    pub fn new(sm: &str, header: Vec<String>, encodings: Vec<Encoding>) -> Table {
        Table::with_encodings(
            sm,
            header,
            Encodings(Store::Owned(Box::new(Owned::new(encodings)))),
            BTreeMap::new(),
        )
    }

    /// A table over `encodings` (built or read from an image) with these flags.
    pub(crate) fn with_encodings(
        sm: &str,
        header: Vec<String>,
        encodings: Encodings,
        flags: BTreeMap<(u16, u8), FlagEdit>,
    ) -> Table {
        Table {
            sm: sm.to_string(),
            header,
            encodings,
            flags,
            composed: Mutex::new(HashMap::new()),
            composed_keys: Mutex::new(HashMap::new()),
            shape_groups: Mutex::new(HashMap::new()),
            toggled_keys: Mutex::new(HashMap::new()),
            preferred: HashMap::new(),
            shadows: Default::default(),
        }
    }

    /// Sets the modifier flags and each encoding's composable flag bits (`composable` in
    /// table order; bits set in an encoding's `value` are ignored).
    pub fn set_flags(&mut self, flags: BTreeMap<(u16, u8), FlagEdit>, composable: Vec<u128>) {
        assert_eq!(composable.len(), self.encodings.len());
        let o = self.encodings.owned();
        o.composable = composable
            .iter()
            .zip(&o.list)
            .map(|(&c, e)| c & e.mask)
            .collect();
        o.by_shape = OnceLock::new();
        self.flags = flags;
        self.composed.lock().expect("not poisoned").clear();
        self.composed_keys.lock().expect("not poisoned").clear();
        self.shape_groups.lock().expect("not poisoned").clear();
        self.toggled_keys.lock().expect("not poisoned").clear();
    }

    /// Encoding `ei`'s template with its flag bits `toggled`: the edits of bits clear in its
    /// value made, those of bits set in it undone.
    fn toggled_template(&self, ei: usize, toggled: u128) -> Option<String> {
        let e = &self.encodings[ei];
        let opcode = (e.value & OPCODE_MASK) as u16;
        let mut t = e.template.clone();
        let mut forward = Vec::new();
        for b in (0..128u8).filter(|b| toggled >> b & 1 == 1) {
            let flag = self.flags.get(&(opcode, b))?;
            if e.value >> b & 1 == 1 {
                // Undone as the encoding's mnemonic made it.
                t = crate::compose::unapply(&t, flag.edit_for(&e.template))?;
            } else {
                forward.push(flag);
            }
        }
        // Made as the resulting mnemonic asks: its token edits do not depend on it.
        let first: Vec<&Edit> = forward.iter().map(|f| f.edit_for(&t)).collect();
        let out = crate::compose::apply(&t, &first)?;
        if forward.iter().all(|f| f.when.is_none()) {
            return Some(out);
        }
        let again: Vec<&Edit> = forward.iter().map(|f| f.edit_for(&out)).collect();
        crate::compose::apply(&t, &again)
    }

    /// For a word no encoding matches: the first encoding (in table order) that matches it
    /// except for some of its composable flag bits and that decodes the word with those bits
    /// as in its value, and the encoding those flags make of it.
    pub fn compose_lookup(&self, word: u128) -> Option<(usize, &Encoding)> {
        for &i in self.encodings.of_opcode((word & OPCODE_MASK) as usize) {
            let i = i as usize;
            let f = self.encodings.composable(i);
            let e = &self.encodings[i];
            if f == 0 || (word ^ e.value) & e.mask & !f != 0 {
                continue;
            }
            // Only from the encoding that decodes the word without the flags: operand values
            // another encoding prints differently (an alias: `PT` omitted) stay with it.
            let set = (word ^ e.value) & f;
            if self.lookup_index(word ^ set) != Some(i) {
                continue;
            }
            return Some((i, self.compose_with(i, set)?));
        }
        None
    }

    /// Encodings made of an encoding and some of its flags whose template (without reuse
    /// markers) is `key`: what the assembler tries when no encoding has that template.
    pub fn composed_by_template(&self, key: &str) -> Vec<&Encoding> {
        self.composed_for(key, None)
    }

    /// [`Table::composed_by_template`] limited to encodings whose slots take operands of
    /// `kinds` (when given): the others cannot encode a text with those operands, composed
    /// or not, and ruling them out first spares building their templates.
    pub fn composed_for(&self, key: &str, kinds: Option<&[SlotKind]>) -> Vec<&Encoding> {
        let cache_key = match kinds {
            None => key.to_string(),
            Some(k) => {
                let mut c = format!("{key}\0");
                c.extend(k.iter().map(|&k| char::from(b'a' + k as u8)));
                c
            }
        };
        let cached = self
            .composed_keys
            .lock()
            .expect("not poisoned")
            .get(&cache_key)
            .cloned();
        let found = match cached {
            Some(f) => f,
            None => {
                let f = self.find_composed_with(key, kinds, Flips::Pruned, true);
                self.composed_keys
                    .lock()
                    .expect("not poisoned")
                    .insert(cache_key, f.clone());
                f
            }
        };
        found
            .into_iter()
            .filter_map(|(i, set)| self.compose_with(i as usize, set))
            .collect()
    }

    /// The flagged encodings of a shape grouped by their slot spans (made once per shape).
    fn shape_groups(&self, first: &str, operands: usize) -> ShapeGroups {
        let key = (first.to_string(), operands);
        if let Some(g) = self.shape_groups.lock().expect("not poisoned").get(&key) {
            return g.clone();
        }
        let mut groups: HashMap<String, Vec<u32>> = HashMap::new();
        for i in self.encodings.by_shape(first, operands) {
            let spans = crate::compose::slot_spans(self.encodings.template(i));
            groups.entry(spans).or_default().push(i as u32);
        }
        let groups = std::sync::Arc::new(groups);
        self.shape_groups
            .lock()
            .expect("not poisoned")
            .insert(key, groups.clone());
        groups
    }

    /// [`Table::composed_for`] without its cache, with the sets one or two flips away from
    /// the shown one tried as `flips` says: (encoding, flag set) pairs.
    /// `prefilter` rules encodings out by [`crate::compose::mnemonic_reachable`] first (off
    /// only in the test that it loses nothing).
    fn find_composed_with(
        &self,
        key: &str,
        kinds: Option<&[SlotKind]>,
        flips: Flips,
        prefilter: bool,
    ) -> Vec<(u32, u128)> {
        let (first, operands) = crate::compose::shape(key);
        let groups = self.shape_groups(first, operands);
        let Some(list) = groups.get(&crate::compose::slot_spans(key)) else {
            return Vec::new();
        };
        // The flags whose edit the text shows (made where the encoding has not made it,
        // undone where it has and the text does not show it).
        let key_parts = crate::compose::parts(key);
        let shown = |i: usize| -> u128 {
            let e = &self.encodings[i];
            let f = self.encodings.composable(i);
            let base = strip_reuse_markers(&e.template);
            let base_parts = crate::compose::parts(&base);
            let opcode = (e.value & OPCODE_MASK) as u16;
            (0..128u8)
                .filter(|b| f >> b & 1 == 1)
                .filter(|b| {
                    let Some(flag) = self.flags.get(&(opcode, *b)) else {
                        return false;
                    };
                    if e.value >> b & 1 == 0 {
                        crate::compose::shows_in(&base_parts, &key_parts, flag.edit_for(key))
                    } else {
                        let ed = flag.edit_for(&base);
                        crate::compose::unapply(&base, ed).is_some_and(|u| {
                            !crate::compose::shows_in(&crate::compose::parts(&u), &key_parts, ed)
                        })
                    }
                })
                .fold(0u128, |m, b| m | 1u128 << b)
        };
        // Encoding `i`'s template with flags `set` toggled, reuse markers removed.
        let toggled = |i: usize, set: u128| -> Option<String> {
            self.toggled_keys
                .lock()
                .expect("not poisoned")
                .entry((i as u32, set))
                .or_insert_with(|| {
                    self.toggled_template(i, set)
                        .map(|t| strip_reuse_markers(&t))
                })
                .clone()
        };
        let makes = |i: usize, set: u128| set != 0 && toggled(i, set).as_deref() == Some(key);
        // Per opcode: the mnemonic tokens its flags write (a superset of what one encoding's
        // composable flags write, so the filter stays a necessary condition).
        let mut written: HashMap<u16, Vec<&str>> = HashMap::new();
        let mut out = Vec::new();
        for i in list.iter().map(|&i| i as usize) {
            if kinds.is_some_and(|k| !self.encodings.slots_accept(i, k)) {
                continue;
            }
            let opcode = (self.encodings.head(i).1 & OPCODE_MASK) as u16;
            let w = written.entry(opcode).or_insert_with(|| {
                crate::compose::written_tokens(
                    self.flags
                        .range((opcode, 0)..=(opcode, u8::MAX))
                        .map(|(_, f)| f),
                )
            });
            if prefilter && !crate::compose::mnemonic_reachable(self.encodings.template(i), key, w)
            {
                continue;
            }
            let set = shown(i);
            if makes(i, set) {
                out.push((i as u32, set));
                continue;
            }
            // Two flags of one field can make together a text neither shows alone (sm_90
            // `F2I.S64.F16.TRUNC` from `F2I.S64.F16`: the rounding field's two bits): each
            // set one or two flags away from the shown one is tried too (the assembler keeps
            // only a word that prints the text back).
            let f = self.encodings.composable(i);
            let bits: Vec<u128> = (0..128u8)
                .filter(|b| f >> b & 1 == 1)
                .map(|b| 1u128 << b)
                .collect();
            let fixes = match flips {
                Flips::Pruned => self.places_flips_fix(i, set, key, &toggled),
                Flips::All => (0, vec![0; bits.len()]),
                Flips::None => continue,
            };
            for (a, &x) in bits.iter().enumerate() {
                for (&y, &fy) in
                    std::iter::once((&0, &0)).chain(bits[a + 1..].iter().zip(&fixes.1[a + 1..]))
                {
                    if fixes.0 & !(fixes.1[a] | fy) != 0 {
                        continue;
                    }
                    if makes(i, set ^ x ^ y) {
                        out.push((i as u32, set ^ x ^ y));
                    }
                }
            }
        }
        out
    }

    /// For [`Table::find_composed_with`]'s search around flag set `set` of encoding `i`: the places
    /// (a bit mask) where the template `set` makes differs from `key`, and per composable bit
    /// (in ascending order) the places of those its flag edits. A set one or two flips away
    /// can make `key` only if the flipped flags edit every differing place: each flag edits
    /// one place, the same whatever else is toggled, unless a flag's edit depends on the
    /// mnemonic (`FlagEdit::when`). With such a flag, an untoggled template that fails, or
    /// no differing place, every flip stays a candidate (mask 0).
    fn places_flips_fix(
        &self,
        i: usize,
        set: u128,
        key: &str,
        toggled: &dyn Fn(usize, u128) -> Option<String>,
    ) -> (u64, Vec<u64>) {
        let e = &self.encodings[i];
        let f = self.encodings.composable(i);
        let opcode = (e.value & OPCODE_MASK) as u16;
        let bits: Vec<u8> = (0..128u8).filter(|b| f >> b & 1 == 1).collect();
        let none = (0, vec![0; bits.len()]);
        let flags: Vec<Option<&FlagEdit>> =
            bits.iter().map(|b| self.flags.get(&(opcode, *b))).collect();
        if flags.iter().flatten().any(|fl| fl.when.is_some()) {
            return none;
        }
        let Some(made) = toggled(i, set) else {
            return none;
        };
        let n = crate::compose::shape(key).1;
        let Some(places) = crate::compose::differing_places(&made, key) else {
            return none;
        };
        if places.is_empty() || places.len() > 63 {
            return none;
        }
        let mask = (1u64 << places.len()) - 1;
        let per_bit = flags
            .iter()
            .map(|fl| {
                let Some(place) = fl.and_then(|fl| fl.edit.place(n)) else {
                    return 0;
                };
                places
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| **p == place)
                    .fold(0u64, |m, (k, _)| m | 1 << k)
            })
            .collect();
        (mask, per_bit)
    }

    /// Encoding `i` with its flag bits `set` toggled (an edit made where the encoding has the
    /// bit clear, undone where it has it set).
    pub fn compose_with(&self, i: usize, set: u128) -> Option<&Encoding> {
        let mut cache = self.composed.lock().expect("not poisoned");
        if let Some(c) = cache.get(&(i as u32, set)) {
            return Some(*c);
        }
        let e = self.encodings.get(i)?;
        let template = self.toggled_template(i, set)?;
        let c: &'static Encoding = Box::leak(Box::new(Encoding {
            mask: e.mask | set,
            value: e.value ^ set,
            defaults: e.defaults & !set,
            template,
            ..e.clone()
        }));
        cache.insert((i as u32, set), c);
        Some(c)
    }

    /// Moves encoding `i` to the front of the assembler's list for template `key`
    /// ([`crate::prefer`]).
    pub(crate) fn prefer_for_template(&mut self, key: &str, i: u32) {
        let mut list: Vec<u32> = self.template_indices(key).map(|j| j as u32).collect();
        if let Some(pos) = list.iter().position(|&j| j == i) {
            let e = list.remove(pos);
            list.insert(0, e);
            self.preferred.insert(key.to_string(), list);
        }
    }

    /// Indices of the encodings whose template, reuse markers removed, is `key`, in the
    /// order the assembler tries them (table order, [`crate::prefer`]'s choice first).
    pub fn template_indices(&self, key: &str) -> impl Iterator<Item = usize> + '_ {
        match self.preferred.get(key) {
            Some(l) => Indices::Slice(l.iter()),
            None => self.encodings.by_template(key),
        }
    }

    /// Encodings whose template, reuse markers removed, is `key`.
    pub fn by_template(&self, key: &str) -> impl Iterator<Item = &Encoding> {
        self.template_indices(key).map(|i| &self.encodings[i])
    }

    /// The encoding that decodes `word`, if the table knows one.
    pub fn lookup(&self, word: u128) -> Option<&Encoding> {
        self.lookup_index(word).map(|i| &self.encodings[i])
    }

    /// Index (in `encodings`) of the encoding that decodes `word`.
    pub fn lookup_index(&self, word: u128) -> Option<usize> {
        self.encodings.lookup(word)
    }

    /// Indices of the encodings whose opcode bits are `opcode`.
    pub fn candidates(&self, opcode: u16) -> impl Iterator<Item = &Encoding> {
        self.encodings
            .of_opcode(usize::from(opcode))
            .iter()
            .map(|&i| &self.encodings[i as usize])
    }

    /// Serializes the table in its text format (see module docs of `tables/README.md`).
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        for h in &self.header {
            let _ = writeln!(s, "# {h}");
        }
        for (i, e) in self.encodings.iter().enumerate() {
            let g = match e.guard {
                None => "-",
                Some(false) => "P",
                Some(true) => "U",
            };
            let _ = writeln!(
                s,
                "E {:032x} {:032x} {:032x} {g}",
                e.mask, e.value, e.defaults
            );
            let _ = writeln!(s, "T {}", e.template);
            for sl in &e.slots {
                match sl {
                    SlotSpec::Linear {
                        kind,
                        c,
                        pcrel,
                        bits,
                    } => {
                        let bits: Vec<String> =
                            bits.iter().map(|(b, w)| format!("{b}:{w}")).collect();
                        let _ = writeln!(
                            s,
                            "S L {} {c} {} {}",
                            kind.name(),
                            u8::from(*pcrel),
                            bits.join(",")
                        );
                    }
                    SlotSpec::Float { format, bits } => {
                        let bits: Vec<String> = bits.iter().map(u8::to_string).collect();
                        let _ = writeln!(s, "S F {} {}", format.name(), bits.join(","));
                    }
                    SlotSpec::Const { kind, value, text } => {
                        let _ = writeln!(s, "S C {} {value} {text}", kind.name());
                    }
                }
            }
            let x = self.encodings.composable(i);
            if x != 0 {
                let _ = writeln!(s, "X {x:032x}");
            }
        }
        for ((opcode, bit), flag) in &self.flags {
            let _ = writeln!(s, "F {opcode:03x} {bit} {}", flag.edit.to_text());
            if let Some((token, alt)) = &flag.when {
                let _ = writeln!(s, "F {opcode:03x} {bit} when {token} {}", alt.to_text());
            }
        }
        s
    }

    /// Parses the text format written by [`Table::to_text`].
    pub fn parse(sm: &str, text: &str) -> Result<Table, String> {
        let mut header = Vec::new();
        let mut encs: Vec<Encoding> = Vec::new();
        let mut flags = BTreeMap::new();
        let mut composable: Vec<u128> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let err = |m: &str| format!("{sm} table line {}: {m}: `{line}`", n + 1);
            if let Some(h) = line.strip_prefix("# ") {
                header.push(h.to_string());
            } else if let Some(r) = line.strip_prefix("E ") {
                let f: Vec<&str> = r.split(' ').collect();
                if f.len() != 4 {
                    return Err(err("expected 4 fields"));
                }
                let hex = |s: &str| u128::from_str_radix(s, 16).map_err(|_| err("bad hex"));
                let guard = match f[3] {
                    "-" => None,
                    "P" => Some(false),
                    "U" => Some(true),
                    _ => return Err(err("bad guard")),
                };
                encs.push(Encoding {
                    mask: hex(f[0])?,
                    value: hex(f[1])?,
                    defaults: hex(f[2])?,
                    guard,
                    template: String::new(),
                    slots: Vec::new(),
                });
            } else if let Some(x) = line.strip_prefix("X ") {
                if encs.is_empty() {
                    return Err(err("X before E"));
                }
                composable.resize(encs.len(), 0);
                composable[encs.len() - 1] =
                    u128::from_str_radix(x, 16).map_err(|_| err("bad hex"))?;
            } else if let Some(f) = line.strip_prefix("F ") {
                let mut it = f.splitn(3, ' ');
                let (Some(op), Some(bit), Some(edit)) = (it.next(), it.next(), it.next()) else {
                    return Err(err("bad flag"));
                };
                let op = u16::from_str_radix(op, 16).map_err(|_| err("bad opcode"))?;
                let bit: u8 = bit.parse().map_err(|_| err("bad bit"))?;
                if let Some(rest) = edit.strip_prefix("when ") {
                    // The alternative edit, after the bit's plain one.
                    let (token, edit) = rest.split_once(' ').ok_or_else(|| err("bad flag"))?;
                    let alt = Edit::parse(edit).ok_or_else(|| err("bad edit"))?;
                    let flag: &mut FlagEdit = flags
                        .get_mut(&(op, bit))
                        .ok_or_else(|| err("when before its flag"))?;
                    flag.when = Some((token.to_string(), alt));
                } else {
                    let edit = Edit::parse(edit).ok_or_else(|| err("bad edit"))?;
                    flags.insert((op, bit), FlagEdit::plain(edit));
                }
            } else if let Some(t) = line.strip_prefix("T ") {
                encs.last_mut().ok_or_else(|| err("T before E"))?.template = t.to_string();
            } else if let Some(r) = line.strip_prefix("S ") {
                let e = encs.last_mut().ok_or_else(|| err("S before E"))?;
                let f: Vec<&str> = r.splitn(4, ' ').collect();
                let spec = match (f.first(), f.len()) {
                    (Some(&"L"), 4) => {
                        let kind = SlotKind::from_name(f[1]).ok_or_else(|| err("bad kind"))?;
                        let rest: Vec<&str> = f[3].split(' ').collect();
                        if rest.len() != 2 {
                            return Err(err("bad linear slot"));
                        }
                        let c = f[2].parse().map_err(|_| err("bad constant"))?;
                        // Sized up front: growing one element at a time dominated start-up.
                        let n = rest[1].bytes().filter(|&b| b == b',').count() + 1;
                        let mut bits = Vec::with_capacity(n);
                        for p in rest[1].split(',').filter(|p| !p.is_empty()) {
                            let (b, w) = p.split_once(':').ok_or_else(|| err("bad bit"))?;
                            bits.push((
                                b.parse().map_err(|_| err("bad bit"))?,
                                w.parse().map_err(|_| err("bad weight"))?,
                            ));
                        }
                        SlotSpec::Linear {
                            kind,
                            c,
                            pcrel: rest[0] == "1",
                            bits,
                        }
                    }
                    (Some(&"F"), 3) => SlotSpec::Float {
                        format: FloatFormat::from_name(f[1]).ok_or_else(|| err("bad format"))?,
                        bits: f[2]
                            .split(',')
                            .map(|b| b.parse().map_err(|_| err("bad bit")))
                            .collect::<Result<_, _>>()?,
                    },
                    (Some(&"C"), 3 | 4) => SlotSpec::Const {
                        kind: SlotKind::from_name(f[1]).ok_or_else(|| err("bad kind"))?,
                        value: f[2].parse().map_err(|_| err("bad value"))?,
                        text: f.get(3).map_or(String::new(), |s| (*s).to_string()),
                    },
                    _ => return Err(err("bad slot")),
                };
                e.slots.push(spec);
            } else if !line.trim().is_empty() {
                return Err(err("unknown line"));
            }
        }
        composable.resize(encs.len(), 0);
        let mut t = Table::new(sm, header, encs);
        if !flags.is_empty() || composable.iter().any(|&c| c != 0) {
            t.set_flags(flags, composable);
        }
        Ok(t)
    }
}

/// A template without its `^k` reuse markers (and a split text's template without `^`).
pub fn strip_reuse_markers(t: &str) -> String {
    if !t.contains('^') {
        return t.to_string();
    }
    // Byte-wise (table loading calls this for every encoding): removing the ASCII `^` and
    // the digit after it keeps the text valid UTF-8.
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

/// Extracts bits (least significant first) into an integer.
pub fn gather(word: u128, bits: &[u8]) -> u64 {
    bits.iter()
        .enumerate()
        .fold(0u64, |acc, (i, &b)| acc | (((word >> b) & 1) as u64) << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slot kinds of specs: what [`slots_accept`] accepts.
    fn slot_kinds(specs: &[SlotSpec]) -> Vec<SlotKind> {
        specs
            .iter()
            .map(|s| match s {
                SlotSpec::Const { kind, .. } | SlotSpec::Linear { kind, .. } => *kind,
                SlotSpec::Float { .. } => SlotKind::Float,
            })
            .collect()
    }

    /// The composed-encoding search finds the same (encoding, flag set) pairs with and without
    /// its pruning (the flips it skips, the encodings whose mnemonic no flag makes), on keys made by toggling one or two flags of sampled encodings (texts some
    /// encoding composes, some only from a set two flips away from the one the text shows) and
    /// on the same keys with a mnemonic token dropped (texts that mostly none composes).
    #[test]
    fn pruned_composed_search_equals_the_full_search() {
        for sm in ["sm_90", "sm_80"] {
            let table = crate::table(sm).expect("table");
            let (mut keys, mut found, mut by_flips) = (0, 0, 0);
            let mut i = 0;
            while i < table.encodings.len() {
                let f = table.encodings.composable(i);
                let bits: Vec<u128> = (0..128u8)
                    .filter(|b| f >> b & 1 == 1)
                    .map(|b| 1u128 << b)
                    .collect();
                // Each flag alone, and each two neighbouring flags (often one field's bits).
                let pairs = bits.windows(2).map(|w| w[0] | w[1]);
                let sets: Vec<u128> = bits.iter().copied().chain(pairs).collect();
                for set in sets {
                    let Some(t) = table.toggled_template(i, set) else {
                        continue;
                    };
                    let key = strip_reuse_markers(&t);
                    let shorter = match key.split_once(' ') {
                        Some((m, rest)) if m.contains('.') => {
                            let m = m.rsplit_once('.').expect("a dot").0;
                            Some(format!("{m} {rest}"))
                        }
                        _ => None,
                    };
                    for k in std::iter::once(key).chain(shorter) {
                        let pruned = table.find_composed_with(&k, None, Flips::Pruned, true);
                        let full = table.find_composed_with(&k, None, Flips::All, false);
                        assert_eq!(pruned, full, "{sm} {k}");
                        // Limited to the slot kinds of encoding `i` (which some keys take):
                        // the full answer without the encodings whose slots differ.
                        let kinds = slot_kinds(&table.encodings[i].slots);
                        let limited: Vec<_> = full
                            .iter()
                            .filter(|(e, _)| table.encodings.slots_accept(*e as usize, &kinds))
                            .copied()
                            .collect();
                        assert_eq!(
                            table.find_composed_with(&k, Some(&kinds), Flips::Pruned, true),
                            limited,
                            "{sm} {k} {kinds:?}"
                        );
                        keys += 1;
                        found += usize::from(!pruned.is_empty());
                        by_flips += usize::from(
                            pruned != table.find_composed_with(&k, None, Flips::None, true),
                        );
                    }
                }
                i += 41;
            }
            assert!(
                keys >= 400 && found >= 100 && by_flips >= 10,
                "{sm}: {keys} keys, {found} found, {by_flips} needing flips"
            );
        }
    }
}
