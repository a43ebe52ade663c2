//! `ir::liveness::Liveness::compute` (each block's transfer reduced to two bit sets, the
//! fixed point iterated over sets) equals the definition it replaced (every block walked in
//! every round, `compute_by_walks`) on every kernel of `test-data/codegen` and
//! `test-data/unseen/ptx` that lowers, before and after optimization.

use std::path::Path;

use ir::liveness::Liveness;
use syntax::SyntaxKind;

fn same(f: &ir::Func, what: &str) {
    let (a, b) = (Liveness::compute(f), Liveness::compute_by_walks(f));
    assert_eq!(a.live_in, b.live_in, "{what}: live-in");
    assert_eq!(a.live_out, b.live_out, "{what}: live-out");
}

#[test]
fn liveness_by_sets_equals_liveness_by_walks() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data");
    let mut files: Vec<_> = ["codegen", "unseen/ptx"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("test-data exists"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    let mut checked = 0;
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable");
        let parse = syntax::parse(&text);
        for function in parse
            .syntax_node()
            .children()
            .filter(|n| n.kind() == SyntaxKind::FUNCTION)
        {
            let Ok(mut l) = lower::lower_kernel(
                &function,
                lower::LowerTarget::for_sm(90, true),
                &lower::ModuleVars::default(),
                &lower::Functions::default(),
            ) else {
                continue;
            };
            let what = path.display().to_string();
            same(&l.func, &what);
            opt::optimize(&mut l.func, target::Profile::of(90).unwrap(), 3);
            same(&l.func, &what);
            checked += 1;
        }
    }
    assert!(checked >= 100, "only {checked} kernels lowered");
}
