//! What the server computes after an edit inside one kernel: its diagnostics and CodeLens
//! re-run code generation for that kernel only (salsa's execution events prove it).

use db::{RootDatabase, Sm, Target};
use lsp::analysis::{self, Config};

/// A module of `n` kernels, each a few dozen lines.
pub fn module(n: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n\n");
    for k in 0..n {
        s.push_str(&format!(
            ".visible .entry k{k}(.param .u64 p, .param .u32 n)\n{{\n\
             \t.reg .pred %p<2>;\n\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<6>;\n\
             \tld.param.u64 %rd1, [p];\n\tld.param.u32 %r1, [n];\n\
             \tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r2, %tid.x;\n\
             \tmov.u32 %r3, %ctaid.x;\n\tmov.u32 %r4, %ntid.x;\n\
             \tmad.lo.s32 %r5, %r3, %r4, %r2;\n\tsetp.ge.s32 %p1, %r5, %r1;\n\
             \t@%p1 bra DONE;\n\tmul.wide.s32 %rd3, %r5, 4;\n\
             \tadd.s64 %rd4, %rd2, %rd3;\n\tld.global.u32 %r6, [%rd4];\n\
             \tadd.u32 %r7, %r6, {k};\n\tshl.b32 %r8, %r7, 1;\n\
             \txor.b32 %r9, %r8, %r5;\n\tmin.u32 %r10, %r9, %r1;\n\
             \tst.global.u32 [%rd4], %r10;\nDONE:\n\tret;\n}}\n\n"
        ));
    }
    s
}

#[test]
fn an_edit_in_one_kernel_recompiles_only_it() {
    let mut db = RootDatabase::with_execution_log();
    let text = module(8);
    let file = db.add_file("m.ptx", text.as_bytes());
    let config = Config {
        targets: vec!["sm_90".into(), "sm_80".into()],
        ..Config::default()
    };
    let run = |db: &RootDatabase| {
        let d = analysis::diagnostics(db, file, &config);
        assert!(d.is_empty(), "{d:?}");
        analysis::code_lenses(db, file, &config)
    };
    let before = run(&db);
    assert_eq!(before.len(), 16);
    db.take_executed();
    db.set_text(file, &text.replace("%r6, 5;", "%r6, 55;"));
    let after = run(&db);
    assert_eq!(after.len(), 16);
    // The kernel targets of k5 (both SMs): the only keys code generation may run for.
    let k5: Vec<salsa::Id> = ["sm_90", "sm_80"]
        .iter()
        .map(|sm| {
            let t = Target::new(Sm::parse(sm).unwrap());
            let kts = db::kernel_targets(&db, file, &t);
            let k = kts
                .iter()
                .find(|k| k.function(&db).name(&db) == "k5")
                .unwrap();
            salsa::plumbing::AsId::as_id(k)
        })
        .collect();
    let mut codegen = 0;
    for (query, id) in db.take_executed() {
        if matches!(
            query.as_str(),
            "lowered" | "optimized" | "allocated" | "scheduled" | "encoded" | "kernel_stats"
        ) {
            codegen += 1;
            assert!(k5.contains(&id), "{query} re-ran for another kernel");
        }
    }
    assert_eq!(codegen, 12, "six queries for each of k5's two targets");
}
