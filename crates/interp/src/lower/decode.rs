//! The typed decode of an instruction: opcode and modifiers into an [`Op`], special
//! registers, `wmma` forms and shapes.

use super::*;

/// Register width in bits for a declared type (predicates: 1).
pub(crate) fn reg_width(ty: Ty) -> u32 {
    if ty == Ty::Pred { 1 } else { ty.bits().min(64) }
}

pub(crate) fn sreg(name: &str, comp: Option<&str>) -> Option<Sreg> {
    let d = match comp {
        Some(".x") => 0,
        Some(".y") => 1,
        Some(".z") => 2,
        _ => 0,
    };
    Some(match name {
        "%tid" => Sreg::Tid(d),
        "%ntid" => Sreg::Ntid(d),
        "%ctaid" => Sreg::Ctaid(d),
        "%nctaid" => Sreg::Nctaid(d),
        "%laneid" => Sreg::Laneid,
        "%warpid" => Sreg::Warpid,
        "%nwarpid" => Sreg::Nwarpid,
        "%smid" => Sreg::Smid,
        "%nsmid" => Sreg::Nsmid,
        "%gridid" => Sreg::Gridid,
        "%lanemask_eq" => Sreg::LanemaskEq,
        "%lanemask_le" => Sreg::LanemaskLe,
        "%lanemask_lt" => Sreg::LanemaskLt,
        "%lanemask_ge" => Sreg::LanemaskGe,
        "%lanemask_gt" => Sreg::LanemaskGt,
        "%clock" => Sreg::Clock,
        "%clock_hi" => Sreg::ClockHi,
        "%clock64" => Sreg::Clock64,
        "%globaltimer" => Sreg::Globaltimer,
        "%globaltimer_lo" => Sreg::GlobaltimerLo,
        "%globaltimer_hi" => Sreg::GlobaltimerHi,
        "%dynamic_smem_size" => Sreg::DynamicSmemSize,
        "%cluster_ctaid" => Sreg::ClusterCtaid(d),
        "%cluster_nctaid" => Sreg::ClusterNctaid(d),
        "%clusterid" => Sreg::Clusterid(d),
        "%nclusterid" => Sreg::Nclusterid(d),
        "%cluster_ctarank" => Sreg::ClusterCtarank,
        "%cluster_nctarank" => Sreg::ClusterNctarank,
        "%is_explicit_cluster" => Sreg::IsExplicitCluster,
        "%total_smem_size" => Sreg::TotalSmemSize,
        n if n.starts_with("%reserved_smem_offset_") => {
            Sreg::ReservedSmem(crate::mem::ReservedSmem::from_name(n)?)
        }
        // Performance counters start at zero in a fresh machine; nothing else counts them.
        n if n.starts_with("%pm") => Sreg::Zero,
        "%envreg1" => Sreg::CooperativeWorkspace(true),
        "%envreg2" => Sreg::CooperativeWorkspace(false),
        _ => return None,
    })
}

/// The fragments a `wmma` instruction reads or writes: (operation, fragment of its first
/// matrix operand, and for `mma` those of a, b, c/d), or `None` for a form not implemented.
pub fn wmma_form(m: &Mods) -> Option<(WmmaOp, Vec<crate::mma::WmmaFrag>)> {
    use crate::mma::{Elem, Frag, WmmaFrag};
    let op = m.wmma?;
    let shape = m.shape?;
    let elem = |i: usize| m.types.get(i).and_then(|&t| Elem::of(t));
    let frags = match op {
        WmmaOp::Load(which) => {
            if m.layouts.len() != 1 {
                return None;
            }
            vec![WmmaFrag::of(which, shape, elem(0)?)?]
        }
        WmmaOp::Store => {
            if m.layouts.len() != 1 {
                return None;
            }
            vec![WmmaFrag::of(Frag::C, shape, elem(0)?)?]
        }
        WmmaOp::Mma => {
            if m.layouts.len() != 2 {
                return None;
            }
            // `.dtype.ctype` for f16 inputs (`.f32.f32`), `.dtype.atype.btype.ctype` else.
            let (d, a, b, c) = match m.types.len() {
                2 => (elem(0)?, Elem::F16, Elem::F16, elem(1)?),
                4 => (elem(0)?, elem(1)?, elem(2)?, elem(3)?),
                _ => return None,
            };
            if a != b {
                return None;
            }
            let acc_ok = match a {
                Elem::F16 => matches!((d, c), (Elem::F16 | Elem::F32, Elem::F16 | Elem::F32)),
                Elem::Bf16 | Elem::Tf32 => d == Elem::F32 && c == Elem::F32,
                Elem::S8 | Elem::U8 => d == Elem::S32 && c == Elem::S32,
                Elem::F64 => d == Elem::F64 && c == Elem::F64,
                _ => false,
            };
            if !acc_ok {
                return None;
            }
            vec![
                WmmaFrag::of(Frag::A, shape, a)?,
                WmmaFrag::of(Frag::B, shape, b)?,
                WmmaFrag::of(Frag::C, shape, c)?,
                WmmaFrag::of(Frag::C, shape, d)?,
            ]
        }
    };
    Some((op, frags))
}

