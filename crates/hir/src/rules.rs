//! Modifier rules the instruction-form table (`ptx`'s `isa.txt`) does not express: which
//! modifiers a form's groups may combine, per type and per state space.
//!
//! `isa.txt` lists each instruction's syntax as the PTX ISA's syntax blocks write it (every
//! group independent). The prose under each block restricts the combinations: a rounding
//! modifier required or illegal by conversion kind, `.ftz` only for some types, memory orders
//! per instruction, cache hints on global memory only, `.noftz` for the half types of
//! atomics, and so on. Each rule below names its PTX ISA 9.0 section; every rule and message
//! was checked against ptxas 13.0.88 with `cargo xtask isa-forms --sema` (each instance of
//! every form, every modifier combination: a rule must reject none that ptxas accepts) and
//! the messages are ptxas's, with what it leaves out (the types, the spaces) added.
//!
//! [`check`] returns the first broken rule of one instruction, with the modifier to point at.

/// A broken rule: the message and the modifier it is about (`None`: the instruction).
pub(crate) struct Broken {
    pub message: String,
    pub modifier: Option<String>,
}

fn broken(message: impl Into<String>, modifier: Option<&str>) -> Option<Broken> {
    Some(Broken {
        message: message.into(),
        modifier: modifier.map(str::to_string),
    })
}

