//! Code generation as queries, one chain per interned (kernel, target) key:
//! `lowered → allocated → scheduled → encoded`, then `kernel_stats`, and `cubin` per
//! (file, target).
//!
//! Each per-kernel query reads only the kernel's own trivia-free syntax and its target, so an
//! edit of one kernel re-executes only that kernel's chain, and a whitespace edit re-executes
//! none (see `tests/incremental.rs`).

use syntax::{SyntaxKind, TextRange};

use ::target::Profile;

use crate::Sm;
use crate::target::{KernelTarget, Target};
use crate::{Db, Diagnostic, Severity, SourceFile, module_items, parse};

/// A code-generation failure: `unsupported: ...` or a malformed construct, with the range in
/// the kernel's trivia-free tree (mapped to the file by [`cubin`]) when known.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodegenError {
    pub message: String,
    pub range: Option<TextRange>,
    /// The device function whose trivia-free tree `range` lies in (an error inside an
    /// inlined callee); `None`: the kernel's.
    pub function: Option<String>,
}

impl CodegenError {
    pub(crate) fn plain(message: impl Into<String>) -> CodegenError {
        CodegenError {
            message: message.into(),
            range: None,
            function: None,
        }
    }
}

/// The module's `.func`s by name, as tracked handles (a definition preferred over
/// declarations of the same name), sorted by name. Re-executes on every edit but compares
/// equal unless a device function is added, removed, renamed or gains or loses its body; a
/// kernel's [`lowered`] then reads the `syntax` of exactly the functions it calls, so an
/// edit of a callee re-lowers its callers and no other kernel.
#[salsa::tracked(returns(ref))]
pub fn device_functions(db: &dyn Db, file: SourceFile) -> DeviceFunctions<'_> {
    let mut functions: Vec<(String, crate::Function<'_>, bool)> = Vec::new();
    for f in &module_items(db, file).functions {
        if f.is_entry(db) {
            continue;
        }
        let has_body = f
            .syntax(db)
            .node()
            .children()
            .any(|n| n.kind() == SyntaxKind::BLOCK);
        match functions.iter_mut().find(|(n, ..)| n == f.name(db)) {
            Some(e) if has_body && !e.2 => *e = (f.name(db).clone(), *f, true),
            Some(_) => {}
            None => functions.push((f.name(db).clone(), *f, has_body)),
        }
    }
    functions.sort_by(|a, b| a.0.cmp(&b.0));
    DeviceFunctions {
        functions: functions.into_iter().map(|(n, f, _)| (n, f)).collect(),
    }
}

/// See [`device_functions`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct DeviceFunctions<'db> {
    pub functions: Vec<(String, crate::Function<'db>)>,
}

impl<'db> DeviceFunctions<'db> {
    pub fn get(&self, name: &str) -> Option<crate::Function<'db>> {
        self.functions
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| self.functions[i].1)
    }
}

/// The device functions `kernel` calls, directly or not, with their trivia-free trees (for
/// `lower::lower_kernel`). Reads the `syntax` of those functions only.
fn callees<'db>(db: &'db dyn Db, kernel: crate::Function<'db>) -> lower::Functions {
    let mut out = lower::Functions::new();
    let mut work = lower::direct_callees(&kernel.syntax(db).node());
    if work.is_empty() {
        // Not even the table: a kernel without calls does not depend on the functions.
        return out;
    }
    let table = device_functions(db, kernel.file(db));
    while let Some(name) = work.pop() {
        if out.contains(&name) {
            continue;
        }
        let Some(f) = table.get(&name) else { continue };
        let node = f.syntax(db).node();
        work.extend(lower::direct_callees(&node));
        out.insert(name, node);
    }
    out
}

/// Whether kiln generates code for `sm` (its profile has ptxas's forms: `target::Profile`).
pub fn codegen_supported(sm: Sm) -> bool {
    sm.profile().is_some_and(Profile::has_codegen)
}

/// The SMs kiln generates code for, for messages (`sm_80, sm_90`).
pub fn codegen_sms() -> String {
    Profile::codegen_names()
}

/// The SMs kiln generates code for, oldest first (`sm_80`, ...).
pub fn codegen_sm_names() -> Vec<String> {
    Profile::all()
        .iter()
        .filter(|p| p.has_codegen())
        .map(Profile::name)
        .collect()
}

