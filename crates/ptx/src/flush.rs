//! Where ptxas 13.0.88's code for `cvt{.rn,.rz,.rm,.rp}.ftz{.sat}.f32.f64` flushes to a
//! sign-preserving zero: the interpreter's model (`interp`'s `f64_to_f32_flush`) and the
//! code kiln writes (`lower`'s `cvt_f32_f64_ftz`) read these thresholds from here, so that
//! they cannot drift apart.
//!
//! The ISA says "subnormal results"; ptxas compares the source `|a|` (a double) with a
//! threshold per rounding mode, which also flushes some sources that round to `FLT_MIN`
//! itself (read from its code on sm_75 to sm_90 and checked with edge sources in
//! `test-data/codegen/cvt_ftz_f64.ptx`, ptxas's cubins run in the emulator):
//! * `.rn`: `|a| <` [`RN_BELOW`];
//! * `.rm`: `|a| <` [`ABOVE_MIDPOINT`] for a negative source, `<` [`FLT_MIN`] for a positive
//!   one; `.rp` the other way round;
//! * `.rz`: the result below `FLT_MIN`.

/// `FLT_MIN` (2^-126) as a double.
pub const FLT_MIN: u64 = 0x3810_0000_0000_0000;
/// The smallest double above M = 2^-126 - 2^-150, the midpoint of the largest f32 subnormal
/// and `FLT_MIN`.
pub const ABOVE_MIDPOINT: u64 = 0x380f_ffff_e000_0001;
/// The `.rn` threshold (`DSETP.GEU |a|, T` in ptxas's code, so `[M, T)` flushes too).
pub const RN_BELOW: u64 = 0x380f_ffff_f000_0000;