/// The first rule `opcode` with modifiers `mods` (as written, with their dots) and `n_ops`
/// operands (`imm_source`: a source is an immediate) breaks on `target` (`None`: no
/// `.target`, target rules skipped).
pub(crate) fn check(
    opcode: &str,
    mods: &[&str],
    n_ops: usize,
    imm_source: bool,
    target: Option<ptx::Sm>,
) -> Option<Broken> {
    if let Some(t) = target
        && let Some(b) = gate(opcode, mods, n_ops, t)
    {
        return Some(b);
    }
    if opcode == "cvt"
        && mods
            .iter()
            .filter(|m| FRND.contains(m) || IRND.contains(m) || **m == ".rna" || **m == ".rs")
            .count()
            > 1
    {
        return broken(
            "Multiple rounding modifiers specified for instruction 'cvt'",
            None,
        );
    }
    match opcode {
        "cvt" if has(mods, ".pack") => cvt_pack(mods),
        "cvt" if mods.iter().any(|m| matches!(*m, ".relu" | ".satfinite")) => cvt_relu(mods),
        "cvt" => cvt(mods),
        // `add`/`min`/`max` of `.u16x2`/`.s16x2` take register sources (PTX ISA 9.0 §9.7.1).
        "add" | "min" | "max"
            if imm_source && mods.iter().any(|m| matches!(*m, ".u16x2" | ".s16x2")) =>
        {
            broken(
                format!(
                    "Arguments mismatch for instruction '{opcode}': the sources of a .u16x2/.s16x2 '{opcode}' are registers"
                ),
                None,
            )
        }
        "min" | "max" => min_max(opcode, mods),
        // PTX ISA 9.0 §9.7.3.7: from PTX 1.4, `mad.f32` for sm_20 and later needs a rounding
        // modifier (ptxas accepts it without one in `.target sm_1x` files).
        "mad"
            if has(mods, ".f32")
                && !mods.iter().any(|m| FRND.contains(m))
                && target.is_some_and(|t| t.satisfies(ptx::Sm::new(20))) =>
        {
            broken(
                "Rounding modifier required for instruction 'mad': mad.f32 for sm_20 and later rounds with .rn, .rz, .rm or .rp",
                None,
            )
        }
        // The table's `sub.u16x2/.s16x2` (listed with `add`'s in PTX ISA 9.0 §9.7.1):
        // ptxas 13.0.88 knows no such instruction.
        "sub" if mods.iter().any(|m| matches!(*m, ".u16x2" | ".s16x2")) => broken(
            "Unexpected instruction types specified for 'sub': ptxas 13.0.88 has no sub.u16x2/.s16x2 (add, min and max have them)",
            None,
        ),
        "add" | "sub" | "mad" | "mad24" => sat_int(opcode, mods),
        "slct" if has(mods, ".ftz") && mods.last().is_none_or(|m| *m != ".f32") => broken(
            "Illegal modifier '.ftz' for instruction 'slct': .ftz applies to an .f32 selector",
            Some(".ftz"),
        ),
        "fma" => fma_half(mods),
        "fence"
            if mods.iter().any(|m| matches!(*m, ".sc" | ".acq_rel"))
                && !mods
                    .iter()
                    .any(|m| matches!(*m, ".cta" | ".cluster" | ".gpu" | ".sys")) =>
        {
            broken(
                "Scope modifier required for instruction 'fence' (.cta, .cluster, .gpu or .sys)",
                None,
            )
        }
        // PTX ISA 9.0 §9.7.12.3: `barrier.cluster.arrive{.release|.relaxed}`,
        // `barrier.cluster.wait{.acquire}`.
        "barrier" if has(mods, ".cluster") => {
            let (allowed, what): (&[&str], &str) = if has(mods, ".wait") {
                (&[".acquire"], "barrier.cluster.wait")
            } else {
                (&[".release", ".relaxed"], "barrier.cluster.arrive")
            };
            let m = mods.iter().copied().find(|m| {
                matches!(*m, ".acquire" | ".release" | ".relaxed") && !allowed.contains(m)
            })?;
            broken(
                format!(
                    "Illegal modifier '{m}' for instruction '{what}': its memory orders are {}",
                    allowed.join(", ")
                ),
                Some(m),
            )
        }
        // PTX ISA 9.0 §9.7.12.4: a state space qualifies only `fence.proxy.async`, and
        // `fence.proxy.tensormap::generic` takes `.release` or `.acquire` (and a scope).
        "fence" if has(mods, ".proxy") => {
            if has(mods, ".tensormap::generic")
                && !mods.iter().any(|m| matches!(*m, ".release" | ".acquire"))
            {
                return broken(
                    ".acquire/.release modifier required for instruction 'fence.proxy' with .tensormap::generic",
                    None,
                );
            }
            let sp = mods.iter().copied().find(|m| {
                matches!(
                    *m,
                    ".global" | ".shared::cta" | ".shared::cluster" | ".shared"
                )
            })?;
            if has(mods, ".async") {
                return None;
            }
            broken(
                format!(
                    "State space incorrect for instruction 'fence.proxy': {sp} qualifies only fence.proxy.async"
                ),
                Some(sp),
            )
        }
        // PTX ISA 9.0 §9.7.12.7 red.async, as ptxas 13.0.88 takes it: `.inc/.dec` of `.u32`,
        // `.min/.max` of `.u32/.s32`, `.add` of `.u32/.s32/.u64/.s64`, bitwise ops of `.b32`.
        "red" if has(mods, ".async") => {
            let op = mods.iter().copied().find(|m| {
                matches!(
                    *m,
                    ".inc" | ".dec" | ".min" | ".max" | ".add" | ".and" | ".or" | ".xor"
                )
            })?;
            let ty = mods
                .iter()
                .copied()
                .find(|m| ptx::Type::parse(m).is_some())?;
            let ok: &[&str] = match op {
                ".inc" | ".dec" => &[".u32"],
                ".min" | ".max" => &[".u32", ".s32"],
                ".add" => &[".u32", ".s32", ".u64", ".s64"],
                _ => &[".b32"],
            };
            if ok.contains(&ty) {
                return None;
            }
            broken(
                format!(
                    "Incorrect type '{ty}' for operation '{op}' in instruction 'red.async' (it takes {})",
                    ok.join(", ")
                ),
                Some(ty),
            )
        }
        // PTX ISA 9.0 §9.7.9.25.4 cp.async.bulk: a copy to global memory completes through a
        // bulk async-group, a copy to shared memory through an mbarrier.
        "cp" if has(mods, ".bulk")
            && !mods.iter().any(|m| {
                matches!(
                    *m,
                    ".tensor" | ".prefetch" | ".commit_group" | ".wait_group"
                )
            })
            && !has(mods, ".reduce") =>
        {
            let dst = mods
                .iter()
                .copied()
                .find(|m| matches!(*m, ".global" | ".shared::cta" | ".shared::cluster"))?;
            let (want, wrong) = if dst == ".global" {
                (".bulk_group", ".mbarrier::complete_tx::bytes")
            } else {
                (".mbarrier::complete_tx::bytes", ".bulk_group")
            };
            if has(mods, wrong) {
                return broken(
                    format!(
                        "Illegal modifier '{wrong}' for instruction 'cp.async.bulk': a copy to {dst} completes with {want}"
                    ),
                    Some(wrong),
                );
            }
            if !has(mods, want) {
                return broken(
                    format!(
                        ".completion_mechanism modifier required for instruction 'cp.async.bulk': a copy to {dst} completes with {want}"
                    ),
                    None,
                );
            }
            None
        }
        // PTX ISA 9.0 §9.7.14.5.15 ldmatrix: `.m8n8` loads `.b16`; `.m16n16` loads `.b8`
        // (optionally unpacking `.b8x16` from 6- or 4-bit data); `.m8n16` unpacks `.b8x16`.
        "ldmatrix" => {
            let shape = mods
                .iter()
                .copied()
                .find(|m| matches!(*m, ".m8n8" | ".m16n16" | ".m8n16"))?;
            let types: Vec<&str> = mods
                .iter()
                .copied()
                .filter(|m| matches!(*m, ".b16" | ".b8" | ".b8x16" | ".b6x16_p32" | ".b4x16_p64"))
                .collect();
            let src = types
                .iter()
                .any(|t| matches!(*t, ".b6x16_p32" | ".b4x16_p64"));
            let ok = match shape {
                ".m8n8" => types == [".b16"],
                ".m16n16" => {
                    types == [".b8"] || (types.contains(&".b8x16") && src && types.len() == 2)
                }
                _ => types.contains(&".b8x16") && src && types.len() == 2,
            };
            if ok {
                return None;
            }
            broken(
                format!(
                    "Incorrect instruction type specified for ldmatrix with shape '{shape}': {}",
                    types.join("")
                ),
                None,
            )
        }
        // `.noComplete` qualifies an arrival's count (ptxas 13.0.88).
        "mbarrier"
            if has(mods, ".noComplete")
                && n_ops == 2
                && mods
                    .iter()
                    .any(|m| matches!(*m, ".arrive" | ".arrive_drop")) =>
        {
            let sub = arrival(mods);
            broken(
                format!(
                    "Illegal modifier '.noComplete' for instruction 'mbarrier{sub} without count argument'"
                ),
                Some(".noComplete"),
            )
        }
        // PTX ISA 9.0 §9.7.12.15: an mbarrier operation's memory order and scope come together.
        "mbarrier" => {
            let sub = mods.first().copied().unwrap_or("");
            let order = mods
                .iter()
                .copied()
                .find(|m| matches!(*m, ".relaxed" | ".release" | ".acquire"));
            let scope = mods
                .iter()
                .copied()
                .find(|m| matches!(*m, ".cta" | ".cluster"));
            match (order, scope) {
                (Some(o), None) => broken(
                    format!(
                        "Modifier '{o}' requires scope with 'mbarrier{sub}' instruction (.cta or .cluster)"
                    ),
                    Some(o),
                ),
                (None, Some(sc)) => broken(
                    format!("Modifier '{sc}' requires order with 'mbarrier{sub}' instruction"),
                    Some(sc),
                ),
                _ => None,
            }
        }
        "mma"
            if !mods
                .iter()
                .any(|m| m.starts_with(".sp") || m.starts_with(".kind::")) =>
        {
            mma(mods)
        }
        "ex2" if has(mods, ".ftz") && mods.iter().any(|m| matches!(*m, ".f16" | ".f16x2")) => {
            broken(
                "Illegal modifier '.ftz' for instruction 'ex2': ex2.approx of .f16 and .f16x2 takes no .ftz",
                Some(".ftz"),
            )
        }
        "ldu" => ldu(mods),
        "vadd2" | "vsub2" | "vavrg2" | "vabsdiff2" | "vmin2" | "vmax2" | "vadd4" | "vsub4"
        | "vavrg4" | "vabsdiff4" | "vmin4" | "vmax4"
            if has(mods, ".sat") && has(mods, ".add") =>
        {
            broken(
                "Illegal combination of .sat and .add modifiers",
                Some(".sat"),
            )
        }
        "set" | "setp" => set_ftz(opcode, mods).or_else(|| set_half(opcode, mods)),
        "atom" | "red" => atomic(opcode, mods),
        "ld" | "st" => memory(opcode, mods),
        _ => None,
    }
}

