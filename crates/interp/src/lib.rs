//! Reference PTX interpreter: the semantic oracle the code generator is checked against.
//!
//! [`Program::from_text`] parses and lowers a module once (names to register slots, labels to
//! instruction indices, variables to addresses); [`Program::run`] executes a kernel over a grid
//! with 32-lane warps, divergence and reconvergence, CTA barriers, warp collectives, atomics and
//! bounds-checked memory spaces. Floating point is computed in software with correct rounding
//! in every PTX rounding mode ([`float`]). Instructions the interpreter does not implement are
//! reported as [`RunError::Unsupported`] when reached, never skipped. Calls of the device
//! runtime's `vprintf` and `__assertfail` are recorded in the [`Memory`]'s [`DeviceLog`]
//! ([`devrt`], shared with the SASS emulator).

#![forbid(unsafe_code)]

pub mod devrt;
pub mod exec;
pub mod float;
pub mod ir;
pub mod lower;
pub mod mem;

pub use devrt::{AssertRecord, DeviceLog, PrintfArg, PrintfRecord, SysCall};
pub use exec::{Launch, RunError, RunStats};
pub use ir::{Module, ParamSlot, Ty};
pub use lower::LowerError;
pub use mem::{Memory, ReservedSmem, SharedLayout, SharedMap};

/// A lowered module ready to run.
#[derive(Debug, Clone)]
pub struct Program {
    pub module: Module,
}

impl Program {
    /// Parses and lowers PTX text. Syntax errors and constructs the interpreter cannot give a
    /// meaning to are errors; unsupported instructions are not (they fail when executed).
    pub fn from_text(text: &str) -> Result<Program, LowerError> {
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
        let module = lower::lower(text, &parse.tree())?;
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
}
