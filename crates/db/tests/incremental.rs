//! Incrementality: which queries re-execute after an edit (salsa `WillExecute` events).

use db::{Function, RootDatabase, SourceFile, function_outline, module_items};
use expect_test::{Expect, expect};
use salsa::plumbing::AsId;

const MODULE: &str = r#"
.version 8.0
.target sm_90
.address_size 64

.global .u32 counter;

.func (.reg .u32 out) helper(.reg .u32 x)
{
    add.u32 out, x, 1;
    ret;
}

.visible .entry alpha(.param .u64 p)
{
    .reg .u32 %r<4>;
    mov.u32 %r1, %tid.x;
    ret;
}

.visible .entry beta(.param .u64 p)
{
    .reg .u32 %r<4>;
    .reg .pred %p;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p, %r1, 0;
@%p bra DONE;
    add.u32 %r2, %r1, 7;
DONE:
    ret;
}

.visible .entry gamma()
{
    ret;
}
"#;

/// Runs every per-function query of the file, then returns the executed queries, naming
/// function keys by the function's name.
fn run_all(db: &RootDatabase, file: SourceFile) -> String {
    let functions: Vec<Function<'_>> = module_items(db, file).functions.clone();
    for f in &functions {
        function_outline(db, *f);
    }
    db::diagnostics(db, file);
    let names: Vec<(salsa::Id, String)> = functions
        .iter()
        .map(|f| (f.as_id(), f.name(db).clone()))
        .collect();
    let mut out = String::new();
    for (query, id) in db.take_executed() {
        let key = names
            .iter()
            .find(|(i, _)| *i == id)
            .map_or_else(|| "file".to_string(), |(_, n)| n.clone());
        out.push_str(&format!("{query}({key})\n"));
    }
    out
}

fn check(db: &RootDatabase, file: SourceFile, expect: Expect) {
    expect.assert_eq(&run_all(db, file));
}

#[test]
fn editing_one_kernel_reruns_only_its_queries() {
    let mut db = RootDatabase::with_execution_log();
    let file = db.add_file("m.ptx", MODULE.as_bytes());
    check(
        &db,
        file,
        expect![[r#"
            module_items(file)
            parse(file)
            function_outline(helper)
            function_outline(alpha)
            function_outline(beta)
            function_outline(gamma)
            diagnostics(file)
            module_semantics(file)
            function_diagnostics(helper)
            module_scope(file)
            function_diagnostics(alpha)
            function_diagnostics(beta)
            function_diagnostics(gamma)
        "#]],
    );

    assert_eq!(
        db::diagnostics(&db, file),
        &[],
        "the test module is valid PTX"
    );

    // A new instruction in beta: beta's queries re-execute, no other function's do.
    let edited = MODULE.replace(
        "    add.u32 %r2, %r1, 7;\n",
        "    add.u32 %r2, %r1, 7;\n    add.u32 %r3, %r2, 1;\n",
    );
    db.set_text(file, &edited);
    check(
        &db,
        file,
        expect![[r#"
            parse(file)
            module_items(file)
            function_outline(beta)
            diagnostics(file)
            module_semantics(file)
            function_diagnostics(beta)
        "#]],
    );
    let beta = module_items(&db, file)
        .functions
        .iter()
        .copied()
        .find(|f| f.name(&db) == "beta")
        .unwrap();
    assert_eq!(function_outline(&db, beta).instructions, 6);
}

#[test]
fn trivia_edits_rerun_no_per_function_query() {
    let mut db = RootDatabase::with_execution_log();
    let file = db.add_file("m.ptx", MODULE.as_bytes());
    run_all(&db, file);

    // Comments and whitespace inside alpha's body, between items, and a blank line that moves
    // every later function: only the file-level queries run again.
    let edited = MODULE
        .replace(
            "    mov.u32 %r1, %tid.x;\n    ret;",
            "    mov.u32   %r1,%tid.x; // thread index\n\n    ret;",
        )
        .replace(
            ".visible .entry gamma",
            "/* the last kernel */\n\n.visible .entry gamma",
        );
    db.set_text(file, &edited);
    check(
        &db,
        file,
        expect![[r#"
            parse(file)
            module_items(file)
            diagnostics(file)
            module_semantics(file)
        "#]],
    );
}

#[test]
fn relative_ranges_map_back_to_the_file() {
    let mut db = RootDatabase::default();
    let file = db.add_file("m.ptx", MODULE.as_bytes());
    let gamma = module_items(&db, file)
        .functions
        .iter()
        .copied()
        .find(|f| f.name(&db) == "gamma")
        .unwrap();
    let syntax = gamma.syntax(&db);
    // `ret` in the trivia-free text of gamma.
    let rel_text = syntax.node().text().to_string();
    let rel = rel_text.find("ret").unwrap() as u32;
    let parse = db::parse(&db, file);
    let current = parse
        .syntax_node()
        .children()
        .find(|n| n.text().to_string().contains("gamma"))
        .unwrap();
    let range = syntax.map_range(db::TextRange::new(rel.into(), (rel + 3).into()), &current);
    let text = file.text(&db);
    let start = usize::from(range.start());
    assert_eq!(&text[start..usize::from(range.end())], "ret");
    assert_eq!(start, MODULE.rfind("ret;").unwrap());
    // Edit before gamma: the same relative range now maps to the moved text.
    db.set_text(
        file,
        &MODULE.replace(".version 8.0", "// header\n.version 8.0"),
    );
    let parse = db::parse(&db, file);
    let current = parse
        .syntax_node()
        .children()
        .find(|n| n.text().to_string().contains("gamma"))
        .unwrap();
    let gamma = module_items(&db, file)
        .functions
        .iter()
        .copied()
        .find(|f| f.name(&db) == "gamma")
        .unwrap();
    let moved = gamma
        .syntax(&db)
        .map_range(db::TextRange::new(rel.into(), (rel + 3).into()), &current);
    assert_eq!(usize::from(moved.start()), start + "// header\n".len());
}
