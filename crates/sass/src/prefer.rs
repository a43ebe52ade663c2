//! Which encoding the assembler picks when several encodings print the same text.
//!
//! nvdisasm prints some different words identically: sm_90's `BAR.SYNC.DEFER_BLOCKING 0x0`
//! is both ptxas's word (opcode bits `0xb1d`: barrier id, no thread count) and a word of the
//! `0x91d` form whose thread-count register is `RZ`, which nvdisasm does not print. They are
//! not the same instruction on the GPU. The assembler takes the first encoding of a template
//! that prints the text back, so for every such text the choice must be the one ptxas makes.
//!
//! `tables/<sm>.prefer` lists, per template, the encoding ptxas 13.0.88 writes most often
//! where the table's order would pick another; `cargo xtask sass-prefer --arch sm_XX`
//! generates it from ptxas's code for the corpus and the never-seen sets (docs/arch/sass.md).
//! Line format: `P <mask hex> <value hex> <ptxas words> <words the table order got wrong>
//! <template>`.

use crate::table::{Table, strip_reuse_markers};

/// One line of a `.prefer` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preference {
    pub mask: u128,
    pub value: u128,
    /// Words of ptxas's code (in the generator's inputs) with this encoding and template.
    pub ptxas_words: usize,
    /// Of those, words the assembler encoded with another encoding before this preference.
    pub misencoded: usize,
    /// The template, reuse markers removed.
    pub template: String,
}

/// An encoding that prints like one ptxas writes but that ptxas never wrote for that text
/// (`S` lines): what it does on the GPU is not what its text says (sm_90's `BAR.SYNC` with a
/// hidden `RZ` thread count), so the emulator refuses to run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shadow {
    pub mask: u128,
    pub value: u128,
    pub template: String,
}

/// The contents of a `.prefer` file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Preferences {
    pub preferred: Vec<Preference>,
    pub shadows: Vec<Shadow>,
}

/// Parses a `.prefer` file (`#` lines are comments).
pub fn parse(sm: &str, text: &str) -> Result<Preferences, String> {
    let mut out = Preferences::default();
    for (n, line) in text.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |m: &str| format!("{sm} preferences line {}: {m}: `{line}`", n + 1);
        if let Some(rest) = line.strip_prefix("S ") {
            let f: Vec<&str> = rest.splitn(3, ' ').collect();
            if f.len() != 3 {
                return Err(err("expected 3 fields"));
            }
            let hex = |s: &str| u128::from_str_radix(s, 16).map_err(|_| err("bad hex"));
            out.shadows.push(Shadow {
                mask: hex(f[0])?,
                value: hex(f[1])?,
                template: f[2].to_string(),
            });
            continue;
        }
        let rest = line
            .strip_prefix("P ")
            .ok_or_else(|| err("expected `P ` or `S `"))?;
        let f: Vec<&str> = rest.splitn(5, ' ').collect();
        if f.len() != 5 {
            return Err(err("expected 5 fields"));
        }
        let hex = |s: &str| u128::from_str_radix(s, 16).map_err(|_| err("bad hex"));
        let num = |s: &str| s.parse::<usize>().map_err(|_| err("bad count"));
        out.preferred.push(Preference {
            mask: hex(f[0])?,
            value: hex(f[1])?,
            ptxas_words: num(f[2])?,
            misencoded: num(f[3])?,
            template: f[4].to_string(),
        });
    }
    Ok(out)
}

/// Writes a shadow in the format [`parse`] reads.
pub fn render_shadow(s: &Shadow) -> String {
    format!("S {:032x} {:032x} {}", s.mask, s.value, s.template)
}

/// Writes preferences in the format [`parse`] reads.
pub fn render(p: &Preference) -> String {
    format!(
        "P {:032x} {:032x} {} {} {}",
        p.mask, p.value, p.ptxas_words, p.misencoded, p.template
    )
}

impl Table {
    /// Index of the encoding with exactly this mask and value.
    pub fn find_encoding(&self, mask: u128, value: u128) -> Option<usize> {
        // An encoding's opcode bits are in its mask, so only that opcode's encodings (in
        // table order) can be it.
        self.encodings
            .of_opcode((value & crate::table::OPCODE_MASK) as usize)
            .iter()
            .map(|&i| i as usize)
            .find(|&i| {
                let e = &self.encodings[i];
                e.mask == mask && e.value == value
            })
    }

    /// Makes each preferred encoding the first the assembler tries for its template. An
    /// encoding the table lacks, or one whose template is not the line's, is an error (the
    /// preferences were generated for another table).
    pub fn apply_preferences(&mut self, prefs: &[Preference]) -> Result<(), String> {
        for p in prefs {
            let i = self.find_encoding(p.mask, p.value).ok_or_else(|| {
                format!(
                    "{}: preferred encoding {:032x}/{:032x} (`{}`) is not in the table",
                    self.sm, p.mask, p.value, p.template
                )
            })?;
            let key = strip_reuse_markers(&self.encodings[i].template);
            if key != p.template {
                return Err(format!(
                    "{}: preferred encoding {:032x} prints `{key}`, not `{}`",
                    self.sm, p.value, p.template
                ));
            }
            self.prefer_for_template(&key, i as u32);
        }
        Ok(())
    }

    /// Marks encodings as shadows ([`Shadow`]); the same errors as
    /// [`Table::apply_preferences`].
    pub fn apply_shadows(&mut self, shadows: &[Shadow]) -> Result<(), String> {
        for s in shadows {
            let i = self.find_encoding(s.mask, s.value).ok_or_else(|| {
                format!(
                    "{}: shadow encoding {:032x}/{:032x} (`{}`) is not in the table",
                    self.sm, s.mask, s.value, s.template
                )
            })?;
            self.shadows.insert(i as u32);
        }
        Ok(())
    }

    /// Whether `e` (an encoding of this table) is a [`Shadow`].
    pub fn is_shadow(&self, e: &crate::Encoding) -> bool {
        self.shadows.iter().any(|&i| {
            let s = &self.encodings[i as usize];
            s.mask == e.mask && s.value == e.value
        })
    }
}