/// The profile of the target's SM, or the error that code generation is unsupported for it.
fn codegen_target(target: &Target) -> Result<lower::LowerTarget, CodegenError> {
    target
        .sm
        .profile()
        .and_then(|p| lower::LowerTarget::new(p, target.fmad))
        .ok_or_else(|| {
            CodegenError::plain(format!("unsupported: code generation for {}", target.sm))
        })
}

/// The module-scope variables of a file that kernels may address besides their own:
/// `.shared` ones with their sizes, `.global` ones by their slot in the address table
/// (`.nv.constant4`) and `.const` ones by their offset in bank 3, both from [`module_data`].
/// Re-executes on every edit, but compares equal (so no kernel's code generation re-runs)
/// unless a module-scope declaration changed.
#[salsa::tracked(returns(ref))]
pub fn module_vars(db: &dyn Db, file: SourceFile) -> lower::ModuleVars {
    use syntax::ast::DeclLike;
    let mut out = lower::ModuleVars::default();
    if let Ok(data) = module_data(db, file) {
        out.globals = data.globals.iter().map(|g| g.name.clone()).collect();
        let offsets = ::cubin::builder::constant_offsets(&data.constants);
        out.consts = data
            .constants
            .iter()
            .zip(offsets)
            .map(|(c, off)| (c.name.clone(), off as u32))
            .collect();
    }
    for item in parse(db, file).tree().items() {
        // System functions declared without a body: their addresses follow the globals'.
        if let syntax::ast::Item::Function(f) = &item
            && f.body().is_none()
            && let Some(n) = f.name()
            && ir::abi::is_system_function(n.text())
            && !out.system_functions.iter().any(|s| s == n.text())
        {
            out.system_functions.push(n.text().to_string());
        }
        let syntax::ast::Item::GlobalVar(g) = item else {
            continue;
        };
        if is_texref(&g) {
            out.texrefs.extend(
                g.declarators()
                    .into_iter()
                    .filter_map(|d| Some(d.name()?.text().to_string())),
            );
            continue;
        }
        if g.state_space().is_none_or(|t| t.text() != ".shared") {
            continue;
        }
        let elem: u32 = match g.ty().map(|t| t.text().to_string()).as_deref() {
            Some(".b8" | ".u8" | ".s8") => 1,
            Some(".b16" | ".u16" | ".s16" | ".f16" | ".bf16") => 2,
            Some(".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2") => 4,
            Some(".b64" | ".u64" | ".s64" | ".f64") => 8,
            _ => 0,
        } * g.vector().unwrap_or(1);
        let is_extern = g.linkage().iter().any(|t| t.text() == ".extern");
        let align = g.align().unwrap_or(elem).max(1);
        for d in g.declarators() {
            let Some(name) = d.name() else { continue };
            let dims: Vec<Option<u64>> = d
                .array_dims()
                .map(|dim| dim.size().and_then(|e| e.as_int()))
                .collect();
            if is_extern || dims.iter().any(Option::is_none) {
                out.shared_extern.push((name.text().to_string(), align));
            } else {
                let count: u64 = dims.iter().flatten().product();
                let size = u32::try_from(u64::from(elem) * count).unwrap_or(u32::MAX);
                out.shared_static
                    .push((name.text().to_string(), align, size));
            }
        }
    }
    out
}

