//! Code generation as queries, one chain per interned (kernel, target) key:
//! `lowered → allocated → scheduled → encoded`, then `kernel_stats`, and `cubin` per
//! (file, target).
//!
//! Each per-kernel query reads only the kernel's own trivia-free syntax and its target, so an
//! edit of one kernel re-executes only that kernel's chain, and a whitespace edit re-executes
//! none (see `tests/incremental.rs`).

use syntax::{SyntaxKind, TextRange};

use crate::target::{KernelTarget, Target};
use crate::{Db, Diagnostic, Severity, SourceFile, module_items, parse};

/// A code-generation failure: `unsupported: ...` or a malformed construct, with the range in
/// the kernel's trivia-free tree (mapped to the file by [`cubin`]) when known.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CodegenError {
    pub message: String,
    pub range: Option<TextRange>,
}

impl CodegenError {
    fn plain(message: impl Into<String>) -> CodegenError {
        CodegenError {
            message: message.into(),
            range: None,
        }
    }
}

/// The SMs with code generation (a SASS table and checked forms).
pub fn codegen_supported(sm: u16) -> bool {
    matches!(sm, 80 | 90)
}

/// PTX → machine IR.
#[salsa::tracked(returns(ref))]
pub fn lowered<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<lower::Lowered, CodegenError> {
    let target = kt.target(db);
    let sm = u32::from(target.sm.number);
    if !codegen_supported(target.sm.number) {
        return Err(CodegenError::plain(format!(
            "unsupported: code generation for {}",
            target.sm
        )));
    }
    let syntax = kt.function(db).syntax(db);
    let lt = lower::LowerTarget {
        sm,
        param_base: ::cubin::builder::param_base(sm),
    };
    let l = lower::lower_kernel(&syntax.node(), lt).map_err(|e| CodegenError {
        message: e.message,
        range: Some(e.range),
    })?;
    debug_assert!(ir::verify(&l.func).is_ok(), "{:?}", ir::verify(&l.func));
    Ok(l)
}

/// Register allocation.
#[salsa::tracked(returns(ref))]
pub fn allocated<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<regalloc::Allocation, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let budget = [kt.target(db).max_registers, l.max_registers]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(regalloc::MAX_REGISTERS);
    regalloc::allocate(&l.func, budget).map_err(|e| CodegenError::plain(e.0))
}

/// Control codes.
#[salsa::tracked(returns(ref))]
pub fn scheduled<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<sched::Schedule, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let sm = u32::from(kt.target(db).sm.number);
    Ok(sched::schedule(&l.func, &|v| a.get(v), sm))
}

/// SASS words and the listing.
#[salsa::tracked(returns(ref))]
pub fn encoded<'db>(db: &'db dyn Db, kt: KernelTarget<'db>) -> Result<emit::Encoded, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let s = scheduled(db, kt).as_ref().map_err(Clone::clone)?;
    let sm = u32::from(kt.target(db).sm.number);
    emit::encode(&l.func, &|v| a.get(v), s, sm).map_err(|e| CodegenError {
        message: e.message,
        range: e.origin.map(|(a, b)| TextRange::new(a.into(), b.into())),
    })
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
}

/// Per-kernel statistics.
#[salsa::tracked(returns(ref))]
pub fn kernel_stats<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<KernelStats, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let a = allocated(db, kt).as_ref().map_err(Clone::clone)?;
    let e = encoded(db, kt).as_ref().map_err(Clone::clone)?;
    let sm = u32::from(kt.target(db).sm.number);
    let params_end = l
        .params
        .iter()
        .map(|p| p.offset + p.size)
        .max()
        .unwrap_or(0);
    Ok(KernelStats {
        name: kt.function(db).name(db).clone(),
        registers: a.registers,
        stack_frame: 0,
        spill_stores: 0,
        spill_loads: 0,
        shared_bytes: l.shared_size,
        barriers: u32::from(l.num_barriers),
        cmem0: ::cubin::builder::param_base(sm) + params_end,
        instructions: e.instructions,
    })
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

/// Compiles every kernel of a file and assembles the cubin. Fails closed: module variables,
/// device functions and any kernel with an error make the whole file an error (every error
/// is reported, with its span).
#[salsa::tracked(returns(ref))]
pub fn cubin<'db>(db: &'db dyn Db, ft: FileTarget<'db>) -> CubinOutput {
    let file = ft.file(db);
    let target = ft.target(db);
    let mut diagnostics = Vec::new();
    let items = module_items(db, file);
    for item in &items.items {
        let what = match item.kind {
            crate::ItemKind::Global => Some("module-scope variables"),
            crate::ItemKind::DeviceFunction => Some("`.func` device functions"),
            _ => None,
        };
        if let Some(what) = what {
            diagnostics.push(Diagnostic {
                severity: Severity::Error,
                message: format!("unsupported: {what}"),
                range: item.range,
            });
        }
    }
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
        match compile_kernel(db, kt) {
            Ok(k) => kernels.push(k),
            Err(e) => diagnostics.push(Diagnostic {
                severity: Severity::Error,
                message: format!("kernel `{}`: {}", function.name(db), e.message),
                range: match e.range {
                    Some(r) => function.syntax(db).map_range(r, node),
                    None => node.text_range(),
                },
            }),
        }
    }
    if !diagnostics.is_empty() {
        return CubinOutput {
            bytes: None,
            diagnostics,
        };
    }
    match emit::build_cubin(u32::from(target.sm.number), &kernels) {
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

fn compile_kernel<'db>(
    db: &'db dyn Db,
    kt: KernelTarget<'db>,
) -> Result<emit::KernelCode, CodegenError> {
    let l = lowered(db, kt).as_ref().map_err(Clone::clone)?;
    let e = encoded(db, kt).as_ref().map_err(Clone::clone)?;
    let stats = kernel_stats(db, kt).as_ref().map_err(Clone::clone)?;
    Ok(emit::KernelCode {
        name: stats.name.clone(),
        encoded: e.clone(),
        params: l.params.iter().map(|p| (p.size, p.align)).collect(),
        registers: stats.registers,
        max_threads: l.max_threads,
        reqntid: l.reqntid,
        shared_size: l.shared_size,
        num_barriers: l.num_barriers,
    })
}
