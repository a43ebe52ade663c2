//! Variable initializers and constant expressions: array sizes, `const_eval`, the bytes of an
//! initializer (with addresses of other variables), immediates.

use super::*;

/// The element count of a declarator (product of array dims); `incomplete` for `[]`.
pub(crate) fn array_count(d: &ast::Declarator) -> Result<(u64, bool), LowerError> {
    let mut n = 1u64;
    let mut incomplete = false;
    for dim in d.array_dims() {
        match dim.size() {
            Some(e) => match const_eval(&e) {
                Some(v) => n = n.saturating_mul(v as u64),
                None => {
                    return Err(LowerError {
                        line: 0,
                        message: "array size is not a constant".into(),
                    });
                }
            },
            None => {
                incomplete = true;
                n = 0;
            }
        }
    }
    if incomplete {
        // An incomplete array with an initializer takes its size from it.
        if let Some(init) = d.initializer().and_then(|i| i.value()) {
            n = count_init(&init);
        }
    }
    Ok((n, incomplete))
}

pub(crate) fn count_init(v: &ast::InitValue) -> u64 {
    match v {
        ast::InitValue::List(l) => l.values().map(|v| count_init(&v)).sum(),
        ast::InitValue::Expr(_) => 1,
    }
}

/// Evaluates an integer constant expression.
pub fn const_eval(e: &ast::Operand) -> Option<i64> {
    Some(match e {
        ast::Operand::Immediate(l) => match l.value()? {
            LiteralValue::Int { value, .. } => value as i64,
            _ => return None,
        },
        ast::Operand::Paren(p) => const_eval(&p.expr()?)?,
        ast::Operand::Prefix(p) => {
            let v = const_eval(&p.expr()?)?;
            match p.op()?.text() {
                "-" => v.wrapping_neg(),
                "~" => !v,
                "!" => (v == 0) as i64,
                "+" => v,
                _ => return None,
            }
        }
        ast::Operand::Binary(b) => {
            let l = const_eval(&b.lhs()?)?;
            let r = const_eval(&b.rhs()?)?;
            match b.op()?.text() {
                "+" => l.wrapping_add(r),
                "-" => l.wrapping_sub(r),
                "*" => l.wrapping_mul(r),
                "/" => l.checked_div(r)?,
                "%" => l.checked_rem(r)?,
                "<<" => l.wrapping_shl(r as u32),
                ">>" => l.wrapping_shr(r as u32),
                "&" => l & r,
                "|" => l | r,
                "^" => l ^ r,
                "&&" => (l != 0 && r != 0) as i64,
                "||" => (l != 0 || r != 0) as i64,
                "==" => (l == r) as i64,
                "!=" => (l != r) as i64,
                "<" => (l < r) as i64,
                "<=" => (l <= r) as i64,
                ">" => (l > r) as i64,
                ">=" => (l >= r) as i64,
                _ => return None,
            }
        }
        ast::Operand::Ternary(t) => {
            if const_eval(&t.condition()?)? != 0 {
                const_eval(&t.then_value()?)?
            } else {
                const_eval(&t.else_value()?)?
            }
        }
        ast::Operand::Cast(c) => {
            let v = const_eval(&c.expr()?)?;
            match c.ty()?.text() {
                ".s64" | ".u64" | ".b64" => v,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// Writes a variable's initializer into `image` at `off`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn init_bytes(
    d: &ast::Declarator,
    ty: Ty,
    image: &mut [u8],
    off: u64,
    line: u32,
    globals: &HashMap<String, Sym>,
    relocs: &mut Vec<Reloc>,
    in_const: bool,
) -> Result<(), LowerError> {
    let Some(init) = d.initializer().and_then(|i| i.value()) else {
        return Ok(());
    };
    let mut flat = Vec::new();
    flatten_init(&init, &mut flat);
    let esz = ty.size() as u64;
    for (i, e) in flat.iter().enumerate() {
        let at = off + i as u64 * esz;
        if at + esz > image.len() as u64 {
            return Err(LowerError {
                line,
                message: "initializer longer than the array".into(),
            });
        }
        let bits = match imm_of(e) {
            Some(imm) => imm_bits(imm, ty),
            None => {
                // An address initializer: `sym`, `sym+4`, `generic(sym)`.
                let (name, addend, generic) = addr_init(e).ok_or_else(|| LowerError {
                    line,
                    message: "unsupported initializer expression".into(),
                })?;
                match globals.get(&name) {
                    Some(Sym::Func(f)) => {
                        // A function address (virtual tables): its index, as `mov r, func`
                        // and indirect calls use it.
                        let _ = (addend, generic);
                        *f as u64
                    }
                    Some(Sym::Var(v)) => {
                        relocs.push(Reloc {
                            in_const,
                            offset: at,
                            size: esz as u32,
                            target: *v,
                            addend,
                            generic,
                        });
                        0
                    }
                    _ => {
                        return Err(LowerError {
                            line,
                            message: format!(
                                "initializer refers to `{name}`, which is not a variable"
                            ),
                        });
                    }
                }
            }
        };
        image[at as usize..(at + esz) as usize]
            .copy_from_slice(&bits.to_le_bytes()[..esz as usize]);
    }
    Ok(())
}

pub(crate) fn addr_init(e: &ast::Operand) -> Option<(String, i64, bool)> {
    match e {
        ast::Operand::Name(n) => Some((n.name()?.text().to_string(), 0, false)),
        ast::Operand::Call(c) => {
            let callee = c.callee()?;
            let ast::Operand::Name(n) = callee else {
                return None;
            };
            if n.name()?.text() != "generic" {
                return None;
            }
            let (s, a, _) = addr_init(&c.arg()?)?;
            Some((s, a, true))
        }
        ast::Operand::Binary(b) => {
            let (s, a, g) = addr_init(&b.lhs()?)?;
            let r = const_eval(&b.rhs()?)?;
            match b.op()?.text() {
                "+" => Some((s, a + r, g)),
                "-" => Some((s, a - r, g)),
                _ => None,
            }
        }
        ast::Operand::Paren(p) => addr_init(&p.expr()?),
        _ => None,
    }
}

pub(crate) fn flatten_init(v: &ast::InitValue, out: &mut Vec<ast::Operand>) {
    match v {
        ast::InitValue::List(l) => l.values().for_each(|v| flatten_init(&v, out)),
        ast::InitValue::Expr(e) => out.push(e.clone()),
    }
}

/// A literal (with constant folding of integer expressions and negated floats).
pub(crate) fn imm_of(e: &ast::Operand) -> Option<Imm> {
    match e {
        ast::Operand::Immediate(l) => Some(match l.value()? {
            LiteralValue::Int { value, .. } => Imm::Int(value),
            LiteralValue::F32Bits(b) => Imm::F32Bits(b),
            LiteralValue::F64Bits(b) => Imm::F64(f64::from_bits(b)),
            LiteralValue::F64(x) => Imm::F64(x),
        }),
        ast::Operand::Prefix(p) if p.op()?.text() == "-" => match imm_of(&p.expr()?)? {
            Imm::Int(v) => Some(Imm::Int(v.wrapping_neg())),
            Imm::F32Bits(b) => Some(Imm::F32Bits(b ^ 0x8000_0000)),
            Imm::F64(x) => Some(Imm::F64(-x)),
        },
        _ => const_eval(e).map(|v| Imm::Int(v as u64)),
    }
}

/// The bits of an immediate for an operand of type `ty`.
pub fn imm_bits(imm: Imm, ty: Ty) -> u64 {
    use crate::float::{self, Rnd};
    let f = |x: f64, fmt| float::round(x, std::cmp::Ordering::Equal, Rnd::Ne, fmt, false);
    match (imm, ty) {
        (Imm::Int(v), Ty::F32) => f((v as i64) as f64, float::F32),
        (Imm::Int(v), Ty::F64) => ((v as i64) as f64).to_bits(),
        // A predicate literal: 0 is false, anything else true (`xor.pred %p, %q, -1`).
        (Imm::Int(v), Ty::Pred) => u64::from(v != 0),
        (Imm::Int(v), _) => v & ty.mask(),
        // ptxas 13.0.88 zero-extends a `0f` literal's bits in an f64 operand or initializer
        // (`mov.f64 d, 0f3F800000` is `0x3f800000`, not 1.0; a `cvt.f64.f32` source is f32).
        (Imm::F32Bits(b), Ty::F64) => u64::from(b),
        (Imm::F32Bits(b), Ty::F16 | Ty::F16x2) => f(f32::from_bits(b) as f64, float::F16),
        (Imm::F32Bits(b), Ty::Bf16 | Ty::Bf16x2) => f(f32::from_bits(b) as f64, float::BF16),
        (Imm::F32Bits(b), _) => b as u64 & ty.mask(),
        (Imm::F64(x), Ty::F32) => f(x, float::F32),
        (Imm::F64(x), Ty::F16 | Ty::F16x2) => f(x, float::F16),
        (Imm::F64(x), Ty::Bf16 | Ty::Bf16x2) => f(x, float::BF16),
        (Imm::F64(x), Ty::F64) => x.to_bits(),
        (Imm::F64(x), _) => x.to_bits() & ty.mask(),
    }
}
