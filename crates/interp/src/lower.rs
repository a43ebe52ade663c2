//! Lowering of a parsed PTX module ([`syntax::ast::SourceFile`]) into the interpreter's IR.
//!
//! One pass per function: declarations become register slots (with nested block scopes and
//! parameterized names `%r<N>`), variables get addresses, labels become instruction indices,
//! modifiers become flags. Anything the interpreter cannot execute becomes an `Unsupported`
//! instruction with its reason, reported only if executed.

use std::collections::HashMap;

use syntax::ast::{self, AstNode, DeclLike, LiteralValue};

use crate::float::Rnd;
use crate::ir::*;
use crate::texture::TexShape;

/// A module-level lowering error (malformed input the interpreter cannot give meaning to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LowerError {
    pub line: u32,
    pub message: String,
}

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a) * a
}

/// Allocates `size` bytes aligned to `align` at the end of a region whose current size is
/// `*end`; returns the offset.
fn bump(end: &mut u64, align: u64, size: u64) -> u64 {
    let off = align_up(*end, align);
    *end = off + size;
    off
}

struct LineIndex {
    starts: Vec<u32>,
}

impl LineIndex {
    fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i as u32 + 1);
            }
        }
        LineIndex { starts }
    }
    fn line(&self, node: &syntax::SyntaxNode) -> u32 {
        let off = u32::from(node.text_range().start());
        match self.starts.binary_search(&off) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }
}

/// A name visible in a scope.
#[derive(Debug, Clone)]
enum Sym {
    /// Register slot(s): base slot, vector width (1 for scalars).
    Reg {
        slot: u32,
        width: u32,
    },
    Var(VarRef),
    Func(u32),
    /// A texture reference (`.texref`, `.tex`), by name.
    Texref(String),
}

