//! Which static `.shared` array a shared-memory access's address derives from, when the
//! function's code says so unambiguously: the address is `[sym+off]`, or its base register
//! is only ever defined as `mov r, sym` or by adding integers to / copying such a register
//! (through `add`, `sub`, `mov`, `cvt`, `cvta`). PTX, like C, leaves an access outside the
//! array its address was formed from undefined (it reads whatever lies next to it, which
//! depends on how the compiler laid out shared memory); the interpreter counts such accesses
//! ([`crate::RunStats::outside_array`]) so that a harness can tell a layout-dependent result
//! from a wrong one.

use crate::ir::{AddrBase, Function, Loc, Op, Operand, Space, VarRef};

/// What a register holds, as far as shared-array provenance goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val {
    /// No definition seen yet (optimistic start of the fixpoint).
    Unseen,
    /// The address of the static shared array at this offset, plus an integer.
    Array(u64),
    /// An integer that derives from no array.
    Plain,
    /// Anything else (two arrays, a loaded pointer, a product of an address).
    Unknown,
}

fn join(a: Val, b: Val) -> Val {
    match (a, b) {
        (Val::Unseen, x) | (x, Val::Unseen) => x,
        (x, y) if x == y => x,
        _ => Val::Unknown,
    }
}

fn shared_static(v: &VarRef) -> Option<u64> {
    match (v.space, v.loc) {
        (Space::Shared, Loc::Static(o)) => Some(o),
        _ => None,
    }
}

/// Per instruction of `f`: for a shared-space `ld`/`st`/`atom`/`red`/`cp.async` (the
/// destination of the latter), the offset of the static shared array its address derives from.
/// `arrays` lists the module's static shared arrays as (offset, size); only those count (the
/// dynamic area has no declared extent).
pub fn shared_arrays(f: &Function, arrays: &[(u64, u64)]) -> Vec<Option<u64>> {
    let known = |o: u64| arrays.iter().any(|&(a, s)| a == o && s > 0);
    let mut regs = vec![Val::Unseen; f.reg_bits.len()];
    let val = |regs: &[Val], o: &Operand| -> Val {
        match o {
            Operand::Reg(r) | Operand::RegOff(r, _) => regs[*r as usize],
            Operand::Imm(_) | Operand::Sreg(_) => Val::Plain,
            Operand::VarAddr {
                var,
                generic: false,
                ..
            } => shared_static(var)
                .filter(|o| known(*o))
                .map_or(Val::Unknown, Val::Array),
            _ => Val::Unknown,
        }
    };
    // Definitions, to a fixpoint (values only move down the lattice: Unseen, then one of
    // Array/Plain, then Unknown).
    for _ in 0..64 {
        let mut changed = false;
        for inst in &f.body {
            let dsts: Vec<u32> = match (inst.op, inst.args.first()) {
                (
                    Op::St
                    | Op::Red
                    | Op::Bar
                    | Op::Bra
                    | Op::Ret
                    | Op::Exit
                    | Op::Trap
                    | Op::Membar
                    | Op::Nop
                    | Op::CpAsync
                    | Op::CpAsyncCommit
                    | Op::CpAsyncWait
                    | Op::Unsupported,
                    _,
                ) => Vec::new(),
                (Op::Call, _) => inst
                    .call
                    .iter()
                    .flat_map(|c| c.rets.iter())
                    .filter_map(|o| match o {
                        Operand::Reg(r) => Some(*r),
                        _ => None,
                    })
                    .collect(),
                (_, Some(Operand::Reg(r))) => vec![*r],
                (_, Some(Operand::Vec(v))) => v
                    .iter()
                    .filter_map(|o| match o {
                        Operand::Reg(r) => Some(*r),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            if dsts.is_empty() {
                continue;
            }
            let srcs = inst.args.get(1..).unwrap_or(&[]);
            let v = if inst.op == Op::Call {
                Val::Unknown
            } else {
                let vals: Vec<Val> = srcs.iter().map(|o| val(&regs, o)).collect();
                let arrays: Vec<Val> = vals
                    .iter()
                    .copied()
                    .filter(|v| matches!(v, Val::Array(_)))
                    .collect();
                let others_plain = vals
                    .iter()
                    .all(|v| matches!(v, Val::Array(_) | Val::Plain | Val::Unseen));
                match inst.op {
                    Op::Mov | Op::Cvt | Op::Cvta | Op::Add if vals.len() <= 2 => {
                        match (arrays.as_slice(), others_plain) {
                            ([], true) if vals.iter().all(|v| *v == Val::Unseen) => Val::Unseen,
                            ([], true) => Val::Plain,
                            ([a], true) => *a,
                            _ => Val::Unknown,
                        }
                    }
                    // `sub r, array, integer`: still that array.
                    Op::Sub if vals.len() == 2 => match (vals[0], vals[1]) {
                        (Val::Array(a), Val::Plain | Val::Unseen) => Val::Array(a),
                        (Val::Plain, Val::Plain) => Val::Plain,
                        (Val::Unseen, Val::Unseen | Val::Plain) => Val::Unseen,
                        (Val::Plain, Val::Unseen) => Val::Unseen,
                        _ => Val::Unknown,
                    },
                    // Loads give data (an array's address stored in memory and loaded back
                    // is not followed), and arithmetic other than adding gives plain integers
                    // unless an address takes part.
                    Op::Ld => Val::Plain,
                    _ if arrays.is_empty() && others_plain => Val::Plain,
                    _ => Val::Unknown,
                }
            };
            for d in dsts {
                let slot = &mut regs[d as usize];
                let n = join(*slot, v);
                if n != *slot {
                    *slot = n;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    f.body
        .iter()
        .map(|inst| {
            let shared = inst.mods.space == Some(Space::Shared)
                && matches!(inst.op, Op::Ld | Op::St | Op::Atom | Op::Red);
            let addr = match inst.op {
                Op::CpAsync => inst.args.first(),
                Op::Ld | Op::Atom => inst.args.get(1),
                Op::St | Op::Red => inst.args.first(),
                _ => None,
            };
            if !(shared || inst.op == Op::CpAsync) {
                return None;
            }
            match addr? {
                Operand::Addr {
                    base: AddrBase::Reg(r),
                    ..
                } => match regs[*r as usize] {
                    Val::Array(a) => Some(a),
                    _ => None,
                },
                Operand::Addr {
                    base: AddrBase::Var(v),
                    ..
                }
                | Operand::VarAddr { var: v, .. } => shared_static(v).filter(|o| known(*o)),
                _ => None,
            }
        })
        .collect()
}
