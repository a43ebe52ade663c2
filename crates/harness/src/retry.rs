//! Launches to try again when the harness's generic launch ([`Config::default`]) leaves a
//! kernel not comparable: code written for another block shape, inputs that drive it into
//! undefined behaviour, 64-bit sizes taken for pointers. The corpus stages (`emu`, `compile`)
//! run the alternatives for the first launch's reason in order and keep the first that
//! compares; every alternative is an ordinary launch of the kernel, so a difference it
//! finds is a real one.

use std::collections::{HashMap, HashSet};

use crate::Config;

/// The alternatives for a launch that was not comparable for `reason` (a
/// [`crate::Verdict::NotComparable`] text, or the compile stage's `emu: ...` form of
/// an unsupported one), in the order to try them. Empty when no other launch can help.
pub fn alternatives(ptx: &str, kernel: &str, reason: &str, plain: &Config) -> Vec<Config> {
    let shapes = |shapes: &[[u32; 3]]| -> Vec<Config> {
        shapes
            .iter()
            .map(|&block| Config {
                block,
                // The shape is a guess: a launch that traps is no evidence either way.
                require_no_trap: true,
                ..plain.clone()
            })
            .collect()
    };
    if reason.starts_with("harness: misaligned") {
        // Vector accesses at offsets made of the random scalars: sizes and strides that keep
        // addresses aligned.
        return vec![Config {
            aligned_scalars: true,
            ..plain.clone()
        }];
    }
    if reason == "emu: step limit" || reason == "interp: step limit" {
        // Code for a fixed block size (cooperative-groups tiles of several warps, which wait
        // at barriers for threads a 64-thread block lacks): the sizes such code is written
        // for. Then a loop that did not end because a 64-bit count or size was taken for a
        // pointer (CUB's `num_items`, which runs to the buffer's address): those parameters
        // get small values.
        let mut out = shapes(&[[128, 1, 1], [256, 1, 1], [512, 1, 1], [1024, 1, 1]]);
        let scalars = unaddressed_params(ptx, kernel);
        if !scalars.is_empty() {
            out.push(Config {
                scalar_params: scalars,
                require_no_trap: true,
                ..plain.clone()
            });
        }
        return out;
    }
    if reason.starts_with("sanitizer:") {
        // A race or an uninitialized read at the generic launch: shared tiles and reductions
        // written for another block size (a tree reduction for 128 threads reads
        // `sdata[tid + 64]`, which a 64-thread block never wrote). The shapes such code is
        // written for, each also with aligned scalars (vector accesses at offsets made of
        // them).
        let mut out = Vec::new();
        for c in shapes(&[
            [128, 1, 1],
            [256, 1, 1],
            [32, 1, 1],
            [512, 1, 1],
            [1024, 1, 1],
            [16, 16, 1],
            [8, 8, 1],
            [32, 8, 1],
        ]) {
            out.push(Config {
                aligned_scalars: true,
                ..c.clone()
            });
            out.push(c);
        }
        return out
            .into_iter()
            .filter(|c| within_bounds(ptx, kernel, c.block))
            .collect();
    }
    if reason.starts_with("harness: shared access outside") {
        // Shared arrays indexed for a two-dimensional block (image tiles).
        return shapes(&[[8, 8, 1], [16, 16, 1], [32, 8, 1], [16, 8, 1], [32, 32, 1]]);
    }
    if reason.starts_with("undefined behaviour:") && reason.contains("outside the .shared array") {
        // Shared tiles indexed for the block the kernel was written for (rodinia's 16-thread
        // `needle`, 16×16 `matrixMul`): with more threads, indices run past the tiles.
        return shapes(&[
            [16, 16, 1],
            [16, 1, 1],
            [8, 8, 1],
            [32, 8, 1],
            [32, 32, 1],
            [32, 1, 1],
            [128, 1, 1],
            [256, 1, 1],
        ]);
    }
    if reason.starts_with("undefined behaviour:") {
        // Warp-level code for a block size given as a template argument (CUDA samples'
        // `reduce7<T, blockSize>`): with more threads than it was written for, shuffles read
        // lanes that have left and member masks leave threads out. One warp, then the other
        // powers of two.
        return shapes(&[
            [32, 1, 1],
            [1, 1, 1],
            [2, 1, 1],
            [4, 1, 1],
            [8, 1, 1],
            [16, 1, 1],
            [128, 1, 1],
            [256, 1, 1],
            [512, 1, 1],
            [1024, 1, 1],
        ]);
    }
    Vec::new()
}

