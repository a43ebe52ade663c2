//! `.func` device functions and `call`, by inlining.
//!
//! A `call` lowers the callee's body in place, every time it is called (ptxas's own calling
//! convention — `CALL.REL`, `RET`, arguments in registers and a stack frame — is a later step;
//! `docs/arch/codegen.md` says why inlining comes first):
//!
//! * `.param` variables (a call's argument and return slots declared in a `{ }` block, a
//!   device function's `.param` parameters) are sets of 32-bit virtual registers, one per
//!   4-byte word, created when a word is first written or read ([`ParamVar`]).
//!   `st.param`/`ld.param` of 32/64-bit values at word-aligned offsets move whole words;
//!   8/16-bit values are inserted and extracted with `PRMT` (zero or sign extension on loads).
//! * A call gives the callee a fresh scope: its `.reg` declarations get new virtual registers
//!   on every inlined call, its labels new blocks, its `.local` variables new stack slots.
//!   Module-scope variables stay visible; the kernel's own names do not.
//! * Arguments are copied into the callee's parameters (fresh registers: a callee may write
//!   its parameters without the caller seeing it); `.param` return parameters are the
//!   caller's return slots themselves; `.reg` parameters and results, and registers given
//!   for `.param` ones, are copied in and out.
//! * `ret` branches to the block after the body; `exit` ends the thread. A guarded call
//!   branches around the copies and the body.
//! * Refused: recursion (direct or mutual), nesting deeper than [`MAX_INLINE_DEPTH`], more
//!   than [`MAX_INLINED_INSTRUCTIONS`] IR instructions, indirect calls (through a register,
//!   with a prototype or a target list), calls of functions without a body other than the
//!   system functions `vprintf` and `__assertfail` (real calls: `syscall.rs`), `.shared` variables
//!   declared in a device function, taking the address of a `.param` variable.
//!
//! Errors inside an inlined body carry the callee's name ([`LowerError::function`]): their
//! ranges lie in the callee's tree. IR instructions of an inlined body record the outermost
//! call's range as their origin (origins are ranges in the kernel's tree).

use ir::{Block, Class, Inst, Operand, Reg, VReg, op};
use rustc_hash::FxHashMap;
use syntax::SyntaxNode;
use syntax::ast::{self, AstNode, DeclLike};

use crate::LoweredType;
use crate::{Cx, LowerError, Src, Ty, collect_labels, malformed, sub, unsupported, warp};

/// How deep calls may nest (recursion is refused separately).
pub const MAX_INLINE_DEPTH: usize = 16;
/// The bound on a kernel's IR instructions beyond which no further call is inlined.
pub const MAX_INLINED_INSTRUCTIONS: usize = 400_000;
/// The largest `.param` variable (bytes).
const MAX_PARAM_BYTES: u32 = 32 * 1024;

/// The device functions a kernel may call, by name: each one's `FUNCTION` node (the db passes
/// its trivia-free trees). A declaration without a body may be given; calling it is refused.
#[derive(Clone, Debug, Default)]
pub struct Functions {
    map: FxHashMap<String, SyntaxNode>,
}

