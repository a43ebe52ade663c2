//! kiln's language server.
//!
//! Built the way rust-analyzer's main loop is (`docs/arch/lsp.md`): one thread owns the
//! [`db::RootDatabase`] and applies the client's notifications in arrival order; requests and
//! diagnostics run on database snapshots (clones sharing storage) in a small thread pool, so
//! typing never waits for code generation. An edit cancels the work running on older
//! snapshots (salsa unwinds it with `salsa::Cancelled`): a cancelled request is answered with
//! `ContentModified`, cancelled diagnostics are dropped (the edit scheduled new ones).
//!
//! Features: live diagnostics (syntax, semantics, `.target` rules, code generation, spills)
//! for each target the user chose, one CodeLens per kernel and target with the numbers of
//! `kiln ptxas -v`, document symbols, and the custom request `kiln/viewSass` (the kernel's
//! SASS as `kiln sass` prints it), with the notification `kiln/sassChanged` after every edit.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod line_index;
mod server;

pub use server::{main_loop, run_stdio};

/// The custom request for a kernel's SASS.
pub mod view_sass {
    use serde::{Deserialize, Serialize};

    pub const METHOD: &str = "kiln/viewSass";

    #[derive(Clone, Debug, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Params {
        pub text_document: lsp_types::TextDocumentIdentifier,
        /// The kernel by name; else the kernel around `position`; else the file's first.
        pub kernel: Option<String>,
        pub position: Option<lsp_types::Position>,
        /// `sm_90`; else the first of the file's targets.
        pub target: Option<String>,
        /// Print each instruction's control field before it (`kiln sass --control-codes`).
        #[serde(default)]
        pub control_codes: bool,
    }

    pub type Result = crate::analysis::SassView;

    /// The notification sent after every change to a document: open SASS views of it should
    /// be requested again.
    pub const CHANGED: &str = "kiln/sassChanged";
}
