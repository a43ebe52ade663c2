//! SM names: `sm_90`, `sm_90a`, `sm_100f`.

use std::fmt;

use crate::Profile;

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
    /// A base target (`sm_<number>`).
    pub const fn new(number: u16) -> Sm {
        Sm {
            number,
            variant: SmVariant::Base,
        }
    }

    /// Parses `sm_XY`, `sm_XYa`, `sm_XYf`. (`compute_XY` is deliberately refused: a PTX
    /// `.target` names `sm_` only.)
    pub fn parse(name: &str) -> Option<Sm> {
        Sm::parse_short(name.strip_prefix("sm_")?)
    }

    /// Parses the short form of the PTX ISA tables: `90`, `90a`, `100f`.
    pub fn parse_short(s: &str) -> Option<Sm> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 3 {
            return None;
        }
        let number = s[..digits].parse().ok()?;
        let variant = match &s[digits..] {
            "" => SmVariant::Base,
            "a" => SmVariant::ArchSpecific,
            "f" => SmVariant::FamilySpecific,
            _ => return None,
        };
        Some(Sm { number, variant })
    }

    /// The SM's family: its tens (`sm_100`, `sm_103` and `sm_103f` are family 10).
    pub fn family(self) -> u16 {
        self.number / 10
    }

    /// What differs on this SM, when kiln knows it (the variants share their base's profile).
    pub fn profile(self) -> Option<&'static Profile> {
        Profile::of(u32::from(self.number))
    }

    /// Whether a module for target `self` may use a feature whose minimum target is `min`
    /// (the PTX ISA's "requires sm_XY"). A plain minimum is met by every later SM; an `a`
    /// minimum (`sm_90a`) only by that exact architecture-specific target; an `f` minimum by
    /// the same family at or above it, with an `a` or `f` suffix.
    pub fn satisfies(self, min: Sm) -> bool {
        match min.variant {
            SmVariant::Base => self.number >= min.number,
            SmVariant::ArchSpecific => {
                self.variant == SmVariant::ArchSpecific && self.number == min.number
            }
            SmVariant::FamilySpecific => {
                self.variant != SmVariant::Base
                    && self.family() == min.family()
                    && self.number >= min.number
            }
        }
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

/// Whether PTX written for `.target file_sm` may be compiled for `arch`, following ptxas
/// 13.0.88 (checked on the oracle): base targets compile for every SM at least as new;
/// `a` targets only for exactly that SM with `a`; `f` targets for SMs of the same family
/// at least as new. On refusal, ptxas's reason.
pub fn check_arch(file_sm: Sm, arch: Sm) -> Result<(), String> {
    let too_new =
        || "SM version specified by .target is higher than the SM compiled for".to_string();
    let same_family = arch.family() == file_sm.family();
    match file_sm.variant {
        SmVariant::Base if arch.number >= file_sm.number => Ok(()),
        SmVariant::ArchSpecific if arch == file_sm => Ok(()),
        SmVariant::ArchSpecific if arch.number == file_sm.number => Err(format!(
            "PTX with .target '{file_sm}' cannot be compiled for architecture '{arch}'"
        )),
        SmVariant::ArchSpecific if arch.number > file_sm.number => Err(format!(
            "PTX with .target '{file_sm}' cannot be compiled for a later architecture ('{arch}')"
        )),
        SmVariant::FamilySpecific if same_family && arch.number >= file_sm.number => Ok(()),
        SmVariant::FamilySpecific if !same_family && arch.number > file_sm.number => Err(format!(
            "PTX with .target '{file_sm}' cannot be compiled for '{arch}', an architecture of another SM family"
        )),
        _ => Err(too_new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_names_round_trip() {
        for name in ["sm_75", "sm_80", "sm_90a", "sm_100f", "sm_120"] {
            assert_eq!(Sm::parse(name).unwrap().to_string(), name);
        }
        for bad in ["sm_", "sm_90b", "compute_90", "sm_9000", "sm90", "90"] {
            assert_eq!(Sm::parse(bad), None, "{bad}");
        }
        assert_eq!(Sm::parse_short("90a"), Sm::parse("sm_90a"));
        assert!(Sm::parse("sm_90").unwrap() < Sm::parse("sm_90a").unwrap());
    }

    #[test]
    fn feature_minimums() {
        let sm = |s| Sm::parse(s).unwrap();
        let min = |s| Sm::parse_short(s).unwrap();
        assert!(sm("sm_90a").satisfies(min("90a")));
        assert!(!sm("sm_90").satisfies(min("90a")));
        assert!(!sm("sm_100a").satisfies(min("90a")));
        assert!(sm("sm_100").satisfies(min("90")));
        assert!(!sm("sm_80").satisfies(min("90")));
        assert!(sm("sm_103f").satisfies(min("100f")));
        assert!(sm("sm_103a").satisfies(min("100f")));
        assert!(!sm("sm_103").satisfies(min("100f")));
        assert!(!sm("sm_120f").satisfies(min("100f")));
    }

    fn ok(file: &str, arch: &str) -> bool {
        check_arch(Sm::parse(file).unwrap(), Sm::parse(arch).unwrap()).is_ok()
    }

    /// Each case was run through ptxas 13.0.88 (`-arch=<arch>` on a file with `.target <file>`).
    #[test]
    fn check_arch_matches_ptxas() {
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
