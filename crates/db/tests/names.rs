//! Name resolution as a query (`db::function_names`, `db::resolved_functions`): the memoized,
//! per-function resolution mapped to the file equals resolving the current parse directly,
//! and an edit re-resolves only the function it touched.

use db::{RootDatabase, function_names, module_items, resolved_functions};
use hir::names::resolve_function;
use salsa::plumbing::AsId;
use syntax::ast::{self, AstNode};

/// `resolved_functions` against `resolve_function` on the current parse, function by function.
fn check_equal(text: &str, what: &str) -> usize {
    let mut db = RootDatabase::default();
    let file = db.add_file("m.ptx", text.as_bytes());
    let ours = resolved_functions(&db, file);
    let parse = db::parse(&db, file);
    let direct: Vec<_> = parse
        .syntax_node()
        .children()
        .filter_map(ast::Function::cast)
        .map(|f| resolve_function(&f))
        .collect();
    assert_eq!(ours.len(), direct.len(), "{what}: functions");
    for ((node, _, names), want) in ours.iter().zip(&direct) {
        assert_eq!(names, want, "{what}: function at {:?}", node.text_range());
    }
    direct.iter().map(|n| n.defs.len() + n.uses.len()).sum()
}

#[test]
fn mapped_names_equal_direct_resolution() {
    let root = test_support::workspace_root();
    let mut files = test_support::ptx_files(&root.join("test-data/lsp"));
    files.extend(test_support::ptx_files(&root.join("test-data/examples")));
    files.extend(test_support::ptx_files(&root.join("test-data/unseen")));
    // Every 7th corpus file (messy real-world PTX: comments inside instructions, odd spacing,
    // files with errors) when the corpus is present.
    if let Some(corpus) = test_support::corpus_dir() {
        files.extend(
            test_support::ptx_files(&corpus.join("ptx"))
                .into_iter()
                .step_by(7),
        );
        files.extend(test_support::ptx_files(&corpus.join("rejected")));
    }
    assert!(files.len() > 20, "{} files", files.len());
    let mut names = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        names += check_equal(&text, &f.display().to_string());
    }
    assert!(names > 1000, "{names} names checked");
    // Comments and odd spacing between a function's tokens.
    check_equal(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\
         .reg .b32 %r<4>; // regs\n  mov.u32 /* x */ %r1 ,\t%tid.x;\nL1: add.u32 %r2,%r1,  %r1;\n\
         @%p bra   L1;\nret;\n}\n",
        "comments",
    );
}

const MODULE: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\
.visible .entry alpha(.param .u64 p)\n{\n.reg .u32 %r<4>;\nmov.u32 %r1, %tid.x;\nret;\n}\n\
.visible .entry beta(.param .u64 p)\n{\n.reg .u32 %r<4>;\nmov.u32 %r1, %tid.x;\n\
add.u32 %r2, %r1, 7;\nret;\n}\n";

#[test]
fn an_edit_re_resolves_only_its_function() {
    let mut db = RootDatabase::with_execution_log();
    let file = db.add_file("m.ptx", MODULE.as_bytes());
    let resolved_of = |db: &RootDatabase| {
        let functions = module_items(db, file).functions.clone();
        for f in &functions {
            function_names(db, *f);
        }
        let ids: Vec<_> = functions
            .iter()
            .map(|f| (f.as_id(), f.name(db).clone()))
            .collect();
        let mut ran: Vec<String> = db
            .take_executed()
            .into_iter()
            .filter(|(q, _)| q == "function_names")
            .filter_map(|(_, id)| ids.iter().find(|(i, _)| *i == id).map(|(_, n)| n.clone()))
            .collect();
        ran.sort();
        ran
    };
    assert_eq!(resolved_of(&db), ["alpha", "beta"]);
    // An instruction added to beta, and a comment that moves both functions.
    let edited = MODULE
        .replace(
            "add.u32 %r2, %r1, 7;\n",
            "add.u32 %r2, %r1, 7;\nadd.u32 %r3, %r2, 1;\n",
        )
        .replace(".visible .entry alpha", "// first\n.visible .entry alpha");
    db.set_text(file, &edited);
    assert_eq!(resolved_of(&db), ["beta"]);
    // alpha's names, memoized, still map to the moved text.
    let ours = resolved_functions(&db, file);
    let alpha = &ours[0].2;
    let r1 = alpha.defs.iter().position(|d| d.name == "%r").unwrap();
    let text = file_text(&db, file);
    for u in alpha.uses_of(r1) {
        assert_eq!(&text[u.range], "%r1");
    }
    check_equal(&edited, "edited");
}

fn file_text(db: &RootDatabase, file: db::SourceFile) -> String {
    file.text(db).to_string()
}
