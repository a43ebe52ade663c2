//! Per-function checks.

use std::collections::{HashMap, HashSet};

use syntax::TextRange;
use syntax::ast::{self, AstNode, DeclLike};

use crate::module::{ModuleScope, gate_directive_words, gate_type, vector_after_type};
use crate::types::{Class, Fit, Ty, fits};
use crate::{Diagnostic, Severity};

/// A name declared in a function scope.
#[derive(Debug, Clone)]
enum Local {
    /// A register: its type and vector width.
    Reg(Option<Ty>, u32),
    /// A variable in a state space (`.local`, `.shared`, `.param`, ...) and its type.
    Var(String, Option<Ty>),
}

#[derive(Default)]
struct Scope {
    names: HashMap<String, Local>,
    /// Parameterized registers `%r<N>`: (prefix, N, entry).
    families: Vec<(String, u32, Local)>,
}

impl Scope {
    fn get(&self, name: &str) -> Option<&Local> {
        if let Some(l) = self.names.get(name) {
            return Some(l);
        }
        for (prefix, n, l) in &self.families {
            if let Some(rest) = name.strip_prefix(prefix.as_str())
                && !rest.is_empty()
                && rest.bytes().all(|b| b.is_ascii_digit())
                && (rest == "0" || !rest.starts_with('0'))
                && rest.parse::<u64>().is_ok_and(|k| k < *n as u64)
            {
                return Some(l);
            }
        }
        None
    }
}

struct Cx<'a> {
    m: &'a ModuleScope,
    scopes: Vec<Scope>,
    labels: HashMap<String, TextRange>,
    d: Vec<Diagnostic>,
    reported_32: bool,
    /// Whether the function is a kernel (`.entry`).
    is_entry: bool,
    /// `.param` variables declared in the function body (call arguments and results).
    body_params: HashSet<String>,
    /// Names used as return operands of a `call` (`call (r), f, ...`).
    call_results: HashSet<String>,
    /// `ld.param` reads through a plain variable name: (name, range of the name).
    param_reads: Vec<(String, TextRange)>,
}

/// Checks one function (declarations without a body only get their header checked).
pub fn check_function(m: &ModuleScope, f: &ast::Function) -> Vec<Diagnostic> {
    let mut cx = Cx {
        m,
        scopes: vec![Scope::default()],
        labels: HashMap::new(),
        d: Vec::new(),
        reported_32: false,
        is_entry: f.is_entry(),
        body_params: HashSet::new(),
        call_results: HashSet::new(),
        param_reads: Vec::new(),
    };
    for p in f.return_params().chain(f.params()) {
        cx.declare_param(&p);
    }
    if f.is_entry() {
        for pd in f.perf_directives() {
            if let Some(n) = pd.name().filter(|n| n.text() == ".noreturn") {
                cx.d.push(Diagnostic::error(
                    n.text_range(),
                    "Parsing error near '.noreturn': syntax error (.noreturn is allowed on .func only, not on .entry)",
                ));
            }
        }
    }
    if let Some(body) = f.body() {
        cx.collect_labels(&body);
        cx.block(&body, false);
    }
    cx.body_param_reads();
    cx.d
}

/// The range of an integer constant operand (`1`, `-1`, `0x10`).
fn int_literal(o: &ast::Operand) -> Option<TextRange> {
    let lit = match o {
        ast::Operand::Immediate(l) => l.clone(),
        ast::Operand::Prefix(p) => match p.expr()? {
            ast::Operand::Immediate(l) => l,
            _ => return None,
        },
        _ => return None,
    };
    (lit.token()?.kind() == syntax::SyntaxKind::INT_NUMBER).then(|| o.syntax().text_range())
}

/// The variable named as the base of an address operand (`[v]`, `[v+8]`) and its range.
fn address_var(o: &ast::Operand) -> Option<(String, TextRange)> {
    let ast::Operand::Address(a) = o else {
        return None;
    };
    let base = match a.operands().next()? {
        ast::Operand::Binary(b) => b.lhs()?,
        other => other,
    };
    let ast::Operand::Name(n) = base else {
        return None;
    };
    let tok = n.name()?;
    Some((tok.text().to_string(), tok.text_range()))
}

fn ty_of(tok: Option<syntax::SyntaxToken>) -> Option<Ty> {
    tok.and_then(|t| Ty::parse(t.text()))
}

