//! Floating-point contraction as ptxas does it under `--fmad=true` (its default): which
//! `add`/`sub` instructions become one fused multiply-add with the `mul` that feeds them.
//!
//! The rule, from ptxas 13.0.88's code for one-pattern probes (docs/arch/hardware.md):
//! a `mul.f32`/`mul.f64` without a rounding modifier or `.sat` is contracted into every
//! `add`/`sub` of the same type that reads it, when *all* its readers are such `add`/`sub`s
//! with no rounding modifier and the same `.ftz`, in the same PTX block (between labels and
//! control transfers), after it; `add.sat` gives a saturated fused add. In `a*b + c*d` the
//! `add`'s first operand is contracted and the other `mul` stays. Anything else — a `mul` that
//! is stored, compared or read in another block; `.rn` on either side; `.ftz` on one side only
//! — is not contracted.
//!
//! This module decides the pairs once, on the syntax tree, so that kiln's lowering and the PTX
//! interpreter contract exactly the same ones. Conservative where the PTX is not in SSA form:
//! a `mul` whose result register is written anywhere else, a guarded `mul` or `add`, or a
//! factor register written between the `mul` and the `add` is not contracted.

use std::collections::HashMap;

use syntax::TextRange;
use syntax::ast::{self, AstNode};

/// How an `add`/`sub` is contracted: `d = fma(±a, b, ±c)` with the `mul`'s factors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contraction {
    /// The `mul` whose factors the fused instruction reads (its operands 1 and 2).
    pub mul: TextRange,
    /// Which operand of the `add`/`sub` (1 or 2) is the `mul`'s result; the other is the
    /// addend.
    pub product_operand: usize,
    /// The product enters negated (`sub c, m`).
    pub negate_product: bool,
    /// The addend enters negated (`sub m, c`).
    pub negate_addend: bool,
}

/// The contracted `add`/`sub` instructions of a function body, by their text range.
pub type Contractions = HashMap<TextRange, Contraction>;

/// Opcodes whose first operand is not written (stores, reductions, control, barriers).
const NOT_WRITING: &[&str] = &[
    "st",
    "red",
    "bra",
    "brx",
    "call",
    "ret",
    "exit",
    "bar",
    "barrier",
    "membar",
    "fence",
    "prefetch",
    "prefetchu",
    "trap",
    "cp",
    "mbarrier",
    "wgmma",
    "stmatrix",
    "sust",
    "sured",
    "griddepcontrol",
    "nanosleep",
    "pmevent",
    "brkpt",
    "setmaxnreg",
    "multimem",
    "tensormap",
    "applypriority",
    "discard",
    "createpolicy",
    "elect",
    "clusterlaunchcontrol",
    "tcgen05",
];

/// Opcodes after which a new PTX block starts.
const ENDS_BLOCK: &[&str] = &[
    "bra", "brx", "call", "ret", "exit", "trap", "bar", "barrier",
];

struct Inst {
    node: ast::Instruction,
    opcode: String,
    mods: Vec<String>,
    block: usize,
    guarded: bool,
    /// Register names written (operand 0 of a writing instruction).
    defs: Vec<String>,
    /// Operands as written: the plain register name of each, or `None`.
    operands: Vec<Option<String>>,
    /// Every register name the instruction reads (any operand position but a def).
    uses: Vec<String>,
}

fn names(o: &ast::Operand, out: &mut Vec<String>) {
    for n in o.syntax().descendants().filter_map(ast::NameRef::cast) {
        if let Some(t) = n.name() {
            out.push(t.text().to_string());
        }
    }
}

fn plain_name(o: &ast::Operand) -> Option<String> {
    match o {
        ast::Operand::Name(n) if n.components().next().is_none() => {
            n.name().map(|t| t.text().to_string())
        }
        _ => None,
    }
}

fn flatten(b: &ast::Block, block: &mut usize, out: &mut Vec<Inst>) {
    for st in b.statements() {
        match st {
            ast::Statement::Label(_) => *block += 1,
            ast::Statement::Block(inner) => flatten(&inner, block, out),
            ast::Statement::Instruction(i) => {
                let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
                let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
                let ops: Vec<ast::Operand> = i.operands().collect();
                let writes = !NOT_WRITING.contains(&opcode.as_str());
                let mut defs = Vec::new();
                let mut uses = Vec::new();
                for (k, o) in ops.iter().enumerate() {
                    if k == 0 && writes {
                        // A destination; an address or vector inside it is read by stores
                        // only, so every name here is a definition.
                        names(o, &mut defs);
                    } else {
                        names(o, &mut uses);
                    }
                }
                if let Some(g) = i.guard().and_then(|g| g.predicate()) {
                    uses.extend(g.name().map(|t| t.text().to_string()));
                }
                let ends = ENDS_BLOCK.contains(&opcode.as_str());
                out.push(Inst {
                    operands: ops.iter().map(plain_name).collect(),
                    guarded: i.guard().is_some(),
                    node: i,
                    opcode,
                    mods,
                    block: *block,
                    defs,
                    uses,
                });
                if ends {
                    *block += 1;
                }
            }
            _ => {}
        }
    }
}