impl Functions {
    pub fn new() -> Functions {
        Functions::default()
    }
    pub fn insert(&mut self, name: impl Into<String>, function: SyntaxNode) {
        self.map.insert(name.into(), function);
    }
    pub fn get(&self, name: &str) -> Option<&SyntaxNode> {
        self.map.get(name)
    }
    pub fn contains(&self, name: &str) -> bool {
        self.map.contains_key(name)
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

impl CallOperands {
    /// As many arguments as `params`, and either no results or as many as `results`.
    pub(crate) fn check_arity(
        &self,
        node: &SyntaxNode,
        name: &str,
        params: usize,
        results: usize,
    ) -> Result<(), LowerError> {
        if self.args.len() != params {
            return Err(malformed(
                node,
                format!(
                    "call of {name} with {} arguments for {params} parameters",
                    self.args.len()
                ),
            ));
        }
        if !self.rets.is_empty() && self.rets.len() != results {
            return Err(malformed(
                node,
                format!(
                    "call of {name} with {} results for {results} return parameters",
                    self.rets.len()
                ),
            ));
        }
        Ok(())
    }
}

/// The operands of a `call`: results, callee, arguments, and whether more operands (a
/// prototype or a target list: an indirect call) follow.
pub(crate) struct CallOperands {
    pub(crate) rets: Vec<ast::Operand>,
    callee: ast::Operand,
    pub(crate) args: Vec<ast::Operand>,
    extra: bool,
}

fn call_operands(ops: &[ast::Operand]) -> Option<CallOperands> {
    let mut at = 0;
    let rets = match ops.first() {
        Some(ast::Operand::ArgList(l)) => {
            at = 1;
            l.args().collect()
        }
        _ => Vec::new(),
    };
    let callee = ops.get(at)?.clone();
    let args = match ops.get(at + 1) {
        Some(ast::Operand::ArgList(l)) => {
            at += 1;
            l.args().collect()
        }
        _ => Vec::new(),
    };
    Some(CallOperands {
        rets,
        callee,
        args,
        extra: ops.len() > at + 1,
    })
}

pub(crate) fn plain_name(o: &ast::Operand) -> Option<String> {
    match o {
        ast::Operand::Name(n) if n.components().next().is_none() => {
            n.name().map(|t| t.text().to_string())
        }
        _ => None,
    }
}

/// The names of the functions `function` (a `FUNCTION` node) calls directly, each once, in
/// order of first appearance. Indirect callees (registers) are included by name; a caller
/// looks names up among the module's functions.
pub fn direct_callees(function: &SyntaxNode) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in function.descendants().filter_map(ast::Instruction::cast) {
        if i.opcode().is_none_or(|t| t.text() != "call") {
            continue;
        }
        let ops: Vec<ast::Operand> = i.operands().collect();
        if let Some(name) = call_operands(&ops).and_then(|c| plain_name(&c.callee))
            && !out.contains(&name)
        {
            out.push(name);
        }
    }
    out
}

/// A `.param` variable: its size and one 32-bit register per word, made on first use.
#[derive(Clone, Debug)]
pub(crate) struct ParamVar {
    size: u32,
    slots: Vec<Option<VReg>>,
}

/// Bytes of a scalar type word.
fn type_size(t: &str) -> Option<u32> {
    Some(match t {
        ".b8" | ".u8" | ".s8" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        _ => return None,
    })
}

/// Bytes of a register type.
pub(crate) fn ty_size(ty: Ty) -> u32 {
    match ty {
        Ty::B16 | Ty::U16 | Ty::S16 => 2,
        t => 4 * u32::from(t.words()),
    }
}

/// A parameter or result of a device function.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Formal {
    /// `.param`: its size and, for a scalar, (element size, signed).
    Param {
        size: u32,
        scalar: Option<(u32, bool)>,
    },
    /// `.reg` of a type in the subset.
    Reg(Ty),
}

/// A formal as bound for one inlined call.
#[derive(Clone, Copy, Debug)]
enum Bound {
    Param(usize),
    Reg(VReg, Ty),
}

/// What is copied back to the caller after the body.
enum CopyOut {
    /// A `.param` result read into a caller register.
    ParamToReg {
        var: usize,
        size: u32,
        signed: bool,
        dst: Reg,
    },
    /// A `.reg` result into a caller register (predicates too).
    RegToReg { src: Reg, dst: Reg },
    /// A `.reg` result into a caller `.param` variable.
    RegToParam { src: Reg, var: usize, size: u32 },
}

/// The name-resolution state of one function body, swapped out while a callee is inlined.
#[derive(Default)]
struct Scope {
    regs: FxHashMap<String, (VReg, Ty)>,
    unsupported_regs: FxHashMap<String, String>,
    labels: FxHashMap<String, Block>,
    params: FxHashMap<String, (u32, u32)>,
    shared: FxHashMap<String, u32>,
    locals: FxHashMap<String, u32>,
    constants: FxHashMap<String, u64>,
    param_vars: FxHashMap<String, usize>,
    param_ptrs: FxHashMap<String, (String, i64)>,
    ret_target: Option<Block>,
    contractions: hir::contract::Contractions,
    contracted_muls: FxHashMap<syntax::TextRange, ast::Instruction>,
}

