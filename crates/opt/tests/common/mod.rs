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

/// The lines of a printed function whose instruction (after any guard) starts with one of
/// `prefixes` (`bb` keeps the block labels), each with its newline. (Not every test binary
/// that includes this module calls it.)
#[allow(dead_code)]
pub fn lines_starting(text: &str, prefixes: &[&str]) -> String {
    text.lines()
        .filter(|l| {
            let l = l.trim_start();
            let l = l
                .split_once(' ')
                .filter(|_| l.starts_with('@'))
                .map_or(l, |(_, r)| r);
            prefixes.iter().any(|m| l.starts_with(m))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}