/// A kernel's launch bounds: `.reqntid` (the block it must be launched with) and `.maxntid`
/// (the most threads per block), when declared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchBounds {
    pub reqntid: Option<[u32; 3]>,
    pub maxntid: Option<[u32; 3]>,
}

/// The launch bounds `kernel` declares in `ptx`.
pub fn launch_bounds(ptx: &str, kernel: &str) -> LaunchBounds {
    use syntax::ast::{self, AstNode};
    let parse = crate::memo::parse(ptx);
    let mut b = LaunchBounds::default();
    let Some(file) = ast::SourceFile::cast(parse.syntax_node()) else {
        return b;
    };
    let Some(f) = file
        .syntax()
        .descendants()
        .filter_map(ast::Function::cast)
        .find(|f| f.name().is_some_and(|n| n.text() == kernel))
    else {
        return b;
    };
    for d in f.perf_directives() {
        let dims = || -> Option<[u32; 3]> {
            let v: Vec<u32> = d
                .int_args()
                .into_iter()
                .map(|x| x.and_then(|x| u32::try_from(x).ok()))
                .collect::<Option<_>>()?;
            (!v.is_empty() && v.len() <= 3 && !v.contains(&0))
                .then(|| [v[0], *v.get(1).unwrap_or(&1), *v.get(2).unwrap_or(&1)])
        };
        match d.name().as_ref().map(|t| t.text()) {
            Some(".reqntid") => b.reqntid = dims(),
            Some(".maxntid") => b.maxntid = dims(),
            _ => {}
        }
    }
    b
}

fn threads(b: [u32; 3]) -> u64 {
    b.iter().map(|&x| u64::from(x)).product()
}

/// Whether a block shape is inside the kernel's launch bounds.
pub fn within_bounds(ptx: &str, kernel: &str, block: [u32; 3]) -> bool {
    let b = launch_bounds(ptx, kernel);
    b.reqntid.is_none_or(|r| threads(r) == threads(block))
        && b.maxntid.is_none_or(|m| threads(block) <= threads(m))
}

/// `plain` with its block inside the kernel's contract: the `.reqntid` shape when the
/// kernel declares one, at most `.maxntid` threads (that shape) when `plain` has more.
pub fn contract_config(ptx: &str, kernel: &str, plain: &Config) -> Config {
    let b = launch_bounds(ptx, kernel);
    let block = match (b.reqntid, b.maxntid) {
        (Some(r), _) => r,
        (None, Some(m)) if threads(plain.block) > threads(m) => m,
        _ => plain.block,
    };
    Config {
        block,
        ..plain.clone()
    }
}

