//! `tests/data/features.ptx` exercises the grammar the brief lists (every state space,
//! initializers with `generic()`/mask/symbol addresses, linkage, `.alias`, `.callprototype`,
//! `.branchtargets`, `.calltargets`, performance and cluster directives, vector operands,
//! address forms, immediates of every base, nested blocks, ...). ptxas 13.0 accepts it: this
//! test checks that with the real ptxas when it is installed (else prints `skipping: ...`
//! for that part), and that our parser accepts it with the expected structure.

use std::path::{Path, PathBuf};

use syntax::ast::{self, AstNode, DeclLike};

fn fixture() -> (PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/features.ptx");
    let text = std::fs::read_to_string(&path).expect("fixture is readable");
    (path, text)
}

fn ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KILN_PTXAS") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var_os("HOME")?;
    let p = Path::new(&home).join(".cache/kiln-oracle/13.0.88/bin/ptxas");
    p.is_file().then_some(p)
}

#[test]
fn ptxas_accepts_the_fixture() {
    let Some(ptxas) = ptxas() else {
        println!("skipping: ptxas not installed (run `cargo xtask oracle` or set KILN_PTXAS)");
        return;
    };
    let (path, _) = fixture();
    let out_path =
        std::env::temp_dir().join(format!("kiln-syntax-features-{}.cubin", std::process::id()));
    let out = std::process::Command::new(&ptxas)
        .arg("-arch=sm_90a")
        .arg(&path)
        .arg("-o")
        .arg(&out_path)
        .output()
        .expect("ptxas runs");
    let _ = std::fs::remove_file(&out_path);
    assert!(
        out.status.success(),
        "ptxas rejected the fixture:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn parser_accepts_the_fixture_with_expected_structure() {
    let (_, text) = fixture();
    let parse = syntax::parse(&text);
    assert_eq!(parse.syntax_node().to_string(), text);
    assert!(parse.errors().is_empty(), "{:#?}", parse.errors());
    let file = parse.tree();

    let functions: Vec<_> = file.functions().collect();
    let names: Vec<_> = functions
        .iter()
        .map(|f| f.name().unwrap().text().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "vprintf",
            "add_one",
            "abort_now",
            "alias_target",
            "alias_name",
            "k",
            "clustered",
            "ranked",
            "explicit_cluster"
        ]
    );
    assert!(functions[0].body().is_none() && functions[0].return_params().count() == 1);
    let k = &functions[5];
    assert!(k.is_entry());
    assert_eq!(k.params().count(), 3);
    let perf: Vec<_> = k
        .perf_directives()
        .map(|d| d.name().unwrap().text().to_string())
        .collect();
    assert_eq!(perf, [".maxntid", ".minnctapersm", ".maxnreg"]);

    let globals: Vec<_> = file
        .items()
        .filter_map(|i| match i {
            ast::Item::GlobalVar(g) => Some(g),
            _ => None,
        })
        .collect();
    assert_eq!(globals.len(), 16);
    let masked = globals
        .iter()
        .find(|g| g.name().unwrap().text() == "masked")
        .unwrap();
    let init = masked.declarators()[0].initializer().unwrap();
    let Some(ast::InitValue::List(list)) = init.value() else {
        panic!("list expected")
    };
    assert_eq!(list.values().count(), 4);
    assert!(
        list.values()
            .all(|v| matches!(v, ast::InitValue::Expr(ast::Operand::Call(_))))
    );
    let managed = globals
        .iter()
        .find(|g| g.name().unwrap().text() == "managed_var")
        .unwrap();
    assert_eq!(
        managed.attributes()[0].words().next().unwrap().text(),
        ".managed"
    );
    assert_eq!(managed.align(), Some(4));

    // The instruction count matches a plain textual count: in the fixture every instruction
    // of `k` sits on its own line ending with `;`; declarations and directives start with `.`
    // and labelled directives contain `: .`.
    let body = k.body().unwrap();
    let insns = body
        .syntax()
        .descendants()
        .filter_map(ast::Instruction::cast)
        .count();
    let k_text = &text[text.find(".visible .entry k(").unwrap()..];
    let k_text = &k_text[..k_text.find("\n}\n").unwrap()];
    let k_body = &k_text[k_text.find("\n{\n").unwrap()..];
    let textual = k_body
        .lines()
        .map(str::trim)
        .filter(|l| l.ends_with(';') && !l.starts_with('.') && !l.contains(": ."))
        .count();
    assert_eq!(insns, textual);
    assert_eq!(insns, 45);
    let directives: Vec<_> = body
        .syntax()
        .descendants()
        .filter_map(ast::Directive::cast)
        .map(|d| d.name().unwrap().text().to_string())
        .collect();
    assert_eq!(
        directives,
        [
            ".loc",
            ".callprototype",
            ".branchtargets",
            ".calltargets",
            ".pragma"
        ]
    );
}