/// `.arrive_drop` or `.arrive`: the arrival an `mbarrier` message names.
fn arrival(mods: &[&str]) -> &'static str {
    if has(mods, ".arrive_drop") {
        ".arrive_drop"
    } else {
        ".arrive"
    }
}

fn has(mods: &[&str], m: &str) -> bool {
    mods.contains(&m)
}

/// The scalar types of `cvt`'s main form (PTX ISA 9.0 §9.7.9.21) and `.bf16`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Num {
    float: bool,
    signed: bool,
    bits: u32,
    bf16: bool,
}

fn num(m: &str) -> Option<Num> {
    let (float, signed, bits, bf16) = match m {
        ".u8" => (false, false, 8, false),
        ".u16" => (false, false, 16, false),
        ".u32" => (false, false, 32, false),
        ".u64" => (false, false, 64, false),
        ".s8" => (false, true, 8, false),
        ".s16" => (false, true, 16, false),
        ".s32" => (false, true, 32, false),
        ".s64" => (false, true, 64, false),
        ".f16" => (true, true, 16, false),
        ".f32" => (true, true, 32, false),
        ".f64" => (true, true, 64, false),
        ".bf16" => (true, true, 16, true),
        _ => return None,
    };
    Some(Num {
        float,
        signed,
        bits,
        bf16,
    })
}

const FRND: [&str; 4] = [".rn", ".rz", ".rm", ".rp"];
const IRND: [&str; 4] = [".rni", ".rzi", ".rmi", ".rpi"];

/// `cvt.frnd/irnd.ftz.sat.dtype.atype` (PTX ISA 9.0 §9.7.9.21, "Description" and
/// "Semantics"): integer rounding is required from a float to an integer and allowed from a
/// float to the same float type (round to an integral value); floating-point rounding is
/// required from an integer to a float and from a float to a narrower float, and allowed
/// from and to `.bf16` otherwise; a conversion to a wider float takes none; `.ftz` applies
/// when the source or the destination is `.f32`; `.sat` on an integer-to-integer conversion
/// only where the source's range does not fit the destination's; conversions with `.bf16`
/// take no `.sat` and no 8-bit integer. Only the plain form (no `.relu`/`.satfinite`/
/// `.pack`, two scalar types) is checked here.
fn cvt(mods: &[&str]) -> Option<Broken> {
    if mods
        .iter()
        .any(|m| matches!(*m, ".relu" | ".satfinite" | ".pack"))
    {
        return None;
    }
    let types: Vec<Num> = mods.iter().filter_map(|m| num(m)).collect();
    let [d, a] = types[..] else { return None };
    if mods
        .iter()
        .filter(|m| m.starts_with(".") && num(m).is_none())
        .any(|m| !FRND.contains(m) && !IRND.contains(m) && !matches!(*m, ".ftz" | ".sat"))
    {
        return None;
    }
    let tname = |n: Num| match (n.float, n.bf16, n.signed, n.bits) {
        (_, true, _, _) => "bf16".to_string(),
        (true, _, _, b) => format!("f{b}"),
        (false, _, true, b) => format!("s{b}"),
        (false, _, false, b) => format!("u{b}"),
    };
    let pair = format!(".{}.{}", tname(d), tname(a));
    let bf = d.bf16 || a.bf16;
    if bf && ((!d.float && d.bits == 8) || (!a.float && a.bits == 8)) {
        return broken(
            format!(
                "Unexpected instruction types specified for 'cvt': no conversion {pair} between .bf16 and an 8-bit integer"
            ),
            None,
        );
    }
    let frnd = mods.iter().find(|m| FRND.contains(m)).copied();
    let irnd = mods.iter().find(|m| IRND.contains(m)).copied();
    let illegal = |m: &str, why: &str| {
        broken(
            format!("Illegal rounding modifier for instruction 'cvt': {m} {why} ({pair})"),
            Some(m),
        )
    };
    let required = |what: &str| {
        broken(
            format!("Rounding modifier required for instruction 'cvt': {what} ({pair})"),
            None,
        )
    };
    match (d.float, a.float) {
        (false, false) => {
            if let Some(m) = frnd.or(irnd) {
                return illegal(m, "does not apply to an integer-to-integer conversion");
            }
        }
        (false, true) => {
            if let Some(m) = frnd {
                return illegal(
                    m,
                    "is a floating-point rounding; a float-to-integer conversion takes an integer rounding (.rni, .rzi, .rmi, .rpi)",
                );
            }
            if irnd.is_none() {
                return required(
                    "a float-to-integer conversion needs an integer rounding (.rni, .rzi, .rmi, .rpi)",
                );
            }
        }
        (true, false) => {
            if let Some(m) = irnd {
                return illegal(
                    m,
                    "is an integer rounding; an integer-to-float conversion takes a floating-point rounding (.rn, .rz, .rm, .rp)",
                );
            }
            if frnd.is_none() {
                return required(
                    "an integer-to-float conversion needs a floating-point rounding (.rn, .rz, .rm, .rp)",
                );
            }
        }
        (true, true) => {
            if d.bf16 && a.bf16 {
                if let Some(m) = frnd {
                    return illegal(
                        m,
                        "does not apply to a conversion between the same float type (round to an integral value with .rni, .rzi, .rmi, .rpi)",
                    );
                }
            } else if bf {
                if let Some(m) = irnd {
                    return illegal(m, "does not apply to a conversion with .bf16");
                }
                if d.bf16 && a.bits > 16 && frnd.is_none() {
                    return required(
                        "a narrowing float conversion needs a floating-point rounding (.rn, .rz, .rm, .rp)",
                    );
                }
            } else if d.bits < a.bits {
                if let Some(m) = irnd {
                    return illegal(
                        m,
                        "is an integer rounding; a narrowing float conversion takes a floating-point rounding (.rn, .rz, .rm, .rp)",
                    );
                }
                if frnd.is_none() {
                    return required(
                        "a narrowing float conversion needs a floating-point rounding (.rn, .rz, .rm, .rp)",
                    );
                }
            } else if d.bits == a.bits {
                if let Some(m) = frnd {
                    return illegal(
                        m,
                        "does not apply to a conversion between the same float type (round to an integral value with .rni, .rzi, .rmi, .rpi)",
                    );
                }
            } else if let Some(m) = frnd.or(irnd) {
                return illegal(
                    m,
                    "does not apply to a widening float conversion, which is exact",
                );
            }
        }
    }
    if has(mods, ".ftz") {
        let f32 = |n: Num| n.float && !n.bf16 && n.bits == 32;
        let ok = if bf {
            (d.bf16 && f32(a)) || (a.bf16 && f32(d))
        } else {
            f32(d) || f32(a)
        };
        if !ok {
            let msg = if !d.float && !a.float {
                format!(
                    "Illegal modifier '.ftz' for instruction 'cvt': .ftz applies to conversions from or to .f32 ({pair})"
                )
            } else {
                format!(
                    "Modifier '.ftz' does not apply to this type of convert operation: .ftz applies to conversions from or to .f32 ({pair})"
                )
            };
            return broken(msg, Some(".ftz"));
        }
    }
    if has(mods, ".sat") {
        let fits = |s: Num, t: Num| match (s.signed, t.signed) {
            (false, false) | (true, true) => s.bits <= t.bits,
            (false, true) => s.bits < t.bits,
            (true, false) => false,
        };
        let why = if bf {
            Some("a conversion with .bf16 does not saturate")
        } else if !d.float && !a.float && fits(a, d) {
            Some("every source value fits the destination type")
        } else {
            None
        };
        if let Some(why) = why {
            return broken(
                format!("Illegal modifier '.sat' for instruction 'cvt': {why} ({pair})"),
                Some(".sat"),
            );
        }
    }
    None
}