fn in_function(mut e: LowerError, name: &str) -> LowerError {
    if e.function.is_none() {
        e.function = Some(name.to_string());
    }
    e
}

impl Cx {
    fn swap_scope(&mut self, s: &mut Scope) {
        std::mem::swap(&mut self.regs, &mut s.regs);
        std::mem::swap(&mut self.unsupported_regs, &mut s.unsupported_regs);
        std::mem::swap(&mut self.labels, &mut s.labels);
        std::mem::swap(&mut self.contractions, &mut s.contractions);
        std::mem::swap(&mut self.contracted_muls, &mut s.contracted_muls);
        std::mem::swap(&mut self.params, &mut s.params);
        std::mem::swap(&mut self.shared, &mut s.shared);
        std::mem::swap(&mut self.locals, &mut s.locals);
        std::mem::swap(&mut self.constants, &mut s.constants);
        std::mem::swap(&mut self.param_vars, &mut s.param_vars);
        std::mem::swap(&mut self.param_ptrs, &mut s.param_ptrs);
        std::mem::swap(&mut self.ret_target, &mut s.ret_target);
    }

    fn new_param_var(&mut self, size: u32) -> usize {
        self.param_data.push(ParamVar {
            size,
            slots: vec![None; size.div_ceil(4) as usize],
        });
        self.param_data.len() - 1
    }

    /// The register of word `word` of `.param` variable `var`, and whether it was just made.
    fn param_slot(&mut self, var: usize, word: usize) -> (VReg, bool) {
        if let Some(r) = self.param_data[var].slots[word] {
            return (r, false);
        }
        let r = self.f.new_vreg(Class::R, 1, "");
        self.param_data[var].slots[word] = Some(r);
        (r, true)
    }

    pub(crate) fn mov(&mut self, d: Reg, s: Reg) {
        self.push(Inst::new(
            op!("MOV"),
            vec![Operand::r(d), Operand::r(s)],
            vec![0],
        ));
    }

    /// A `.param` variable declared in a body (a call's argument or result slots).
    pub(crate) fn param_decl(&mut self, v: &ast::VarDecl) -> Result<(), LowerError> {
        let tyt = v.ty().map(|t| t.text().to_string()).unwrap_or_default();
        let elem = type_size(&tyt)
            .ok_or_else(|| unsupported(v.syntax(), format!(".param variables of type {tyt}")))?
            * v.vector().unwrap_or(1);
        for d in v.declarators() {
            let Some(n) = d.name() else { continue };
            if d.initializer().is_some() {
                return Err(unsupported(
                    d.syntax(),
                    ".param variables with initializers",
                ));
            }
            let mut size = elem;
            for dim in d.array_dims() {
                let k = dim
                    .size()
                    .and_then(|e| e.as_int())
                    .and_then(|k| u32::try_from(k).ok())
                    .ok_or_else(|| unsupported(d.syntax(), ".param arrays of unknown size"))?;
                size = size.saturating_mul(k);
            }
            if size > MAX_PARAM_BYTES {
                return Err(unsupported(
                    d.syntax(),
                    format!(".param variables larger than {MAX_PARAM_BYTES} bytes"),
                ));
            }
            let var = self.new_param_var(size);
            self.declare_param(n.text().to_string(), var);
        }
        Ok(())
    }

    /// The word index and byte offset in it of an access of `size` bytes at `off` of `var`,
    /// or the refusal (outside the variable, or not aligned to the access size, at most 4).
    fn param_word(
        &self,
        node: &SyntaxNode,
        var: usize,
        off: i64,
        size: u32,
    ) -> Result<(usize, u32), LowerError> {
        let total = self.param_data[var].size;
        let off = u32::try_from(off)
            .ok()
            .filter(|o| o.checked_add(size).is_some_and(|e| e <= total) && o % size.min(4) == 0);
        match off {
            Some(o) => Ok(((o / 4) as usize, o % 4)),
            None => Err(unsupported(
                node,
                ".param access outside or misaligned in its variable",
            )),
        }
    }

