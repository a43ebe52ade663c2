//! Targets and the per-(kernel, target) key of code generation.

use crate::function::Function;

pub use target::{Sm, SmVariant, check_arch};

/// Everything code generation depends on besides the PTX: the SM and the options that change
/// the generated code. Two compilations with equal targets produce equal code.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub sm: Sm,
    /// `-O0` .. `-O3` (ptxas's default is 3).
    pub opt_level: u8,
    /// `--maxrregcount`: the register budget per thread, if limited on the command line.
    pub max_registers: Option<u32>,
    /// `--fmad` (ptxas's default `true`): contract `mul` + `add`/`sub` into fused
    /// multiply-adds as ptxas does (`hir::contract`).
    pub fmad: bool,
}

impl Target {
    pub fn new(sm: Sm) -> Target {
        Target {
            sm,
            opt_level: 3,
            max_registers: None,
            fmad: true,
        }
    }
}

/// The key of every code-generation query: one function compiled for one target.
///
/// Interned, so that each query takes a single argument (salsa memoizes per key) and so that
/// changing the target creates new keys — recomputing target-dependent queries only — while
/// the per-function front-end queries (keyed by [`Function`] alone) stay valid.
#[salsa::interned(debug)]
pub struct KernelTarget<'db> {
    pub function: Function<'db>,
    #[returns(ref)]
    pub target: Target,
}
