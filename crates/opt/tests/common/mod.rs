//! What the optimizer tests share.

use syntax::SyntaxKind;

/// The first function of `text` lowered for `sm` (with `--fmad`), optimized at `-O3`, verified
/// and printed.
pub fn lower_and_optimize(text: &str, sm: u32) -> String {
    let parse = syntax::parse(text);
    let function = parse
        .syntax_node()
        .children()
        .find(|n| n.kind() == SyntaxKind::FUNCTION)
        .unwrap();
    let mut l = lower::lower_kernel(
        &function,
        lower::LowerTarget::for_sm(sm, true),
        &lower::ModuleVars::default(),
        &lower::Functions::default(),
    )
    .unwrap();
    opt::optimize(&mut l.func, target::Profile::of(sm).unwrap(), 3);
    ir::verify(&l.func).unwrap();
    ir::print(&l.func, None)
}