    /// `d` = the `size` bytes (1, 2, 4, 8) at `off` of `.param` variable `var`, zero- or
    /// sign-extended to the register's width.
    pub(crate) fn read_param_var(
        &mut self,
        node: &SyntaxNode,
        var: usize,
        off: i64,
        size: u32,
        signed: bool,
        d: Reg,
    ) -> Result<(), LowerError> {
        let width = d.width();
        if size == 8 && width != 2 {
            return Err(unsupported(node, "operand of another width or class"));
        }
        let (w, lo) = self.param_word(node, var, off, size)?;
        match size {
            8 => {
                for k in 0..2 {
                    let s = self.param_slot(var, w + k as usize).0;
                    self.mov(sub(d, k), Reg::v(s, 1));
                }
            }
            4 => {
                let s = self.param_slot(var, w).0;
                self.mov(sub(d, 0), Reg::v(s, 1));
            }
            _ => {
                // The element's bytes, then zeros (byte 7: RZ's) or copies of its sign.
                let s = self.param_slot(var, w).0;
                let top = lo + size - 1;
                let fill = if signed { 8 | top } else { 7 };
                let mut sel = 0u32;
                for i in 0..4 {
                    let nib = if i < size { lo + i } else { fill };
                    sel |= nib << (4 * i);
                }
                self.push(Inst::new(
                    op!("PRMT"),
                    vec![
                        Operand::r(sub(d, 0)),
                        Operand::r(Reg::v(s, 1)),
                        Operand::Imm(i64::from(sel)),
                        Operand::rz(),
                    ],
                    vec![0],
                ));
            }
        }
        if width == 2 && size < 8 {
            self.extend_high(d, signed);
        }
        Ok(())
    }

    /// Writes the low `size` bytes (1, 2, 4, 8) of `s` at `off` of `.param` variable `var`.
    pub(crate) fn write_param_var(
        &mut self,
        node: &SyntaxNode,
        var: usize,
        off: i64,
        size: u32,
        s: Reg,
    ) -> Result<(), LowerError> {
        let (w, lo) = self.param_word(node, var, off, size)?;
        match size {
            8 => {
                if s.width() != 2 {
                    return Err(unsupported(node, "operand of another width or class"));
                }
                for k in 0..2u8 {
                    let d = self.param_slot(var, w + usize::from(k)).0;
                    self.mov(Reg::v(d, 1), sub(s, k));
                }
            }
            4 => {
                let d = self.param_slot(var, w).0;
                self.mov(Reg::v(d, 1), sub(s, 0));
            }
            _ => {
                let (d, fresh) = self.param_slot(var, w);
                let d = Reg::v(d, 1);
                if fresh {
                    // The other bytes of a word written first in part are zero.
                    self.mov_imm(d, 0);
                }
                // Bytes lo.. from the value's low bytes, the rest kept (selector 4 + i:
                // byte i of the word itself).
                let mut sel = 0u32;
                for i in 0..4 {
                    let nib = if (lo..lo + size).contains(&i) {
                        i - lo
                    } else {
                        4 + i
                    };
                    sel |= nib << (4 * i);
                }
                self.push(Inst::new(
                    op!("PRMT"),
                    vec![
                        Operand::r(d),
                        Operand::r(sub(s, 0)),
                        Operand::Imm(i64::from(sel)),
                        Operand::r(d),
                    ],
                    vec![0],
                ));
            }
        }
        Ok(())
    }

    /// The register holding a value of `size` bytes given by operand `o` (a register, an
    /// immediate; the low word of a 64-bit register for narrower sizes).
    pub(crate) fn value_reg(&mut self, o: &ast::Operand, size: u32) -> Result<Reg, LowerError> {
        if size == 8 {
            return self.reg_src(o, 2);
        }
        if self.reg_width(o) == Some(2) {
            return Ok(sub(self.reg_src(o, 2)?, 0));
        }
        self.reg_src(o, 1)
    }

