//! Registers that hold the address of a kernel parameter.
//!
//! NVCC writes a by-value aggregate parameter that the code indexes as
//! `mov.b64 %rd1, kernel_param_0; ld.param.u64 %rd2, [%rd1+8];` (Kokkos functors, CUB's
//! sweep kernels, `LargeKernelParameter`). Such an address is a constant of the kernel: it is
//! never materialized when every use of the register is the base of an `ld.param` or the
//! source of another such register, and each `ld.param [%rd1+o]` reads the parameter's
//! constant-bank word directly, as ptxas's code does (`LDC R, c[0x0][base+o]`).
//!
//! [`param_pointers`] finds the registers whose every definition is unguarded
//! `mov.{b,u,s}64 %r, param` / `mov %r, %ptr` / `add.{u,s,b}64 %r, %ptr, imm` and whose every
//! other appearance is the base of an `ld.param` address, all definitions agreeing on one
//! (parameter, offset). Anything else (a register that escapes into arithmetic, a store, a
//! call, `cvta.param`) is left alone and lowers as before, where taking the address is
//! refused with a diagnostic.

use rustc_hash::{FxHashMap, FxHashSet};
use syntax::SyntaxKind;
use syntax::ast::{self, AstNode};

/// How a candidate definition computes its value.
enum Def {
    /// The address of the named kernel parameter.
    Param(String),
    /// Another register plus a byte offset.
    Offset(String, i64),
}

fn name_of(o: &ast::Operand) -> Option<String> {
    match o {
        ast::Operand::Name(n) if n.components().next().is_none() => {
            n.name().map(|t| t.text().to_string())
        }
        _ => None,
    }
}

/// The base register of an `ld.param` address `[%r]` / `[%r+imm]` / `[%r-imm]`.
fn ld_param_base(o: &ast::Operand) -> Option<String> {
    let ast::Operand::Address(a) = o else {
        return None;
    };
    let inner: Vec<ast::Operand> = a.operands().collect();
    match inner.as_slice() {
        [ast::Operand::Binary(b)] => {
            b.rhs()?.as_int()?;
            name_of(&b.lhs()?)
        }
        [e] => name_of(e),
        _ => None,
    }
}

/// Kernel-body registers holding a kernel parameter's address: register → (parameter, byte
/// offset). `params` names the kernel's parameters.
pub(crate) fn param_pointers<P>(
    body: &ast::Block,
    params: &FxHashMap<String, P>,
) -> FxHashMap<String, (String, i64)> {
    let mut defs: Vec<(String, Def)> = Vec::new();
    // Registers appearing anywhere other than a candidate definition's destination or source
    // or an `ld.param` base.
    let mut bad: FxHashSet<String> = FxHashSet::default();
    // Names used as an `ld.param` base (candidates only if they are defined as pointers).
    for node in body.syntax().descendants() {
        let Some(i) = ast::Instruction::cast(node) else {
            continue;
        };
        let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
        let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
        let ops: Vec<ast::Operand> = i.operands().collect();
        let wide = mods
            .iter()
            .any(|m| matches!(m.as_str(), ".b64" | ".u64" | ".s64"));
        let unguarded = i.guard().is_none();
        let mut handled: Option<Vec<usize>> = None;
        if unguarded && wide && ops.len() == 2 && opcode == "mov" {
            if let (Some(d), Some(s)) = (name_of(&ops[0]), name_of(&ops[1])) {
                let def = if params.contains_key(&s) {
                    Def::Param(s)
                } else {
                    Def::Offset(s, 0)
                };
                defs.push((d, def));
                handled = Some(vec![0, 1]);
            }
        } else if unguarded && wide && ops.len() == 3 && opcode == "add" && mods.len() == 1 {
            let d = name_of(&ops[0]);
            let pick = match (name_of(&ops[1]), ops[2].as_int(), ops[1].as_int()) {
                (Some(s), Some(k), _) => Some((s, k as i64)),
                (None, _, Some(k)) => name_of(&ops[2]).map(|s| (s, k as i64)),
                _ => None,
            };
            if let (Some(d), Some((s, k))) = (d, pick) {
                defs.push((d, Def::Offset(s, k)));
                handled = Some(vec![0, 1, 2]);
            }
        } else if opcode == "ld"
            && mods.iter().any(|m| m == ".param")
            && ops.len() == 2
            && ld_param_base(&ops[1]).is_some()
        {
            // The base is a use we accept; the destination is an ordinary definition.
            handled = Some(vec![1]);
        }
        let handled = handled.unwrap_or_default();
        for (k, o) in ops.iter().enumerate() {
            if handled.contains(&k) {
                continue;
            }
            for t in o
                .syntax()
                .descendants_with_tokens()
                .filter_map(|e| e.into_token())
                .filter(|t| t.kind() == SyntaxKind::IDENT)
            {
                bad.insert(t.text().to_string());
            }
        }
    }
    let mut ptrs: FxHashSet<String> = defs
        .iter()
        .map(|(d, _)| d.clone())
        .filter(|d| !bad.contains(d) && !params.contains_key(d))
        .collect();
    loop {
        let mut changed = false;
        for (d, def) in &defs {
            if let Def::Offset(s, _) = def {
                // A copy into a non-pointer needs the value: the source escapes.
                if !ptrs.contains(d) && ptrs.remove(s) {
                    changed = true;
                }
                // A pointer computed from a non-pointer is not a constant.
                if ptrs.contains(d) && !ptrs.contains(s) {
                    ptrs.remove(d);
                    changed = true;
                }
            }
        }
        if changed {
            continue;
        }
        // Values: every definition of a pointer must agree.
        let mut values: FxHashMap<String, (String, i64)> = FxHashMap::default();
        let mut conflict: Option<String> = None;
        for _ in 0..=defs.len() {
            let mut progress = false;
            for (d, def) in defs.iter().filter(|(d, _)| ptrs.contains(d)) {
                let v = match def {
                    Def::Param(p) => Some((p.clone(), 0)),
                    Def::Offset(s, k) => values.get(s).map(|(p, o)| (p.clone(), o + k)),
                };
                let Some(v) = v else { continue };
                match values.get(d) {
                    Some(old) if *old == v => {}
                    Some(_) => conflict = Some(d.clone()),
                    None => {
                        values.insert(d.clone(), v);
                        progress = true;
                    }
                }
            }
            if !progress || conflict.is_some() {
                break;
            }
        }
        // A definition that never resolved (a cycle without a parameter) disqualifies too.
        let unresolved = defs
            .iter()
            .filter(|(d, _)| ptrs.contains(d))
            .find(|(d, def)| match def {
                Def::Param(_) => false,
                Def::Offset(s, k) => {
                    values.get(s).map(|(p, o)| (p.clone(), o + k)) != values.get(d).cloned()
                }
            })
            .map(|(d, _)| d.clone());
        match conflict.or(unresolved) {
            Some(d) => {
                ptrs.remove(&d);
            }
            None => return values,
        }
    }
}

