//! Renders diagnostics as `file:line:col: severity: message` followed by a source snippet
//! (annotate-snippets draws the snippet).

use std::io::IsTerminal;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use db::{Diagnostic, Severity, line_col};

/// Formats one diagnostic of `text` (the file's contents) for the terminal.
pub fn render(path: &str, text: &str, diag: &Diagnostic, color: bool) -> String {
    let (line, col) = line_col(text, diag.range.start());
    let severity = match diag.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = format!("{path}:{line}:{col}: {severity}: {}\n", diag.message);

    // Show only the lines the span touches: the renderer then works on a few lines, not on a
    // whole (possibly multi-megabyte) file.
    let start = usize::from(diag.range.start()).min(text.len());
    let end = usize::from(diag.range.end()).clamp(start, text.len());
    let line_start = text[..floor_char_boundary(text, start)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let line_end = text[floor_char_boundary(text, end)..]
        .find('\n')
        .map_or(text.len(), |i| end + i);
    let excerpt = &text[line_start..line_end];
    let (span_start, span_end) = (start - line_start, end - line_start);
    let level = match diag.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let annotation = AnnotationKind::Primary.span(span_start..span_end.max(span_start));
    let report = [Group::with_level(level).element(
        Snippet::source(excerpt)
            .line_start(line)
            .annotation(annotation),
    )];
    let renderer = if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    out.push_str(&renderer.render(&report));
    out.push('\n');
    out
}

/// Whether to color output written to stderr.
pub fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use db::TextRange;

    #[test]
    fn header_and_snippet() {
        let text = ".version 8.0\n.target sm_90\n  add.u32 %r1, %r2;\n";
        let start = text.find("%r2").unwrap() as u32;
        let diag = Diagnostic {
            severity: Severity::Error,
            message: "expected 3 operands, found 2".into(),
            range: TextRange::new(start.into(), (start + 3).into()),
        };
        expect_test::expect![[r#"
            k.ptx:3:16: error: expected 3 operands, found 2
              |
            3 |   add.u32 %r1, %r2;
              |                ^^^
        "#]]
        .assert_eq(&render("k.ptx", text, &diag, false));
    }
}