    /// A predicate value: a predicate register (`!p` too) or a literal (0 is false).
    fn pred_value(&mut self, o: &ast::Operand) -> Result<Operand, LowerError> {
        Ok(match o.as_int() {
            Some(0) => Operand::not(Reg::Zero(Class::P)),
            Some(_) => Operand::pt(),
            None => self.pred_src(o)?,
        })
    }

    /// A register destination of any width in the R class.
    pub(crate) fn r_dst(&self, o: &ast::Operand) -> Result<Reg, LowerError> {
        match self.src(o)? {
            Src::Reg(r, w) if self.f.vregs[r].class == Class::R => Ok(Reg::v(r, w)),
            Src::Reg(..) => Err(unsupported(o.syntax(), "operand of another width or class")),
            _ => Err(malformed(o.syntax(), "destination is not a register")),
        }
    }

    /// `ld.param` of a `.param` variable (called by `ld_param` when `name` is one).
    pub(crate) fn ld_param_var(
        &mut self,
        node: &SyntaxNode,
        var: usize,
        off: i64,
        (size, signed): (u32, bool),
        dsts: &[Option<ast::Operand>],
    ) -> Result<(), LowerError> {
        for (k, d) in dsts.iter().enumerate() {
            let Some(d) = d else { continue };
            let d = self.r_dst(d)?;
            self.read_param_var(node, var, off + k as i64 * i64::from(size), size, signed, d)?;
        }
        Ok(())
    }

    /// `st.param{.v2,.v4}.type [var+off], value`: a call's argument or a function's result.
    pub(crate) fn st_param(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        Self::need(node, ops, 2)?;
        let mut count = 1;
        let mut size = None;
        for m in mods.iter().filter(|m| *m != ".param") {
            match m.as_str() {
                ".v2" => count = 2,
                ".v4" => count = 4,
                t => match type_size(t) {
                    Some(s) if size.is_none() && !matches!(t, ".f16" | ".bf16") => size = Some(s),
                    _ => return Err(unsupported(node, "this st.param form")),
                },
            }
        }
        let Some(size) = size else {
            return Err(unsupported(node, "this st.param form"));
        };
        let (name, off) = self.address_name(&ops[0])?;
        let Some(&var) = self.param_vars.get(&name) else {
            return Err(unsupported(
                ops[0].syntax(),
                format!("st.param to `{name}`"),
            ));
        };
        let vals: Vec<ast::Operand> = match &ops[1] {
            ast::Operand::Vector(v) => v.elements().collect(),
            o => vec![o.clone()],
        };
        if vals.len() != count {
            return Err(malformed(
                ops[1].syntax(),
                "vector operand of another length",
            ));
        }
        for (k, v) in vals.iter().enumerate() {
            let s = self.value_reg(v, size)?;
            self.write_param_var(node, var, off + k as i64 * i64::from(size), size, s)?;
        }
        Ok(())
    }

    /// A `ret` in an inlined body: a branch to the block after the body.
    pub(crate) fn inlined_ret(&mut self) -> Result<(), LowerError> {
        let target = self.ret_target.expect("inside an inlined body");
        self.push(Inst::new(op!("BRA"), vec![Operand::Label(target)], vec![]));
        let next = self.f.new_block();
        self.start_block(next);
        self.after_ret = Some(next);
        Ok(())
    }