/// `.ftz` of `set`/`setp` (PTX ISA 9.0 §9.7.6.1-2, §9.7.7.1-2): it flushes `.f32` (and
/// half-precision) operands; the `.bf16` results of `set` take none.
fn set_ftz(opcode: &str, mods: &[&str]) -> Option<Broken> {
    if !has(mods, ".ftz") {
        return None;
    }
    let types: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| ptx::Type::parse(m).is_some())
        .collect();
    let compared = *types.last()?;
    let dest_bf = opcode == "set" && types.len() == 2 && types[0].starts_with(".bf16");
    if !matches!(compared, ".f32" | ".f16" | ".f16x2") || dest_bf {
        let what = if dest_bf {
            format!("a {} result", types[0])
        } else {
            format!("{compared} operands")
        };
        return broken(
            format!(
                "Illegal modifier '.ftz' for instruction '{opcode}': .ftz applies to .f32, .f16 and .f16x2 comparisons, not to {what}"
            ),
            Some(".ftz"),
        );
    }
    None
}

/// `set` of half-precision operands (PTX ISA 9.0 §9.7.7.1): a `.f16` comparison gives a
/// scalar result, a `.f16x2` one a 32-bit result (`.f16x2`, `.u32`, `.s32`).
fn set_half(opcode: &str, mods: &[&str]) -> Option<Broken> {
    if opcode != "set" {
        return None;
    }
    let types: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| ptx::Type::parse(m).is_some())
        .collect();
    let [d, a] = types[..] else { return None };
    let ok = match a {
        ".f16" => !d.ends_with("x2"),
        ".f16x2" => matches!(d, ".f16x2" | ".u32" | ".s32"),
        _ => true,
    };
    if ok {
        return None;
    }
    broken(
        format!(
            "Unexpected instruction types specified for 'set': a {a} comparison cannot give a {d} result"
        ),
        None,
    )
}

const NON_GLOBAL: [&str; 9] = [
    ".shared",
    ".shared::cta",
    ".shared::cluster",
    ".local",
    ".const",
    ".param",
    ".param::entry",
    ".param::func",
    ".tex",
];
const HALVES: [&str; 4] = [".f16", ".f16x2", ".bf16", ".bf16x2"];

fn space<'a>(mods: &[&'a str]) -> Option<&'a str> {
    mods.iter().copied().find(|m| NON_GLOBAL.contains(m))
}

