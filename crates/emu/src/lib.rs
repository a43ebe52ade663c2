//! Functional SASS emulator: runs the kernels of a cubin (sm_80, sm_90) the way the GPU
//! would, one CTA at a time, with 32-lane warps, every register file, convergence barriers,
//! bounds-checked memory spaces and the integer and float ALU with SASS semantics.
//!
//! [`load`] reads a cubin into a [`Program`] (code decoded with `crates/sass`, module globals
//! allocated in an [`interp::Memory`], constant banks relocated); [`run`] executes a kernel
//! over a grid ([`Launch`]). Instructions, modifiers or operand forms the emulator does not
//! implement stop the run with [`EmuError::Unsupported`] naming them; they are never skipped.
//! Calls of the device runtime's `vprintf` and `__assertfail` ([`syscall`]) are recorded in
//! the memory's `interp::DeviceLog`, the interpreter's model of them.
//! The harness comparing a kernel here with the reference interpreter is its own crate
//! (`crates/harness`).

#![forbid(unsafe_code)]

pub mod exec;
pub mod fallback;
pub mod load;
pub mod ops;
pub mod syscall;

pub use exec::{EmuError, Launch, RunOptions, Stats, run, run_with};
pub use load::{Kernel, LoadError, Program, load};
