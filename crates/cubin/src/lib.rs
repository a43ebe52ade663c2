//! `cubin`: NVIDIA's ELF flavour for GPU code, as ptxas 13.0.88 writes it.
//!
//! * [`read`] parses bytes into the [`Cubin`] model (bounds-checked, never panics);
//! * [`write`] lays the model out again with ptxas's rules — reading then writing a ptxas
//!   cubin gives the same bytes;
//! * [`eiattr`] names and decodes the `.nv.info` attribute records and `.nv.compat` records;
//! * [`listing`] prints a `cuobjdump -elf`-style listing (and JSON);
//! * [`builder`] makes cubins from scratch for the code generator.

#![forbid(unsafe_code)]

pub mod builder;
pub mod eiattr;
pub mod facts;
pub mod lines;
pub mod listing;
pub mod model;
pub mod read;
pub mod write;

pub use model::*;
pub use read::read;
pub use write::write;

/// A reader error: what is wrong with the input and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