/// `atom`/`red` (PTX ISA 9.0 §9.7.12.5-6): the orders `atom` takes are `.relaxed`,
/// `.acquire`, `.release`, `.acq_rel` and those of `red` `.relaxed`, `.release`;
/// `.L2::cache_hint` is for global memory; `.add/.min/.max` of the half types need `.noftz`
/// and no other type takes it; `.min/.max` of half types need a vector, and take no `.f32`;
/// vectors live in global memory, and `.v8` holds 16-bit elements only.
fn atomic(opcode: &str, mods: &[&str]) -> Option<Broken> {
    if has(mods, ".async") {
        return None;
    }
    let allowed: &[&str] = if opcode == "atom" {
        &[".relaxed", ".acquire", ".release", ".acq_rel"]
    } else {
        &[".relaxed", ".release"]
    };
    if let Some(m) = mods.iter().find(|m| {
        matches!(
            **m,
            ".weak" | ".volatile" | ".relaxed" | ".acquire" | ".release" | ".acq_rel"
        ) && !allowed.contains(m)
    }) {
        return broken(
            format!(
                "Illegal modifier '{m}' for instruction '{opcode}': its memory orders are {}",
                allowed.join(", ")
            ),
            Some(m),
        );
    }
    let sp = space(mods);
    if has(mods, ".L2::cache_hint")
        && let Some(s) = sp
    {
        return broken(
            format!(
                "Modifier '.L2::cache_hint' cannot be applied to '{s}' space for instruction '{opcode}': cache hints are for global memory"
            ),
            Some(".L2::cache_hint"),
        );
    }
    let ty = mods
        .iter()
        .copied()
        .find(|m| ptx::Type::parse(m).is_some())?;
    let op = mods
        .iter()
        .copied()
        .find(|m| matches!(*m, ".add" | ".min" | ".max"));
    let vec = mods
        .iter()
        .copied()
        .find(|m| matches!(*m, ".v2" | ".v4" | ".v8"));
    if let Some(op) = op {
        if op != ".add" && ty == ".f32" {
            return broken(
                format!(
                    "Operation {op} requires .u32 or .s32 or .u64 or .s64 or .f16 or .f16x2 or .bf16 or .bf16x2 type for instruction '{opcode}'"
                ),
                Some(op),
            );
        }
        if HALVES.contains(&ty) && !has(mods, ".noftz") {
            return broken(
                format!("'.noftz' modifier required for instruction '{opcode}' with type '{ty}'"),
                None,
            );
        }
    }
    if has(mods, ".noftz") && !(op.is_some() && HALVES.contains(&ty)) {
        return broken(
            format!(
                "Illegal modifier '.noftz' for instruction '{opcode}': it applies to .add, .min and .max of .f16, .f16x2, .bf16 and .bf16x2"
            ),
            Some(".noftz"),
        );
    }
    if let Some(op) = op
        && op != ".add"
        && HALVES.contains(&ty)
        && vec.is_none()
    {
        let at = mods
            .iter()
            .find(|m| **m == ".global" || NON_GLOBAL.contains(m))
            .map_or(" with generic state space".to_string(), |s| s.to_string());
        return broken(
            format!("Vector modifier required for instruction '{opcode}{op}{ty}{at}'"),
            None,
        );
    }
    if let Some(v) = vec {
        if let Some(s) = sp {
            return broken(
                format!(
                    "State space incorrect for feature '{opcode} instruction with vector types': {s} (vectors need global memory)"
                ),
                Some(s),
            );
        }
        if v == ".v8" && ty == ".f32" {
            return broken(
                format!(
                    "Only .v2 or .v4 vector modifier supported with type .f32 on .add operation for {opcode} instruction with vector types"
                ),
                Some(v),
            );
        }
    }
    None
}

/// `ld`/`st` (PTX ISA 9.0 §9.7.9.8, §9.7.9.11, and §8 "Memory Consistency Model"): the
/// forms are `.weak`/`.volatile` without a scope, or `.relaxed`/`.acquire` (`ld`),
/// `.relaxed`/`.release` (`st`) with one; a scope needs such an order. Cache eviction
/// priorities, `.L2::cache_hint` and prefetch sizes are for global memory; the L2 eviction
/// priorities only on 256-bit accesses (`.v8.b32`/`.v4.b64`); `.pred` is no memory type;
/// `ld.global.nc` takes no `.lu`/`.cv`; `.unified` is not accepted by ptxas 13.0.88. The
/// ordered forms and `.volatile` take no cache operator, `.volatile` no eviction priority
/// or cache hint (the ISA's syntax blocks list them only with `.weak`/no order); a cache
/// operator excludes an L1 eviction priority (one slot of the syntax).
fn memory(opcode: &str, mods: &[&str]) -> Option<Broken> {
    if mods
        .iter()
        .any(|m| matches!(*m, ".async" | ".bulk" | ".mmio"))
    {
        return None;
    }
    if has(mods, ".unified") {
        return broken(
            format!(
                "Parsing error near '.unified': syntax error (ptxas 13.0.88 does not accept '{opcode}.unified')"
            ),
            Some(".unified"),
        );
    }
    if has(mods, ".pred") {
        return broken(
            format!(
                "Unexpected instruction types specified for '{opcode}': .pred is not a type memory can hold"
            ),
            Some(".pred"),
        );
    }
    let (forbidden, ordered): (&[&str], &[&str]) = if opcode == "ld" {
        (&[".release", ".acq_rel"], &[".relaxed", ".acquire"])
    } else {
        (&[".acquire", ".acq_rel"], &[".relaxed", ".release"])
    };
    if let Some(m) = mods.iter().find(|m| forbidden.contains(m)) {
        return broken(
            format!(
                "Illegal modifier '{m}' for instruction '{opcode}': its memory orders are .weak, .volatile, {}",
                ordered.join(", ")
            ),
            Some(m),
        );
    }
    let scope = mods
        .iter()
        .copied()
        .find(|m| matches!(*m, ".cta" | ".cluster" | ".gpu" | ".sys"));
    let order = mods.iter().copied().find(|m| {
        matches!(
            *m,
            ".weak" | ".volatile" | ".relaxed" | ".acquire" | ".release"
        )
    });
    match (order, scope) {
        (Some(o @ (".weak" | ".volatile")), Some(s)) => {
            return broken(
                format!("Modifier '{o}' cannot be combined with modifier '{s}'"),
                Some(s),
            );
        }
        (Some(o @ (".relaxed" | ".acquire" | ".release")), None) => {
            return broken(
                format!(
                    "Modifier '{o}' requires scope with '{opcode}' instruction (.cta, .cluster, .gpu or .sys)"
                ),
                Some(o),
            );
        }
        (None, Some(s)) => {
            return broken(
                format!(
                    "Modifier '{s}' requires memory order with '{opcode}' instruction ({})",
                    ordered.join(" or ")
                ),
                Some(s),
            );
        }
        _ => {}
    }
    // `ld.volatile`, `ld.relaxed.scope`, `ld.acquire.scope` (and `st`'s) take no cache
    // operator; `.volatile` takes no eviction priority or cache hint either.
    if let Some(o) = order.filter(|o| *o != ".weak") {
        let cops: &[&str] = if opcode == "ld" {
            &[".ca", ".cg", ".cs", ".lu", ".cv"]
        } else {
            &[".wb", ".cg", ".cs", ".wt"]
        };
        if let Some(c) = mods.iter().copied().find(|m| cops.contains(m)) {
            return broken(
                format!("Modifier '{o}' cannot be combined with modifier '{c}'"),
                Some(c),
            );
        }
        if o == ".volatile"
            && let Some(h) = mods.iter().copied().find(|m| {
                *m == ".L2::cache_hint"
                    || m.starts_with(".L1::evict_")
                    || *m == ".L1::no_allocate"
                    || m.starts_with(".L2::evict_")
            })
        {
            let shown = if h == ".L2::cache_hint" {
                h.to_string()
            } else {
                format!(".{}", h.rsplit("::").next().unwrap_or(h))
            };
            return broken(
                format!("Modifier '{shown}' cannot be combined with modifier '.volatile'"),
                Some(h),
            );
        }
    }
    // A cache operator and an L1 eviction priority are alternatives of one syntax slot.
    let cops: &[&str] = if opcode == "ld" {
        &[".ca", ".cg", ".cs", ".lu", ".cv"]
    } else {
        &[".wb", ".cg", ".cs", ".wt"]
    };
    if let Some(c) = mods.iter().copied().find(|m| cops.contains(m))
        && let Some(e) = mods
            .iter()
            .copied()
            .find(|m| m.starts_with(".L1::evict_") || *m == ".L1::no_allocate")
    {
        return broken(
            format!(
                "Modifier '.{}' cannot be combined with modifier '{c}'",
                e.rsplit("::").next().unwrap_or(e)
            ),
            Some(e),
        );
    }
    let sp = space(mods);
    if let Some(s) = sp {
        let hint = mods.iter().copied().find(|m| {
            *m == ".L2::cache_hint"
                || m.starts_with(".L1::evict_")
                || *m == ".L1::no_allocate"
                || m.starts_with(".L2::evict_")
        });
        if let Some(h) = hint {
            let short = h.rsplit("::").next().unwrap_or(h);
            let shown = if h == ".L2::cache_hint" {
                h.to_string()
            } else {
                format!(".{short}")
            };
            return broken(
                format!(
                    "Modifier '{shown}' cannot be applied to '{s}' space for instruction '{opcode}': cache eviction priorities and hints are for global memory"
                ),
                Some(h),
            );
        }
        if let Some(p) = mods
            .iter()
            .copied()
            .find(|m| matches!(*m, ".L2::64B" | ".L2::128B" | ".L2::256B"))
        {
            return broken(
                format!(
                    "State space incorrect for feature 'cache prefetching': {p} prefetches into L2 from global memory, not {s}"
                ),
                Some(p),
            );
        }
    }
    if let Some(e) = mods.iter().copied().find(|m| m.starts_with(".L2::evict_")) {
        let wide = (has(mods, ".v8")
            && mods
                .iter()
                .any(|m| matches!(*m, ".b32" | ".u32" | ".s32" | ".f32")))
            || (has(mods, ".v4")
                && mods
                    .iter()
                    .any(|m| matches!(*m, ".b64" | ".u64" | ".s64" | ".f64")));
        if !wide {
            return broken(
                format!(
                    "Instruction '{opcode}' requires '.v8.b32/.v4.b64' type with '{e}' modifier."
                ),
                Some(e),
            );
        }
    }
    if has(mods, ".nc")
        && let Some(c) = mods.iter().copied().find(|m| matches!(*m, ".lu" | ".cv"))
    {
        return broken(
            format!(
                "Illegal cache operation for instruction 'ld.nc': {c} (ld.global.nc takes .ca, .cg or .cs)"
            ),
            Some(c),
        );
    }
    None
}