    /// A device function's parameters or results.
    pub(crate) fn formals(
        params: impl Iterator<Item = ast::Param>,
    ) -> Result<Vec<(String, Formal)>, LowerError> {
        let mut out = Vec::new();
        for p in params {
            let name = p
                .name()
                .map(|t| t.text().to_string())
                .ok_or_else(|| malformed(p.syntax(), "parameter without a name"))?;
            let tyt = p.ty().map(|t| t.text().to_string()).unwrap_or_default();
            let space = p.state_space().map(|t| t.text().to_string());
            let mut count = 1u32;
            for d in p.declarators() {
                for dim in d.array_dims() {
                    let n = dim
                        .size()
                        .and_then(|e| e.as_int())
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| {
                            unsupported(p.syntax(), "parameter arrays of unknown size")
                        })?;
                    count = count.saturating_mul(n);
                }
            }
            let vec = p.vector().unwrap_or(1);
            let formal = match space.as_deref() {
                Some(".param") => {
                    let elem = type_size(&tyt).ok_or_else(|| {
                        unsupported(p.syntax(), format!("parameters of type {tyt}"))
                    })?;
                    let size = elem.saturating_mul(vec).saturating_mul(count);
                    if size > MAX_PARAM_BYTES {
                        return Err(unsupported(
                            p.syntax(),
                            format!("parameters larger than {MAX_PARAM_BYTES} bytes"),
                        ));
                    }
                    let signed = matches!(tyt.as_str(), ".s8" | ".s16" | ".s32" | ".s64");
                    Formal::Param {
                        size,
                        scalar: (count == 1 && vec == 1).then_some((elem, signed)),
                    }
                }
                Some(".reg") => match Ty::lowered(&tyt) {
                    Some(ty) if count == 1 && vec == 1 => Formal::Reg(ty),
                    _ => {
                        return Err(unsupported(
                            p.syntax(),
                            format!(
                                ".reg parameters of type {tyt}{}",
                                if vec > 1 || count > 1 {
                                    " (vectors, arrays)"
                                } else {
                                    ""
                                }
                            ),
                        ));
                    }
                },
                _ => {
                    return Err(unsupported(
                        p.syntax(),
                        "device-function parameters outside .param and .reg",
                    ));
                }
            };
            out.push((name, formal));
        }
        Ok(out)
    }

    /// `call{.uni} (results), f, (arguments);` of a device function with a body: its body
    /// inlined (see the module docs).
    pub(crate) fn call(
        &mut self,
        node: &SyntaxNode,
        mods: &[String],
        ops: &[ast::Operand],
    ) -> Result<(), LowerError> {
        if let Some(m) = mods.iter().find(|m| *m != ".uni") {
            return Err(unsupported(node, format!("call{m}")));
        }
        let c = call_operands(ops).ok_or_else(|| malformed(node, "call without a callee"))?;
        let Some(name) = plain_name(&c.callee) else {
            return Err(unsupported(
                node,
                format!(
                    "call of {} (an indirect call through an expression)",
                    c.callee.syntax().text()
                ),
            ));
        };
        if self.regs.contains_key(&name) {
            return Err(unsupported(
                node,
                format!("call of {name} (an indirect call through a register)"),
            ));
        }
        if c.extra {
            return Err(unsupported(
                node,
                format!("call of {name} (an indirect call with a prototype or a target list)"),
            ));
        }
        let Some(function) = self
            .functions
            .get(&name)
            .cloned()
            .and_then(ast::Function::cast)
        else {
            return Err(unsupported(
                node,
                format!("call of {name} (not a device function of this module)"),
            ));
        };
        let Some(body) = function.body() else {
            if ir::abi::is_system_function(&name) {
                return self.system_call(node, &name, &function, &c);
            }
            return Err(unsupported(
                node,
                format!(
                    "call of {name} (a function without a body, such as an `.extern` one: \
                     calls are inlined and kiln does not link)"
                ),
            ));
        };
        if self.inline_stack.contains(&name) {
            let chain: Vec<String> = self
                .inline_stack
                .iter()
                .skip_while(|n| **n != name)
                .chain(std::iter::once(&name))
                .map(|n| format!("`{n}`"))
                .collect();
            return Err(unsupported(
                node,
                format!("recursive calls ({})", chain.join(" → ")),
            ));
        }
        if self.inline_stack.len() >= MAX_INLINE_DEPTH {
            return Err(unsupported(
                node,
                format!("calls nested deeper than {MAX_INLINE_DEPTH}"),
            ));
        }
        if self.emitted > MAX_INLINED_INSTRUCTIONS {
            return Err(unsupported(
                node,
                format!("more than {MAX_INLINED_INSTRUCTIONS} instructions after inlining"),
            ));
        }
        let formals = Self::formals(function.params()).map_err(|e| in_function(e, &name))?;
        let results = Self::formals(function.return_params()).map_err(|e| in_function(e, &name))?;
        c.check_arity(node, &name, formals.len(), results.len())?;
        // A guarded call branches around everything below.
        let guard = self.guard.take();
        let site = self.origin;
        let skip = guard.map(|g| self.skip_unless(g));
        // Arguments, in the caller's scope.
        let mut bound: Vec<(String, Bound)> = Vec::new();
        for ((pname, formal), arg) in formals.iter().zip(&c.args) {
            let arg_var = plain_name(arg).and_then(|n| self.param_vars.get(&n).copied());
            let b = match *formal {
                Formal::Param { size, scalar } => {
                    let var = self.new_param_var(size);
                    match (arg_var, scalar) {
                        (Some(src), _) => {
                            // Every word (made now if not written yet: a write later in the
                            // text may reach the call through a loop); copies of words the
                            // callee never reads are dead code.
                            let words = self.param_data[src]
                                .slots
                                .len()
                                .min(size.div_ceil(4) as usize);
                            for w in 0..words {
                                let s = self.param_slot(src, w).0;
                                let d = self.param_slot(var, w).0;
                                self.mov(Reg::v(d, 1), Reg::v(s, 1));
                            }
                        }
                        (None, Some((esize, _))) => {
                            let s = self.value_reg(arg, esize)?;
                            self.write_param_var(arg.syntax(), var, 0, esize, s)?;
                        }
                        (None, None) => {
                            return Err(unsupported(
                                arg.syntax(),
                                "a register argument for an aggregate parameter",
                            ));
                        }
                    }
                    Bound::Param(var)
                }
                Formal::Reg(Ty::Pred) => {
                    let p = self.f.new_vreg(Class::P, 1, pname.clone());
                    let a = self.pred_value(arg)?;
                    self.plop3(Reg::v(p, 1), a, Operand::pt(), 0xf0);
                    Bound::Reg(p, Ty::Pred)
                }
                Formal::Reg(ty) => {
                    let words = ty.words();
                    let r = Reg::v(self.f.new_vreg(Class::R, words, pname.clone()), words);
                    match arg_var {
                        Some(src) => {
                            self.read_param_var(arg.syntax(), src, 0, ty_size(ty), ty.signed(), r)?
                        }
                        None => {
                            let s = self.reg_src(arg, words)?;
                            for k in 0..words {
                                self.mov(sub(r, k), sub(s, k));
                            }
                        }
                    }
                    let Reg::Virt { vreg, .. } = r else {
                        unreachable!("a virtual register")
                    };
                    Bound::Reg(vreg, ty)
                }
            };
            bound.push((pname.clone(), b));
        }
        // Results: `.param` ones are the caller's slots; others are copied out afterwards.
        let mut outs = Vec::new();
        for (k, (rname, formal)) in results.iter().enumerate() {
            let ret = c.rets.get(k);
            let ret_var = ret
                .and_then(plain_name)
                .and_then(|n| self.param_vars.get(&n).copied());
            let b = match (*formal, ret) {
                (Formal::Param { .. }, Some(_)) if ret_var.is_some() => {
                    Bound::Param(ret_var.expect("checked"))
                }
                (Formal::Param { size, .. }, None) => Bound::Param(self.new_param_var(size)),
                (Formal::Param { size, scalar }, Some(o)) => {
                    let Some((esize, signed)) = scalar else {
                        return Err(unsupported(
                            o.syntax(),
                            "a register result for an aggregate return parameter",
                        ));
                    };
                    let dst = self.r_dst(o)?;
                    let var = self.new_param_var(size);
                    outs.push(CopyOut::ParamToReg {
                        var,
                        size: esize,
                        signed,
                        dst,
                    });
                    Bound::Param(var)
                }
                (Formal::Reg(Ty::Pred), ret) => {
                    let vreg = self.f.new_vreg(Class::P, 1, rname.clone());
                    if let Some(o) = ret {
                        let dst = self.pred_dst(o)?;
                        outs.push(CopyOut::RegToReg {
                            src: Reg::v(vreg, 1),
                            dst,
                        });
                    }
                    Bound::Reg(vreg, Ty::Pred)
                }
                (Formal::Reg(ty), ret) => {
                    let words = ty.words();
                    let vreg = self.f.new_vreg(Class::R, words, rname.clone());
                    let src = Reg::v(vreg, words);
                    match (ret, ret_var) {
                        (None, _) => {}
                        (Some(_), Some(var)) => outs.push(CopyOut::RegToParam {
                            src,
                            var,
                            size: ty_size(ty),
                        }),
                        (Some(o), None) => {
                            let dst = self.r_dst(o)?;
                            if dst.width() != words {
                                return Err(unsupported(o.syntax(), "operand of another width"));
                            }
                            outs.push(CopyOut::RegToReg { src, dst });
                        }
                    }
                    Bound::Reg(vreg, ty)
                }
            };
            bound.push((rname.clone(), b));
        }
        // The callee's body in its own scope.
        let mut scope = Scope {
            shared: self.module_shared.clone(),
            constants: warp::single_constant_registers(&warp::single_definitions(&body)),
            ..Scope::default()
        };
        if self.target.fmad {
            (scope.contractions, scope.contracted_muls) = crate::contraction_maps(&body);
        }
        // Parameters are written before the body: never constants of its own.
        for (n, _) in &bound {
            scope.constants.remove(n);
        }
        let exit = self.f.new_block();
        scope.ret_target = Some(exit);
        self.swap_scope(&mut scope);
        let mark = self.scope_undo.len();
        self.inline_stack.push(name.clone());
        let outermost = self.inline_site.is_none();
        if outermost {
            self.inline_site = site;
        }
        let r = self.inline_body(&body, &bound);
        let callee_labels: Vec<Block> = self.labels.values().copied().collect();
        self.inline_stack.pop();
        if outermost {
            self.inline_site = None;
        }
        self.scope_undo.truncate(mark);
        self.swap_scope(&mut scope);
        r.map_err(|e| in_function(e, &name))?;
        self.origin = site;
        // A final `ret` falls through to the block after the body.
        let cur = self.cur;
        if self.after_ret == Some(cur)
            && self.f.blocks[cur].insts.is_empty()
            && !callee_labels.contains(&cur)
            && self.f.order.last() == Some(&cur)
        {
            self.f.order.pop();
            let last = *self.f.order.last().expect("blocks");
            let falls = self.f.blocks[last].insts.last().is_some_and(|i| {
                i.op == op!("BRA") && i.guard.is_none() && i.operands == [Operand::Label(exit)]
            });
            if falls {
                self.f.blocks[last].insts.pop();
            }
        }
        self.start_block(exit);
        for out in outs {
            match out {
                CopyOut::ParamToReg {
                    var,
                    size,
                    signed,
                    dst,
                } => self.read_param_var(node, var, 0, size, signed, dst)?,
                CopyOut::RegToReg { src, dst } if ir::class_of(&self.f, dst) == Class::P => {
                    self.plop3(dst, Operand::r(src), Operand::pt(), 0xf0);
                }
                CopyOut::RegToReg { src, dst } => {
                    for k in 0..dst.width() {
                        self.mov(sub(dst, k), sub(src, k));
                    }
                }
                CopyOut::RegToParam { src, var, size } => {
                    self.write_param_var(node, var, 0, size, src)?
                }
            }
        }
        if let Some(end) = skip {
            self.start_block(end);
        }
        Ok(())
    }

    /// Lowers an inlined body in the callee's (already entered) scope: labels and `.local`
    /// variables, the parameter bindings, then the statements.
    fn inline_body(
        &mut self,
        body: &ast::Block,
        bound: &[(String, Bound)],
    ) -> Result<(), LowerError> {
        collect_labels(body, self)?;
        for (n, b) in bound {
            match *b {
                Bound::Param(var) => self.declare_param(n.clone(), var),
                Bound::Reg(r, ty) => self.declare_reg(n.clone(), (r, ty)),
            }
        }
        self.block(body)
    }
}
