//! Targets and the per-(kernel, target) key of code generation.

use std::fmt;

use crate::function::Function;

/// A streaming-multiprocessor architecture as ptxas names it: `sm_90`, `sm_90a`, `sm_100f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sm {
    /// The number after `sm_`: 75, 80, 86, 89, 90, 100, 120, ...
    pub number: u16,
    /// The suffix: none, `a` (architecture-specific) or `f` (family-specific).
    pub variant: SmVariant,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SmVariant {
    Base,
    ArchSpecific,
    FamilySpecific,
}

impl Sm {
    /// Parses `sm_XY`, `sm_XYa`, `sm_XYf` (also accepting `compute_XY`, as ptxas does not,
    /// is deliberately *not* done: a PTX `.target` names `sm_` only).
    pub fn parse(name: &str) -> Option<Sm> {
        let rest = name.strip_prefix("sm_")?;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 3 {
            return None;
        }
        let number = rest[..digits].parse().ok()?;
        let variant = match &rest[digits..] {
            "" => SmVariant::Base,
            "a" => SmVariant::ArchSpecific,
            "f" => SmVariant::FamilySpecific,
            _ => return None,
        };
        Some(Sm { number, variant })
    }
}

impl fmt::Display for Sm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = match self.variant {
            SmVariant::Base => "",
            SmVariant::ArchSpecific => "a",
            SmVariant::FamilySpecific => "f",
        };
        write!(f, "sm_{}{suffix}", self.number)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_names_round_trip() {
        for name in ["sm_75", "sm_80", "sm_90a", "sm_100f", "sm_120"] {
            assert_eq!(Sm::parse(name).unwrap().to_string(), name);
        }
        for bad in ["sm_", "sm_90b", "compute_90", "sm_9000", "sm90"] {
            assert_eq!(Sm::parse(bad), None, "{bad}");
        }
        assert!(Sm::parse("sm_90").unwrap() < Sm::parse("sm_90a").unwrap());
    }
}

/// Whether PTX written for `.target file_sm` may be compiled for `arch`, following ptxas
/// 13.0.88 (checked on the oracle): base targets compile for every SM at least as new;
/// `a` targets only for exactly that SM with `a`; `f` targets for SMs of the same family
/// (same tens digit) at least as new. On refusal, ptxas's reason.
pub fn check_arch(file_sm: Sm, arch: Sm) -> Result<(), String> {
    let too_new =
        || "SM version specified by .target is higher than the SM compiled for".to_string();
    match file_sm.variant {
        SmVariant::Base if arch.number >= file_sm.number => Ok(()),
        SmVariant::ArchSpecific if arch == file_sm => Ok(()),
        SmVariant::ArchSpecific if arch.number == file_sm.number => Err(format!(
            "PTX with .target '{file_sm}' cannot be compiled for architecture '{arch}'"
        )),
        SmVariant::ArchSpecific if arch.number > file_sm.number => Err(format!(
            "PTX with .target '{file_sm}' cannot be compiled for a later architecture ('{arch}')"
        )),
        SmVariant::FamilySpecific
            if arch.number / 10 == file_sm.number / 10 && arch.number >= file_sm.number =>
        {
            Ok(())
        }
        SmVariant::FamilySpecific
            if arch.number / 10 != file_sm.number / 10 && arch.number > file_sm.number =>
        {
            Err(format!(
                "PTX with .target '{file_sm}' cannot be compiled for '{arch}', an architecture of another SM family"
            ))
        }
        _ => Err(too_new()),
    }
}

#[cfg(test)]
mod arch_tests {
    use super::*;

    fn ok(file: &str, arch: &str) -> bool {
        check_arch(Sm::parse(file).unwrap(), Sm::parse(arch).unwrap()).is_ok()
    }

    /// Each case was run through ptxas 13.0.88 (`-arch=<arch>` on a file with `.target <file>`).
    #[test]
    fn matches_ptxas() {
        assert!(!ok("sm_90", "sm_80"));
        assert!(ok("sm_90", "sm_90a"));
        assert!(ok("sm_75", "sm_120"));
        assert!(!ok("sm_90a", "sm_90"));
        assert!(!ok("sm_90a", "sm_100"));
        assert!(ok("sm_100f", "sm_100"));
        assert!(ok("sm_100f", "sm_103"));
        assert!(ok("sm_100f", "sm_100a"));
        assert!(ok("sm_100f", "sm_100f"));
        assert!(!ok("sm_100f", "sm_110"));
        assert!(!ok("sm_100f", "sm_120"));
        assert!(!ok("sm_100a", "sm_100"));
        assert!(!ok("sm_100a", "sm_103a"));
        assert!(!ok("sm_100a", "sm_100f"));
        assert!(ok("sm_100a", "sm_100a"));
    }
}
