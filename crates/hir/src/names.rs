//! Name resolution of one function, for the editor: every name the function declares
//! (parameters, registers, variables, labels) and every use of a name, resolved to its
//! declaration — or to module scope, where the module's items answer.
//!
//! The scoping rules are the checker's (`func.rs`): nested blocks open scopes, parameterized
//! registers `%r<N>` declare `%r0` .. `%r{N-1}`, labels are visible in the whole function,
//! parameters in its outermost scope.

use std::collections::HashMap;

use syntax::ast::{self, AstNode, DeclLike};
use syntax::{SyntaxKind, SyntaxNode, TextRange};

/// What a function-level name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefKind {
    /// A parameter of the function (`.param`, or `.reg` for device functions).
    Param,
    /// A `.reg` declaration (one name, or a family `%r<N>`).
    Register,
    /// A variable in another state space (`.local`, `.shared`, `.param` in the body, ...).
    Variable,
    Label,
}

/// A name the function declares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Def {
    /// The declared name (`%r` for a family `%r<4>`).
    pub name: String,
    pub kind: DefKind,
    /// The name's token.
    pub name_range: TextRange,
    /// The whole declaration (`.reg .b32 %r<4>;`, the parameter, the label).
    pub decl_range: TextRange,
    /// `N` of a parameterized family `%r<N>`.
    pub count: Option<u32>,
}

/// Where a use of a name leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resolved {
    /// `defs[i]` of the function.
    Local(usize),
    /// Not declared in the function: a module-scope variable or function of that name, a
    /// special register (`%tid`), or nothing.
    Module,
}

/// One use of a name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NameUse {
    pub name: String,
    pub range: TextRange,
    pub target: Resolved,
}

/// The names of one function, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FunctionNames {
    pub defs: Vec<Def>,
    pub uses: Vec<NameUse>,
}

impl FunctionNames {
    /// The definition a use or declaration at `offset` refers to.
    pub fn def_at(&self, offset: syntax::TextSize) -> Option<usize> {
        if let Some(i) = self
            .defs
            .iter()
            .position(|d| d.name_range.contains_inclusive(offset))
        {
            return Some(i);
        }
        self.uses
            .iter()
            .find(|u| u.range.contains_inclusive(offset))
            .and_then(|u| match u.target {
                Resolved::Local(i) => Some(i),
                Resolved::Module => None,
            })
    }

    /// The uses of `defs[def]`.
    pub fn uses_of(&self, def: usize) -> impl Iterator<Item = &NameUse> {
        self.uses
            .iter()
            .filter(move |u| u.target == Resolved::Local(def))
    }
}

#[derive(Default)]
struct Scope {
    names: HashMap<String, usize>,
    families: Vec<(String, u32, usize)>,
}

impl Scope {
    fn get(&self, name: &str) -> Option<usize> {
        if let Some(&i) = self.names.get(name) {
            return Some(i);
        }
        self.families.iter().find_map(|(prefix, n, i)| {
            let rest = name.strip_prefix(prefix.as_str())?;
            let in_family = !rest.is_empty()
                && rest.bytes().all(|b| b.is_ascii_digit())
                && (rest == "0" || !rest.starts_with('0'))
                && rest.parse::<u64>().is_ok_and(|k| k < u64::from(*n));
            in_family.then_some(*i)
        })
    }
}

struct Resolver {
    out: FunctionNames,
    scopes: Vec<Scope>,
    labels: HashMap<String, usize>,
}

/// Resolves the names of `f`.
pub fn resolve_function(f: &ast::Function) -> FunctionNames {
    let mut r = Resolver {
        out: FunctionNames::default(),
        scopes: vec![Scope::default()],
        labels: HashMap::new(),
    };
    for p in f.return_params().chain(f.params()) {
        if let Some(name) = p.name() {
            r.define(&name, DefKind::Param, p.syntax().text_range(), None);
        }
    }
    if let Some(body) = f.body() {
        r.collect_labels(&body);
        r.block(&body, false);
    }
    r.out
}

impl Resolver {
    fn define(
        &mut self,
        name: &syntax::SyntaxToken,
        kind: DefKind,
        decl_range: TextRange,
        count: Option<u32>,
    ) -> usize {
        let i = self.out.defs.len();
        self.out.defs.push(Def {
            name: name.text().to_string(),
            kind,
            name_range: name.text_range(),
            decl_range,
            count,
        });
        if kind != DefKind::Label {
            let scope = self.scopes.last_mut().expect("a scope");
            match count {
                Some(n) => scope.families.push((name.text().to_string(), n, i)),
                None => {
                    // A duplicate is an error the checker reports; the first one stands.
                    scope.names.entry(name.text().to_string()).or_insert(i);
                }
            }
        }
        i
    }

    fn collect_labels(&mut self, b: &ast::Block) {
        for st in b.statements() {
            match st {
                ast::Statement::Label(l) => {
                    if let Some(n) = l.name()
                        && !self.labels.contains_key(n.text())
                    {
                        let i = self.define(&n, DefKind::Label, l.syntax().text_range(), None);
                        self.labels.insert(n.text().to_string(), i);
                    }
                }
                ast::Statement::Block(inner) => self.collect_labels(&inner),
                _ => {}
            }
        }
    }

    fn block(&mut self, b: &ast::Block, nested: bool) {
        if nested {
            self.scopes.push(Scope::default());
        }
        for st in b.statements() {
            match st {
                ast::Statement::VarDecl(v) => {
                    // Initializers may name other variables: resolve them first.
                    self.uses_in(v.syntax());
                    let space = v.state_space().map(|t| t.text().to_string());
                    let kind = if space.as_deref() == Some(".reg") {
                        DefKind::Register
                    } else {
                        DefKind::Variable
                    };
                    for d in v.declarators() {
                        if let Some(name) = d.name() {
                            self.define(&name, kind, v.syntax().text_range(), d.param_count());
                        }
                    }
                }
                ast::Statement::Block(inner) => self.block(&inner, true),
                ast::Statement::Label(_) => {}
                other => self.uses_in(other.syntax()),
            }
        }
        if nested {
            self.scopes.pop();
        }
    }

    /// Records every name reference under `node`.
    fn uses_in(&mut self, node: &SyntaxNode) {
        for n in node.descendants() {
            if n.kind() != SyntaxKind::NAME_REF {
                continue;
            }
            let Some(tok) = n
                .children_with_tokens()
                .filter_map(|e| e.into_token())
                .find(|t| t.kind() == SyntaxKind::IDENT)
            else {
                continue;
            };
            let name = tok.text();
            let target = self
                .scopes
                .iter()
                .rev()
                .find_map(|s| s.get(name))
                .or_else(|| self.labels.get(name).copied())
                .map_or(Resolved::Module, Resolved::Local);
            self.out.uses.push(NameUse {
                name: name.to_string(),
                range: tok.text_range(),
                target,
            });
        }
    }
}