/// Module-scope `.global` and `.const` variables with their storage, for the cubin (`.global`
/// ones in `.nv.global`/`.nv.global.init` with their addresses in the `.nv.constant4` table,
/// `.const` ones in `.nv.constant3`). Initializers of integer and float literals only; anything else
/// (addresses, `.extern` declarations, opaque types) is an error with the variable's span.
#[salsa::tracked(returns(ref))]
pub fn module_data(db: &dyn Db, file: SourceFile) -> Result<ModuleData, Vec<Diagnostic>> {
    use syntax::ast::{AstNode, DeclLike, InitValue, LiteralValue};
    let mut out = ModuleData::default();
    let mut errors = Vec::new();
    for item in parse(db, file).tree().items() {
        let syntax::ast::Item::GlobalVar(g) = item else {
            continue;
        };
        let space = g
            .state_space()
            .map(|t| t.text().to_string())
            .unwrap_or_default();
        if space != ".global" && space != ".const" || is_texref(&g) {
            continue;
        }
        let err = |m: &str| Diagnostic {
            severity: Severity::Error,
            message: format!("unsupported: {m}"),
            range: g.syntax().text_range(),
        };
        if g.linkage().iter().any(|t| t.text() == ".extern") {
            errors.push(err("`.extern` module variables (linking)"));
            continue;
        }
        let ty = g.ty().map(|t| t.text().to_string()).unwrap_or_default();
        let elem: usize = match ty.as_str() {
            ".b8" | ".u8" | ".s8" => 1,
            ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
            ".b32" | ".u32" | ".s32" | ".f32" => 4,
            ".b64" | ".u64" | ".s64" | ".f64" => 8,
            _ => {
                errors.push(err(&format!("module variables of type {ty}")));
                continue;
            }
        };
        let elem = elem * g.vector().unwrap_or(1) as usize;
        let align = u64::from(g.align().unwrap_or(elem as u32).max(1));
        for d in g.declarators() {
            let Some(name) = d.name() else { continue };
            let mut values: Vec<syntax::ast::Operand> = Vec::new();
            fn flatten(v: &InitValue, out: &mut Vec<syntax::ast::Operand>) {
                match v {
                    InitValue::List(l) => l.values().for_each(|v| flatten(&v, out)),
                    InitValue::Expr(e) => out.push(e.clone()),
                }
            }
            if let Some(v) = d.initializer().and_then(|i| i.value()) {
                flatten(&v, &mut values);
            }
            let mut count: Option<u64> = Some(1);
            for dim in d.array_dims() {
                count = match (count, dim.size().and_then(|e| e.as_int())) {
                    (Some(c), Some(n)) => c.checked_mul(n),
                    _ => None,
                };
            }
            let count = count
                .unwrap_or(values.len() as u64)
                .max(values.len() as u64);
            let mut bytes = Vec::with_capacity(count as usize * elem);
            let mut ok = true;
            for v in &values {
                let lit = match v {
                    syntax::ast::Operand::Immediate(l) => l.value(),
                    _ => None,
                };
                let word: Option<u64> = match (ty.as_str(), lit) {
                    (".f32", Some(LiteralValue::F32Bits(b))) => Some(u64::from(b)),
                    (".f64", Some(LiteralValue::F64Bits(b))) => Some(b),
                    (".f32" | ".f64", _) => None,
                    _ => v.as_int(),
                };
                match word {
                    Some(w) => bytes.extend_from_slice(&w.to_le_bytes()[..elem.min(8)]),
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if !ok || g.vector().is_some() && !values.is_empty() {
                errors.push(err("this module variable initializer"));
                continue;
            }
            let size = count * elem as u64;
            let name = name.text().to_string();
            if space == ".global" {
                out.globals.push(::cubin::builder::Global {
                    name,
                    size,
                    align,
                    init: (!values.is_empty()).then_some(bytes),
                });
            } else {
                bytes.resize(size as usize, 0);
                out.constants
                    .push(::cubin::builder::Constant { name, align, bytes });
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A texture reference: `.global .texref name;` or the older `.tex .u64 name;`.
fn is_texref(g: &syntax::ast::GlobalVar) -> bool {
    use syntax::ast::DeclLike;
    let space = g.state_space().map(|t| t.text().to_string());
    let ty = g.ty().map(|t| t.text().to_string());
    space.as_deref() == Some(".tex") || ty.as_deref() == Some(".texref")
}

/// Module variables with storage (see [`module_data`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModuleData {
    pub globals: Vec<::cubin::builder::Global>,
    pub constants: Vec<::cubin::builder::Constant>,
}

/// PTX → machine IR.
#[salsa::tracked(returns(ref))]
pub fn lowered<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<lower::Lowered, CodegenError> {
    let lt = codegen_target(kt.target(db))?;
    let syntax = kt.function(db).syntax(db);
    let module = module_vars(db, kt.function(db).file(db));
    let functions = callees(db, *kt.function(db));
    let l =
        lower::lower_kernel(&syntax.node(), lt, module, &functions).map_err(|e| CodegenError {
            message: e.message,
            range: Some(e.range),
            function: e.function,
        })?;
    debug_assert!(ir::verify(&l.func).is_ok(), "{:?}", ir::verify(&l.func));
    Ok(l)
}

/// Machine-IR optimizations (`crates/opt`) at the target's `-O` level.
#[salsa::tracked(returns(ref))]
pub fn optimized<'db>(db: &'db dyn Db, kt: KernelTarget<'db>) -> Result<ir::Func, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let target = kt.target(db);
    let profile = codegen_target(target)?.profile;
    let mut f = l.func.clone();
    opt::optimize(&mut f, profile, target.opt_level);
    Ok(f)
}

/// Register allocation.
#[salsa::tracked(returns(ref))]
pub fn allocated<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<regalloc::Allocation, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let f = optimized(db, kt).as_ref().map_err(Clone::clone)?;
    let budget = [kt.target(db).max_registers, l.max_registers]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(regalloc::MAX_REGISTERS)
        .max(regalloc::MIN_REGISTERS);
    regalloc::allocate_spilling(f, budget, l.frame_size, l.frame_align)
        .map_err(|e| CodegenError::plain(e.0))
}

/// The kernel code to schedule and encode: the optimized kernel, or the allocator's rewrite
/// of it with spill code.
pub(crate) fn final_code<'a>(f: &'a ir::Func, a: &'a regalloc::Allocation) -> &'a ir::Func {
    a.spill.as_ref().map_or(f, |s| &s.func)
}

/// Control codes.
#[salsa::tracked(returns(ref))]
pub fn scheduled<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<sched::Schedule, CodegenError> {
    let f = optimized(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let profile = codegen_target(kt.target(db))?.profile;
    // List scheduling from -O1 up; -O0 keeps program order.
    let reorder = kt.target(db).opt_level > 0;
    Ok(sched::schedule(
        final_code(f, a),
        &|v| a.get(v),
        profile,
        reorder,
    ))
}

/// SASS words and the listing.
#[salsa::tracked(returns(ref))]
pub fn encoded<'db>(db: &'db dyn Db, kt: KernelTarget<'db>) -> Result<emit::Encoded, CodegenError> {
    let f = optimized(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let s = scheduled(db, kt).as_ref().map_err(Clone::clone)?;
    let profile = codegen_target(kt.target(db))?.profile;
    emit::encode_checked(final_code(f, a), &|v| a.get(v), s, profile).map_err(|e| CodegenError {
        message: e.message,
        range: e.origin.map(|(a, b)| TextRange::new(a.into(), b.into())),
        function: None,
    })
}

/// A kernel's SASS as `kiln sass` prints it: a `.text.<kernel>` header line, then one
/// nvdisasm-style line per instruction (what the language server's SASS view shows, too).
pub fn sass_text(db: &dyn Db, kt: KernelTarget<'_>) -> Result<String, CodegenError> {
    sass_text_with(db, kt, false)
}

/// [`sass_text`], with each instruction's control field (`[B------:R-:W0:Y:S02]`: waits,
/// scoreboards, yield, stall) before it when `control_codes` (`kiln sass --control-codes`).
pub fn sass_text_with(
    db: &dyn Db,
    kt: KernelTarget<'_>,
    control_codes: bool,
) -> Result<String, CodegenError> {
    let e = encoded(db, kt).as_ref().map_err(Clone::clone)?;
    let name = kt.function(db).name(db);
    let mut text = format!("//--------------------- .text.{name} --------------------------\n");
    for (l, word) in e.listing.iter().zip(e.code.chunks_exact(16)) {
        text.push_str("        ");
        if control_codes {
            let word = u128::from_le_bytes(word.try_into().expect("16 bytes"));
            text.push_str(&sass::Control::from_word(word).to_text());
            text.push(' ');
        }
        text.push_str(l);
        text.push('\n');
    }
    Ok(text)
}

/// For each line of [`sass_text`] (its header line included, as `None`), the range in the
/// file of the PTX it came from: an instruction, or the `call` an inlined callee's code came
/// from; `None` for the header, scheduling `NOP`s, the closing branch and padding. What the
/// editor's SASS view highlights and hover shows.
pub fn sass_origins(
    db: &dyn Db,
    kt: KernelTarget<'_>,
) -> Result<Vec<Option<TextRange>>, CodegenError> {
    let e = encoded(db, kt).as_ref().map_err(Clone::clone)?;
    let function = kt.function(db);
    let node = kernel_node(db, kt)
        .ok_or_else(|| CodegenError::plain("the kernel is no longer in the file"))?;
    let relative: Vec<TextRange> = e
        .origins
        .iter()
        .flatten()
        .map(|&(a, b)| TextRange::new(a.into(), b.max(a).into()))
        .collect();
    let mut mapped = function.syntax(db).map_ranges(&relative, &node).into_iter();
    let mut out = vec![None];
    out.extend(e.origins.iter().map(|o| o.and_then(|_| mapped.next())));
    Ok(out)
}

/// The kernel's node in the file's current parse (code-generation origins are ranges in its
/// trivia-free tree, mapped through this node).
pub(crate) fn kernel_node(db: &dyn Db, kt: KernelTarget<'_>) -> Option<syntax::SyntaxNode> {
    let function = kt.function(db);
    parse(db, function.file(db))
        .syntax_node()
        .children()
        .filter_map(<syntax::ast::Function as syntax::ast::AstNode>::cast)
        .find(|f| {
            f.is_entry()
                && f.name()
                    .is_some_and(|n| n.text() == function.name(db).as_str())
        })
        .map(|f| syntax::ast::AstNode::syntax(&f).clone())
}

/// What ptxas's `-v` reports for a kernel, plus the instruction count.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KernelStats {
    pub name: String,
    pub registers: u32,
    pub stack_frame: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
    pub shared_bytes: u32,
    pub barriers: u32,
    /// Bytes of constant bank 0 (parameter base + parameters), as ptxas's `cmem[0]`.
    pub cmem0: u32,
    pub instructions: usize,
    /// Threads per block the occupancy is computed at, and where the number comes from.
    pub block_threads: u32,
    pub block_threads_from: BlockThreads,
    /// Active blocks and warps per SM for blocks of `block_threads` threads with the kernel's
    /// registers, static shared memory and barriers, no dynamic shared memory and the default
    /// carveout (`target::OccupancyLimits::occupancy`, CUDA's occupancy calculator).
    pub occupancy: ::target::Occupancy,
}

impl KernelStats {
    /// `occupancy 100% at 256 threads`, with `(.reqntid)` or `(.maxntid)` after the block
    /// size when the kernel declares it: the CodeLens's and `kiln build -v`'s wording.
    pub fn occupancy_summary(&self) -> String {
        let from = self
            .block_threads_from
            .directive()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        format!(
            "occupancy {}% at {} threads{from}",
            self.occupancy.percent(),
            self.block_threads
        )
    }
}

/// Where a kernel's block size for the occupancy comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockThreads {
    /// The kernel's `.reqntid` (the product of its dimensions).
    Reqntid,
    /// The kernel's `.maxntid` (the largest block it accepts).
    Maxntid,
    /// Neither is declared: [`DEFAULT_BLOCK_THREADS`].
    Default,
}

impl BlockThreads {
    /// The directive's name, `None` for the default.
    pub fn directive(self) -> Option<&'static str> {
        match self {
            BlockThreads::Reqntid => Some(".reqntid"),
            BlockThreads::Maxntid => Some(".maxntid"),
            BlockThreads::Default => None,
        }
    }
}

/// The block size occupancy is reported at when a kernel declares none.
pub const DEFAULT_BLOCK_THREADS: u32 = 256;

/// Per-kernel statistics.
#[salsa::tracked(returns(ref))]
pub fn kernel_stats<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<KernelStats, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let e = encoded(db, kt).as_ref().map_err(Clone::clone)?;
    let profile = codegen_target(kt.target(db))?.profile;
    let params_end = l
        .params
        .iter()
        .map(|p| p.offset + p.size)
        .max()
        .unwrap_or(0);
    // As ptxas reports it: without sm_90's reserved 1 KiB.
    let shared_bytes = l
        .shared_size
        .saturating_sub(profile.reserved_shared_first());
    let product = |d: [u32; 3]| d.iter().fold(1u32, |p, &n| p.saturating_mul(n));
    let (block_threads, block_threads_from) = match (l.reqntid, l.max_threads) {
        (Some(d), _) => (product(d), BlockThreads::Reqntid),
        (None, Some(d)) => (product(d), BlockThreads::Maxntid),
        (None, None) => (DEFAULT_BLOCK_THREADS, BlockThreads::Default),
    };
    let occupancy = profile.occupancy_limits().occupancy(&::target::Launch::new(
        a.registers,
        block_threads,
        shared_bytes,
        u32::from(l.num_barriers),
    ));
    Ok(KernelStats {
        name: kt.function(db).name(db).clone(),
        registers: a.registers,
        stack_frame: a.spill.as_ref().map_or(l.frame_size, |s| s.frame_size),
        spill_stores: a.spill.as_ref().map_or(0, |s| s.store_bytes),
        spill_loads: a.spill.as_ref().map_or(0, |s| s.load_bytes),
        shared_bytes,
        barriers: u32::from(l.num_barriers),
        cmem0: profile.param_base + params_end,
        instructions: e.instructions,
        block_threads,
        block_threads_from,
        occupancy,
    })
}