const ROUNDING: &[&str] = &[".rn", ".rz", ".rm", ".rp"];

/// The float type of an arithmetic instruction (`.f32`/`.f64`), and whether it has `.ftz`,
/// `.sat`, and a rounding modifier.
fn float_form(mods: &[String]) -> Option<(&'static str, bool, bool, bool)> {
    let ty = if mods.iter().any(|m| m == ".f32") {
        ".f32"
    } else if mods.iter().any(|m| m == ".f64") {
        ".f64"
    } else {
        return None;
    };
    if mods.iter().any(|m| {
        !matches!(
            m.as_str(),
            ".f32" | ".f64" | ".ftz" | ".sat" | ".rn" | ".rz" | ".rm" | ".rp"
        )
    }) {
        return None;
    }
    Some((
        ty,
        mods.iter().any(|m| m == ".ftz"),
        mods.iter().any(|m| m == ".sat"),
        mods.iter().any(|m| ROUNDING.contains(&m.as_str())),
    ))
}

/// The `add`/`sub` instructions ptxas would contract in `body`.
pub fn contractions(body: &ast::Block) -> Contractions {
    let mut insts = Vec::new();
    let mut block = 0;
    flatten(body, &mut block, &mut insts);
    let mut def_count: HashMap<&str, usize> = HashMap::new();
    let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, i) in insts.iter().enumerate() {
        for d in &i.defs {
            *def_count.entry(d).or_default() += 1;
        }
        for u in &i.uses {
            readers.entry(u).or_default().push(k);
        }
    }
    // Candidate muls: unguarded, no rounding or saturation, result written only here.
    let candidate = |k: usize| -> Option<(&'static str, bool)> {
        let m = &insts[k];
        if m.opcode != "mul" || m.guarded || m.operands.len() != 3 {
            return None;
        }
        let (ty, ftz, sat, rnd) = float_form(&m.mods)?;
        let d = m.operands[0].as_deref()?;
        (!sat && !rnd && def_count.get(d) == Some(&1)).then_some((ty, ftz))
    };
    let mut out = Contractions::new();
    for (k, m) in insts.iter().enumerate() {
        let Some((ty, ftz)) = candidate(k) else {
            continue;
        };
        let d = m.operands[0]
            .clone()
            .expect("candidate has a plain destination");
        let factors: Vec<&str> = m.operands[1..]
            .iter()
            .flatten()
            .map(String::as_str)
            .collect();
        let mut pairs = Vec::new();
        let mut ok = true;
        for &r in readers.get(d.as_str()).map_or(&[][..], Vec::as_slice) {
            let a = &insts[r];
            let form = float_form(&a.mods);
            let fits = matches!(a.opcode.as_str(), "add" | "sub")
                && !a.guarded
                && r > k
                && a.block == m.block
                && a.operands.len() == 3
                && form.is_some_and(|(t, f, _, rnd)| t == ty && f == ftz && !rnd)
                // Not `m + m`, and the mul's factors unchanged since the mul.
                && a.operands[1] != a.operands[2]
                && !insts[k + 1..r]
                    .iter()
                    .any(|b| b.defs.iter().any(|x| factors.contains(&x.as_str())));
            let which = a.operands[1..]
                .iter()
                .position(|o| o.as_deref() == Some(d.as_str()))
                .map(|p| p + 1);
            let Some(which) = which.filter(|_| fits) else {
                ok = false;
                break;
            };
            // `a*b + c*d`: only the first operand's product is contracted.
            if which == 2
                && insts.iter().enumerate().any(|(j, x)| {
                    j < r
                        && a.operands[1].is_some()
                        && x.operands.first().is_some_and(|o| *o == a.operands[1])
                        && candidate(j).is_some()
                })
            {
                ok = false;
                break;
            }
            let sub = a.opcode == "sub";
            pairs.push((
                a.node.syntax().text_range(),
                Contraction {
                    mul: m.node.syntax().text_range(),
                    product_operand: which,
                    negate_product: sub && which == 2,
                    negate_addend: sub && which == 1,
                },
            ));
        }
        if ok {
            out.extend(pairs);
        }
    }
    out
}
