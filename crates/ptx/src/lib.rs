//! PTX ISA knowledge as data.
//!
//! The facts live in three committed text tables under `data/` (instruction forms, special
//! registers, directives), embedded with `include_str!` and parsed once on first use. Each table
//! records where its facts come from (sections of NVIDIA's PTX ISA 9.0 reference); the tests in
//! this crate check the tables for internal consistency (every named set defined, versions
//! released, a form's minimum PTX version not below the version that introduced its minimum
//! target, no duplicate forms, ...).
//!
//! API: [`isa()`] returns the parsed [`Isa`]; [`Isa::forms`] lists the forms of an opcode,
//! [`Isa::lookup`] the forms matching an opcode and its modifiers, [`Isa::special_register`]
//! and [`Isa::directive`] look up the other tables. [`Sm`] and [`PtxVersion`] are the target and
//! version values the gating rules compare.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

pub mod flush;
mod table;
mod types;
pub mod video;

pub use table::TableError;
/// The target a gating rule compares: the one SM type (`crates/target`).
pub use target::Sm;
pub use types::Type;

/// The instruction table source.
pub const ISA_TABLE: &str = include_str!("../data/isa.txt");
/// The special-register table source.
pub const SREG_TABLE: &str = include_str!("../data/sregs.txt");
/// The directive table source.
pub const DIRECTIVE_TABLE: &str = include_str!("../data/directives.txt");

/// A PTX ISA version (`.version MAJOR.MINOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxVersion {
    pub major: u8,
    pub minor: u8,
}

impl PtxVersion {
    pub const fn new(major: u8, minor: u8) -> PtxVersion {
        PtxVersion { major, minor }
    }

    /// Parses `MAJOR.MINOR` (one or two digits after the dot are minor numbers, `6.4`).
    pub fn parse(s: &str) -> Option<PtxVersion> {
        let (a, b) = s.trim().split_once('.')?;
        Some(PtxVersion {
            major: a.parse().ok()?,
            minor: b.parse().ok()?,
        })
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// One modifier group of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// Whether the instruction must carry one of the choices.
    pub required: bool,
    /// The modifiers (with their leading dot; `#` matches decimal digits).
    pub choices: Vec<&'static str>,
}

impl Group {
    /// Whether `m` is one of this group's choices.
    pub fn accepts(&self, m: &str) -> bool {
        self.choices.iter().any(|c| modifier_matches(c, m))
    }
}

/// `pat` with each `#` standing for one or more decimal digits, against `m`.
fn modifier_matches(pat: &str, m: &str) -> bool {
    if !pat.contains('#') {
        return pat == m;
    }
    let (p, m) = (pat.as_bytes(), m.as_bytes());
    fn go(p: &[u8], m: &[u8]) -> bool {
        match p.split_first() {
            None => m.is_empty(),
            Some((b'#', rest)) => {
                let n = m.iter().take_while(|c| c.is_ascii_digit()).count();
                (1..=n).any(|k| go(rest, &m[k..]))
            }
            Some((c, rest)) => m.first() == Some(c) && go(rest, &m[1..]),
        }
    }
    go(p, m)
}

/// The kinds of operand a position accepts (a set of [`OperandKind`]s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OperandKinds(u16);

/// One kind of operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u16)]
pub enum OperandKind {
    Register = 1,
    Immediate = 2,
    Address = 4,
    Predicate = 8,
    Vector = 16,
    Label = 32,
    Function = 64,
    Symbol = 128,
    Sink = 256,
}

impl OperandKind {
    const ALL: [(char, OperandKind); 9] = [
        ('r', OperandKind::Register),
        ('i', OperandKind::Immediate),
        ('a', OperandKind::Address),
        ('p', OperandKind::Predicate),
        ('v', OperandKind::Vector),
        ('l', OperandKind::Label),
        ('f', OperandKind::Function),
        ('s', OperandKind::Symbol),
        ('_', OperandKind::Sink),
    ];

    fn from_letter(c: char) -> Option<OperandKind> {
        OperandKind::ALL.iter().find(|(l, _)| *l == c).map(|p| p.1)
    }
}

impl OperandKinds {
    pub fn contains(self, k: OperandKind) -> bool {
        self.0 & k as u16 != 0
    }
    fn insert(&mut self, k: OperandKind) {
        self.0 |= k as u16;
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One operand position of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandSpec {
    pub name: &'static str,
    pub kinds: OperandKinds,
    /// May be left out.
    pub optional: bool,
    /// Takes the remaining operands (zero or more).
    pub variadic: bool,
}

/// One instruction form: an opcode, its modifier groups, its operands and its gating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    pub opcode: &'static str,
    pub groups: Vec<Group>,
    pub operands: Vec<OperandSpec>,
    pub min_ptx: PtxVersion,
    pub min_sm: Sm,
    /// PTX ISA 9.0 section and title, e.g. `9.7.1.1 add`.
    pub section: &'static str,
    /// 1-based line in `data/isa.txt`.
    pub line: u32,
}

impl Form {
    /// Whether `mods` (each with its leading dot, in any order) fit this form: every modifier
    /// taken by a distinct group, every required group taken.
    pub fn matches(&self, mods: &[&str]) -> bool {
        if mods.len() > self.groups.len() {
            return false;
        }
        let mut used = vec![false; self.groups.len()];
        fn assign(form: &Form, mods: &[&str], used: &mut [bool]) -> bool {
            let Some((m, rest)) = mods.split_first() else {
                return form
                    .groups
                    .iter()
                    .zip(used.iter())
                    .all(|(g, u)| *u || !g.required);
            };
            for i in 0..form.groups.len() {
                if !used[i] && form.groups[i].accepts(m) {
                    used[i] = true;
                    if assign(form, rest, used) {
                        return true;
                    }
                    used[i] = false;
                }
            }
            false
        }
        assign(self, mods, &mut used)
    }