/// The kernel's 64-bit integer parameters whose loaded value is never the source of a
/// `cvta` nor the base of an address operand, directly or through `mov`/`add` (sizes and
/// counts rather than pointers).
pub fn unaddressed_params(ptx: &str, kernel: &str) -> Vec<String> {
    use syntax::ast::{self, AstNode, DeclLike};
    let parse = crate::memo::parse(ptx);
    let Some(file) = ast::SourceFile::cast(parse.syntax_node()) else {
        return Vec::new();
    };
    let Some(f) = file
        .syntax()
        .descendants()
        .filter_map(ast::Function::cast)
        .find(|f| f.name().is_some_and(|n| n.text() == kernel))
    else {
        return Vec::new();
    };
    let mut wide: Vec<String> = f
        .params()
        .filter(|p| {
            p.ty()
                .is_some_and(|t| matches!(t.text(), ".u64" | ".s64" | ".b64"))
                && p.declarators()
                    .iter()
                    .all(|d| d.array_dims().next().is_none())
        })
        .filter_map(|p| p.name().map(|t| t.text().to_string()))
        .collect();
    let Some(body) = f.body() else {
        return Vec::new();
    };
    let name_of = |o: &ast::Operand| match o {
        ast::Operand::Name(n) => n.name().map(|t| t.text().to_string()),
        _ => None,
    };
    // Registers carrying each parameter's value: loads, then copies and adds, to a fixpoint.
    let insts: Vec<ast::Instruction> = body
        .syntax()
        .descendants()
        .filter_map(ast::Instruction::cast)
        .collect();
    let mut carries: HashMap<String, String> = HashMap::new();
    for _ in 0..4 {
        for i in &insts {
            let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
            let ops: Vec<ast::Operand> = i.operands().collect();
            let Some(d) = ops.first().and_then(name_of) else {
                continue;
            };
            let from = match opcode.as_str() {
                "ld" if i.modifiers().any(|m| m.text() == ".param") => ops.get(1).and_then(|a| {
                    let ast::Operand::Address(a) = a else {
                        return None;
                    };
                    a.operands().next().as_ref().and_then(name_of)
                }),
                "mov" | "add" | "sub" | "cvta" => ops[1..]
                    .iter()
                    .filter_map(name_of)
                    .find_map(|n| carries.get(&n).cloned()),
                _ => None,
            };
            if let Some(p) = from.filter(|p| wide.contains(p) || carries.values().any(|v| v == p)) {
                carries.entry(d).or_insert(p);
            }
        }
    }
    let mut addressed: HashSet<String> = Default::default();
    for i in &insts {
        let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
        let ops: Vec<ast::Operand> = i.operands().collect();
        for (k, o) in ops.iter().enumerate() {
            let base = match o {
                ast::Operand::Address(a) => a.operands().next().and_then(|e| match e {
                    ast::Operand::Binary(b) => b.lhs().as_ref().and_then(name_of),
                    e => name_of(&e),
                }),
                o if opcode == "cvta" && k > 0 => name_of(o),
                _ => None,
            };
            if let Some(p) = base.and_then(|b| carries.get(&b)) {
                addressed.insert(p.clone());
            }
        }
    }
    wide.retain(|p| !addressed.contains(p));
    wide
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_the_64_bit_parameters_never_used_as_addresses() {
        let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
            .visible .entry k(.param .u64 a, .param .u64 b, .param .u64 n, .param .u64 c, .param .u32 m)\n{\n\
            .reg .b64 %rd<12>;\n.reg .pred %p<2>;\n\
            ld.param.u64 %rd1, [a];\nld.param.u64 %rd2, [b];\nld.param.u64 %rd3, [n];\n\
            ld.param.u64 %rd4, [c];\n\
            cvta.to.global.u64 %rd5, %rd1;\n\
            mov.u64 %rd6, %rd2;\nadd.s64 %rd7, %rd6, 8;\nld.global.u32 %rd8, [%rd7+4];\n\
            setp.lt.u64 %p1, %rd3, 10;\nadd.s64 %rd9, %rd4, %rd3;\n\
            st.global.u64 [%rd5], %rd9;\nret;\n}\n";
        assert_eq!(
            unaddressed_params(ptx, "k"),
            vec!["n".to_string(), "c".to_string()]
        );
        assert!(unaddressed_params(ptx, "missing").is_empty());
    }

    #[test]
    fn each_reason_has_its_alternatives() {
        let plain = Config::default();
        let ptx =
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
        let mis = alternatives(ptx, "k", "harness: misaligned access (x)", &plain);
        assert_eq!(mis.len(), 1);
        assert!(mis[0].aligned_scalars && !mis[0].require_no_trap);
        let ub = alternatives(ptx, "k", "undefined behaviour: 3 SHFL read(s)", &plain);
        assert_eq!(ub[0].block, [32, 1, 1]);
        assert!(ub.iter().all(|c| c.require_no_trap));
        // No 64-bit parameters: the block shapes only.
        assert_eq!(alternatives(ptx, "k", "emu: step limit", &plain).len(), 4);
        assert!(alternatives(ptx, "k", "emu: instruction HMMA", &plain).is_empty());
    }
}