/// Lowers a parsed module.
/// Lowers a module. `fmad`: contract `mul` + `add`/`sub` pairs into fused multiply-adds as
/// ptxas does by default (`hir::contract`); `false` is ptxas's `--fmad=false`.
pub fn lower(text: &str, file: &ast::SourceFile, fmad: bool) -> Result<Module, LowerError> {
    let lines = LineIndex::new(text);
    let mut m = Module {
        functions: Vec::new(),
        globals: Vec::new(),
        consts: Vec::new(),
        shared_static: 0,
        shared_vars: Vec::new(),
        local_static: 0,
        dyn_shared_align: 16,
        shared_layout: target_layout(file),
        global_base: 0,
        relocs: Vec::new(),
    };
    let mut globals: HashMap<String, Sym> = HashMap::new();
    // Extern shared arrays (dynamic shared memory) are placed after all static shared memory;
    // their references are patched once the static size is known.
    let mut dyn_shared: Vec<String> = Vec::new();

    // Pass 1: function names (so calls can refer forward).
    let mut func_index: HashMap<String, u32> = HashMap::new();
    for f in file.functions() {
        let Some(name) = f.name() else { continue };
        let name = name.text().to_string();
        if !func_index.contains_key(&name) {
            let id = func_index.len() as u32;
            func_index.insert(name.clone(), id);
            globals.insert(name.clone(), Sym::Func(id));
            m.functions.push(Function {
                name,
                is_entry: f.is_entry(),
                defined: false,
                params: Vec::new(),
                rets: Vec::new(),
                reg_bits: Vec::new(),
                body: Vec::new(),
                local_size: 0,
                param_size: 0,
                args_size: 0,
                shared_arrays: Vec::new(),
            });
        }
    }

    // Pass 2: module variables.
    for item in file.items() {
        let ast::Item::GlobalVar(g) = item else {
            continue;
        };
        let line = lines.line(g.syntax());
        let space = g
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_default();
        // Texture references: `.global .texref name;` and the old `.tex .u64 name;` (`.u32`).
        // They occupy no memory: `tex` looks the name up among the memory's bound textures.
        if space == ".tex" || g.ty().is_some_and(|t| t.text() == ".texref") {
            for d in g.declarators() {
                if let Some(name) = d.name() {
                    let name = name.text().to_string();
                    globals.insert(name.clone(), Sym::Texref(name));
                }
            }
            continue;
        }
        let Some(ty) = g.ty().and_then(|t| Ty::parse(t.text())) else {
            // Other opaque types (.samplerref, .surfref) are not supported; the instructions
            // that use them (independent-mode `tex`, `suld`, `sust`, ...) lower to unsupported
            // instructions.
            continue;
        };
        let vec = g.vector().unwrap_or(1) as u64;
        let is_extern = g.linkage().iter().any(|t| t.text() == ".extern");
        for d in g.declarators() {
            let Some(name) = d.name() else { continue };
            let name = name.text().to_string();
            let elem = ty.size() as u64 * vec;
            let (count, incomplete) = array_count(&d)?;
            let size = elem * count;
            let align = g.align().map(u64::from).unwrap_or(elem).max(1);
            let var = match space.as_str() {
                ".global" | ".const" => {
                    // Initialized data: a zero-filled slot (at least one byte) in the module's
                    // global or constant image, then the initializer.
                    let in_const = space == ".const";
                    let image = if in_const {
                        &mut m.consts
                    } else {
                        &mut m.globals
                    };
                    let off = align_up(image.len() as u64, align);
                    image.resize((off + size.max(1)) as usize, 0);
                    init_bytes(&d, ty, image, off, line, &globals, &mut m.relocs, in_const)?;
                    VarRef {
                        space: if in_const {
                            Space::Const
                        } else {
                            Space::Global
                        },
                        loc: Loc::Static(off),
                    }
                }
                ".shared" => {
                    if is_extern || incomplete {
                        m.dyn_shared_align = m.dyn_shared_align.max(align);
                        dyn_shared.push(name.clone());
                        VarRef {
                            space: Space::Shared,
                            loc: Loc::Static(u64::MAX),
                        }
                    } else {
                        let off = bump(&mut m.shared_static, align, size);
                        m.shared_vars.push((off, size));
                        VarRef {
                            space: Space::Shared,
                            loc: Loc::Static(off),
                        }
                    }
                }
                ".local" => {
                    // Module-scope .local: per-thread storage below every call frame.
                    let off = bump(&mut m.local_static, align, size);
                    VarRef {
                        space: Space::Local,
                        loc: Loc::Static(off),
                    }
                }
                _ => continue,
            };
            globals.insert(name, Sym::Var(var));
        }
    }

    // Pass 3: function bodies (function-scope .shared variables also extend shared memory).
    let mut shared_static = m.shared_static;
    let mut shared_vars = std::mem::take(&mut m.shared_vars);
    let mut dyn_align = m.dyn_shared_align;
    for f in file.functions() {
        let Some(name) = f.name() else { continue };
        let id = func_index[name.text()];
        if m.functions[id as usize].defined {
            continue;
        }
        let mut cx = FnCx {
            lines: &lines,
            globals: &globals,
            scopes: vec![HashMap::new()],
            reg_bits: Vec::new(),
            local_size: 0,
            param_size: 0,
            shared_static: &mut shared_static,
            shared_vars: &mut shared_vars,
            dyn_shared: &mut dyn_shared,
            dyn_align: &mut dyn_align,
            labels: HashMap::new(),
            insts: Vec::new(),
            pending: Vec::new(),
            contractions: Default::default(),
            contracted_muls: HashMap::new(),
        };
        let is_entry = f.is_entry();
        // Return parameters first (they come first in the frame), then parameters.
        let mut rets = Vec::new();
        for p in f.return_params() {
            rets.extend(cx.param(&p, false)?);
        }
        let mut params = Vec::new();
        for p in f.params() {
            params.extend(cx.param(&p, is_entry)?);
        }
        let args_size = cx.param_size;
        let defined = if let Some(body) = f.body() {
            if fmad {
                cx.contractions = hir::contract::contractions(&body);
                let muls: std::collections::HashSet<_> =
                    cx.contractions.values().map(|c| c.mul).collect();
                cx.contracted_muls = body
                    .syntax()
                    .descendants()
                    .filter_map(ast::Instruction::cast)
                    .filter(|i| muls.contains(&i.syntax().text_range()))
                    .map(|i| (i.syntax().text_range(), i))
                    .collect();
            }
            cx.block(&body)?;
            cx.resolve_pending()?;
            true
        } else {
            false
        };
        let func = &mut m.functions[id as usize];
        func.defined = defined;
        func.params = params;
        func.rets = rets;
        func.reg_bits = cx.reg_bits;
        func.body = cx.insts;
        func.local_size = cx.local_size;
        func.param_size = cx.param_size;
        func.args_size = args_size;
    }
    m.shared_static = shared_static;
    m.shared_vars = shared_vars;
    m.dyn_shared_align = dyn_align;
    // Place dynamic shared arrays after static shared memory.
    let dyn_base = align_up(m.shared_static, m.dyn_shared_align);
    for f in &mut m.functions {
        for inst in &mut f.body {
            for a in inst.args.iter_mut().chain(
                inst.call
                    .iter_mut()
                    .flat_map(|c| c.rets.iter_mut().chain(c.args.iter_mut())),
            ) {
                patch_dyn(a, dyn_base);
            }
        }
    }
    for r in &mut m.relocs {
        if r.target.space == Space::Shared && r.target.loc == Loc::Static(u64::MAX) {
            r.target.loc = Loc::Static(dyn_base);
        }
    }
    m.shared_static = dyn_base;
    for f in &mut m.functions {
        f.shared_arrays = crate::provenance::shared_arrays(f, &m.shared_vars);
    }
    Ok(m)
}

/// The shared layout ptxas's code for the module's first `.target` SM assumes (no or an
/// unknown target: the layout before sm_90).
fn target_layout(file: &ast::SourceFile) -> crate::mem::SharedLayout {
    let sm = file
        .target()
        .into_iter()
        .flat_map(|t| t.targets())
        .find_map(|t| {
            let n = t.text().strip_prefix("sm_")?;
            n.trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .parse::<u32>()
                .ok()
        })
        .unwrap_or(0);
    crate::mem::SharedLayout::for_sm(sm)
}

fn patch_dyn(op: &mut Operand, base: u64) {
    let fix = |v: &mut VarRef| {
        if v.space == Space::Shared && v.loc == Loc::Static(u64::MAX) {
            v.loc = Loc::Static(base);
        }
    };
    match op {
        Operand::Vec(v) => v.iter_mut().for_each(|o| patch_dyn(o, base)),
        Operand::Addr {
            base: AddrBase::Var(v),
            ..
        } => fix(v),
        Operand::VarAddr { var, .. } => fix(var),
        _ => {}
    }
}