#[cfg(test)]
mod tests {
    use syntax::ast::AstNode;

    fn pointers(body: &str) -> Vec<(String, (String, i64))> {
        let text = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry k(.param .align 8 .b8 k_param_0[64], .param .u64 k_param_1)\n{{\n{body}\n}}\n"
        );
        let parse = syntax::parse(&text);
        let file = syntax::ast::SourceFile::cast(parse.syntax_node()).unwrap();
        let f = file
            .syntax()
            .descendants()
            .find_map(syntax::ast::Function::cast)
            .unwrap();
        let params: rustc_hash::FxHashMap<String, ()> = [("k_param_0", ()), ("k_param_1", ())]
            .into_iter()
            .map(|(n, u)| (n.to_string(), u))
            .collect();
        let mut v: Vec<_> = super::param_pointers(&f.body().unwrap(), &params)
            .into_iter()
            .collect();
        v.sort();
        v
    }

    #[test]
    fn pointers_used_only_by_ld_param_are_constants() {
        let p = pointers(
            ".reg .b64 %rd<20>; .reg .pred %p<2>;\n\
             mov.b64 %rd1, k_param_0;\n\
             mov.u64 %rd2, %rd1;\n\
             add.s64 %rd3, %rd2, 16;\n\
             ld.param.u64 %rd4, [%rd3+8];\n\
             ld.param.u64 %rd5, [%rd1];\n\
             mov.b64 %rd6, k_param_0;\n\
             add.s64 %rd7, %rd6, 8;\n\
             st.global.u64 [%rd4], %rd7;\n\
             mov.b64 %rd8, k_param_1;\n\
             cvta.param.u64 %rd9, %rd8;\n\
             mov.b64 %rd10, k_param_0;\n\
             @%p1 mov.b64 %rd10, k_param_1;\n\
             mov.b64 %rd11, k_param_0;\n\
             mov.b64 %rd11, k_param_1;\n\
             mov.b64 %rd12, k_param_0;\n\
             mov.b64 %rd12, k_param_0;\n\
             ld.param.u32 %rd13, [%rd10]; ld.param.u32 %rd13, [%rd11]; ld.param.u32 %rd13, [%rd12];",
        );
        let names: Vec<(&str, &str, i64)> = p
            .iter()
            .map(|(r, (q, o))| (r.as_str(), q.as_str(), *o))
            .collect();
        // %rd6/%rd7 escape into a store, %rd8 into cvta, %rd10 has a guarded definition,
        // %rd11 two disagreeing ones; %rd12's two definitions agree.
        assert_eq!(
            names,
            vec![
                ("%rd1", "k_param_0", 0),
                ("%rd12", "k_param_0", 0),
                ("%rd2", "k_param_0", 0),
                ("%rd3", "k_param_0", 16),
            ]
        );
    }
}