/// Features newer than their instruction's form, by target (PTX ISA 9.0, each instruction's
/// "Target ISA Notes"): the `.cluster` scope needs sm_90; `atom`/`red` `.add.noftz` of
/// `.bf16`/`.bf16x2` sm_90; `min`/`max` `.abs` sm_86, integer `.relu` sm_90, `.f32` with
/// three sources sm_100; `set` to `.bf16` sm_90; `fma` `.oob` sm_90.
fn gate(opcode: &str, mods: &[&str], n_ops: usize, t: ptx::Sm) -> Option<Broken> {
    let need = |sm: u16, what: String, at: Option<&str>| {
        if t.satisfies(ptx::Sm::new(sm)) {
            None
        } else {
            broken(format!("{what} requires .target sm_{sm} or higher"), at)
        }
    };
    match opcode {
        "atom" | "red" | "ld" | "st" | "fence" | "mbarrier" if has(mods, ".cluster") => {
            need(90, "Feature '.cluster scope'".into(), Some(".cluster"))
        }
        // PTX ISA 9.0 section 9.7.13.15 (ptxas 13.0.88's messages for `.target sm_80`):
        // `try_wait` and an arrival with a count but without `.noComplete` need sm_90.
        "mbarrier" if has(mods, ".try_wait") => {
            need(90, "Feature 'mbarrier.try_wait'".into(), None)
        }
        "mbarrier" if has(mods, ".expect_tx") || has(mods, ".complete_tx") => {
            let what: String = mods
                .iter()
                .copied()
                .filter(|m| {
                    matches!(
                        *m,
                        ".arrive" | ".arrive_drop" | ".expect_tx" | ".complete_tx"
                    )
                })
                .collect();
            need(90, format!("Feature 'mbarrier{what}'"), None)
        }
        "mbarrier"
            if n_ops == 3
                && !has(mods, ".noComplete")
                && !has(mods, ".expect_tx")
                && mods
                    .iter()
                    .any(|m| matches!(*m, ".arrive" | ".arrive_drop")) =>
        {
            let sub = arrival(mods);
            need(
                90,
                format!(
                    "Feature 'mbarrier{sub} with count argument and without '.noComplete' modifier'"
                ),
                None,
            )
        }
        "atom" | "red"
            if has(mods, ".add") && mods.iter().any(|m| matches!(*m, ".bf16" | ".bf16x2")) =>
        {
            let ty = mods.iter().find(|m| matches!(**m, ".bf16" | ".bf16x2"))?;
            let at = mods
                .iter()
                .find(|m| **m == ".global" || NON_GLOBAL.contains(m))
                .map_or(" with generic state space".to_string(), |s| s.to_string());
            need(90, format!("Instruction '{opcode}.add{ty}{at}'"), None)
        }
        "min" | "max" => {
            let abs = has(mods, ".abs")
                .then(|| need(86, "Feature '.abs'".into(), Some(".abs")))
                .flatten();
            let relu = (has(mods, ".relu") && mods.iter().any(|m| matches!(*m, ".s32" | ".s16x2")))
                .then(|| need(90, format!("Feature '{opcode}.relu'"), Some(".relu")))
                .flatten();
            let three = (has(mods, ".f32") && n_ops == 4)
                .then(|| {
                    need(
                        100,
                        format!("Feature '{opcode}.f32 with 3 input operands'"),
                        None,
                    )
                })
                .flatten();
            abs.or(relu).or(three)
        }
        "set" if mods.iter().any(|m| matches!(*m, ".bf16" | ".bf16x2")) => {
            need(90, "Feature 'set.bf16'".into(), None)
        }
        "fma" if has(mods, ".oob") => need(90, "Modifier '.oob'".into(), Some(".oob")),
        // ptxas 13.0.88 for `.target sm_75`: "Modifier '.L2::256B' requires .target sm_80 or
        // higher" (`.L2::64B` and `.L2::128B` compile there).
        _ if has(mods, ".L2::256B") => need(80, "Modifier '.L2::256B'".into(), Some(".L2::256B")),
        // `mma` (PTX ISA 9.0 §9.7.14.5.14, Target ISA Notes): sm_75 has m8n8k4, m16n8k8 with
        // f16, m8n8k16/m8n8k32 integers; the larger shapes, `.tf32` and the f64 m8n8k4 need
        // sm_80 (ptxas 13.0.88's messages for `.target sm_75`).
        "mma" => {
            let shape = mods.iter().find(|m| {
                matches!(
                    **m,
                    ".m16n8k16"
                        | ".m16n8k32"
                        | ".m16n8k64"
                        | ".m16n8k128"
                        | ".m16n8k256"
                        | ".m16n8k4"
                )
            });
            if let Some(shape) = shape.filter(|_| !has(mods, ".tf32")) {
                need(80, format!("Feature '{shape}'"), Some(shape))
            } else if has(mods, ".tf32") {
                need(80, "Feature '.tf32'".into(), Some(".tf32"))
            } else if has(mods, ".m8n8k4") && has(mods, ".f64") {
                need(
                    80,
                    "Feature '.m8n8k4 with double types'".into(),
                    Some(".m8n8k4"),
                )
            } else {
                None
            }
        }
        // PTX ISA 9.0 §9.7.19.5: setmaxnreg is for the architecture- and family-specific
        // targets (ptxas 13.0.88 takes sm_90a, sm_100a, sm_100f, sm_120a, ...; not sm_90 or
        // sm_100).
        "setmaxnreg"
            if t.to_string()
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_digit()) =>
        {
            let sub = mods
                .iter()
                .find(|m| matches!(**m, ".inc" | ".dec"))
                .copied()
                .unwrap_or("");
            broken(
                format!(
                    "Instruction 'setmaxnreg{sub}' not supported on .target '{t}' (it needs an architecture- or family-specific target such as sm_90a)"
                ),
                None,
            )
        }
        _ => None,
    }
}