/// The element count of a declarator (product of array dims); `incomplete` for `[]`.
fn array_count(d: &ast::Declarator) -> Result<(u64, bool), LowerError> {
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

fn count_init(v: &ast::InitValue) -> u64 {
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
fn init_bytes(
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

fn addr_init(e: &ast::Operand) -> Option<(String, i64, bool)> {
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

fn flatten_init(v: &ast::InitValue, out: &mut Vec<ast::Operand>) {
    match v {
        ast::InitValue::List(l) => l.values().for_each(|v| flatten_init(&v, out)),
        ast::InitValue::Expr(e) => out.push(e.clone()),
    }
}

/// A literal (with constant folding of integer expressions and negated floats).
fn imm_of(e: &ast::Operand) -> Option<Imm> {
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
        (Imm::F32Bits(b), Ty::F64) => (f32::from_bits(b) as f64).to_bits(),
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

struct FnCx<'a> {
    lines: &'a LineIndex,
    globals: &'a HashMap<String, Sym>,
    scopes: Vec<HashMap<String, Sym>>,
    reg_bits: Vec<u32>,
    local_size: u64,
    param_size: u64,
    shared_static: &'a mut u64,
    shared_vars: &'a mut Vec<(u64, u64)>,
    dyn_shared: &'a mut Vec<String>,
    dyn_align: &'a mut u64,
    labels: HashMap<String, u32>,
    insts: Vec<Inst>,
    /// Instructions lowered with the scopes in force at their position; their label operands
    /// are resolved when the whole body is known: (inst index, arg path, label name).
    pending: Vec<(usize, Vec<usize>, String, u32)>,
    /// The `add`/`sub`s ptxas contracts with a `mul` (`hir::contract`; empty with
    /// `fmad = false`), and those `mul`s by range.
    contractions: hir::contract::Contractions,
    contracted_muls: HashMap<syntax::TextRange, ast::Instruction>,
}

fn err(line: u32, message: impl Into<String>) -> LowerError {
    LowerError {
        line,
        message: message.into(),
    }
}

impl FnCx<'_> {
    fn lookup(&self, name: &str) -> Option<Sym> {
        for s in self.scopes.iter().rev() {
            if let Some(v) = s.get(name) {
                return Some(v.clone());
            }
        }
        self.globals.get(name).cloned()
    }

    fn declare(&mut self, name: String, sym: Sym) {
        self.scopes.last_mut().expect("a scope").insert(name, sym);
    }

    fn new_reg(&mut self, bits: u32) -> u32 {
        self.reg_bits.push(bits);
        self.reg_bits.len() as u32 - 1
    }

    /// Declares a parameter; returns its slot description.
    fn param(&mut self, p: &ast::Param, kernel: bool) -> Result<Option<ParamSlot>, LowerError> {
        let line = self.lines.line(p.syntax());
        let space = p
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_else(|| ".param".into());
        let Some(name) = p.name() else {
            return Ok(None);
        };
        let name = name.text().to_string();
        let ty = p
            .ty()
            .and_then(|t| Ty::parse(t.text()))
            .ok_or_else(|| err(line, format!("parameter `{name}` has no supported type")))?;
        let d = p.declarators().into_iter().next();
        let count = match &d {
            Some(d) => array_count(d).map_err(|e| err(line, e.message))?.0.max(1),
            None => 1,
        };
        let vec = p.vector().unwrap_or(1) as u64;
        let size = ty.size() as u64 * count * vec;
        if space == ".reg" {
            let slot = self.new_reg(reg_width(ty));
            for _ in 1..vec {
                self.new_reg(reg_width(ty));
            }
            self.declare(
                name.clone(),
                Sym::Reg {
                    slot,
                    width: vec as u32,
                },
            );
            return Ok(Some(ParamSlot {
                name,
                reg: Some(slot),
                vec: vec as u32,
                offset: 0,
                size,
                ty,
            }));
        }
        let align = p.align().map(u64::from).unwrap_or(ty.size() as u64).max(1);
        let off = bump(&mut self.param_size, align, size);
        let loc = if kernel {
            Loc::Static(off)
        } else {
            Loc::FrameParam(off)
        };
        self.declare(
            name.clone(),
            Sym::Var(VarRef {
                space: Space::Param,
                loc,
            }),
        );
        Ok(Some(ParamSlot {
            name,
            reg: None,
            vec: vec as u32,
            offset: off,
            size,
            ty,
        }))
    }

    fn block(&mut self, b: &ast::Block) -> Result<(), LowerError> {
        self.scopes.push(HashMap::new());
        // Labels are visible in the whole function: collect positions first.
        for st in b.statements() {
            self.statement(&st)?;
        }
        self.scopes.pop();
        Ok(())
    }

    fn statement(&mut self, st: &ast::Statement) -> Result<(), LowerError> {
        match st {
            ast::Statement::Label(l) => {
                if let Some(n) = l.name() {
                    self.labels
                        .insert(n.text().to_string(), self.insts.len() as u32);
                }
            }
            ast::Statement::Block(b) => self.block(b)?,
            ast::Statement::VarDecl(v) => self.var_decl(v)?,
            ast::Statement::Instruction(i) => {
                let inst = self.instruction(i)?;
                self.insts.push(inst);
            }
            _ => {}
        }
        Ok(())
    }

    fn var_decl(&mut self, v: &ast::VarDecl) -> Result<(), LowerError> {
        let line = self.lines.line(v.syntax());
        let space = v
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_default();
        let Some(ty) = v.ty().and_then(|t| Ty::parse(t.text())) else {
            return Ok(());
        };
        let vec = v.vector().unwrap_or(1);
        for d in v.declarators() {
            let Some(name) = d.name() else { continue };
            let name = name.text().to_string();
            match space.as_str() {
                ".reg" => {
                    let make = |cx: &mut Self| -> Sym {
                        let slot = cx.new_reg(reg_width(ty));
                        for _ in 1..vec {
                            cx.new_reg(reg_width(ty));
                        }
                        Sym::Reg { slot, width: vec }
                    };
                    if let Some(n) = d.param_count() {
                        for k in 0..n {
                            let s = make(self);
                            self.declare(format!("{name}{k}"), s);
                        }
                    } else {
                        let s = make(self);
                        self.declare(name, s);
                    }
                }
                ".local" | ".param" | ".shared" => {
                    let (count, incomplete) = array_count(&d).map_err(|e| err(line, e.message))?;
                    let size = ty.size() as u64 * vec as u64 * count;
                    let align = v
                        .align()
                        .map(u64::from)
                        .unwrap_or(ty.size() as u64 * vec as u64)
                        .max(1);
                    let var = match space.as_str() {
                        ".local" => {
                            let off = bump(&mut self.local_size, align, size);
                            VarRef {
                                space: Space::Local,
                                loc: Loc::FrameLocal(off),
                            }
                        }
                        ".param" => {
                            let off = bump(&mut self.param_size, align, size);
                            VarRef {
                                space: Space::Param,
                                loc: Loc::FrameParam(off),
                            }
                        }
                        _ => {
                            if incomplete || v.linkage().iter().any(|t| t.text() == ".extern") {
                                *self.dyn_align = (*self.dyn_align).max(align);
                                self.dyn_shared.push(name.clone());
                                VarRef {
                                    space: Space::Shared,
                                    loc: Loc::Static(u64::MAX),
                                }
                            } else {
                                let off = bump(self.shared_static, align, size);
                                self.shared_vars.push((off, size));
                                VarRef {
                                    space: Space::Shared,
                                    loc: Loc::Static(off),
                                }
                            }
                        }
                    };
                    if d.initializer().is_some() && space != ".param" {
                        return Err(err(
                            line,
                            "initialized function-scope variables are not supported",
                        ));
                    }
                    self.declare(name, Sym::Var(var));
                }
                _ => {
                    return Err(err(
                        line,
                        format!("{space} variables inside a function are not supported"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn resolve_pending(&mut self) -> Result<(), LowerError> {
        for (idx, path, name, line) in std::mem::take(&mut self.pending) {
            let Some(&pc) = self.labels.get(&name) else {
                return Err(err(line, format!("undefined label `{name}`")));
            };
            let mut op = &mut self.insts[idx].args[path[0]];
            for &k in &path[1..] {
                let Operand::Vec(v) = op else {
                    unreachable!("pending path follows vectors")
                };
                op = &mut v[k];
            }
            *op = Operand::Label(pc);
        }
        Ok(())
    }

    fn instruction(&mut self, i: &ast::Instruction) -> Result<Inst, LowerError> {
        let line = self.lines.line(i.syntax());
        let text = i.syntax().text().to_string().trim().to_string();
        let opcode = i.opcode().map(|t| t.text().to_string()).unwrap_or_default();
        let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
        let guard = match i.guard() {
            Some(g) => {
                let n = g
                    .predicate()
                    .and_then(|p| p.name())
                    .map(|t| t.text().to_string())
                    .unwrap_or_default();
                match self.lookup(&n) {
                    Some(Sym::Reg { slot, .. }) => Some((slot, g.is_negated())),
                    _ => {
                        return Err(err(
                            line,
                            format!("guard `{n}` is not a predicate register"),
                        ));
                    }
                }
            }
            None => None,
        };
        let (op, parsed, unsupported) = parse_op(&opcode, &mods);
        let mut inst = Inst {
            guard,
            op,
            mods: parsed,
            args: Vec::new(),
            call: None,
            unsupported,
            line,
            text,
        };
        if inst.op == Op::Unsupported {
            return Ok(inst);
        }
        let idx = self.insts.len();
        let operands: Vec<ast::Operand> = i.operands().collect();
        if inst.op == Op::Call {
            return self.call(inst, &operands, line);
        }
        if inst.op == Op::Tex {
            return self.tex(inst, &operands, line);
        }
        if matches!(inst.op, Op::Suld | Op::Sust) {
            return self.surface(inst, &operands, line);
        }
        let generic_vars = inst.mods.space == Some(Space::Generic)
            && matches!(inst.op, Op::Ld | Op::St | Op::Atom | Op::Red);
        for (k, o) in operands.iter().enumerate() {
            match self.operand(o, line, &mut vec![k], idx, generic_vars) {
                Ok(lowered) => inst.args.push(lowered),
                Err(e) if e.message.starts_with("unsupported: ") => {
                    inst.op = Op::Unsupported;
                    inst.unsupported = Some(e.message["unsupported: ".len()..].to_string());
                    inst.args.clear();
                    self.pending.retain(|p| p.0 != idx);
                    return Ok(inst);
                }
                Err(e) => return Err(e),
            }
        }
        if inst.op == Op::CpAsync && mods.iter().any(|m| m == ".L2::cache_hint") {
            // The trailing cache-policy operand: a hint.
            inst.args.pop();
        }
        if let Some(c) = self.contractions.get(&i.syntax().text_range()).cloned()
            && let Some(mul) = self.contracted_muls.get(&c.mul).cloned()
            && inst.args.len() == 3
        {
            // ptxas's contraction (`hir::contract`): d = fma(±a, b, ±c) with the mul's factors
            // as they are here (the rule leaves them unchanged since the mul).
            let factors: Vec<ast::Operand> = mul.operands().skip(1).collect();
            let mut fma_args = vec![inst.args[0].clone()];
            for (k, o) in factors.iter().enumerate() {
                fma_args.push(self.operand(o, line, &mut vec![k + 1], idx, false)?);
            }
            fma_args.push(inst.args[3 - c.product_operand].clone());
            inst.op = Op::Fma;
            inst.args = fma_args;
            inst.mods.fma_negate = (c.negate_product, c.negate_addend);
        }
        Ok(inst)
    }

    /// `suld.b... d, [surf, {coords}]` / `sust.b... [surf, {coords}], v`. The surface must be
    /// a register holding a handle (surface objects); `.surfref` variables are unsupported.
    fn surface(
        &mut self,
        mut inst: Inst,
        ops: &[ast::Operand],
        line: u32,
    ) -> Result<Inst, LowerError> {
        let what = if inst.op == Op::Suld { "suld" } else { "sust" };
        let unsupported = |mut inst: Inst, why: String| -> Result<Inst, LowerError> {
            inst.op = Op::Unsupported;
            inst.unsupported = Some(why);
            inst.args.clear();
            Ok(inst)
        };
        let Some((shape, _)) = inst.mods.surf else {
            return unsupported(inst, format!("`{what}` without a geometry"));
        };
        if !matches!(inst.mods.ty(), Ty::B8 | Ty::B16 | Ty::B32 | Ty::B64)
            || inst.mods.types.len() != 1
        {
            return unsupported(
                inst,
                format!("`{what}` of a type other than .b8/.b16/.b32/.b64"),
            );
        }
        let (addr_at, data_at) = if inst.op == Op::Suld { (1, 0) } else { (0, 1) };
        if ops.len() != 2 {
            return unsupported(inst, format!("`{what}` with {} operands", ops.len()));
        }
        let ast::Operand::Address(addr) = &ops[addr_at] else {
            return unsupported(
                inst,
                format!("`{what}` without a `[surface, {{coordinates}}]` operand"),
            );
        };
        let inner: Vec<ast::Operand> = addr.operands().collect();
        if inner.len() != 2 {
            return unsupported(
                inst,
                format!("`{what}` address with {} operands", inner.len()),
            );
        }
        let lower = |me: &mut Self, o: &ast::Operand| -> Result<Operand, LowerError> {
            me.operand(o, line, &mut vec![0], usize::MAX, false)
        };
        let handle = match lower(self, &inner[0]) {
            Ok(h @ Operand::Reg(_)) => h,
            Ok(_) => {
                return unsupported(
                    inst,
                    format!(
                        "`{what}` surface that is not a register holding a surface object (`.surfref` variables are not modelled)"
                    ),
                );
            }
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        let coords = match lower(self, &inner[1]) {
            Ok(Operand::Vec(v)) => v,
            Ok(c @ (Operand::Reg(_) | Operand::Imm(_))) => vec![c],
            Ok(_) => {
                return unsupported(inst, format!("`{what}` coordinates that are not a vector"));
            }
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        let need = 1 + shape.extra_coords();
        if coords.len() < need {
            return unsupported(
                inst,
                format!(
                    "`{what}` needs {need} coordinates for its geometry, got {}",
                    coords.len()
                ),
            );
        }
        let data = match lower(self, &ops[data_at]) {
            Ok(Operand::Vec(v)) => v,
            Ok(d @ (Operand::Reg(_) | Operand::Imm(_) | Operand::Sink)) => vec![d],
            Ok(_) => {
                return unsupported(inst, format!("`{what}` data that is not a register vector"));
            }
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        if data.len() != usize::from(inst.mods.vec) {
            let vec = inst.mods.vec;
            return unsupported(
                inst,
                format!("`{what}` with {} values for a .v{vec} access", data.len()),
            );
        }
        let coords = Operand::Vec(coords[..need].to_vec());
        inst.args = if inst.op == Op::Suld {
            vec![Operand::Vec(data), handle, coords]
        } else {
            vec![handle, coords, Operand::Vec(data)]
        };
        Ok(inst)
    }

    /// `tex[.level].shape.v4.dty.cty {d0, d1, d2, d3}, [tex, {coords}][, lod]`. Forms the
    /// interpreter cannot run become `Unsupported` with the reason.
    fn tex(&mut self, mut inst: Inst, ops: &[ast::Operand], line: u32) -> Result<Inst, LowerError> {
        let unsupported = |mut inst: Inst, why: String| -> Result<Inst, LowerError> {
            inst.op = Op::Unsupported;
            inst.unsupported = Some(why);
            inst.args.clear();
            Ok(inst)
        };
        let shape = inst.mods.tex.expect("parse_op checked the geometry");
        let want = if inst.mods.level { 3 } else { 2 };
        if ops.len() != want {
            return unsupported(
                inst,
                format!("`tex` with {} operands (expected {want})", ops.len()),
            );
        }
        let ast::Operand::Address(addr) = &ops[1] else {
            return unsupported(
                inst,
                "`tex` without a `[texture, {coordinates}]` operand".into(),
            );
        };
        let inner: Vec<ast::Operand> = addr.operands().collect();
        match inner.len() {
            2 => {}
            3 => {
                return unsupported(
                    inst,
                    "`tex` in independent mode (`[texture, sampler, {coordinates}]`): separate samplers are not modelled".into(),
                );
            }
            n => return unsupported(inst, format!("`tex` address with {n} operands")),
        }
        // Destinations: four registers or `_` sinks.
        let dsts = match self.operand(&ops[0], line, &mut vec![0], usize::MAX, false) {
            Ok(d) => d,
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        match &dsts {
            Operand::Vec(v)
                if v.len() == 4
                    && v.iter()
                        .all(|d| matches!(d, Operand::Reg(_) | Operand::Sink)) => {}
            _ => {
                return unsupported(
                    inst,
                    "`tex` destinations other than a vector of four registers".into(),
                );
            }
        }
        // The texture: a texture reference by name or a register holding a handle.
        let texture = match &inner[0] {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Sym::Texref(r)) => Operand::Texref(r),
                    Some(Sym::Reg { slot, width: 1 }) => Operand::Reg(slot),
                    Some(_) => {
                        return unsupported(
                            inst,
                            format!(
                                "`tex` texture `{name}` is neither a texture reference nor a scalar register"
                            ),
                        );
                    }
                    None => {
                        return unsupported(
                            inst,
                            format!(
                                "`tex` texture `{name}` is not a texture reference (samplers and surfaces are not modelled)"
                            ),
                        );
                    }
                }
            }
            _ => {
                return unsupported(inst, "`tex` texture operand that is not a name".into());
            }
        };
        // Coordinates: registers or immediates; old PTX writes four for every geometry, of
        // which the leading ones the geometry needs count.
        let need = match shape {
            TexShape::D1 => 1,
            TexShape::D2 => 2,
            TexShape::D3 | TexShape::Array2D => 3,
        };
        let coords = match self.operand(&inner[1], line, &mut vec![0], usize::MAX, false) {
            Ok(Operand::Vec(v)) => v,
            Ok(c @ (Operand::Reg(_) | Operand::Imm(_))) => vec![c],
            Ok(_) => return unsupported(inst, "`tex` coordinates that are not a vector".into()),
            Err(e) if e.message.starts_with("unsupported: ") => {
                return unsupported(inst, e.message["unsupported: ".len()..].to_string());
            }
            Err(e) => return Err(e),
        };
        if coords.len() < need
            || !coords[..need]
                .iter()
                .all(|c| matches!(c, Operand::Reg(_) | Operand::Imm(_)))
        {
            return unsupported(
                inst,
                format!(
                    "`tex` needs {need} register or immediate coordinates for its geometry, got {}",
                    coords.len()
                ),
            );
        }
        inst.args = vec![dsts, texture, Operand::Vec(coords[..need].to_vec())];
        if inst.mods.level {
            match self.operand(&ops[2], line, &mut vec![0], usize::MAX, false) {
                Ok(lod @ (Operand::Reg(_) | Operand::Imm(_))) => inst.args.push(lod),
                Ok(_) => {
                    return unsupported(
                        inst,
                        "`tex.level` level of detail that is not a register or immediate".into(),
                    );
                }
                Err(e) if e.message.starts_with("unsupported: ") => {
                    return unsupported(inst, e.message["unsupported: ".len()..].to_string());
                }
                Err(e) => return Err(e),
            }
        }
        Ok(inst)
    }

    fn call(
        &mut self,
        mut inst: Inst,
        ops: &[ast::Operand],
        line: u32,
    ) -> Result<Inst, LowerError> {
        // call (rets), f, (args)[, proto];  call f, (args);  call f;
        let mut it = ops.iter().peekable();
        let mut rets = Vec::new();
        if let Some(ast::Operand::ArgList(l)) = it.peek() {
            for a in l.args() {
                rets.push(self.operand(&a, line, &mut vec![0], usize::MAX, false)?);
            }
            it.next();
        }
        let callee = it
            .next()
            .ok_or_else(|| err(line, "call without a target"))?;
        let mut func = None;
        match callee {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Sym::Func(f)) => func = Some(f),
                    Some(Sym::Reg { slot, .. }) => inst.args.push(Operand::Reg(slot)),
                    _ => return Err(err(line, format!("call target `{name}` is not a function"))),
                }
            }
            _ => return Err(err(line, "unsupported call target")),
        }
        let mut args = Vec::new();
        if let Some(ast::Operand::ArgList(l)) = it.peek() {
            for a in l.args() {
                args.push(self.operand(&a, line, &mut vec![0], usize::MAX, false)?);
            }
        }
        if func.is_none() {
            inst.op = Op::Unsupported;
            inst.unsupported = Some("indirect calls through a register".into());
        }
        inst.call = Some(CallInfo { func, rets, args });
        Ok(inst)
    }

    fn operand(
        &mut self,
        o: &ast::Operand,
        line: u32,
        path: &mut Vec<usize>,
        idx: usize,
        generic_vars: bool,
    ) -> Result<Operand, LowerError> {
        Ok(match o {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                let comps: Vec<String> = n.components().map(|t| t.text().to_string()).collect();
                if name == "_" {
                    return Ok(Operand::Sink);
                }
                if name.starts_with('%')
                    && self.lookup(&name).is_none()
                    && sreg(&name, None).is_none()
                    && let Some(r) = ptx::isa().special_register(&name)
                {
                    return Err(err(
                        line,
                        format!(
                            "unsupported: special register {} is not modeled by the interpreter",
                            r.name
                        ),
                    ));
                }
                if name.starts_with('%')
                    && let Some(s) = sreg(&name, comps.first().map(String::as_str))
                {
                    // A user register may shadow a special register name.
                    if self.lookup(&name).is_none() {
                        return Ok(Operand::Sreg(s));
                    }
                }
                match self.lookup(&name) {
                    Some(Sym::Reg { slot, width }) => {
                        if let Some(c) = comps.first() {
                            let k = match c.as_str() {
                                ".x" | ".r" => 0,
                                ".y" | ".g" => 1,
                                ".z" | ".b" => 2,
                                ".w" | ".a" => 3,
                                _ => return Err(err(line, format!("bad vector component `{c}`"))),
                            };
                            if k >= width {
                                return Err(err(line, format!("component `{c}` out of range")));
                            }
                            Operand::Reg(slot + k)
                        } else if width > 1 {
                            Operand::Vec((0..width).map(|k| Operand::Reg(slot + k)).collect())
                        } else {
                            Operand::Reg(slot)
                        }
                    }
                    Some(Sym::Var(v)) => Operand::VarAddr {
                        var: v,
                        offset: 0,
                        generic: false,
                    },
                    Some(Sym::Func(f)) => Operand::Func(f),
                    Some(Sym::Texref(n)) => {
                        return Err(err(
                            line,
                            format!(
                                "unsupported: texture reference `{n}` used outside the texture operand of `tex`"
                            ),
                        ));
                    }
                    None if name == "WARP_SZ" => Operand::Imm(Imm::Int(32)),
                    None => {
                        if idx == usize::MAX {
                            return Err(err(line, format!("undefined name `{name}`")));
                        }
                        // Perhaps a label (resolved when the body is complete).
                        self.pending.push((idx, path.clone(), name, line));
                        Operand::Sink
                    }
                }
            }
            ast::Operand::Vector(v) => {
                let mut out = Vec::new();
                for (k, e) in v.elements().enumerate() {
                    path.push(k);
                    let x = self.operand(&e, line, path, idx, generic_vars)?;
                    path.pop();
                    match x {
                        Operand::Vec(inner) => out.extend(inner),
                        x => out.push(x),
                    }
                }
                Operand::Vec(out)
            }
            ast::Operand::Address(a) => {
                let inner: Vec<ast::Operand> = a.operands().collect();
                if inner.len() != 1 {
                    return Err(err(line, "texture/surface addresses are not supported"));
                }
                let (base, offset) = self.address(&inner[0], line, generic_vars)?;
                Operand::Addr { base, offset }
            }
            ast::Operand::Prefix(p) if p.op().is_some_and(|t| t.text() == "!") => {
                let inner = p.expr().ok_or_else(|| err(line, "`!` without operand"))?;
                match self.operand(&inner, line, path, idx, generic_vars)? {
                    Operand::Reg(r) => Operand::NotPred(r),
                    _ => return Err(err(line, "`!` applies to predicate registers only")),
                }
            }
            ast::Operand::Call(c) => {
                // generic(sym)
                let is_generic = matches!(c.callee(), Some(ast::Operand::Name(ref n)) if n.name().is_some_and(|t| t.text() == "generic"));
                let arg = c.arg().ok_or_else(|| err(line, "empty call expression"))?;
                match (
                    is_generic,
                    self.operand(&arg, line, path, idx, generic_vars)?,
                ) {
                    (true, Operand::VarAddr { var, offset, .. }) => Operand::VarAddr {
                        var,
                        offset,
                        generic: true,
                    },
                    _ => return Err(err(line, "unsupported expression operand")),
                }
            }
            ast::Operand::Binary(b) if b.op().is_some_and(|t| t.text() == "|") => {
                // `d|p`: a value and a predicate destination (setp, shfl).
                let l = b.lhs().ok_or_else(|| err(line, "bad `|` operand"))?;
                let r = b.rhs().ok_or_else(|| err(line, "bad `|` operand"))?;
                let l = self.operand(&l, line, path, idx, generic_vars)?;
                let r = self.operand(&r, line, path, idx, generic_vars)?;
                Operand::Vec(vec![l, r])
            }
            ast::Operand::Binary(b) => {
                // sym + const
                let lhs = b.lhs().ok_or_else(|| err(line, "bad expression"))?;
                if let Some(v) = const_eval(o) {
                    return Ok(Operand::Imm(Imm::Int(v as u64)));
                }
                let rhs = b
                    .rhs()
                    .and_then(|r| const_eval(&r))
                    .ok_or_else(|| err(line, "bad expression"))?;
                let sign = match b.op().map(|t| t.text().to_string()).as_deref() {
                    Some("+") => 1,
                    Some("-") => -1,
                    _ => return Err(err(line, "unsupported expression operand")),
                };
                match self.operand(&lhs, line, path, idx, generic_vars)? {
                    Operand::VarAddr {
                        var,
                        offset,
                        generic,
                    } => Operand::VarAddr {
                        var,
                        offset: offset + sign * rhs,
                        generic,
                    },
                    Operand::Reg(r) => Operand::RegOff(r, sign * rhs),
                    Operand::RegOff(r, o) => Operand::RegOff(r, o + sign * rhs),
                    _ => return Err(err(line, "unsupported expression operand")),
                }
            }
            ast::Operand::ArgList(_) => return Err(err(line, "unexpected argument list")),
            other => match imm_of(other) {
                Some(imm) => Operand::Imm(imm),
                None => return Err(err(line, "unsupported operand expression")),
            },
        })
    }

    /// `[reg]`, `[reg+imm]`, `[sym+imm]`, `[imm]`.
    fn address(
        &mut self,
        e: &ast::Operand,
        line: u32,
        generic_vars: bool,
    ) -> Result<(AddrBase, i64), LowerError> {
        let _ = generic_vars;
        match e {
            ast::Operand::Name(n) => {
                let name = n.name().map(|t| t.text().to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Sym::Reg { slot, .. }) => Ok((AddrBase::Reg(slot), 0)),
                    Some(Sym::Var(v)) => Ok((AddrBase::Var(v), 0)),
                    Some(Sym::Texref(n)) => Err(err(
                        line,
                        format!("unsupported: texture reference `{n}` used as a memory address"),
                    )),
                    _ => Err(err(line, format!("undefined address `{name}`"))),
                }
            }
            ast::Operand::Binary(b) => {
                let op = b.op().map(|t| t.text().to_string()).unwrap_or_default();
                let lhs = b.lhs().ok_or_else(|| err(line, "bad address"))?;
                let rhs = b.rhs().ok_or_else(|| err(line, "bad address"))?;
                if let Some(v) = const_eval(e) {
                    return Ok((AddrBase::None, v));
                }
                let r = const_eval(&rhs)
                    .ok_or_else(|| err(line, "address offset is not a constant"))?;
                let (base, off) = self.address(&lhs, line, generic_vars)?;
                match op.as_str() {
                    "+" => Ok((base, off.wrapping_add(r))),
                    "-" => Ok((base, off.wrapping_sub(r))),
                    _ => Err(err(line, "unsupported address expression")),
                }
            }
            ast::Operand::Paren(p) => self.address(
                &p.expr().ok_or_else(|| err(line, "bad address"))?,
                line,
                generic_vars,
            ),
            other => match const_eval(other) {
                Some(v) => Ok((AddrBase::None, v)),
                None => Err(err(line, "unsupported address expression")),
            },
        }
    }
}

/// Register width in bits for a declared type (predicates: 1).
fn reg_width(ty: Ty) -> u32 {
    if ty == Ty::Pred { 1 } else { ty.bits().min(64) }
}

fn sreg(name: &str, comp: Option<&str>) -> Option<Sreg> {
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
fn parse_shape(s: &str) -> Option<(u8, u8, u8)> {
    let r = s.strip_prefix(".m")?;
    let (m, r) = r.split_once('n')?;
    let (n, k) = r.split_once('k')?;
    Some((m.parse().ok()?, n.parse().ok()?, k.parse().ok()?))
}

/// `cp.async` forms: the copy ([`Op::CpAsync`]), its group bookkeeping (no-ops: copies
/// complete at once), or a reason it is not modelled.
fn cp_async_kind(mods: &[String]) -> Result<Op, String> {
    let has = |m: &str| mods.iter().any(|x| x == m);
    if mods.first().map(String::as_str) != Some(".async") {
        return Err(
            "instruction `cp` without `.async` is not implemented by the interpreter".into(),
        );
    }
    if has(".bulk") || mods.iter().any(|m| m.starts_with(".tensor")) {
        return Err("bulk asynchronous copies (`cp.async.bulk`, TMA) are not implemented by the interpreter".into());
    }
    if has(".mbarrier") {
        return Err("`cp.async.mbarrier.arrive` is not implemented by the interpreter (mbarrier objects are not modelled)".into());
    }
    if has(".commit_group") || has(".wait_group") || has(".wait_all") {
        return Ok(Op::Nop);
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
fn parse_op(opcode: &str, mods: &[String]) -> (Op, Mods, Option<String>) {
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
        "vabsdiff4" => Op::Vabsdiff4,
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
        "redux" => Op::Redux,
        "ldmatrix" => Op::Ldmatrix,
        "mma" => Op::Mma,
        "wmma" => Op::Wmma,
        "shfl" => Op::Shfl,
        "tex" => Op::Tex,
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
        "nanosleep" | "prefetch" | "prefetchu" | "pmevent" | "griddepcontrol" | "discard"
        | "applypriority" => Op::Nop,
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
    if matches!(op, Op::Nop) {
        // Hints and launch-ordering instructions (`griddepcontrol.wait`): no effect on one
        // launch's results, whatever their modifiers.
        return (op, m, None);
    }
    let mut op = op;
    for s in mods {
        let s = s.as_str();
        if let Some(t) = Ty::parse(s) {
            m.types.push(t);
            continue;
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
            ".x1" | ".x2" | ".x4" if op == Op::Ldmatrix => m.xn = s[2..].parse().unwrap_or(1),
            ".trans" if op == Op::Ldmatrix => m.trans = true,
            ".m8n8" if op == Op::Ldmatrix => m.shape = Some((8, 8, 0)),
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
    // `vabsdiff4.dtype.atype.btype`: the SIMD form (all four bytes selected) and the `.add`
    // reduction (parsed into `atom`); saturation and `.min`/`.max` secondary operations are
    // not implemented.
    if op == Op::Vabsdiff4
        && (m.sat
            || !matches!(m.atom, None | Some(AtomOp::Add))
            || m.types.len() != 3
            || m.types.iter().any(|t| !matches!(t, Ty::U32 | Ty::S32)))
    {
        return (
            Op::Unsupported,
            m,
            Some("`vabsdiff4` with `.sat`, a `.min`/`.max` secondary operation or types other than u32/s32 is not implemented by the interpreter".into()),
        );
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
    if op == Op::Ldmatrix && (m.shape != Some((8, 8, 0)) || m.ty() != Ty::B16) {
        return (
            Op::Unsupported,
            m,
            Some("only ldmatrix .m8n8 .b16 is implemented".into()),
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