/// The static performance model's estimate of a kernel's code (`crates/perfmodel`: one
/// warp's issue cycles from the control codes and the SM's variable latencies), or `None`
/// when the kernel does not compile or the model has no figures for the SM.
pub fn kernel_model(db: &dyn Db, kt: KernelTarget<'_>) -> Option<perfmodel::Estimate> {
    let e = encoded(db, kt).as_ref().ok()?;
    let profile = kt.target(db).sm.profile()?;
    perfmodel::estimate(&profile.name(), &e.code).ok()
}

/// A file compiled for a target: the key of [`cubin`].
#[salsa::interned(debug)]
pub struct FileTarget<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(ref)]
    pub target: Target,
}

/// The result of compiling a file: the cubin bytes, or diagnostics with file spans.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CubinOutput {
    pub bytes: Option<Vec<u8>>,
    pub diagnostics: Vec<Diagnostic>,
}

/// The kernels of a file compiled for a target, in source order.
pub fn kernel_targets<'db>(
    db: &'db dyn Db,
    file: SourceFile,
    target: &Target,
) -> Vec<KernelTarget<'db>> {
    module_items(db, file)
        .functions
        .iter()
        .filter(|f| f.is_entry(db))
        .map(|f| KernelTarget::new(db, *f, target.clone()))
        .collect()
}