    /// The fewest and most operands this form takes (`None` for no upper bound).
    pub fn operand_count(&self) -> (usize, Option<usize>) {
        let min = self
            .operands
            .iter()
            .filter(|o| !o.optional && !o.variadic)
            .count();
        let max = if self.operands.iter().any(|o| o.variadic) {
            None
        } else {
            Some(self.operands.len())
        };
        (min, max)
    }
}

/// The shape of a special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SregShape {
    Scalar,
    /// Read per component `.x`, `.y`, `.z`.
    Xyz,
    /// A numbered family, `%pm0`..`%pm7`: `#` in the name is the index.
    Numbered {
        lo: u32,
        hi: u32,
    },
}

/// A special register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecialRegister {
    /// Name with `%` (with `#` for the index of a numbered family).
    pub name: &'static str,
    /// PTX type, e.g. `.u32`.
    pub ty: &'static str,
    pub shape: SregShape,
    pub min_ptx: PtxVersion,
    pub min_sm: Sm,
    pub section: &'static str,
}

/// What a directive is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirectiveKind {
    Module,
    Func,
    Perf,
    Space,
    Link,
    Debug,
    Misc,
}

/// A directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    pub name: &'static str,
    pub kind: DirectiveKind,
    pub min_ptx: PtxVersion,
    pub min_sm: Sm,
    pub section: &'static str,
}

/// The parsed tables.
#[derive(Debug)]
pub struct Isa {
    forms: Vec<Form>,
    by_opcode: HashMap<&'static str, Vec<usize>>,
    /// Target -> the PTX version that introduced it.
    targets: Vec<(Sm, PtxVersion)>,
    /// Named modifier sets (kept for the consistency checks).
    sets: Vec<(&'static str, Vec<&'static str>)>,
    sregs: Vec<SpecialRegister>,
    directives: Vec<Directive>,
}

impl Isa {
    /// Parses the three tables.
    pub fn parse(
        isa: &'static str,
        sregs: &'static str,
        dirs: &'static str,
    ) -> Result<Isa, TableError> {
        table::parse(isa, sregs, dirs)
    }

    /// Every form, in table order.
    pub fn all_forms(&self) -> &[Form] {
        &self.forms
    }

    /// The forms of an opcode (empty for an unknown opcode).
    pub fn forms(&self, opcode: &str) -> impl Iterator<Item = &Form> {
        self.by_opcode
            .get(opcode)
            .into_iter()
            .flatten()
            .map(|&i| &self.forms[i])
    }

    /// Whether `opcode` is a PTX instruction.
    pub fn is_opcode(&self, opcode: &str) -> bool {
        self.by_opcode.contains_key(opcode)
    }

    /// The forms of `opcode` that `mods` fit.
    pub fn lookup<'a>(&'a self, opcode: &str, mods: &[&str]) -> Vec<&'a Form> {
        self.forms(opcode).filter(|f| f.matches(mods)).collect()
    }

    /// The PTX version that introduced `sm` (`None` for a target the table does not know).
    pub fn target_introduced(&self, sm: Sm) -> Option<PtxVersion> {
        self.targets.iter().find(|(s, _)| *s == sm).map(|p| p.1)
    }

    /// Every known target with the version that introduced it.
    pub fn targets(&self) -> &[(Sm, PtxVersion)] {
        &self.targets
    }

    /// The named modifier sets.
    pub fn sets(&self) -> &[(&'static str, Vec<&'static str>)] {
        &self.sets
    }

    /// Looks up a special register by its full name (`%tid`, `%pm3`, `%envreg12`). Returns the
    /// entry; components (`%tid.x`) are not part of the name.
    pub fn special_register(&self, name: &str) -> Option<&SpecialRegister> {
        self.sregs.iter().find(|r| match r.shape {
            SregShape::Numbered { lo, hi } => {
                let (pre, post) = r.name.split_once('#').unwrap_or((r.name, ""));
                name.strip_prefix(pre)
                    .and_then(|s| s.strip_suffix(post))
                    .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|d| d.parse::<u32>().ok())
                    .is_some_and(|n| (lo..=hi).contains(&n))
            }
            _ => r.name == name,
        })
    }

    /// Every special register entry.
    pub fn special_registers(&self) -> &[SpecialRegister] {
        &self.sregs
    }

    /// Looks up a directive by name (with its dot).
    pub fn directive(&self, name: &str) -> Option<&Directive> {
        self.directives.iter().find(|d| d.name == name)
    }

    /// Every directive entry.
    pub fn directives(&self) -> &[Directive] {
        &self.directives
    }
}

/// The ISA tables, parsed once. Panics only if the committed tables are malformed, which the
/// crate's tests rule out.
pub fn isa() -> &'static Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    ISA.get_or_init(|| {
        Isa::parse(ISA_TABLE, SREG_TABLE, DIRECTIVE_TABLE)
            .unwrap_or_else(|e| panic!("committed PTX ISA table is malformed: {e}"))
    })
}

#[cfg(test)]
mod tests;
