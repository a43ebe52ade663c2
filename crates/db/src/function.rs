//! Per-function values: the trivia-free syntax every per-function query reads, and the outline.

use rowan::{GreenNode, GreenNodeBuilder, NodeOrToken};
use syntax::{SyntaxKind, SyntaxNode, TextRange, TextSize};

use crate::Db;
use crate::SourceFile;

/// One `.entry` or `.func` of a file (a definition or a declaration).
///
/// Created by [`crate::module_items`]. Its identity is (file, name, kind) plus salsa's
/// disambiguator for repeated names (a `.func` declared before it is defined). `syntax` is a
/// tracked field: queries that read it re-execute only when this function's tokens change.
#[salsa::tracked(debug)]
pub struct Function<'db> {
    #[returns(copy)]
    pub file: SourceFile,
    #[returns(ref)]
    pub name: String,
    #[returns(copy)]
    pub is_entry: bool,
    #[tracked]
    #[returns(ref)]
    pub syntax: FunctionSyntax,
}

/// A function's syntax tree with every whitespace and comment token removed.
///
/// Equal for two texts that differ only in trivia, and free of absolute offsets, so it is
/// the value on which per-function incrementality rests. Ranges in it are relative to its
/// own text (the function's tokens laid end to end); [`FunctionSyntax::map_range`] maps them
/// to the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionSyntax(GreenNode);

impl FunctionSyntax {
    /// Builds the trivia-free copy of a `FUNCTION` node.
    pub fn from_node(node: &SyntaxNode) -> FunctionSyntax {
        let mut builder = GreenNodeBuilder::new();
        copy_without_trivia(node, &mut builder);
        FunctionSyntax(builder.finish())
    }

    /// The root of the trivia-free tree (a `FUNCTION` node).
    pub fn node(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.0.clone())
    }

    /// Maps a range of the trivia-free tree to the file, given the function's node in the
    /// current parse. The n-th token of one is the n-th non-trivia token of the other, so
    /// the start maps to the start of its token and the end to the end of the token holding
    /// the range's last byte.
    pub fn map_range(&self, range: TextRange, current: &SyntaxNode) -> TextRange {
        self.map_ranges(&[range], current)[0]
    }

    /// [`Self::map_range`] for many ranges, walking both trees once.
    pub fn map_ranges(&self, ranges: &[TextRange], current: &SyntaxNode) -> Vec<TextRange> {
        let tokens: Vec<_> = self
            .node()
            .descendants_with_tokens()
            .filter_map(NodeOrToken::into_token)
            .collect();
        let real: Vec<_> = current
            .descendants_with_tokens()
            .filter_map(NodeOrToken::into_token)
            .filter(|t| !t.kind().is_trivia())
            .collect();
        // Tokens are laid end to end in order: the token holding an offset by binary search.
        let index_at = |offset: TextSize| {
            let i = tokens.partition_point(|t| t.text_range().end() <= offset);
            if tokens
                .get(i)
                .is_some_and(|t| t.text_range().contains(offset))
            {
                i
            } else {
                tokens.len().saturating_sub(1)
            }
        };
        ranges
            .iter()
            .map(|&range| {
                let first = index_at(range.start());
                let last = if range.is_empty() {
                    first
                } else {
                    index_at(range.end() - TextSize::from(1))
                };
                match (real.get(first), real.get(last)) {
                    (Some(a), Some(b)) => {
                        let start = a.text_range().start()
                            + (range.start() - tokens[first].text_range().start());
                        let end = if range.is_empty() {
                            start
                        } else {
                            b.text_range().end()
                        };
                        TextRange::new(start, end.max(start))
                    }
                    _ => current.text_range(),
                }
            })
            .collect()
    }
}

fn copy_without_trivia(node: &SyntaxNode, builder: &mut GreenNodeBuilder<'_>) {
    builder.start_node(rowan::SyntaxKind(node.kind() as u16));
    for child in node.children_with_tokens() {
        match child {
            NodeOrToken::Node(n) => copy_without_trivia(&n, builder),
            NodeOrToken::Token(t) if !t.kind().is_trivia() => {
                builder.token(rowan::SyntaxKind(t.kind() as u16), t.text());
            }
            NodeOrToken::Token(_) => {}
        }
    }
    builder.finish_node();
}

/// A function at a glance: what an editor's outline and hover show before code generation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionOutline {
    pub name: String,
    pub is_entry: bool,
    /// Whether the function has a body (a definition) or is only declared.
    pub has_body: bool,
    pub params: usize,
    pub return_params: usize,
    /// Instructions in the body, nested blocks included.
    pub instructions: usize,
    pub labels: usize,
}

/// The outline of one function. Per function: reads only the function's own syntax.
#[salsa::tracked(returns(ref))]
pub fn function_outline<'db>(db: &'db dyn Db, function: Function<'db>) -> FunctionOutline {
    let root = function.syntax(db).node();
    let count = |kind: SyntaxKind| root.descendants().filter(|n| n.kind() == kind).count();
    let list_len = |kind: SyntaxKind| {
        root.children().find(|n| n.kind() == kind).map_or(0, |l| {
            l.children()
                .filter(|p| p.kind() == SyntaxKind::PARAM)
                .count()
        })
    };
    FunctionOutline {
        name: function.name(db).clone(),
        is_entry: function.is_entry(db),
        has_body: root.children().any(|n| n.kind() == SyntaxKind::BLOCK),
        params: list_len(SyntaxKind::PARAM_LIST),
        return_params: list_len(SyntaxKind::RET_PARAM_LIST),
        instructions: count(SyntaxKind::INSTRUCTION),
        labels: count(SyntaxKind::LABEL),
    }
}