/// Compiles every kernel of a file and assembles the cubin. Fails closed: module variables
/// and any kernel with an error make the whole file an error (every error is reported, with
/// its span). Device functions are inlined into the kernels that call them (`lower`'s
/// `call.rs`); they get no code of their own.
/// The checks of [`cubin`] without building it: errors in the file (syntax, semantics,
/// `.target`), in its module data, and each kernel's code-generation error, with spans in the
/// file. What the language server shows for a target on every edit.
#[salsa::tracked(returns(ref))]
pub fn codegen_diagnostics<'db>(db: &'db dyn Db, ft: FileTarget<'db>) -> Vec<Diagnostic> {
    checked_kernels(db, ft, false).0
}

/// The diagnostics that stop a file's cubin for a target, and (with `keep_code`, when there
/// are none) the code of every kernel.
fn checked_kernels<'db>(
    db: &'db dyn Db,
    ft: FileTarget<'db>,
    keep_code: bool,
) -> (Vec<Diagnostic>, Vec<emit::KernelCode>) {
    let file = ft.file(db);
    let target = ft.target(db);
    // Code is generated only for input without errors (syntax, semantics, `.target`).
    let mut diagnostics: Vec<Diagnostic> = crate::diagnostics(db, file)
        .iter()
        .cloned()
        .chain(crate::target_diagnostics(db, file, target.sm))
        .filter(|d| d.severity == Severity::Error)
        .collect();
    if !diagnostics.is_empty() {
        return (diagnostics, Vec::new());
    }
    let items = module_items(db, file);
    if let Err(e) = module_data(db, file) {
        diagnostics.extend(e.iter().cloned());
    }
    // Shared variables are placed per kernel by the lowering, `.global`/`.const` ones by
    // `module_data`; module `.local` variables have no storage outside the kernels, and a
    // kernel referring to any module variable the lowering does not place is refused there.
    // Device functions have no code of their own: calls inline them.
    let root = parse(db, file).syntax_node();
    let nodes: Vec<_> = root
        .children()
        .filter(|n| n.kind() == SyntaxKind::FUNCTION)
        .filter(|n| {
            <syntax::ast::Function as syntax::ast::AstNode>::cast(n.clone())
                .and_then(|f| f.name())
                .is_some()
        })
        .collect();
    let mut kernels = Vec::new();
    for (function, node) in items.functions.iter().zip(&nodes) {
        if !function.is_entry(db) {
            continue;
        }
        let kt = KernelTarget::new(db, *function, target.clone());
        let compiled = if keep_code {
            compile_kernel(db, kt).map(|k| kernels.push(k))
        } else {
            // The first error of `compile_kernel`'s queries (`kernel_stats` reads them all).
            kernel_stats(db, kt)
                .as_ref()
                .map(|_| ())
                .map_err(Clone::clone)
        };
        match compiled {
            Ok(()) => {}
            Err(e) => diagnostics.push(Diagnostic {
                severity: Severity::Error,
                message: format!("kernel `{}`: {}", function.name(db), e.message),
                range: match (e.range, &e.function) {
                    (Some(r), None) => function.syntax(db).map_range(r, node),
                    (Some(r), Some(callee)) => {
                        // A range in an inlined device function's tree: its definition.
                        items
                            .functions
                            .iter()
                            .zip(&nodes)
                            .find(|(f, n)| {
                                !f.is_entry(db)
                                    && f.name(db) == callee
                                    && n.children().any(|c| c.kind() == SyntaxKind::BLOCK)
                            })
                            .map_or(node.text_range(), |(f, n)| f.syntax(db).map_range(r, n))
                    }
                    (None, _) => node.text_range(),
                },
            }),
        }
    }
    (diagnostics, kernels)
}

