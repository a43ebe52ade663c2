//! libFuzzer target for the PTX parser: any bytes must parse without panicking, the tree must
//! print back to the decoded text, and every error range must lie inside the text.
//!
//! Run with `cargo +nightly fuzz run parse` from the repository root (seed it with corpus
//! files: `cargo +nightly fuzz run parse ../shared/corpus/ptx`).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (text, parse) = syntax::parse_bytes(data);
    assert_eq!(parse.syntax_node().to_string(), text);
    for e in parse.errors() {
        assert!(usize::from(e.range.end()) <= text.len());
        assert!(text.is_char_boundary(e.range.start().into()));
        assert!(text.is_char_boundary(e.range.end().into()));
    }
    // Walk the typed layer too: accessors must not panic on broken trees.
    for item in parse.tree().items() {
        if let syntax::ast::Item::Function(f) = item {
            let _ = (f.name(), f.is_entry(), f.params().count());
            if let Some(body) = f.body() {
                for stmt in body.statements() {
                    if let syntax::ast::Statement::Instruction(i) = stmt {
                        let _ = (i.opcode(), i.modifiers().count(), i.operands().count());
                    }
                }
            }
        }
    }
});
