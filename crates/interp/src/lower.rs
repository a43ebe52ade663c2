//! Lowering of a parsed PTX module ([`syntax::ast::SourceFile`]) into the interpreter's IR.
//!
//! One pass per function: declarations become register slots (with nested block scopes and
//! parameterized names `%r<N>`), variables get addresses, labels become instruction indices,
//! modifiers become flags. Anything the interpreter cannot execute becomes an `Unsupported`
//! instruction with its reason, reported only if executed.

mod decode;
mod image;
mod init;
mod video;

use std::collections::HashMap;

use syntax::ast::{self, AstNode, DeclLike, LiteralValue};

use crate::float::Rnd;
use crate::ir::*;
use crate::texture::TexShape;
pub use decode::wmma_form;
use decode::*;
use init::*;
pub use init::{const_eval, imm_bits};

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
        if inst.op == Op::Video {
            return self.video(inst, &operands, line, idx);
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
        if opcode == "createpolicy" && mods.iter().any(|m| m == ".fractional") {
            // ptxas's folded policy (`hir::fold::createpolicy_fractional`).
            let prios: Vec<&str> = mods
                .iter()
                .map(String::as_str)
                .filter(|m| m.starts_with(".L2::evict_"))
                .collect();
            let fraction = match operands.get(1) {
                None => Some(1.0),
                Some(ast::Operand::Immediate(l)) => match l.value() {
                    Some(LiteralValue::F64(v)) => Some(v),
                    Some(LiteralValue::F64Bits(b)) => Some(f64::from_bits(b)),
                    Some(LiteralValue::F32Bits(b)) => Some(f64::from(f32::from_bits(b))),
                    _ => None,
                },
                Some(_) => None,
            };
            let policy = fraction.filter(|_| !prios.is_empty()).and_then(|f| {
                hir::fold::createpolicy_fractional(prios[0], prios.get(1).copied(), f)
            });
            let Some(v) = policy else {
                inst.op = Op::Unsupported;
                inst.unsupported = Some(
                    "`createpolicy.fractional` with a fraction in a register is not implemented by the interpreter".into(),
                );
                inst.args.clear();
                return Ok(inst);
            };
            inst.args.truncate(1);
            inst.args.push(Operand::Imm(Imm::Int(v)));
        }
        if matches!(inst.op, Op::CpAsync | Op::Mbarrier)
            && mods.iter().any(|m| m == ".L2::cache_hint")
        {
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