/// `cvt.pack.sat.convertType.abType{.cType}` (PTX ISA 9.0 §9.7.9.22): `.sat` is required,
/// the sources are `.s32`, and the 8-bit (and narrower) results take the `.b32` third
/// source, the 16-bit ones none.
fn cvt_pack(mods: &[&str]) -> Option<Broken> {
    let types: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| ptx::Type::parse(m).is_some())
        .collect();
    let (d, rest) = types.split_first()?;
    let narrow = matches!(*d, ".u8" | ".s8");
    let want: &[&str] = if narrow { &[".s32", ".b32"] } else { &[".s32"] };
    if rest != want {
        return broken(
            format!(
                "Unexpected instruction types specified for 'cvt.pack': {d} packs from {}",
                want.join("")
            ),
            None,
        );
    }
    if !has(mods, ".sat") {
        return broken(".sat modifier required for instruction 'cvt.pack'", None);
    }
    None
}

/// `cvt` with `.relu`/`.satfinite` to a scalar (PTX ISA 9.0 §9.7.9.21,
/// `cvt.frnd2{.relu}{.satfinite}.f16.f32` and `.bf16.f32`): only `.f32` to `.f16`/`.bf16`,
/// with `.rn` or `.rz`.
fn cvt_relu(mods: &[&str]) -> Option<Broken> {
    let types: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| ptx::Type::parse(m).is_some())
        .collect();
    // The packed and 8-bit float forms have their own table lines; here the scalar ones.
    if types.len() != 2 || types.iter().any(|t| num(t).is_none()) {
        return None;
    }
    if !matches!(types[0], ".bf16" | ".f16") || types[1] != ".f32" {
        return broken(
            format!(
                "Unexpected instruction types specified for 'cvt': .relu and .satfinite convert .f32 to .f16 or .bf16, not {} to {}",
                types[1], types[0]
            ),
            None,
        );
    }
    let rnd = mods
        .iter()
        .copied()
        .find(|m| FRND.contains(m) || IRND.contains(m));
    match rnd {
        Some(".rn" | ".rz") => None,
        None => broken(
            "Rounding modifier required for instruction 'cvt': with .relu or .satfinite it rounds with .rn or .rz",
            None,
        ),
        Some(r) if has(mods, ".satfinite") => broken(
            format!("Modifier '.satfinite' cannot be combined with modifier '{r}'"),
            Some(r),
        ),
        Some(r) => broken(
            format!(
                "Illegal rounding modifier for instruction 'cvt': {r} (.relu rounds with .rn or .rz)"
            ),
            Some(r),
        ),
    }
}

/// `min`/`max` (PTX ISA 9.0 §9.7.1.12-13, §9.7.3.11-12, §9.7.4.7-8): `.relu` applies to `.s32`
/// and `.s16x2`; `.abs` and `.xorsign` come together.
fn min_max(opcode: &str, mods: &[&str]) -> Option<Broken> {
    let ty = mods
        .iter()
        .copied()
        .find(|m| ptx::Type::parse(m).is_some())?;
    if has(mods, ".relu") && (ty.starts_with(".u") || matches!(ty, ".s16" | ".s64")) {
        return broken(
            format!("Illegal modifier '.relu' for instruction '{opcode}' with type '{ty}'"),
            Some(".relu"),
        );
    }
    if has(mods, ".abs") && !has(mods, ".xorsign") {
        return broken("Modifier '.abs' requires modifier '.xorsign'", Some(".abs"));
    }
    if has(mods, ".xorsign") && !has(mods, ".abs") {
        return broken(
            "Modifier '.xorsign' requires modifier '.abs'",
            Some(".xorsign"),
        );
    }
    None
}