impl Cx<'_> {
    fn err(&mut self, range: TextRange, msg: impl Into<String>) {
        self.d.push(Diagnostic::error(range, msg));
    }

    /// `-0f3F800000`: ptxas 13.0.88 cannot negate a single-precision hex literal (a syntax
    /// error; `-0d...` and `-1.5` are accepted).
    fn negated_single_literal(&mut self, o: &ast::Operand) {
        let elems: Vec<ast::Operand> = match o {
            ast::Operand::Vector(v) => v.elements().collect(),
            other => vec![other.clone()],
        };
        for e in elems {
            if let ast::Operand::Prefix(p) = &e
                && p.op().is_some_and(|t| t.text() == "-")
                && let Some(ast::Operand::Immediate(l)) = p.expr()
                && matches!(l.value(), Some(ast::LiteralValue::F32Bits(_)))
            {
                let text = l.syntax().text().to_string();
                self.err(
                    e.syntax().text_range(),
                    format!(
                        "Parsing error near '{text}': syntax error (a 0f literal cannot be negated)"
                    ),
                );
            }
        }
    }

    fn declare_param(&mut self, p: &ast::Param) {
        let space = p
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_else(|| ".param".into());
        let Some(name) = p.name() else { return };
        let local = if space == ".reg" {
            Local::Reg(ty_of(p.ty()), p.vector().unwrap_or(1))
        } else {
            Local::Var(space, ty_of(p.ty()))
        };
        self.insert(name.text(), name.text_range(), local);
    }

    /// In a kernel, `ld.param` from a `.param` variable declared in the body that is never a
    /// call's result. The PTX ISA gives body `.param` variables two uses, call arguments
    /// (written with `st.param`) and call results (read with `ld.param` after the call);
    /// reading any other is undefined (`ld.param::func` needs a device-function parameter
    /// address, `ld.param::entry` a kernel parameter), not ill-formed, so this is a warning.
    /// ptxas 13.0.88 crashes (SIGSEGV) on such a read in a kernel, with or without `::entry` /
    /// `::func`, whether or not the variable was passed to a call; it accepts it in a `.func`.
    fn body_param_reads(&mut self) {
        if !self.is_entry {
            return;
        }
        for (name, range) in std::mem::take(&mut self.param_reads) {
            if self.body_params.contains(&name) && !self.call_results.contains(&name) {
                self.d.push(Diagnostic::warning(
                    range,
                    format!(
                        "ld.param reads '{name}', a .param variable declared in the kernel body that is not the result of a call: the PTX ISA defines such variables only as call arguments and results, so the value read is undefined (and ptxas 13.0.88 crashes on this read)"
                    ),
                ));
            }
        }
    }

    fn insert(&mut self, name: &str, range: TextRange, local: Local) {
        let scope = self.scopes.last_mut().expect("a scope");
        if scope.get(name).is_some() {
            self.d.push(Diagnostic::error(
                range,
                format!("Duplicate definition of variable '{name}'"),
            ));
            return;
        }
        scope.names.insert(name.to_string(), local);
    }

    fn collect_labels(&mut self, b: &ast::Block) {
        for st in b.statements() {
            match st {
                ast::Statement::Label(l) => {
                    if let Some(n) = l.name()
                        && self
                            .labels
                            .insert(n.text().to_string(), n.text_range())
                            .is_some()
                    {
                        self.err(
                            n.text_range(),
                            format!("Duplicate definition of label '{}'", n.text()),
                        );
                    }
                }
                ast::Statement::Block(inner) => self.collect_labels(&inner),
                _ => {}
            }
        }
    }

    fn lookup(&self, name: &str) -> Option<Local> {
        for s in self.scopes.iter().rev() {
            if let Some(l) = s.get(name) {
                return Some(l.clone());
            }
        }
        None
    }

    /// Whether a name resolves to anything at all.
    fn resolves(&self, name: &str) -> bool {
        self.lookup(name).is_some()
            || self.m.vars.contains_key(name)
            || self.m.funcs.contains_key(name)
            || self.labels.contains_key(name)
            || is_sreg(name)
            || name == "WARP_SZ"
    }

    fn block(&mut self, b: &ast::Block, nested: bool) {
        if nested {
            self.scopes.push(Scope::default());
        }
        for st in b.statements() {
            match st {
                ast::Statement::VarDecl(v) => self.var_decl(&v),
                ast::Statement::Instruction(i) => self.instruction(&i),
                ast::Statement::Block(inner) => self.block(&inner, true),
                ast::Statement::Directive(dir) => {
                    gate_directive_words(self.m, dir.syntax(), &mut self.d);
                    self.loc_inlined_at(&dir);
                }
                _ => {}
            }
        }
        if nested {
            self.scopes.pop();
        }
    }

    /// `.loc f l c, function_name s, inlined_at f l c` needs PTX 7.0 (ptxas: "Line
    /// information of inline functions").
    fn loc_inlined_at(&mut self, dir: &ast::Directive) {
        let words: Vec<syntax::SyntaxToken> = dir
            .syntax()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .collect();
        if words.first().is_none_or(|t| t.text() != ".loc") {
            return;
        }
        if let Some(t) = words.iter().find(|t| t.text() == "inlined_at")
            && let Some(v) = self.m.version
            && v < ptx::PtxVersion::new(7, 0)
        {
            self.err(
                t.text_range(),
                "Feature 'Line information of inline functions' requires PTX ISA .version 7.0 or later",
            );
        }
    }

    fn var_decl(&mut self, v: &ast::VarDecl) {
        let space = v
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_default();
        let ty = ty_of(v.ty());
        if let Some(t) = v.ty() {
            gate_type(self.m, t.text(), t.text_range(), &mut self.d);
        }
        vector_after_type(v, &mut self.d);
        let vec = v.vector().unwrap_or(1);
        let is_extern = v.linkage().iter().any(|t| t.text() == ".extern");
        if space != ".reg" && !is_extern {
            for decl in v.declarators() {
                if decl.array_dims().any(|a| a.size().is_none()) && decl.initializer().is_none() {
                    let name = decl
                        .name()
                        .map(|n| n.text().to_string())
                        .unwrap_or_default();
                    self.err(
                        decl.syntax().text_range(),
                        format!("Non-external variable '{name}' has incomplete type"),
                    );
                }
            }
        }
        if vec == 8
            && space == ".reg"
            && let Some(t) = v.specifiers().find(|t| t.text() == ".v8")
        {
            self.err(
                t.text_range(),
                "Illegal vector size: 8 (register vectors have at most 4 elements)",
            );
        }
        for decl in v.declarators() {
            let Some(name) = decl.name() else { continue };
            if space == ".param" {
                self.body_params.insert(name.text().to_string());
            }
            let local = if space == ".reg" {
                Local::Reg(ty, vec)
            } else {
                Local::Var(space.clone(), ty)
            };
            if let Some(n) = decl.param_count() {
                let scope = self.scopes.last_mut().expect("a scope");
                if scope.names.contains_key(name.text())
                    || scope.families.iter().any(|(p, _, _)| p == name.text())
                {
                    self.err(
                        name.text_range(),
                        format!("Duplicate definition of variable '{}<{n}>'", name.text()),
                    );
                } else {
                    scope.families.push((name.text().to_string(), n, local));
                }
            } else {
                self.insert(name.text(), name.text_range(), local);
            }
        }
    }

    /// Resolves every name in an operand; returns the register type of a plain register.
    fn resolve(&mut self, o: &ast::Operand) {
        match o {
            ast::Operand::Name(n) => {
                let Some(tok) = n.name() else { return };
                let name = tok.text();
                if name == "_" || self.resolves(name) {
                    return;
                }
                self.err(tok.text_range(), format!("Unknown symbol '{name}'"));
            }
            ast::Operand::Call(c) => {
                // `generic(sym)`: only the argument is a name to resolve.
                if let Some(a) = c.arg() {
                    self.resolve(&a);
                }
            }
            other => {
                for child in other.syntax().children() {
                    if let Some(op) = ast::Operand::cast(child) {
                        self.resolve(&op);
                    }
                }
            }
        }
    }

    /// The declared type of a plain register operand.
    fn reg_ty(&self, o: &ast::Operand) -> Option<(Ty, TextRange)> {
        self.reg_ty_in(o, false)
    }

    /// Like [`Self::reg_ty`]; with `whole_vectors`, a vector register used whole (the data
    /// operand of ld/st) gives its element type.
    fn reg_ty_in(&self, o: &ast::Operand, whole_vectors: bool) -> Option<(Ty, TextRange)> {
        let ast::Operand::Name(n) = o else {
            return None;
        };
        if n.components().next().is_some() {
            return None;
        }
        let tok = n.name()?;
        match self.lookup(tok.text())? {
            Local::Reg(Some(t), 1) => Some((t, tok.text_range())),
            Local::Reg(Some(t), _) if whole_vectors => Some((t, tok.text_range())),
            _ => None,
        }
    }

    fn instruction(&mut self, i: &ast::Instruction) {
        let Some(op_tok) = i.opcode() else { return };
        let opcode = op_tok.text().to_string();
        let range = i.syntax().text_range();
        let mods: Vec<String> = i.modifiers().map(|t| t.text().to_string()).collect();
        let mod_refs: Vec<&str> = mods.iter().map(String::as_str).collect();
        let operands: Vec<ast::Operand> = i.operands().collect();
        let isa = ptx::isa();

        if !isa.is_opcode(&opcode) {
            self.err(
                op_tok.text_range(),
                format!("Not a name of any known instruction: '{opcode}'"),
            );
            return;
        }
        // Guard.
        if let Some(g) = i.guard()
            && let Some(p) = g.predicate().and_then(|p| p.name())
        {
            match self.lookup(p.text()) {
                Some(Local::Reg(Some(t), _)) if t.class != Class::Pred => {
                    self.err(
                        p.text_range(),
                        format!("Guard '{}' is not a .pred register", p.text()),
                    );
                }
                None if !self.resolves(p.text()) => {
                    self.err(p.text_range(), format!("Unknown symbol '{}'", p.text()));
                }
                _ => {}
            }
        }
        let start = self.d.len();
        // Names.
        if opcode == "call" {
            self.call(i, &operands);
        } else {
            for o in &operands {
                self.resolve(o);
            }
        }
        for o in &operands {
            self.negated_single_literal(o);
        }
        self.address_size(&opcode, &mod_refs, &operands);
        if opcode == "ld"
            && mod_refs.iter().any(|m| m.starts_with(".param"))
            && let Some(name) = operands.get(1).and_then(address_var)
        {
            self.param_reads.push(name);
        }
        if opcode == "st"
            && self.is_entry
            && mod_refs.iter().any(|m| m.starts_with(".param"))
            && let Some((name, r)) = operands.first().and_then(address_var)
            && matches!(self.lookup(&name), Some(Local::Reg(..)))
        {
            // A kernel's parameters are read-only, and `mov` cannot take the address of a
            // body `.param` variable, so no register holds an address `st.param` may write.
            self.d.push(Diagnostic::warning(
                r,
                format!(
                    "st.param through register '{name}' in a kernel: a register cannot hold the address of a writable .param variable here (kernel parameters are read-only, and mov cannot take the address of a call argument), so the store is undefined (ptxas 13.0.88 crashes on some such stores)"
                ),
            ));
        }
        self.spaces(&opcode, &mod_refs, &operands);
        self.gating(&opcode, &mod_refs, op_tok.text_range(), range);
        self.special_register_targets(&operands);
        let before = self.d.len();
        self.vectors(&opcode, &mod_refs, &operands, range);
        if self.d.len() == before {
            // One shape complaint per instruction is enough.
            self.shape(&opcode, &mod_refs, &operands, op_tok.text_range(), range);
        }
        self.typing(&opcode, &mod_refs, &operands, range);
        for (at, message) in crate::video::check(&opcode, &mod_refs, &operands) {
            self.err(at, message);
        }
        // The modifier rules of the ISA's prose, where the form table found nothing.
        if !self.d[start..]
            .iter()
            .any(|d| d.severity == Severity::Error)
            && let Some(b) = crate::rules::check(
                &opcode,
                &mod_refs,
                operands.len(),
                operands.iter().skip(1).any(|o| int_literal(o).is_some()),
                self.m.target,
            )
        {
            let at = b
                .modifier
                .and_then(|m| i.modifiers().find(|t| t.text() == m))
                .map_or(op_tok.text_range(), |t| t.text_range());
            self.err(at, b.message);
            return;
        }
        if !self.d[start..]
            .iter()
            .any(|d| d.severity == Severity::Error)
        {
            self.field_immediates(&opcode, &mod_refs, &operands);
        }
        if matches!(opcode.as_str(), "setp" | "set") {
            self.comparison(&opcode, &mod_refs, &operands, op_tok.text_range(), range);
        }
        if self.d.len() == start {
            self.wide_256(&opcode, &mod_refs, range);
        }
    }

    /// `bfe`'s and `bfi`'s position and length (PTX ISA 9.0 §9.7.1.19-20: "b" and "c" take
    /// values 0..255): ptxas 13.0.88 refuses an immediate outside that range ("Argument 3 of
    /// instruction 'bfe': value '-3' out of range, expected to be in range [0..255]"; it
    /// counts operands from 0 and prints the value in decimal).
    fn field_immediates(&mut self, opcode: &str, mods: &[&str], ops: &[ast::Operand]) {
        // PTX ISA 9.0 §9.7.9.25.3: cp.async copies 4, 8 or 16 bytes, `.cg` only 16 (ptxas
        // 13.0.88: "Argument 2 of instruction 'cp.async': unexpected value '8', expected to
        // be 16").
        let cache = mods.iter().find(|m| matches!(**m, ".ca" | ".cg"));
        if opcode == "cp"
            && mods.contains(&".async")
            && let Some(cache) = cache
            && let Some(o) = ops.get(2)
            && let Some(v) = o.as_int()
        {
            let cg = *cache == ".cg";
            let ok = if cg { v == 16 } else { matches!(v, 4 | 8 | 16) };
            if !ok {
                self.err(
                    o.syntax().text_range(),
                    format!(
                        "Argument 2 of instruction 'cp.async': unexpected value '{}', expected to be {}",
                        v as i64,
                        if cg { "16" } else { "4 or 8 or 16" }
                    ),
                );
            }
            return;
        }
        let first = match opcode {
            "bfe" => 2,
            "bfi" => 3,
            _ => return,
        };
        for (i, o) in ops.iter().enumerate().skip(first) {
            if let Some(v) = o.as_int()
                && !(0..=255).contains(&(v as i64))
            {
                self.err(
                    o.syntax().text_range(),
                    format!(
                        "Argument {i} of instruction '{opcode}': value '{}' out of range, expected to be in range [0..255]",
                        v as i64
                    ),
                );
                return;
            }
        }
    }

    /// Without `.address_size`, ptxas infers 32-bit addressing from a 32-bit register used as
    /// a generic or global address (or `cvta` to a `.u32`), and then refuses the module; with
    /// `.address_size 64` it refuses the same uses ("Program uses 32-bit address ... conflicting
    /// with .address_size 64", then the fatal 32-bit error; probed with ptxas 13.0.88).
    fn address_size(&mut self, opcode: &str, mods: &[&str], ops: &[ast::Operand]) {
        if self.reported_32 || (self.m.address_size_explicit && self.m.address_size != 64) {
            return;
        }
        let local_space = mods.iter().any(|m| {
            matches!(
                *m,
                ".shared"
                    | ".shared::cta"
                    | ".shared::cluster"
                    | ".local"
                    | ".param"
                    | ".const"
                    | ".param::entry"
                    | ".param::func"
            )
        });
        let mut culprit = None;
        if matches!(opcode, "ld" | "ldu" | "st" | "atom" | "red" | "prefetch") && !local_space {
            for o in ops {
                let ast::Operand::Address(a) = o else {
                    continue;
                };
                let Some(base) = a.operands().next() else {
                    continue;
                };
                let base = match base {
                    ast::Operand::Binary(b) => b.lhs(),
                    other => Some(other),
                };
                if let Some(b) = base
                    && let Some((t, r)) = self.reg_ty(&b)
                    && t.bits == 32
                {
                    culprit = Some((r, b.syntax().text().to_string()));
                }
            }
        }
        if opcode == "cvta"
            && mods.contains(&".u32")
            && !local_space
            && let Some(o) = ops.first()
        {
            culprit = Some((o.syntax().text_range(), o.syntax().text().to_string()));
        }
        if let Some((r, what)) = culprit {
            self.reported_32 = true;
            let why = if self.m.address_size_explicit {
                format!(
                    "`{what}` is a 32-bit generic/global address, which conflicts with .address_size 64"
                )
            } else {
                format!(
                    "the module has no .address_size, and `{what}` is a 32-bit generic/global address, so ptxas infers .address_size 32"
                )
            };
            self.err(
                r,
                format!("32-Bit compilation is no longer supported ({why})"),
            );
        }
    }

    /// The state space of a variable named as an address base.
    fn var_space(&self, name: &str) -> Option<String> {
        match self.lookup(name) {
            Some(Local::Var(sp, _)) => Some(sp),
            Some(Local::Reg(..)) => None,
            None => self.m.vars.get(name).map(|v| v.space.clone()),
        }
    }

    /// `ld.global [param_var]`: the instruction's state space must be the variable's;
    /// `st.const` does not exist.
    fn spaces(&mut self, opcode: &str, mods: &[&str], ops: &[ast::Operand]) {
        if !matches!(opcode, "ld" | "ldu" | "st" | "atom" | "red" | "prefetch") {
            return;
        }
        let norm = |s: &str| -> Option<&'static str> {
            Some(match s {
                ".global" => ".global",
                ".shared" | ".shared::cta" | ".shared::cluster" => ".shared",
                ".local" => ".local",
                ".param" | ".param::entry" | ".param::func" => ".param",
                ".const" => ".const",
                _ => return None,
            })
        };
        let Some(space) = mods.iter().find_map(|m| norm(m)) else {
            return;
        };
        // Memory-ordering modifiers apply to global and shared memory only (PTX ISA: "may be
        // used only with .global and .shared spaces and with generic addressing"; probed).
        if matches!(opcode, "ld" | "st")
            && matches!(space, ".param" | ".const" | ".local")
            && let Some(order) = mods
                .iter()
                .find(|m| matches!(**m, ".volatile" | ".relaxed" | ".acquire" | ".release"))
        {
            if let Some(o) = ops.first() {
                self.err(
                    o.syntax().text_range(),
                    format!("Modifier '{order}' cannot be applied to '{space}' space"),
                );
            }
            return;
        }
        if opcode == "st" && space == ".const" {
            if let Some(o) = ops.first() {
                self.err(
                    o.syntax().text_range(),
                    "State space incorrect for instruction 'st': the constant space is read-only",
                );
            }
            return;
        }
        for o in ops {
            let ast::Operand::Address(a) = o else {
                continue;
            };
            let Some(base) = a.operands().next() else {
                continue;
            };
            let base = match base {
                ast::Operand::Binary(b) => b.lhs(),
                other => Some(other),
            };
            let Some(ast::Operand::Name(n)) = base else {
                continue;
            };
            let Some(tok) = n.name() else { continue };
            let Some(var_space) = self.var_space(tok.text()) else {
                continue;
            };
            let Some(vs) = norm(&var_space) else { continue };
            if vs != space {
                self.err(
                    tok.text_range(),
                    format!(
                        "State space mismatch between instruction and address in instruction '{opcode}': '{}' is a {vs} variable, the instruction accesses {space}",
                        tok.text()
                    ),
                );
            }
        }
    }

    fn call(&mut self, i: &ast::Instruction, ops: &[ast::Operand]) {
        let range = i.syntax().text_range();
        let mut it = ops.iter().peekable();
        let mut rets = None;
        let mut ret_ops: Vec<ast::Operand> = Vec::new();
        if let Some(ast::Operand::ArgList(l)) = it.peek() {
            let v: Vec<ast::Operand> = l.args().collect();
            for a in &v {
                self.resolve(a);
            }
            rets = Some(v.len());
            for r in &v {
                if let ast::Operand::Name(n) = r
                    && let Some(t) = n.name()
                {
                    self.call_results.insert(t.text().to_string());
                }
            }
            ret_ops = v;
            it.next();
        }
        let Some(target) = it.next() else { return };
        let ast::Operand::Name(n) = target else {
            return;
        };
        let Some(tok) = n.name() else { return };
        let name = tok.text().to_string();
        let mut args = None;
        let mut arg_ops: Vec<ast::Operand> = Vec::new();
        if let Some(ast::Operand::ArgList(l)) = it.peek() {
            let v: Vec<ast::Operand> = l.args().collect();
            for a in &v {
                self.resolve(a);
            }
            args = Some(v.len());
            arg_ops = v;
            it.next();
        }
        for rest in it {
            self.resolve(rest);
        }
        if let Some(sig) = self.m.funcs.get(&name) {
            if sig.is_entry {
                self.err(
                    tok.text_range(),
                    format!("Call to '.entry' function '{name}' is not allowed"),
                );
                return;
            }
            // Each argument's type against its formal parameter (same size, compatible class).
            let pairs = ret_ops
                .iter()
                .zip(sig.rets.iter().zip(&sig.ret_names))
                .chain(arg_ops.iter().zip(sig.params.iter().zip(&sig.param_names)));
            let mut mismatches = Vec::new();
            for (op, ((_, formal), fname)) in pairs {
                let Some(formal) = formal else { continue };
                let actual = match op {
                    ast::Operand::Name(n) if n.components().next().is_none() => {
                        match n.name().and_then(|t| self.lookup(t.text())) {
                            Some(Local::Reg(Some(t), 1)) | Some(Local::Var(_, Some(t))) => Some(t),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                if let Some(actual) = actual
                    && !fits(*formal, actual, Fit::Exact)
                {
                    mismatches.push((op.syntax().text_range(), fname.clone(), actual, *formal));
                }
            }
            for (r, fname, actual, formal) in mismatches {
                self.err(
                    r,
                    format!(
                        "Type of argument does not match formal parameter '{fname}': the argument is {}, '{fname}' is {}",
                        describe(actual),
                        describe(formal)
                    ),
                );
            }
            if rets.unwrap_or(0) != sig.rets.len() || args.unwrap_or(0) != sig.params.len() {
                self.err(
                    range,
                    format!(
                        "Call has wrong number of parameters: '{name}' takes {} return value(s) and {} argument(s), the call passes {} and {}",
                        sig.rets.len(),
                        sig.params.len(),
                        rets.unwrap_or(0),
                        args.unwrap_or(0)
                    ),
                );
            }
        } else if self.lookup(&name).is_some() {
            // Indirect call through a register: needs a prototype operand (checked by ptxas
            // against `.callprototype`; we only resolve the names here).
        } else if !self.resolves(&name) {
            self.err(tok.text_range(), format!("Unknown symbol '{name}'"));
        }
    }

    /// A special register newer than the target (`sregs.txt`'s SM column): ptxas 13.0.88
    /// says `Feature '%reserved_smem_offset_0' requires .target sm_80 or higher`,
    /// `Feature '%clusterid' requires .target sm_90 or higher` (the name without component).
    fn special_register_targets(&mut self, ops: &[ast::Operand]) {
        let Some(target) = self.m.target else {
            return;
        };
        for o in ops {
            let ast::Operand::Name(n) = o else { continue };
            let Some(tok) = n.name() else { continue };
            if self.lookup(tok.text()).is_some() {
                continue;
            }
            if let Some(sr) = ptx::isa().special_register(tok.text())
                && !target.satisfies(sr.min_sm)
            {
                self.err(
                    tok.text_range(),
                    format!(
                        "Feature '{}' requires .target {} or higher",
                        tok.text(),
                        sr.min_sm
                    ),
                );
            }
        }
    }

    fn gating(&mut self, opcode: &str, mods: &[&str], op_range: TextRange, range: TextRange) {
        let (Some(target), version) = (self.m.target, self.m.version) else {
            return;
        };
        // vote/shfl without .sync.
        if matches!(opcode, "vote" | "shfl") && !mods.contains(&".sync") {
            let v64 = version.is_some_and(|v| v >= ptx::PtxVersion::new(6, 4));
            if target.satisfies(ptx::Sm::new(70)) && v64 {
                self.err(
                    range,
                    format!("Instruction '{opcode}' without '.sync' is not supported on .target sm_70 and higher from PTX ISA version 6.4"),
                );
                return;
            }
            // ptxas 13 compiles for sm_75 and later only, so it always warns.
            self.d.push(Diagnostic::warning(
                range,
                format!("Instruction '{opcode}' without '.sync' may produce unpredictable results on sm_70 and later architectures"),
            ));
            if version.is_some_and(|v| v >= ptx::PtxVersion::new(6, 0)) {
                self.d.push(Diagnostic::warning(
                    range,
                    format!("Instruction '{opcode}' without '.sync' is deprecated since PTX ISA version 6.0 and will be discontinued in a future PTX ISA version"),
                ));
            }
        }
        if matches!(opcode, "atom" | "red")
            && mods
                .iter()
                .any(|m| matches!(*m, ".cta" | ".gpu" | ".sys" | ".cluster"))
            && !target.satisfies(ptx::Sm::new(60))
        {
            self.err(
                op_range,
                "Feature 'scopes on atomic operations' requires .target sm_60 or higher",
            );
        }
        if !target.satisfies(ptx::Sm::new(80))
            && mods.iter().any(|m| matches!(*m, ".bf16" | ".bf16x2"))
        {
            self.err(op_range, "Feature '.bf16' requires .target sm_80 or higher");
            return;
        }
        let forms = lookup_forms(opcode, mods);
        if forms.is_empty() {
            return;
        }
        if !forms.iter().any(|f| target.satisfies(f.min_sm)) {
            let need = forms
                .iter()
                .map(|f| f.min_sm)
                .min_by_key(|s| s.number)
                .expect("non-empty");
            self.err(
                op_range,
                format!("Feature '{opcode}' requires .target {need} or higher"),
            );
        }
        if let Some(v) = version
            && !forms.iter().any(|f| v >= f.min_ptx)
        {
            let need = forms.iter().map(|f| f.min_ptx).min().expect("non-empty");
            self.err(
                op_range,
                format!("Feature '{opcode}' requires PTX ISA .version {need} or later"),
            );
        }
    }

    /// Modifier combination, operand count and result-register checks against the ISA table.
    fn shape(
        &mut self,
        opcode: &str,
        mods: &[&str],
        ops: &[ast::Operand],
        op_range: TextRange,
        range: TextRange,
    ) {
        if matches!(opcode, "bar" | "barrier")
            && !mods
                .iter()
                .any(|m| matches!(*m, ".sync" | ".arrive" | ".red" | ".warp" | ".cluster"))
        {
            self.err(
                op_range,
                format!(
                    "Barrier modifier required for instruction '{opcode}' (.sync, .arrive or .red)"
                ),
            );
            return;
        }
        if opcode == "call" {
            return;
        }
        let isa = ptx::isa();
        let forms = lookup_forms(opcode, mods);
        if forms.is_empty() {
            let written: String = mods.concat();
            self.err(
                op_range,
                format!("Unexpected instruction types or modifiers specified for '{opcode}': no form of '{opcode}{written}' exists in PTX ISA 9.0"),
            );
            return;
        }
        let n = ops.len();
        let fits_count = forms.iter().any(|f| {
            let (lo, hi) = f.operand_count();
            n >= lo && hi.is_none_or(|h| n <= h)
        });
        if !fits_count {
            let (lo, hi) = forms[0].operand_count();
            let want = match hi {
                Some(h) if h == lo => format!("{lo}"),
                Some(h) => format!("{lo} to {h}"),
                None => format!("at least {lo}"),
            };
            self.err(range, format!("Arguments mismatch for instruction '{opcode}': it takes {want} operand(s), {n} given"));
            return;
        }
        // A destination that must be a register.
        if let Some(first) = ops.first() {
            let is_literal = matches!(first, ast::Operand::Immediate(_))
                || matches!(first, ast::Operand::Prefix(p) if p.expr().is_some_and(|e| matches!(e, ast::Operand::Immediate(_))));
            let dest_is_reg = forms.iter().all(|f| {
                f.operands.first().is_some_and(|o| {
                    o.kinds.contains(ptx::OperandKind::Register)
                        && !o.kinds.contains(ptx::OperandKind::Immediate)
                })
            });
            if is_literal && dest_is_reg {
                self.err(
                    first.syntax().text_range(),
                    format!("Result register required for instruction '{opcode}'"),
                );
            }
        }
        // Special registers carry their own type: mov.f32 %f, %tid.x is refused.
        if opcode == "mov"
            && let Some(t) = mods.iter().find_map(|m| Ty::parse(m))
        {
            for o in ops.iter().skip(1) {
                if let ast::Operand::Name(nr) = o
                    && let Some(tok) = nr.name()
                    && self.lookup(tok.text()).is_none()
                    && let Some(sr) = isa.special_register(tok.text())
                    && let Some(st) = Ty::parse(sr.ty)
                    && !fits(t, st, Fit::Exact)
                    && !(t.is_int() && st.is_int())
                {
                    self.err(
                                                tok.text_range(),
                                                format!("Special register argument not allowed for instruction 'mov': {} is {}, the instruction type is {}", tok.text(), sr.ty, describe(t)),
                                            );
                }
            }
        }
    }

    /// Width of a vector operand: `{a, b}` or a vector register; 1 for scalars.
    fn width(&self, o: &ast::Operand) -> u32 {
        match o {
            ast::Operand::Vector(v) => v.elements().count() as u32,
            ast::Operand::Name(n) if n.components().next().is_none() => {
                match n.name().and_then(|t| self.lookup(t.text())) {
                    Some(Local::Reg(_, w)) => w,
                    _ => 1,
                }
            }
            _ => 1,
        }
    }

    /// A 256-bit `ld`/`st` (`.v8` of 32-bit or `.v4` of 64-bit elements) needs PTX 8.8, sm_100
    /// and global memory (generic addresses are accepted). Probed with ptxas 13.0.88; its
    /// messages, checked in this order.
    /// `setp`/`set`: the comparison must suit the compared type (bit types: `eq`/`ne`; signed:
    /// also `lt le gt ge`; unsigned: also `lo ls hi hs`; floats: also the unordered forms and
    /// `num`/`nan`), a boolean combination (`.and`/`.or`/`.xor`) needs its predicate operand,
    /// and `set` from a half-precision type to an integer needs PTX 6.5. Probed with ptxas.
    fn comparison(
        &mut self,
        opcode: &str,
        mods: &[&str],
        ops: &[ast::Operand],
        op_range: TextRange,
        range: TextRange,
    ) {
        let types: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        // setp.CMP.T; set.CMP.D.T: the compared type is the last.
        let Some(&t) = types.last() else { return };
        if let Some(cmp) = mods.iter().find_map(|m| m.strip_prefix('.')).filter(|m| {
            matches!(
                *m,
                "eq" | "ne"
                    | "lt"
                    | "le"
                    | "gt"
                    | "ge"
                    | "lo"
                    | "ls"
                    | "hi"
                    | "hs"
                    | "equ"
                    | "neu"
                    | "ltu"
                    | "leu"
                    | "gtu"
                    | "geu"
                    | "num"
                    | "nan"
            )
        }) {
            let ok = match t.class {
                Class::Bit => matches!(cmp, "eq" | "ne"),
                Class::Signed => matches!(cmp, "eq" | "ne" | "lt" | "le" | "gt" | "ge"),
                Class::Unsigned => !matches!(
                    cmp,
                    "equ" | "neu" | "ltu" | "leu" | "gtu" | "geu" | "num" | "nan"
                ),
                Class::Float | Class::BFloat => !matches!(cmp, "lo" | "ls" | "hi" | "hs"),
                Class::Pred | Class::Other => true,
            };
            if !ok {
                self.err(
                    op_range,
                    format!(
                        "Mismatch between instruction type and comparison qualifier: .{cmp} does not compare {} values",
                        describe(t)
                    ),
                );
                return;
            }
        }
        let boolop = mods.iter().any(|m| matches!(*m, ".and" | ".or" | ".xor"));
        if boolop && ops.len() == 3 {
            self.err(
                range,
                format!(
                    "Arguments mismatch for instruction '{opcode}': .{} combines the comparison with a predicate operand, which is missing",
                    mods.iter()
                        .find(|m| matches!(**m, ".and" | ".or" | ".xor"))
                        .map_or("and", |m| &m[1..])
                ),
            );
            return;
        }
        if opcode == "set"
            && types.len() == 2
            && matches!(types[0].class, Class::Signed | Class::Unsigned)
            && types[1].class == Class::Float
            && (types[1].bits == 16 || types[1].packed)
            && let Some(v) = self.m.version
            && v < ptx::PtxVersion::new(6, 5)
        {
            self.err(
                op_range,
                "Feature 'half precision floating point set instruction with integer result' requires PTX ISA .version 6.5 or later",
            );
        }
    }

    /// ptxas checks operands first: call this only for an instruction without other errors.
    fn wide_256(&mut self, opcode: &str, mods: &[&str], range: TextRange) {
        const FEATURE: &str = "'256 bit wide load/store'";
        let vec = mods.iter().find_map(|m| match *m {
            ".v4" => Some(4),
            ".v8" => Some(8),
            _ => None,
        });
        let wide = vec.is_some_and(|n| {
            matches!(opcode, "ld" | "st")
                && mods
                    .iter()
                    .find_map(|m| Ty::parse(m))
                    .is_some_and(|t| t.bits * n == 256)
        });
        if !wide {
            return;
        }
        if let Some(v) = self.m.version
            && v < ptx::PtxVersion::new(8, 8)
        {
            self.err(
                range,
                format!("Feature {FEATURE} requires PTX ISA .version 8.8 or later"),
            );
        } else if let Some(t) = self.m.target
            && !t.satisfies(ptx::Sm::new(100))
        {
            self.err(
                range,
                format!("Feature {FEATURE} requires .target sm_100 or higher"),
            );
        } else if mods.iter().any(|m| {
            m.starts_with(".shared") || m.starts_with(".param") || matches!(*m, ".local" | ".const")
        }) {
            self.err(
                range,
                format!("global state space expected for feature {FEATURE}"),
            );
        }
    }

    fn vectors(&mut self, opcode: &str, mods: &[&str], ops: &[ast::Operand], range: TextRange) {
        let vec = mods.iter().find_map(|m| match *m {
            ".v2" => Some(2),
            ".v4" => Some(4),
            ".v8" => Some(8),
            _ => None,
        });
        if vec == Some(8) && !matches!(opcode, "ld" | "st" | "atom" | "red" | "multimem") {
            self.err(
                range,
                format!(
                    "Illegal vector size: 8 (`.v8` is allowed on ld/st only, not on '{opcode}')"
                ),
            );
            return;
        }
        let data = match opcode {
            "ld" | "ldu" => ops.first(),
            "st" => ops.get(1),
            "tex" | "tld4" | "suld" if vec.is_some() => ops.first(),
            "sust" if vec.is_some() => ops.get(1),
            _ => None,
        };
        if let Some(d) = data {
            let w = self.width(d);
            let want = vec.unwrap_or(1);
            if w != want {
                self.err(
                    d.syntax().text_range(),
                    format!("Argument vector size mismatch for instruction '{opcode}': the instruction moves {want} element(s), the operand has {w}"),
                );
            }
        }
        if opcode == "mov" {
            let is_bit = mods.iter().any(|m| m.starts_with(".b"));
            for o in ops {
                if let ast::Operand::Vector(_) = o
                    && vec.is_none()
                    && !is_bit
                {
                    self.err(
                            o.syntax().text_range(),
                            format!("Argument vector size mismatch for instruction 'mov': packing a vector needs a .b16/.b32/.b64/.b128 type, not {}", mods.last().copied().unwrap_or("")),
                        );
                }
                if let ast::Operand::Name(n) = o
                    && let Some(tok) = n.name()
                    && n.components().next().is_none()
                    && self.lookup(tok.text()).is_none()
                    && ptx::isa()
                        .special_register(tok.text())
                        .is_some_and(|r| r.shape == ptx::SregShape::Xyz)
                    && vec.is_none()
                {
                    self.err(
                                tok.text_range(),
                                format!("Argument vector size mismatch for instruction 'mov': {} is a vector; name a component such as {}.x", tok.text(), tok.text()),
                            );
                }
            }
        }
    }

    fn typing(&mut self, opcode: &str, mods: &[&str], ops: &[ast::Operand], _range: TextRange) {
        let types: Vec<Ty> = mods.iter().filter_map(|m| Ty::parse(m)).collect();
        let has = |m: &str| mods.contains(&m);
        // Each rule: (operand index, expected type, fit).
        let mut rules: Vec<(usize, Ty, Fit)> = Vec::new();
        let pred = Ty {
            class: Class::Pred,
            bits: 1,
            packed: false,
        };
        let u32t = Ty {
            class: Class::Unsigned,
            bits: 32,
            packed: false,
        };
        let one_type = types.len() == 1;
        let t = types.first().copied();
        match opcode {
            "add" | "sub" | "min" | "max" | "and" | "or" | "xor" | "div" | "rem" | "copysign"
            | "addc" | "subc"
                if one_type && ops.len() == 3 =>
            {
                let t = t.expect("one type");
                rules.extend((0..3).map(|k| (k, t, Fit::Exact)));
            }
            "mul" | "mad" if one_type => {
                let t = t.expect("one type");
                let n = if opcode == "mul" { 3 } else { 4 };
                if ops.len() == n {
                    if has(".wide") {
                        rules.push((0, t.doubled(), Fit::Exact));
                        rules.push((1, t, Fit::Exact));
                        rules.push((2, t, Fit::Exact));
                        if n == 4 {
                            rules.push((3, t.doubled(), Fit::Exact));
                        }
                    } else {
                        rules.extend((0..n).map(|k| (k, t, Fit::Exact)));
                    }
                }
            }
            "fma" if one_type && ops.len() == 4 => {
                let t = t.expect("one type");
                rules.extend((0..4).map(|k| (k, t, Fit::Exact)));
            }
            "abs" | "neg" | "not" | "cnot" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2"
            | "ex2" | "tanh" | "brev"
                if one_type && ops.len() == 2 =>
            {
                let t = t.expect("one type");
                rules.extend((0..2).map(|k| (k, t, Fit::Exact)));
            }
            "setp" if one_type && (ops.len() == 3 || ops.len() == 4) => {
                let t = t.expect("one type");
                if !matches!(ops[0], ast::Operand::Binary(_)) && !t.packed {
                    rules.push((0, pred, Fit::Exact));
                }
                rules.push((1, t, Fit::Exact));
                rules.push((2, t, Fit::Exact));
                if ops.len() == 4 {
                    rules.push((3, pred, Fit::Exact));
                }
            }
            "selp" if one_type && ops.len() == 4 => {
                let t = t.expect("one type");
                rules.extend((0..3).map(|k| (k, t, Fit::Exact)));
                rules.push((3, pred, Fit::Exact));
            }
            // Bit-field insert/extract: the position and length are .u32 (probed: .s32 and
            // .b32 registers fit, .f32, .u16 and .b64 do not).
            "bfi" if one_type && ops.len() == 5 => {
                let t = t.expect("one type");
                rules.extend((0..3).map(|k| (k, t, Fit::Exact)));
                rules.push((3, u32t, Fit::Exact));
                rules.push((4, u32t, Fit::Exact));
            }
            "bfe" if one_type && ops.len() == 4 => {
                let t = t.expect("one type");
                rules.extend((0..2).map(|k| (k, t, Fit::Exact)));
                rules.push((2, u32t, Fit::Exact));
                rules.push((3, u32t, Fit::Exact));
            }
            // `vote{.sync}.mode.{pred,b32} d, {!}a{, membermask}`: the source is a predicate
            // and the member mask a 32-bit integer (probed).
            "vote" if one_type && (ops.len() == 2 || ops.len() == 3) => {
                let t = t.expect("one type");
                rules.push((0, t, Fit::Exact));
                rules.push((1, pred, Fit::Exact));
                if ops.len() == 3 {
                    rules.push((2, u32t, Fit::Exact));
                }
            }
            "shl" | "shr" if one_type && ops.len() == 3 => {
                let t = t.expect("one type");
                rules.push((0, t, Fit::Exact));
                rules.push((1, t, Fit::Exact));
                rules.push((2, u32t, Fit::Exact));
            }
            "mov" if one_type && ops.len() == 2 && !mods.iter().any(|m| m.starts_with(".v")) => {
                let t = t.expect("one type");
                rules.push((0, t, Fit::Exact));
                rules.push((1, t, Fit::Exact));
            }
            "ld" | "ldu" if one_type && !ops.is_empty() => {
                let t = t.expect("one type");
                rules.push((0, t, Fit::Wider));
            }
            "st" if one_type && ops.len() >= 2 => {
                let t = t.expect("one type");
                rules.push((1, t, Fit::Wider));
            }
            // `atom{.L2::cache_hint} d, [a], b{, c}{, policy}`: `c` only for `.cas`; the cache
            // policy is a 64-bit operand of its own (not of the instruction's type).
            "atom"
                if one_type
                    && (ops.len() == 3 || ops.len() == 4 || ops.len() == 5)
                    && !mods.iter().any(|m| m.starts_with(".v")) =>
            {
                let t = t.expect("one type");
                let hint = mods.contains(&".L2::cache_hint");
                let values = ops.len() - usize::from(hint);
                rules.push((0, t, Fit::Exact));
                rules.push((2, t, Fit::Exact));
                if values == 4 {
                    rules.push((3, t, Fit::Exact));
                }
            }
            "red" if one_type && ops.len() == 2 && !mods.iter().any(|m| m.starts_with(".v")) => {
                let t = t.expect("one type");
                rules.push((1, t, Fit::Exact));
            }
            // Packed `cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b`: d a bit register of at least
            // 32 bits or the packed type, a and b .f32 or bit registers of at least 32 bits
            // (probed: .u32/.s32/.f64/.b16 are refused in either place, .b64 accepted).
            "cvt" if types.len() == 2 && ops.len() == 3 && types[0].packed => {
                let (dt, st) = (types[0], types[1]);
                if matches!(dt.class, Class::Float | Class::BFloat) {
                    rules.push((0, dt, Fit::Wider));
                    rules.push((1, st, Fit::Wider));
                    rules.push((2, st, Fit::Wider));
                }
            }
            "cvt" if types.len() == 2 && ops.len() == 2 => {
                let (dt, st) = (types[0], types[1]);
                if !dt.packed && !st.packed {
                    rules.push((0, dt, Fit::CvtDest));
                    rules.push((1, st, Fit::Wider));
                }
            }
            _ => {}
        }
        for (k, want, fit) in rules {
            let Some(o) = ops.get(k) else { continue };
            let elems: Vec<ast::Operand> = match o {
                ast::Operand::Vector(v) if matches!(opcode, "ld" | "ldu" | "st") => {
                    v.elements().collect()
                }
                other => vec![other.clone()],
            };
            let whole = matches!(opcode, "ld" | "ldu" | "st");
            for e in &elems {
                // A float operand takes float literals (`0f3F800000`, `1.5`), never integer
                // ones: ptxas refuses `add.f32 %f1, %f1, 1` and `st.f32 [a], -1` (probed).
                if want.is_float()
                    && !want.packed
                    && let Some(r) = int_literal(e)
                {
                    self.err(
                        r,
                        format!(
                            "Arguments mismatch for instruction '{opcode}': operand {} is an integer constant, the instruction needs {} (write it as a floating-point constant, e.g. 1.0 or 0f3F800000)",
                            k + 1,
                            describe_want(want, fit)
                        ),
                    );
                    continue;
                }
                let Some((reg, r)) = self.reg_ty_in(e, whole) else {
                    continue;
                };
                // A .pred instruction type never appears in these rules except for predicates.
                if !fits(want, reg, fit) {
                    let inst = if matches!(opcode, "mul" | "mad")
                        && (has(".wide") || has(".lo") || has(".hi"))
                    {
                        let m = mods
                            .iter()
                            .find(|m| matches!(**m, ".wide" | ".lo" | ".hi"))
                            .expect("a mode");
                        format!("{opcode}{m}")
                    } else {
                        opcode.to_string()
                    };
                    self.err(
                        r,
                        format!(
                            "Arguments mismatch for instruction '{inst}': operand {} is a {} register, the instruction needs {}",
                            k + 1,
                            describe(reg),
                            describe_want(want, fit)
                        ),
                    );
                }
            }
        }
    }
}

fn describe(t: Ty) -> String {
    let c = match t.class {
        Class::Bit => "b",
        Class::Unsigned => "u",
        Class::Signed => "s",
        Class::Float => "f",
        Class::BFloat => "bf",
        Class::Pred => return ".pred".into(),
        Class::Other => return "opaque".into(),
    };
    if t.packed {
        format!(".{c}16x2")
    } else {
        format!(".{c}{}", t.bits)
    }
}

fn describe_want(t: Ty, fit: Fit) -> String {
    let size = match (fit, t.is_int()) {
        (Fit::Wider, true) => format!("at least {} bits", t.bits),
        _ => format!("{} bits", t.bits),
    };
    match t.class {
        Class::Pred => "a .pred".into(),
        Class::Bit => format!("a register of {size}"),
        Class::Unsigned | Class::Signed => format!("an integer register of {size}"),
        Class::Float | Class::BFloat => format!("a {} or .b{} register", describe(t), t.bits),
        Class::Other => "an opaque value".into(),
    }
}

/// `ptx::isa().lookup`, memoized per thread: the same opcode and modifier spelling recurs
/// thousands of times in a module, and matching modifiers against forms backtracks.
fn lookup_forms(opcode: &str, mods: &[&str]) -> std::rc::Rc<Vec<&'static ptx::Form>> {
    thread_local! {
        static CACHE: std::cell::RefCell<HashMap<String, std::rc::Rc<Vec<&'static ptx::Form>>>> =
            std::cell::RefCell::new(HashMap::new());
    }
    let mut key = String::with_capacity(opcode.len() + 8 * mods.len());
    key.push_str(opcode);
    for m in mods {
        key.push_str(m);
    }
    CACHE.with(|c| {
        if let Some(v) = c.borrow().get(&key) {
            return v.clone();
        }
        let v = std::rc::Rc::new(ptx::isa().lookup(opcode, mods));
        c.borrow_mut().insert(key, v.clone());
        v
    })
}

fn is_sreg(name: &str) -> bool {
    ptx::isa().special_register(name).is_some()
}
