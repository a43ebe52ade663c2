//! Reference PTX interpreter: the semantic oracle the code generator is checked against.
//!
//! [`Program::from_text`] parses and lowers a module once (names to register slots, labels to
//! instruction indices, variables to addresses); [`Program::run`] executes a kernel over a grid
//! with 32-lane warps, divergence and reconvergence, CTA barriers, warp collectives, atomics and
//! bounds-checked memory spaces. Floating point is computed in software with correct rounding
//! in every PTX rounding mode ([`float`]). Instructions the interpreter does not implement are
//! reported as [`RunError::Unsupported`] when reached, never skipped. Calls of the device
//! runtime's `vprintf` and `__assertfail` are recorded in the [`Memory`]'s [`DeviceLog`]
//! ([`devrt`], shared with the SASS emulator). Texture fetches (`tex`) read the [`Memory`]'s
//! textures through the model in [`texture`] (also shared with the emulator);
//! [`Program::texture_uses`] tells a harness which textures a kernel needs.

#![forbid(unsafe_code)]

pub mod devrt;
pub mod exec;
pub mod float;
pub mod ir;
pub mod lower;
pub mod mbarrier;
pub mod mem;
pub mod mma;
pub mod provenance;
pub mod sanitize;
pub mod surface;
pub mod texture;
pub mod video;

pub use devrt::{AssertRecord, DeviceLog, PrintfArg, PrintfRecord, SysCall};
pub use exec::{Launch, RunError, RunOptions, RunStats, Schedule};
pub use ir::{Module, ParamSlot, Ty};
pub use lower::LowerError;
pub use mem::{Memory, ReservedSmem, SharedLayout, SharedMap};
pub use sanitize::{Finding, FindingKind};

/// Where a kernel's texture comes from ([`Program::texture_uses`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TextureSource {
    /// A `.u64` kernel parameter carrying a texture object handle: the index into
    /// [`Program::params`].
    Param(usize),
    /// A texture reference (`.texref` / `.tex` module variable), by name.
    Texref(String),
}

/// A texture a kernel fetches from, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextureUse {
    pub source: TextureSource,
    /// The geometry of the first fetch from this source.
    pub shape: texture::TexShape,
    /// `F32` when some fetch from this source has `.f32` destinations, else `U32`.
    pub format: texture::TexFormat,
}

/// The kernel parameter (index in `f.params`) a 64-bit handle register of `f` was loaded from
/// with `ld.param`, traced back through `mov`s; `None` when it was computed or loaded from
/// elsewhere.
fn param_of_handle(f: &ir::Function, reg: u32) -> Option<usize> {
    use ir::{AddrBase, Loc, Op, Operand, Space};
    let mut reg = reg;
    for _ in 0..16 {
        let def = f.body.iter().find_map(|d| match (d.op, d.args.first()) {
            (Op::Ld | Op::Mov, Some(Operand::Reg(x))) if *x == reg => Some((d, d.args.get(1)?)),
            _ => None,
        });
        match def {
            Some((
                d,
                Operand::Addr {
                    base:
                        AddrBase::Var(ir::VarRef {
                            space: Space::Param,
                            loc: Loc::Static(off),
                        }),
                    offset,
                },
            )) if d.op == Op::Ld && d.mods.ty().size() == 8 => {
                let at = (*off as i64 + offset) as u64;
                return f
                    .params
                    .iter()
                    .position(|p| p.reg.is_none() && p.offset == at && p.size == 8);
            }
            Some((d, Operand::Reg(src))) if d.op == Op::Mov => reg = *src,
            _ => return None,
        }
    }
    None
}

/// A surface kernel parameter: which parameter carries the handle, and the geometry of the
/// first access through it ([`Program::surface_uses`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceUse {
    pub param: usize,
    pub shape: surface::SurfShape,
}

/// A lowered module ready to run.
#[derive(Debug, Clone)]
pub struct Program {
    pub module: Module,
}

impl Program {
    /// Parses and lowers PTX text. Syntax errors and constructs the interpreter cannot give a
    /// meaning to are errors; unsupported instructions are not (they fail when executed).
    pub fn from_text(text: &str) -> Result<Program, LowerError> {
        Program::from_text_with(text, true)
    }

    /// [`Program::from_text`]; `fmad` says whether `mul` + `add`/`sub` pairs are contracted
    /// into one rounding as ptxas does by default (`false`: ptxas's `--fmad=false`, every
    /// operation rounded on its own).
    pub fn from_text_with(text: &str, fmad: bool) -> Result<Program, LowerError> {
        let parse = syntax::parse(text);
        if let Some(e) = parse.errors().first() {
            let line = text[..usize::from(e.range.start()).min(text.len())]
                .matches('\n')
                .count() as u32
                + 1;
            return Err(LowerError {
                line,
                message: format!("syntax error: {}", e.message),
            });
        }
        Program::from_tree(text, &parse.tree(), fmad)
    }