/// `.sat` of integer `add`/`sub`/`mad`/`mad24` (PTX ISA 9.0 §9.7.1): only `.s32`, and for
/// `mad`/`mad24` only with `.hi`.
fn sat_int(opcode: &str, mods: &[&str]) -> Option<Broken> {
    if !has(mods, ".sat") {
        return None;
    }
    let ty = mods
        .iter()
        .copied()
        .find(|m| ptx::Type::parse(m).is_some())?;
    if !(ty.starts_with(".s") || ty.starts_with(".u")) || ty.ends_with("x2") {
        return None;
    }
    if matches!(opcode, "mad" | "mad24")
        && let Some(mode) = mods.iter().find(|m| matches!(**m, ".lo" | ".wide"))
    {
        return broken(
            format!(
                "Illegal modifier '.sat' for instruction '{opcode}{mode}': .sat applies to {opcode}.hi.s32"
            ),
            Some(".sat"),
        );
    }
    if ty != ".s32" {
        return broken(
            format!("Modifier '.sat' does not apply to '{ty}' type (only .s32 saturates)"),
            Some(".sat"),
        );
    }
    None
}

/// Half-precision `fma` (PTX ISA 9.0 §9.7.4.4): `.relu` excludes `.sat`, `.oob` excludes
/// `.ftz`.
fn fma_half(mods: &[&str]) -> Option<Broken> {
    if has(mods, ".relu") && has(mods, ".sat") {
        return broken(
            "Modifier '.relu' cannot be combined with modifier '.sat'",
            Some(".relu"),
        );
    }
    if has(mods, ".ftz") && has(mods, ".oob") {
        return broken(
            "Modifier '.ftz' cannot be combined with modifier '.oob'",
            Some(".ftz"),
        );
    }
    None
}

/// `ldu` (PTX ISA 9.0 §9.7.9.10): at most 128 bits, and no `.pred`.
fn ldu(mods: &[&str]) -> Option<Broken> {
    if has(mods, ".pred") {
        return broken(
            "Unexpected instruction types specified for 'ldu': .pred is not a type memory can hold",
            Some(".pred"),
        );
    }
    let n = mods.iter().find_map(|m| match *m {
        ".v2" => Some(2),
        ".v4" => Some(4),
        _ => None,
    })?;
    let bits = mods
        .iter()
        .find_map(|m| ptx::Type::parse(m))
        .map(|t| t.bits())?;
    if n * bits > 128 {
        return broken(
            format!("Vector type too large, exceeds 128 bit limit ({n} x {bits} bits)"),
            None,
        );
    }
    None
}

/// `mma.sync.aligned` (PTX ISA 9.0 §9.7.14.5.14, each shape's syntax block; the `.sp` and
/// `.kind::` forms are not checked here): the layouts are `.row.col` except for `.m8n8k4` of
/// `.f16`; `.rn` is for `.f64`; `.b1` takes a bit operation (`.xor`/`.and`) and `.popc`, no
/// other type takes them; `.satfinite` is for the integer types; and the `.m16n8k8`/
/// `.m16n8k16` `.f16` shapes have `.dtype` equal to `.ctype`.
fn mma(mods: &[&str]) -> Option<Broken> {
    let shape = mods
        .iter()
        .copied()
        .find(|m| m.starts_with(".m") && m.contains('n') && m.contains('k'))?;
    let types: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| {
            matches!(
                *m,
                ".f16"
                    | ".f32"
                    | ".f64"
                    | ".bf16"
                    | ".tf32"
                    | ".s8"
                    | ".u8"
                    | ".s4"
                    | ".u4"
                    | ".b1"
                    | ".s32"
                    | ".e4m3"
                    | ".e5m2"
            )
        })
        .collect();
    let [d, a, _b, c] = types[..] else {
        return None;
    };
    let layouts: Vec<&str> = mods
        .iter()
        .copied()
        .filter(|m| matches!(*m, ".row" | ".col"))
        .collect();
    if !(shape == ".m8n8k4" && a == ".f16") {
        if let Some(l) = layouts.first().filter(|l| **l != ".row") {
            return broken(
                format!("Illegal alayout '{l}' for instruction 'mma' (the A matrix is .row)"),
                Some(l),
            );
        }
        if let Some(l) = layouts.get(1).filter(|l| **l != ".col") {
            return broken(
                format!("Illegal blayout '{l}' for instruction 'mma' (the B matrix is .col)"),
                Some(l),
            );
        }
    }
    if has(mods, ".rn") && a != ".f64" {
        return broken(
            "Illegal rounding modifier for instruction 'mma': .rn is for .f64",
            Some(".rn"),
        );
    }
    let bitop = mods.iter().copied().find(|m| matches!(*m, ".xor" | ".and"));
    if a == ".b1" {
        // ptxas's wording: a missing bit operation is an "illegal reduction operation", a
        // missing .popc an "unexpected number of operations".
        if bitop.is_none() {
            return broken(
                "Illegal reduction operation for instruction 'mma': .b1 takes a bit operation (.xor or .and) and .popc",
                None,
            );
        }
        if !has(mods, ".popc") {
            return broken(
                format!(
                    "Unexpected number of operations specified for mma with shape '{shape}': .b1 takes .popc after its bit operation"
                ),
                None,
            );
        }
    } else if let Some(m) = bitop.or(mods.iter().copied().find(|m| *m == ".popc")) {
        return broken(
            format!("Unexpected instruction types specified for 'mma': {m} is for .b1"),
            Some(m),
        );
    }
    if has(mods, ".satfinite") && !matches!(a, ".s8" | ".u8" | ".s4" | ".u4") {
        return broken(
            format!(
                "Unexpected instruction types specified for 'mma': .satfinite is for the integer types, not {a}"
            ),
            Some(".satfinite"),
        );
    }
    if matches!(shape, ".m16n8k8" | ".m16n8k16") && a == ".f16" && d != c {
        return broken(
            format!(
                ".dtype must be '{c}' when .ctype is '{c}' for 'mma' instruction with shape '{shape}'"
            ),
            None,
        );
    }
    None
}