/// `.m16n8k16` -> (16, 8, 16).
pub(crate) fn parse_shape(s: &str) -> Option<(u8, u8, u8)> {
    let r = s.strip_prefix(".m")?;
    let (m, r) = r.split_once('n')?;
    let (n, k) = r.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

/// `cp.async` forms: the copy ([`Op::CpAsync`]), its group bookkeeping (no effect on values:
/// copies complete at once; the sanitizer follows them), or a reason it is not modelled.
pub(crate) fn cp_async_kind(mods: &[String]) -> Result<Op, String> {
    let has = |m: &str| mods.iter().any(|x| x == m);
    if mods.first().map(String::as_str) != Some(".async") {
        return Err(
            "instruction `cp` without `.async` is not implemented by the interpreter".into(),
        );
    }
    if has(".bulk") || mods.iter().any(|m| m.starts_with(".tensor")) {
        return Err("bulk asynchronous copies (`cp.async.bulk`, TMA) are not implemented by the interpreter".into());
    }
    if has(".commit_group") {
        return Ok(Op::CpAsyncCommit);
    }
    if has(".wait_group") || has(".wait_all") {
        return Ok(Op::CpAsyncWait);
    }
    if (has(".ca") || has(".cg")) && (has(".shared") || has(".shared::cta")) && has(".global") {
        return Ok(Op::CpAsync);
    }
    Err(format!(
        "`cp{}` is not implemented by the interpreter",
        mods.concat()
    ))
}

/// Maps an opcode and its modifiers to an [`Op`] and [`Mods`]; unknown relevant modifiers make
/// it unsupported.
pub(crate) fn parse_op(opcode: &str, mods: &[String]) -> (Op, Mods, Option<String>) {
    let op = match opcode {
        "mov" => Op::Mov,
        "ld" | "ldu" => Op::Ld,
        "st" => Op::St,
        "add" => Op::Add,
        "sub" => Op::Sub,
        "mul" => Op::Mul,
        "mad" => Op::Mad,
        "mul24" => Op::Mul24,
        "mad24" => Op::Mad24,
        "sad" => Op::Sad,
        "div" => Op::Div,
        "rem" => Op::Rem,
        "abs" => Op::Abs,
        "neg" => Op::Neg,
        "min" => Op::Min,
        "max" => Op::Max,
        "popc" => Op::Popc,
        "clz" => Op::Clz,
        "bfind" => Op::Bfind,
        "brev" => Op::Brev,
        "bfe" => Op::Bfe,
        "bfi" => Op::Bfi,
        "fns" => Op::Fns,
        "szext" => Op::Szext,
        "bmsk" => Op::Bmsk,
        "dp4a" => Op::Dp4a,
        "dp2a" => Op::Dp2a,
        "addc" => Op::Addc,
        "subc" => Op::Subc,
        "madc" => Op::Madc,
        "testp" => Op::Testp,
        "copysign" => Op::Copysign,
        "fma" => Op::Fma,
        "rcp" => Op::Rcp,
        "sqrt" => Op::Sqrt,
        "rsqrt" => Op::Rsqrt,
        "sin" => Op::Sin,
        "cos" => Op::Cos,
        "lg2" => Op::Lg2,
        "ex2" => Op::Ex2,
        "tanh" => Op::Tanh,
        "set" => Op::Set,
        "setp" => Op::Setp,
        "selp" => Op::Selp,
        "slct" => Op::Slct,
        "and" => Op::And,
        "or" => Op::Or,
        "xor" => Op::Xor,
        "not" => Op::Not,
        "cnot" => Op::Cnot,
        "lop3" => Op::Lop3,
        "shf" => Op::Shf,
        "shl" => Op::Shl,
        "shr" => Op::Shr,
        "prmt" => Op::Prmt,
        "cvt" => Op::Cvt,
        "cvta" => Op::Cvta,
        "isspacep" => Op::Isspacep,
        "bra" => Op::Bra,
        "call" => Op::Call,
        "ret" => Op::Ret,
        "exit" => Op::Exit,
        "trap" => Op::Trap,
        "bar" | "barrier" => Op::Bar,
        "membar" | "fence" => Op::Membar,
        "atom" => Op::Atom,
        "red" => Op::Red,
        "vote" => Op::Vote,
        "match" => Op::Match,
        "activemask" => Op::Activemask,
        "elect" => Op::Elect,
        "redux" => Op::Redux,
        "ldmatrix" => Op::Ldmatrix,
        "stmatrix" => Op::Stmatrix,
        "movmatrix" => Op::Movmatrix,
        "mma" => Op::Mma,
        "wmma" => Op::Wmma,
        "shfl" => Op::Shfl,
        "tex" => Op::Tex,
        "mbarrier" => {
            return match crate::mbarrier::decode(mods) {
                Ok(k) => (
                    Op::Mbarrier,
                    Mods {
                        mbar: Some(k),
                        // Without a state space the address is generic.
                        space: Some(
                            if mods.iter().any(|m| m == ".shared" || m == ".shared::cta") {
                                Space::Shared
                            } else {
                                Space::Generic
                            },
                        ),
                        ..Mods::default()
                    },
                    None,
                ),
                Err(why) => (Op::Unsupported, Mods::default(), Some(why)),
            };
        }
        "cp" if mods.iter().any(|m| m == ".bulk")
            && mods.iter().any(|m| m == ".mbarrier::complete_tx::bytes") =>
        {
            // `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes{.L2::cache_hint}
            // [d], [s], n, [a]{, policy}` (the policy, a hint, is dropped at lowering).
            let known = [
                ".async",
                ".bulk",
                ".shared::cluster",
                ".global",
                ".mbarrier::complete_tx::bytes",
                ".L2::cache_hint",
            ];
            if let Some(m) = mods.iter().find(|m| !known.contains(&m.as_str())) {
                return (
                    Op::Unsupported,
                    Mods::default(),
                    Some(format!(
                        "`cp.async.bulk` with `{m}` is not implemented by the interpreter"
                    )),
                );
            }
            return (
                Op::Mbarrier,
                Mods {
                    mbar: Some(crate::mbarrier::MbarOp::BulkCopy),
                    space: Some(Space::Shared),
                    ..Mods::default()
                },
                None,
            );
        }
        "cp" if mods.iter().any(|m| m == ".mbarrier") => {
            // `cp.async.mbarrier.arrive{.noinc}.shared{::cta}.b64 [a]`.
            let known = [
                ".async",
                ".mbarrier",
                ".arrive",
                ".noinc",
                ".shared",
                ".shared::cta",
                ".b64",
            ];
            if let Some(m) = mods.iter().find(|m| !known.contains(&m.as_str())) {
                return (
                    Op::Unsupported,
                    Mods::default(),
                    Some(format!(
                        "`cp.async.mbarrier.arrive` with `{m}` is not implemented by the interpreter"
                    )),
                );
            }
            let noinc = mods.iter().any(|m| m == ".noinc");
            return (
                Op::Mbarrier,
                Mods {
                    mbar: Some(crate::mbarrier::MbarOp::CpAsyncArrive { noinc }),
                    space: Some(Space::Shared),
                    ..Mods::default()
                },
                None,
            );
        }
        "cp" => match cp_async_kind(mods) {
            Ok(op) => op,
            Err(why) => return (Op::Unsupported, Mods::default(), Some(why)),
        },
        "tld4" | "txq" | "istypep" => {
            return (
                Op::Unsupported,
                Mods::default(),
                Some(format!(
                    "texture instruction `{opcode}` is not implemented by the interpreter (only `tex` fetches are modelled: no gathers, queries or type tests)"
                )),
            );
        }
        "suld" => Op::Suld,
        "sust" => Op::Sust,
        "sured" | "suq" => {
            return (
                Op::Unsupported,
                Mods::default(),
                Some(format!(
                    "surface instruction `{opcode}` is not implemented by the interpreter (only unformatted `suld.b`/`sust.b` are modelled)"
                )),
            );
        }
        // `createpolicy.fractional` (an immediate fraction) and `.cvt`: a move of the policy
        // (`Cx::instruction` replaces the operands); `.range` is not modelled.
        "createpolicy" if mods.iter().any(|m| m == ".fractional" || m == ".cvt") => Op::Mov,
        "nanosleep" | "prefetch" | "prefetchu" | "pmevent" | "griddepcontrol" | "discard"
        | "applypriority" => Op::Nop,
        v if crate::video::Video::decode(v).is_some() => Op::Video,
        other => {
            return (
                Op::Unsupported,
                Mods::default(),
                Some(format!(
                    "instruction `{other}` is not implemented by the interpreter"
                )),
            );
        }
    };
    let mut m = Mods {
        vec: 1,
        space: None,
        ..Mods::default()
    };
    if matches!(op, Op::Membar) && opcode == "fence" {
        // Every fence (`.sc`, `.acq_rel`, `.proxy.*`, `.mbarrier_init`, any scope): ordering
        // only, which the sanitizer takes as synchronization.
        return (op, m, None);
    }
    if matches!(op, Op::Nop | Op::CpAsyncCommit | Op::CpAsyncWait) {
        // Hints and launch-ordering instructions (`griddepcontrol.wait`): no effect on one
        // launch's results, whatever their modifiers.
        return (op, m, None);
    }
    if op == Op::Video {
        m.video = crate::video::Video::decode(opcode).map(|video| VideoMods {
            video,
            shr: 0,
            po: false,
            sel: [crate::video::Sel::Word; 3],
            negate: [false; 3],
        });
    }
    let mut op = op;
    for s in mods {
        let s = s.as_str();
        if let Some(t) = Ty::parse(s) {
            m.types.push(t);
            continue;
        }
        if let Some(v) = &mut m.video {
            match s {
                ".shr7" => v.shr = 7,
                ".shr15" => v.shr = 15,
                ".po" => v.po = true,
                _ => {}
            }
            if matches!(s, ".shr7" | ".shr15" | ".po") {
                continue;
            }
        }
        if matches!(op, Op::Suld | Op::Sust) {
            use crate::surface::{OutOfBounds, SurfShape};
            let (shape, mode) = m.surf.unwrap_or((SurfShape::D1, OutOfBounds::Trap));
            let set = |shape, mode| Some((shape, mode));
            match s {
                ".b" => {}
                ".1d" => m.surf = set(SurfShape::D1, mode),
                ".2d" => m.surf = set(SurfShape::D2, mode),
                ".3d" => m.surf = set(SurfShape::D3, mode),
                ".a1d" => m.surf = set(SurfShape::Array1D, mode),
                ".a2d" => m.surf = set(SurfShape::Array2D, mode),
                ".trap" => m.surf = set(shape, OutOfBounds::Trap),
                ".clamp" => m.surf = set(shape, OutOfBounds::Clamp),
                ".zero" => m.surf = set(shape, OutOfBounds::Zero),
                ".v2" => m.vec = 2,
                ".v4" => m.vec = 4,
                // Cache operators: hints.
                ".ca" | ".cg" | ".cs" | ".cv" | ".wb" | ".wt" => {}
                _ => {
                    return (
                        Op::Unsupported,
                        m,
                        Some(format!(
                            "`{opcode}` with `{s}` is not implemented by the interpreter (implemented: unformatted `.b` accesses of 1d/2d/3d/a1d/a2d surfaces)"
                        )),
                    );
                }
            }
            continue;
        }
        if op == Op::Tex {
            match s {
                ".1d" => m.tex = Some(TexShape::D1),
                ".2d" => m.tex = Some(TexShape::D2),
                ".3d" => m.tex = Some(TexShape::D3),
                ".a2d" => m.tex = Some(TexShape::Array2D),
                ".level" => m.level = true,
                ".v4" => m.vec = 4,
                ".cube" | ".acube" => {
                    return (
                        Op::Unsupported,
                        m,
                        Some(format!(
                            "`tex{s}`: cube-map textures are not modelled by the interpreter"
                        )),
                    );
                }
                _ => {
                    return (
                        Op::Unsupported,
                        m,
                        Some(format!(
                            "`tex` with `{s}` is not implemented by the interpreter (implemented: tex[.level].{{1d,2d,3d,a2d}}.v4.{{f32,u32,s32}}.{{s32,f32}})"
                        )),
                    );
                }
            }
            continue;
        }
        match s {
            ".rn" => m.rnd = Some(Rnd::Ne),
            ".rz" => m.rnd = Some(Rnd::Z),
            ".rm" => m.rnd = Some(Rnd::M),
            ".rp" => m.rnd = Some(Rnd::P),
            ".rni" => m.irnd = Some(Rnd::Ne),
            ".rzi" => m.irnd = Some(Rnd::Z),
            ".rmi" => m.irnd = Some(Rnd::M),
            ".rpi" => m.irnd = Some(Rnd::P),
            ".rna" => m.rna = true,
            ".ftz" => m.ftz = true,
            ".sat" => m.sat = true,
            ".satfinite" => m.satfinite = true,
            ".relu" => m.relu = true,
            ".approx" => m.approx = true,
            ".full" => m.approx = true,
            ".NaN" => m.nan = true,
            ".xorsign" => m.xorsign_abs = true,
            ".abs" if op != Op::Redux => m.xorsign_abs = true,
            ".cc" => m.cc = true,
            ".hi" => m.hi = true,
            ".lo" => m.lo = true,
            ".wide" => m.wide = true,
            ".sync" if op == Op::Bar => m.bar = 0,
            ".sync" => m.sync = true,
            ".warp" if op == Op::Bar => op = Op::BarWarp,
            ".arrive" => m.bar = 1,
            ".red" => m.bar = 2,
            ".shiftamt" => m.shiftamt = true,
            ".wrap" => m.wrap = true,
            ".clamp" => m.clamp = true,
            ".l" => m.left = true,
            ".r" => m.right = true,
            ".to" => m.to = true,
            ".uni" if op == Op::Vote => m.mode = 3,
            ".uni" => m.uni = true,
            ".pack" if op == Op::Cvt => op = Op::CvtPack,
            ".eq" => m.cmp = Some(Cmp::Eq),
            ".ne" => m.cmp = Some(Cmp::Ne),
            ".lt" => m.cmp = Some(Cmp::Lt),
            ".le" => m.cmp = Some(Cmp::Le),
            ".gt" => m.cmp = Some(Cmp::Gt),
            ".ge" => m.cmp = Some(Cmp::Ge),
            ".ls" => m.cmp = Some(Cmp::Ls),
            ".hs" => m.cmp = Some(Cmp::Hs),
            ".equ" => m.cmp = Some(Cmp::Equ),
            ".neu" => m.cmp = Some(Cmp::Neu),
            ".ltu" => m.cmp = Some(Cmp::Ltu),
            ".leu" => m.cmp = Some(Cmp::Leu),
            ".gtu" => m.cmp = Some(Cmp::Gtu),
            ".geu" => m.cmp = Some(Cmp::Geu),
            ".num" => m.cmp = Some(Cmp::Num),
            ".nan" => m.cmp = Some(Cmp::Nan),
            ".and" if matches!(op, Op::Atom | Op::Red | Op::Redux) => m.atom = Some(AtomOp::And),
            ".or" if matches!(op, Op::Atom | Op::Red | Op::Redux) => m.atom = Some(AtomOp::Or),
            ".xor" if matches!(op, Op::Atom | Op::Red | Op::Redux) => m.atom = Some(AtomOp::Xor),
            ".and" => m.boolop = Some(BoolOp::And),
            ".or" => m.boolop = Some(BoolOp::Or),
            ".xor" => m.boolop = Some(BoolOp::Xor),
            ".popc" => m.popc = true,
            ".cas" => m.atom = Some(AtomOp::Cas),
            ".exch" => m.atom = Some(AtomOp::Exch),
            ".add" => m.atom = Some(AtomOp::Add),
            ".inc" => m.atom = Some(AtomOp::Inc),
            ".dec" => m.atom = Some(AtomOp::Dec),
            ".min" => m.atom = Some(AtomOp::Min),
            ".max" => m.atom = Some(AtomOp::Max),
            ".up" => m.shfl = 0,
            ".down" => m.shfl = 1,
            ".bfly" => m.shfl = 2,
            ".idx" => m.shfl = 3,
            ".all" => m.mode = 1,
            ".any" => m.mode = if op == Op::Match { 0 } else { 2 },
            ".ballot" => m.mode = 4,
            ".f4e" => m.prmt = 1,
            ".b4e" => m.prmt = 2,
            ".rc8" => m.prmt = 3,
            ".ecl" => m.prmt = 4,
            ".ecr" => m.prmt = 5,
            ".rc16" => m.prmt = 6,
            ".finite" => m.testp = 0,
            ".infinite" => m.testp = 1,
            ".number" => m.testp = 2,
            ".notanumber" => m.testp = 3,
            ".normal" => m.testp = 4,
            ".subnormal" => m.testp = 5,
            ".row" | ".col" if matches!(op, Op::Mma | Op::Wmma) => m.layouts.push(s == ".row"),
            ".load" | ".store" | ".mma" if op == Op::Wmma => {
                if s == ".mma" {
                    m.wmma = Some(WmmaOp::Mma);
                }
                if s == ".store" {
                    m.wmma = Some(WmmaOp::Store);
                }
            }
            ".a" | ".b" | ".c" if op == Op::Wmma => {
                m.wmma = Some(WmmaOp::Load(match s {
                    ".a" => crate::mma::Frag::A,
                    ".b" => crate::mma::Frag::B,
                    _ => crate::mma::Frag::C,
                }))
            }
            ".d" if op == Op::Wmma => {}
            ".x1" | ".x2" | ".x4" if matches!(op, Op::Ldmatrix | Op::Stmatrix) => {
                m.xn = s[2..].parse().unwrap_or(1)
            }
            ".trans" if matches!(op, Op::Ldmatrix | Op::Stmatrix | Op::Movmatrix) => m.trans = true,
            ".m8n8" if matches!(op, Op::Ldmatrix | Op::Stmatrix | Op::Movmatrix) => {
                m.shape = Some((8, 8, 0))
            }
            s if matches!(op, Op::Mma | Op::Wmma)
                && s.starts_with(".m")
                && parse_shape(s).is_some() =>
            {
                m.shape = parse_shape(s)
            }
            ".v2" => m.vec = 2,
            ".v4" => m.vec = 4,
            ".v8" => m.vec = 8,
            ".global" => m.space = Some(Space::Global),
            ".shared" | ".shared::cta" => m.space = Some(Space::Shared),
            ".shared::cluster" => m.space = Some(Space::SharedCluster),
            ".local" => m.space = Some(Space::Local),
            ".const" => m.space = Some(Space::Const),
            ".param" | ".param::entry" | ".param::func" => m.space = Some(Space::Param),
            // Memory ordering: no effect on a sequential machine's results; the sanitizer
            // takes such accesses as synchronization.
            ".relaxed" | ".acquire" | ".release" | ".acq_rel" | ".sc" | ".volatile" => {
                m.strong = true
            }
            // Scope, caching and uniformity hints.
            ".nc" | ".ca" | ".cg" | ".cs" | ".lu" | ".cv" | ".wb" | ".wt" | ".weak" | ".cta"
            | ".gpu" | ".sys" | ".cluster" | ".gl" | ".aligned" | ".noftz" | ".L1" | ".L2"
            | ".unified" | ".mmio" => {}
            s if s.starts_with(".L1::") || s.starts_with(".L2::") => {}
            ".u16x2" | ".s16x2" => {}
            ".fractional" | ".cvt" if opcode == "createpolicy" => {}
            ".async" if op == Op::CpAsync => {}
            other => {
                return (
                    Op::Unsupported,
                    m,
                    Some(format!(
                        "modifier `{other}` of `{opcode}` is not implemented by the interpreter"
                    )),
                );
            }
        }
    }
    if op == Op::Video {
        if m.video
            .is_some_and(|v| v.video.op == crate::video::VideoOp::Set)
            && m.types.len() == 2
        {
            // `vset.atype.btype`: the result is 0 or 1; ptxas 13.0.88 extends and compares
            // `c` of a secondary `.min`/`.max` by the signedness of `.atype` (its code, checked
            // in the emulator), so that is the destination type here.
            m.types.insert(0, m.types[0]);
        }
        if let Some(why) = video_form(&m) {
            return (Op::Unsupported, m, Some(why));
        }
    }
    // `.lo`/`.hi` double as comparison operators for setp/set.
    if matches!(op, Op::Setp | Op::Set) {
        if m.lo && m.cmp.is_none() {
            m.cmp = Some(Cmp::Lo);
        }
        if m.hi && m.cmp.is_none() {
            m.cmp = Some(Cmp::Hi);
        }
    }
    if matches!(op, Op::Ld | Op::St | Op::Atom | Op::Red) && m.space.is_none() {
        m.space = Some(Space::Generic);
    }
    if op == Op::Mma {
        let elems: Vec<Option<crate::mma::Elem>> =
            m.types.iter().map(|&t| crate::mma::Elem::of(t)).collect();
        let ok = match (elems.as_slice(), m.shape) {
            ([Some(d), Some(a), Some(b), Some(c)], Some(shape)) => {
                d == c
                    && crate::mma::sync_shape(shape, *a).is_some()
                    && crate::mma::sync_shape(shape, *b).is_some()
                    && matches!(
                        (a, d),
                        (
                            crate::mma::Elem::F16 | crate::mma::Elem::Bf16 | crate::mma::Elem::Tf32,
                            crate::mma::Elem::F32
                        ) | (crate::mma::Elem::F16, crate::mma::Elem::F16)
                            | (
                                crate::mma::Elem::S8 | crate::mma::Elem::U8,
                                crate::mma::Elem::S32
                            )
                            | (crate::mma::Elem::F64, crate::mma::Elem::F64)
                    )
            }
            _ => false,
        };
        if !(ok && m.layouts == [true, false]) {
            return (
                Op::Unsupported,
                m,
                Some("this mma form is not implemented (row.col m16n8k16/m16n8k8 f16/bf16, m16n8k8/m16n8k4 tf32, m16n8k16/m16n8k32 s8/u8, m8n8k4 f64)".into()),
            );
        }
    }
    if op == Op::Wmma && wmma_form(&m).is_none() {
        return (
            Op::Unsupported,
            m,
            Some("this wmma form is not implemented (f16/bf16/s8/u8 m16n16k16, m32n8k16, m8n32k16; tf32 m16n16k8; f64 m8n8k4)".into()),
        );
    }
    if matches!(op, Op::Ldmatrix | Op::Stmatrix)
        && (m.shape != Some((8, 8, 0)) || m.ty() != Ty::B16)
    {
        return (
            Op::Unsupported,
            m,
            Some("only ldmatrix/stmatrix .m8n8 .b16 is implemented".into()),
        );
    }
    if op == Op::Movmatrix && (m.shape != Some((8, 8, 0)) || m.ty() != Ty::B16 || !m.trans) {
        return (
            Op::Unsupported,
            m,
            Some("only movmatrix .m8n8.trans.b16 is implemented".into()),
        );
    }
    if op == Op::Tex {
        let ok = m.tex.is_some()
            && m.vec == 4
            && matches!(
                m.types.as_slice(),
                [Ty::F32 | Ty::U32 | Ty::S32, Ty::S32 | Ty::F32]
            );
        if !ok {
            return (
                Op::Unsupported,
                m,
                Some(
                    "this `tex` form is not implemented (implemented: tex[.level].{1d,2d,3d,a2d}.v4.{f32,u32,s32}.{s32,f32})"
                        .into(),
                ),
            );
        }
    }
    if op == Op::Vote && m.mode == 0 {
        m.mode = 1;
    }
    (op, m, None)
}

/// Why a video instruction's modifiers are not a form the interpreter runs (`None` if they
/// are): three `.u32`/`.s32` types, and only the modifiers its family has.
fn video_form(m: &Mods) -> Option<String> {
    use crate::video::VideoOp;
    let v = m.video?;
    if m.types.len() != 3 || m.types.iter().any(|t| !matches!(t, Ty::U32 | Ty::S32)) {
        return Some("a video instruction needs three `.u32`/`.s32` types".into());
    }
    let scalar = v.video.lanes == 1;
    let second_ok = match m.atom {
        None => true,
        Some(AtomOp::Add) => v.video.op != VideoOp::Mad,
        Some(AtomOp::Min | AtomOp::Max) => scalar && v.video.op != VideoOp::Mad,
        Some(_) => false,
    };
    let shifts = matches!(v.video.op, VideoOp::Shl | VideoOp::Shr);
    if !second_ok
        || (m.sat && v.video.op == VideoOp::Set)
        || (m.cmp.is_some() != (v.video.op == VideoOp::Set))
        || ((m.clamp || m.wrap) && !shifts)
        || ((v.shr != 0 || v.po) && v.video.op != VideoOp::Mad)
    {
        return Some(
            "this video instruction's modifiers are not a form the interpreter runs".into(),
        );
    }
    None
}
