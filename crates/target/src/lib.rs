//! One place per SM.
//!
//! [`Sm`] names a target as ptxas does (`sm_90`, `sm_90a`, `sm_100f`) and decides which PTX
//! targets compile for which architectures ([`check_arch`]). [`Profile`] holds everything
//! else that differs between the SMs kiln knows: where the kernel parameters and the driver's
//! words sit in constant bank 0, how shared memory is laid out, what a cubin for the SM
//! contains, and — for the SMs with code generation — which of ptxas's instruction forms the
//! code uses. The rest of kiln asks the profile; no other crate compares SM numbers (the model
//! is Mesa NAK's `ShaderModel`).
//!
//! The occupancy limits ([`OccupancyLimits`], `data/occupancy.tsv`) are the exception to the
//! next paragraph: they come from NVIDIA's documentation and the CUDA toolkit's occupancy
//! calculator, and `cargo xtask occupancy-check` checks them and kiln's occupancy function
//! against that calculator.
//!
//! Every value here was read from ptxas 13.0.88's output (the comments say which) and is
//! checked by tests against the oracle: the byte-exact cubin tests (`cubin/tests/oracle.rs`),
//! the code-generation tests that compare kiln's listing with ptxas's (`db/tests/codegen.rs`)
//! and the emulator's corpus stage.

mod occupancy;
mod profile;
mod sm;
mod wmma;

pub use occupancy::{Launch, Limiter, Occupancy, OccupancyLimits};
pub use profile::{
    BindlessBankAttrs, CubinLayout, DriverWords, Forms, Profile, RESERVED_SHARED_BYTES,
    SharedReserve,
};
pub use sm::{Sm, SmVariant, check_arch};
pub use wmma::{WmmaFrag, WmmaLayout, wmma_layout};