#[salsa::tracked(returns(ref))]
pub fn cubin<'db>(db: &'db dyn Db, ft: FileTarget<'db>) -> CubinOutput {
    let (diagnostics, kernels) = checked_kernels(db, ft, true);
    let file = ft.file(db);
    let target = ft.target(db);
    let root = parse(db, file).syntax_node();
    if !diagnostics.is_empty() {
        return CubinOutput {
            bytes: None,
            diagnostics,
        };
    }
    let data = module_data(db, file)
        .as_ref()
        .ok()
        .cloned()
        .unwrap_or_default();
    let cubin_target = emit::CubinTarget { sm: target.sm };
    let vars = module_vars(db, file);
    let symbols = emit::ModuleSymbols {
        system_functions: vars.system_functions.clone(),
        texrefs: vars.texrefs.clone(),
    };
    match emit::build_cubin_for(
        cubin_target,
        &kernels,
        &data.globals,
        &data.constants,
        &symbols,
        (*crate::lines::has_line_info(db, file))
            .then(|| crate::lines::module_line_tables(db, file)),
    ) {
        Ok(bytes) => CubinOutput {
            bytes: Some(bytes),
            diagnostics,
        },
        Err(m) => CubinOutput {
            bytes: None,
            diagnostics: vec![Diagnostic {
                severity: Severity::Error,
                message: m,
                range: root.text_range(),
            }],
        },
    }
}