    /// The program of an already parsed module (`tree` parsed from `text`, free of syntax
    /// errors): what the database hands out so that nothing parses a file twice.
    pub fn from_tree(
        text: &str,
        tree: &syntax::ast::SourceFile,
        fmad: bool,
    ) -> Result<Program, LowerError> {
        let module = lower::lower(text, tree, fmad)?;
        Ok(Program { module })
    }

    /// The index of the kernel (`.entry`) called `name`.
    pub fn kernel(&self, name: &str) -> Option<u32> {
        self.module
            .functions
            .iter()
            .position(|f| f.is_entry && f.name == name)
            .map(|i| i as u32)
    }

    /// The names of the kernels.
    pub fn kernels(&self) -> Vec<&str> {
        self.module
            .functions
            .iter()
            .filter(|f| f.is_entry)
            .map(|f| f.name.as_str())
            .collect()
    }

    /// The parameters of kernel `k` (offsets and sizes in the parameter buffer).
    pub fn params(&self, k: u32) -> &[ParamSlot] {
        &self.module.functions[k as usize].params
    }

    /// Bytes of the kernel parameter buffer of kernel `k` (its declared parameters; `.param`
    /// variables declared in its body live in each thread's frame).
    pub fn param_size(&self, k: u32) -> u64 {
        self.module.functions[k as usize].args_size
    }

    /// Whether kernel `k` (not its callees) loads or stores a floating-point type through a
    /// wider (bit-size) register, e.g. `ld.global.f32 %rd1, [a]` with `%rd1` a `.b64`: PTX
    /// zero-extends the loaded bits and stores the low bits (ISA §9.4.1, Tables 27 and 28),
    /// while ptxas 13.0.88 converts the register's integer value (`I2FP.F32.U32` before the
    /// store), so its code does not compute what the PTX says.
    pub fn float_memory_through_wider_registers(&self, k: u32) -> bool {
        use ir::{Op, Operand, Ty};
        let Some(f) = self.module.functions.get(k as usize) else {
            return false;
        };
        f.body.iter().any(|inst| {
            let ty = inst.mods.ty();
            let data = match inst.op {
                Op::Ld => inst.args.first(),
                Op::St => inst.args.get(1),
                _ => None,
            };
            matches!(ty, Ty::F16 | Ty::F32 | Ty::F64)
                && match data {
                    Some(Operand::Reg(r)) => f.reg_bits[*r as usize] > ty.bits(),
                    Some(Operand::Vec(v)) => v.iter().any(
                        |o| matches!(o, Operand::Reg(r) if f.reg_bits[*r as usize] > ty.bits()),
                    ),
                    _ => false,
                }
        })
    }

    /// Whether kernel `k` (or a function it calls) reads `%envreg1`/`%envreg2`, the
    /// grid-synchronization workspace of a cooperative launch (cooperative groups'
    /// `this_grid()`): such a kernel needs [`Memory::alloc_cooperative_workspace`].
    pub fn reads_cooperative_workspace(&self, k: u32) -> bool {
        use ir::{Operand, Sreg};
        let fns = &self.module.functions;
        let mut seen = vec![false; fns.len()];
        let mut stack = vec![k as usize];
        while let Some(fi) = stack.pop() {
            if fi >= fns.len() || std::mem::replace(&mut seen[fi], true) {
                continue;
            }
            for inst in &fns[fi].body {
                if let Some(c) = inst.call.as_ref().and_then(|c| c.func) {
                    stack.push(c as usize);
                }
                if inst
                    .args
                    .iter()
                    .any(|a| matches!(a, Operand::Sreg(Sreg::CooperativeWorkspace(_))))
                {
                    return true;
                }
            }
        }
        false
    }

    /// The surface objects kernel `k` reads or writes (`suld`/`sust` in its own body through a
    /// handle loaded from a kernel parameter), one entry per parameter, in program order.
    pub fn surface_uses(&self, k: u32) -> Vec<SurfaceUse> {
        use ir::{Op, Operand};
        let Some(f) = self.module.functions.get(k as usize) else {
            return Vec::new();
        };
        let mut out: Vec<SurfaceUse> = Vec::new();
        for inst in &f.body {
            let handle = match inst.op {
                Op::Suld => inst.args.get(1),
                Op::Sust => inst.args.first(),
                _ => continue,
            };
            let (Some(Operand::Reg(r)), Some((shape, _))) = (handle, inst.mods.surf) else {
                continue;
            };
            if let Some(param) = param_of_handle(f, *r)
                && !out.iter().any(|u| u.param == param)
            {
                out.push(SurfaceUse { param, shape });
            }
        }
        out
    }

