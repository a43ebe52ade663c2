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
    test_support::oracle_tool("ptxas")
}

#[test]
fn ptxas_accepts_the_fixture() {
    let Some(ptxas) = test_support::oracle_tool_or_skip("ptxas") else {
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

/// Runs ptxas on `text`; `Some(true)` if it parsed (no "Parsing error", though it may report
/// semantic errors), `None` if ptxas is not installed.
fn ptxas_parses(text: &str, tag: &str) -> Option<bool> {
    let ptxas = ptxas()?;
    let dir = std::env::temp_dir();
    let src = dir.join(format!("kiln-syntax-{tag}-{}.ptx", std::process::id()));
    let out_path = dir.join(format!("kiln-syntax-{tag}-{}.cubin", std::process::id()));
    std::fs::write(&src, text).expect("temp file is writable");
    let out = std::process::Command::new(&ptxas)
        .arg("-arch=sm_90a")
        .arg(&src)
        .arg("-o")
        .arg(&out_path)
        .output()
        .expect("ptxas runs");
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&out_path);
    let log = String::from_utf8_lossy(&out.stderr);
    // Besides "Parsing error", these fatal messages are how ptxas rejects malformed module
    // headers (`.version 8.4;`), malformed declarations, and stray control characters.
    const REJECTS: &[&str] = &[
        "Parsing error",
        "Missing .version",
        "Missing .target",
        "No variable storage",
        "Unexpected non-ASCII",
        "Unexpected EOF",
    ];
    Some(!REJECTS.iter().any(|m| log.contains(m)))
}

/// Each case: a PTX file, and whether our parser reports no syntax error; ptxas must agree
/// on whether it parses. Covers every entry of the four directive tables plus rejects.
#[test]
fn directive_tables_agree_with_ptxas() {
    let header_sample = |d: &str| -> &'static str {
        match d {
            ".maxnreg" => ".maxnreg 32",
            ".maxntid" => ".maxntid 32, 1, 1",
            ".reqntid" => ".reqntid 32",
            ".minnctapersm" => ".minnctapersm 1",
            ".maxnctapersm" => ".maxnctapersm 1",
            ".pragma" => ".pragma \"nounroll\";",
            ".reqnctapercluster" => ".reqnctapercluster 1",
            ".explicitcluster" => ".explicitcluster",
            ".maxclusterrank" => ".maxclusterrank 1",
            ".blocksareclusters" => ".blocksareclusters",
            ".local_maxnreg" => ".local_maxnreg 8",
            ".noreturn" => ".noreturn",
            ".abi_preserve" => ".abi_preserve 8",
            ".abi_preserve_control" => ".abi_preserve_control 8",
            other => panic!("add a sample for header directive {other}"),
        }
    };
    let head = ".version 9.0\n.target sm_90a\n.address_size 64\n.file 1 \"x.cu\"\n";
    let mut cases: Vec<(String, String)> = Vec::new();
    let all_header: Vec<&str> = syntax::ENTRY_HEADER_DIRECTIVES
        .iter()
        .chain(syntax::FUNC_HEADER_DIRECTIVES)
        .copied()
        .collect();
    for d in &all_header {
        for kind in [".entry", ".func"] {
            let text = format!(
                "{head}.visible {kind} k()\n{}\n{{\n\tret;\n}}\n",
                header_sample(d)
            );
            cases.push((format!("{kind} header {d}"), text));
        }
    }
    cases.push((
        "unknown header".into(),
        format!("{head}.visible .entry k()\n.foo 1\n{{\n\tret;\n}}\n"),
    ));
    let body_samples = [
        ".pragma \"nounroll\";",
        ".loc 1 2 3",
        "ts: .branchtargets $L1;\n\tbrx.idx %r1, ts;",
        "ct: .calltargets k;",
        "pt: .callprototype ()_ ();",
        ".file 2 \"y.cu\"",
        ".maxnreg 4;",
        ".alias a, k;",
        ".foo 1;",
    ];
    for (i, sample) in body_samples.iter().enumerate() {
        let text = format!(
            "{head}.visible .entry k()\n{{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 0;\n\t{sample}\n$L1:\n\tret;\n}}\n"
        );
        cases.push((format!("body {i}: {sample}"), text));
    }
    for sample in [
        ".pragma \"nounroll\";",
        ".alias a, k;",
        ".loc 1 2 3",
        ".foo 1;",
    ] {
        let text =
            format!("{head}.visible .func k()\n{{\n\tret;\n}}\n.visible .func a();\n{sample}\n");
        cases.push((format!("module: {sample}"), text));
    }
    // Every generic directive in the tables is among the samples.
    for d in syntax::BODY_DIRECTIVES
        .iter()
        .chain(syntax::MODULE_DIRECTIVES)
    {
        assert!(
            cases.iter().any(|(_, t)| t.contains(&format!("{d} "))),
            "no sample for directive {d}"
        );
    }
    let mut checked = 0;
    let mut disagreements = Vec::new();
    for (i, (name, text)) in cases.iter().enumerate() {
        let ours = syntax::parse(text).errors().is_empty();
        let Some(theirs) = ptxas_parses(text, &format!("dir{i}")) else {
            println!("skipping: ptxas not installed (run `cargo xtask oracle` or set KILN_PTXAS)");
            return;
        };
        checked += 1;
        if ours != theirs {
            disagreements.push(format!("{name}: ours parses={ours}, ptxas parses={theirs}"));
        }
    }
    println!("checked {checked} directive cases against ptxas");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// PTX is token-based, not line-based: ptxas accepts directives and operands split or joined
/// across lines as below, and rejects the stray `;` and missing `;` cases. Our parser must
/// agree on every case.
#[test]
fn layout_agrees_with_ptxas() {
    let k = ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n";
    let cases: Vec<(&str, String)> = vec![
        ("one line", ".version 8.4 .target sm_90 .address_size 64 .visible .entry k() { ret; }\n".into()),
        ("stray ; after .version", ".version 8.4;\n.target sm_90;\n.address_size 64;\n.visible .entry k() { ret; }\n".into()),
        ("wrapped .target", ".version 8.4\n.target sm_90,\n texmode_independent\n.address_size 64\n.visible .entry k() { ret; }\n".into()),
        (
            "wrapped .file and .loc",
            format!(".version 8.4\n.target sm_90\n.address_size 64\n.file 1\n \"a.cu\"\n{k}\t.loc 1\n 2 3\n\tret;\n}}\n"),
        ),
        (
            ".loc then instruction on one line",
            format!(".version 8.4\n.target sm_90\n.address_size 64\n.file 1 \"a.cu\" {k}\t.loc 1 2 3 ret;\n}}\n"),
        ),
        (
            ".loc with ;",
            format!(".version 8.4\n.target sm_90\n.address_size 64\n.file 1 \"a.cu\"\n{k}\t.loc 1 2 3;\n\tret;\n}}\n"),
        ),
        (
            ".pragma without ;",
            format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\t.pragma \"nounroll\"\n\tret;\n}}\n"),
        ),
        (
            "component after a line break",
            format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.u32 %r1, %tid\n.x;\n\tret;\n}}\n"),
        ),
        (
            "component after a comment",
            format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.u32 %r1, %ntid/* c */.x;\n\tret;\n}}\n"),
        ),
        ("version number on the next line", ".version\n 8.4\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n".into()),
        (".target in a body", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\t.target sm_30\n\tret;\n}}\n")),
        (".target after a function", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n.target sm_90\n".into()),
        ("declaration cut at the end of the file", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k".into()),
        ("declaration without ; before the next item", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .func f()\n.visible .entry k() { ret; }\n".into()),
        (".noreturn declaration", ".version 8.4\n.target sm_90\n.address_size 64\n.weak .func f() .noreturn;\n.visible .entry k() { ret; }\n".into()),
        ("digits-only modifier", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.4 %r1, 1;\n\tret;\n}}\n")),
        ("directive as modifier", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.entry.u32 %r1, 1;\n\tret;\n}}\n")),
        ("parameter without state space", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k(.u64 p) { ret; }\n".into()),
        ("variable without state space", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\t.align 4 .b32 x;\n\tret;\n}}\n")),
        ("two .target lines", ".version 8.4\n.target sm_90\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n".into()),
        ("non-ASCII in a comment", ".version 8.4\n.target sm_90\n.address_size 64\n// caf\u{e9}\n.visible .entry k() { ret; }\n".into()),
        ("parameter with an initializer", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p=1) { ret; }\n".into()),
        ("unknown component", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.u32 %r1, %tid.q;\n\tret;\n}}\n")),
        ("component in an address", format!(".version 8.4\n.target sm_90\n.address_size 64\n.global .u32 g;\n{k}\tld.global.u32 %r1, [g.x];\n\tret;\n}}\n")),
        ("index by a register", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.u32 %r1, %r0[%r1];\n\tret;\n}}\n")),
        ("number-like modifier", format!(".version 8.4\n.target sm_90\n.address_size 64\n{k}\tmov.0f3F800000u32 %r1, 1;\n\tret;\n}}\n")),
        ("string across lines", ".version 8.4\n.target sm_90\n.address_size 64\n.file 1 \"a\nb.cu\"\n.visible .entry k() { ret; }\n".into()),
        ("form feed", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k() {\x0c ret; }\n".into()),
        ("vertical tab", ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k() {\x0b ret; }\n".into()),
        (
            "section data on one line",
            ".version 8.4\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n.section .debug_str { .b8 1, 2 .b8 3 .b32 x\n.b8 4 }\n".into(),
        ),
    ];
    let mut disagreements = Vec::new();
    for (i, (name, text)) in cases.iter().enumerate() {
        let ours = syntax::parse(text).errors().is_empty();
        let Some(theirs) = ptxas_parses(text, &format!("layout{i}")) else {
            println!("skipping: ptxas not installed (run `cargo xtask oracle` or set KILN_PTXAS)");
            return;
        };
        if ours != theirs {
            disagreements.push(format!("{name}: ours parses={ours}, ptxas parses={theirs}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// Operand and declaration forms at the edge of the grammar, each checked against ptxas:
/// our parser must report a syntax error exactly when ptxas reports a parse error.
#[test]
fn operand_forms_agree_with_ptxas() {
    let statements = [
        "add.s32 %r1, -%r2, 1;",
        "add.s32 %r1, ~%r2, 1;",
        "add.s32 %r1, +%r2, 1;",
        "and.pred %p1, !%p2, %p3;",
        "mov.u64 %rd1, g+4;",
        "ld.global.u32 %r1, [g+-4];",
        "ld.global.u32 %r1, [-%rd1];",
        "mov.u32 %r1, -(4);",
        "mov.u32 %r1, ~4;",
        "mov.u32 %r1, .y;",
        "mov.u32 %r1, {};",
        "ld.global.u32 %r1, [];",
        "call.uni f, ();",
        "mov.f32 %f1, 1.;",
        "mov.f32 %f1, 1.x;",
        "add.s32 %r1, %r2+1, 3;",
        "add.s32 %r1, %r2<%r1, 3;",
        "add.s32 %r1, %r2*2, 3;",
        "add.s32 %r1, (%r2), 3;",
        "mov.u64 %rd1, g*2;",
        "mov.u64 %rd1, g-4;",
        "mov.u64 %rd1, 4+g;",
        "ld.global.u32 %r1, [%rd1+%r2];",
        "ld.global.u32 %r1, [%rd1-4];",
        "ld.global.u32 %r1, [%rd1+(2*2)];",
        "ld.global.u32 %r1, [4+%rd1];",
        "ld.global.u32 %r1, arr[1];",
        "mov.u32 %r1, arr[1+1];",
        "add.s32 %r1, 1+2*3, 3;",
        "setp.eq.s32 %p1|%p2, %r1, 3;",
        "add.s32 %r1, %r1|%r2, 3;",
        "mov.u64 %rd1, generic(g);",
        ".reg %r<2>;",
        ".reg .b32 %q<2>;",
        ".loc 1 2 3$L_after_loc:",
    ];
    let mut disagreements = Vec::new();
    for (i, stmt) in statements.iter().enumerate() {
        let text = format!(
            ".version 8.4\n.target sm_90\n.address_size 64\n.file 1 \"a.cu\"\n.global .u32 g;\n\
             .global .u32 arr[4];\n.func f() {{ ret; }}\n.visible .entry k()\n{{\n .reg .b32 %r<3>;\n .reg .pred %p<4>;\n\
             .reg .b64 %rd<2>;\n .reg .f32 %f<2>;\n {stmt}\n ret;\n}}\n"
        );
        let ours = syntax::parse(&text).errors().is_empty();
        let Some(theirs) = ptxas_parses(&text, &format!("operand{i}")) else {
            println!("skipping: ptxas not installed (run `cargo xtask oracle` or set KILN_PTXAS)");
            return;
        };
        if ours != theirs {
            disagreements.push(format!("{stmt}: ours parses={ours}, ptxas parses={theirs}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// Array sizes and initializers, checked against ptxas like the operand forms.
#[test]
fn declaration_forms_agree_with_ptxas() {
    let decls = [
        ".global .f32 a[2*2];",
        ".global .f32 a[(4)];",
        ".global .f32 a[4U];",
        ".global .f32 a[0x4];",
        ".global .f32 a[-4];",
        ".global .u32 v = 2*3;",
        ".global .u32 v = -1;",
        ".global .u32 v = (1<<3)|1;",
        ".global .u64 v = generic(g);",
        ".global .u64 v = g+4;",
        ".global .u8 v[2] = {0xff(g), 0xff00(g)};",
        ".global .u32 ;",
        ".global .u32 t[2] = {1, 2,};",
        ".global .u32 t[2] = {1, 2};",
        ".global .entry .u32 e;",
    ];
    let mut disagreements = Vec::new();
    for (i, decl) in decls.iter().enumerate() {
        let text = format!(
            ".version 8.4\n.target sm_90\n.address_size 64\n.global .u32 g;\n{decl}\n.visible .entry k() {{ ret; }}\n"
        );
        let ours = syntax::parse(&text).errors().is_empty();
        let Some(theirs) = ptxas_parses(&text, &format!("decl{i}")) else {
            println!("skipping: ptxas not installed (run `cargo xtask oracle` or set KILN_PTXAS)");
            return;
        };
        if ours != theirs {
            disagreements.push(format!("{decl}: ours parses={ours}, ptxas parses={theirs}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