/// The sm_90 link-time symbols ptxas resolves for a kernel's reserved-smem reads (the builder
/// ignores them before sm_90).
fn reserved_symbols(u: lower::ReservedSmemUse) -> Vec<::cubin::builder::ReservedSymbol> {
    use ::cubin::builder::ReservedSymbol as S;
    [
        (u.offset0, S::Offset0),
        (u.begin, S::Begin),
        (u.cap, S::Cap),
    ]
    .into_iter()
    .filter_map(|(on, s)| on.then_some(s))
    .collect()
}

fn compile_kernel<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<emit::KernelCode, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let e = encoded(db, kt).as_ref().map_err(Clone::clone)?;
    let stats = kernel_stats(db, kt).as_ref().map_err(Clone::clone)?;
    let (source_lines, ptx_lines) = if *crate::lines::has_line_info(db, kt.function(db).file(db)) {
        crate::lines::kernel_line_rows(db, kt)?
    } else {
        Default::default()
    };
    Ok(emit::KernelCode {
        name: stats.name.clone(),
        encoded: e.clone(),
        params: l.params.iter().map(|p| (p.size, p.align)).collect(),
        registers: stats.registers,
        max_threads: l.max_threads,
        reqntid: l.reqntid,
        shared_size: l.shared_size,
        num_barriers: l.num_barriers,
        frame_size: stats.stack_frame,
        reserved_smem_used: l.reserved_smem.used,
        reserved_smem_resolved: reserved_symbols(l.reserved_smem),
        system_calls: l.system_calls.clone(),
        texture_slots: l.texture_slots.clone(),
        source_lines,
        ptx_lines,
    })
}