    /// The textures kernel `k` fetches from (with `tex`, in its body or in the functions it
    /// calls), one entry per source: first the kernel's own, in program order, then those of
    /// the functions it calls (depth first, in call order). A handle register is traced
    /// back (through `mov`) to the `ld.param` of the kernel parameter it was loaded from; a
    /// handle that cannot be traced (computed, loaded from memory, a device function's
    /// parameter) gives no entry.
    pub fn texture_uses(&self, k: u32) -> Vec<TextureUse> {
        use ir::{Op, Operand};
        let fns = &self.module.functions;
        let mut out: Vec<TextureUse> = Vec::new();
        let mut seen = vec![false; fns.len()];
        let mut stack = vec![k as usize];
        while let Some(fi) = stack.pop() {
            if fi >= fns.len() || std::mem::replace(&mut seen[fi], true) {
                continue;
            }
            let f = &fns[fi];
            let mut callees = Vec::new();
            for inst in &f.body {
                if let Some(c) = inst.call.as_ref().and_then(|c| c.func) {
                    callees.push(c as usize);
                }
                if inst.op != Op::Tex {
                    continue;
                }
                let (Some(shape), Some(handle)) = (inst.mods.tex, inst.args.get(1)) else {
                    continue;
                };
                let source = match handle {
                    Operand::Texref(name) => TextureSource::Texref(name.clone()),
                    Operand::Reg(r) if fi == k as usize => {
                        let found = param_of_handle(f, *r);
                        match found {
                            Some(i) => TextureSource::Param(i),
                            None => continue,
                        }
                    }
                    _ => continue,
                };
                let f32 = inst.mods.ty() == Ty::F32;
                match out.iter_mut().find(|u| u.source == source) {
                    Some(u) => {
                        if f32 {
                            u.format = texture::TexFormat::F32;
                        }
                    }
                    None => out.push(TextureUse {
                        source,
                        shape,
                        format: if f32 {
                            texture::TexFormat::F32
                        } else {
                            texture::TexFormat::U32
                        },
                    }),
                }
            }
            // Visit callees in call order (the stack pops the last pushed first).
            stack.extend(callees.into_iter().rev());
        }
        out
    }

    /// Lays out each CTA's shared memory as ptxas's code for `layout` expects (the module's
    /// `.target` decides by default; a harness running a cubin for another SM sets it). Call
    /// before [`Program::load`].
    pub fn set_shared_layout(&mut self, layout: SharedLayout) {
        self.module.shared_layout = layout;
    }

    /// Places the module's `.global` variables in `mem` and resolves address initializers.
    /// Call once per memory before running.
    pub fn load(&mut self, mem: &mut Memory) {
        let m = &mut self.module;
        m.global_base = mem.alloc("module .global variables", m.globals.clone());
        for r in m.relocs.clone() {
            let addr = match (r.target.space, r.target.loc) {
                (ir::Space::Global, ir::Loc::Static(o)) => m.global_base + o,
                (sp @ (ir::Space::Shared | ir::Space::SharedCluster), ir::Loc::Static(o)) => {
                    let a = m.shared_layout.user_base() + o;
                    if r.generic {
                        exec::to_generic(sp, a)
                    } else {
                        a
                    }
                }
                (sp, ir::Loc::Static(o)) if r.generic => exec::to_generic(sp, o),
                (_, ir::Loc::Static(o)) => o,
                _ => continue,
            };
            let v = (addr as i64).wrapping_add(r.addend) as u64;
            let bytes = &v.to_le_bytes()[..r.size.min(8) as usize];
            if r.in_const {
                m.consts[r.offset as usize..r.offset as usize + bytes.len()].copy_from_slice(bytes);
            } else {
                let _ = mem.write(m.global_base + r.offset, bytes);
            }
        }
    }

    /// Runs kernel `k`.
    pub fn run(&self, mem: &mut Memory, k: u32, launch: &Launch) -> Result<RunStats, RunError> {
        exec::run(&self.module, mem, k, launch)
    }

    /// Runs kernel `k` as `options` say (thread order, sanitizer).
    pub fn run_with(
        &self,
        mem: &mut Memory,
        k: u32,
        launch: &Launch,
        options: &RunOptions,
    ) -> Result<RunStats, RunError> {
        exec::run_with(&self.module, mem, k, launch, options)
    }

    /// Runs kernel `k` with its threads in the order `schedule` says.
    pub fn run_scheduled(
        &self,
        mem: &mut Memory,
        k: u32,
        launch: &Launch,
        schedule: Schedule,
    ) -> Result<RunStats, RunError> {
        exec::run_scheduled(&self.module, mem, k, launch, schedule)
    }
}
