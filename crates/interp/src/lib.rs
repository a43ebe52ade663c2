//! Reference PTX interpreter.
#![forbid(unsafe_code)]
pub mod float;
