//! Module-level facts and checks.

use std::collections::HashMap;

use ptx::{PtxVersion, Sm};
use syntax::TextRange;
use syntax::ast::{self, AstNode, DeclLike};

use crate::Diagnostic;
use crate::types::Ty;

/// The newest `.version` ptxas 13.0.88 accepts.
pub const MAX_VERSION: PtxVersion = PtxVersion::new(9, 0);

/// A module-scope variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobalVar {
    pub space: String,
    pub ty: Option<Ty>,
    pub vec: u32,
}

/// A function's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuncSig {
    pub is_entry: bool,
    /// (state space, type) of each return parameter.
    pub rets: Vec<(String, Option<Ty>)>,
    pub params: Vec<(String, Option<Ty>)>,
    /// Names of the return parameters and parameters (for messages).
    pub ret_names: Vec<String>,
    pub param_names: Vec<String>,
    pub defined: bool,
    pub noreturn: bool,
}

/// What every function of a module sees. Holds no source ranges, so it compares equal across
/// edits that change no declaration (the database relies on this to skip re-checking
/// functions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleScope {
    pub version: Option<PtxVersion>,
    /// The first SM target named by `.target`, if known.
    pub target: Option<Sm>,
    pub texmode_independent: bool,
    pub address_size: u32,
    /// Whether `.address_size` was given (without it ptxas infers the size from how global
    /// memory is addressed).
    pub address_size_explicit: bool,
    pub vars: HashMap<String, GlobalVar>,
    pub funcs: HashMap<String, FuncSig>,
}

fn range_of(n: &impl AstNode) -> TextRange {
    n.syntax().text_range()
}

fn sig_of(f: &ast::Function) -> FuncSig {
    let p = |p: ast::Param| {
        (
            p.state_space()
                .map(|t| t.text().to_string())
                .unwrap_or_else(|| ".param".into()),
            p.ty().and_then(|t| Ty::parse(t.text())),
        )
    };
    FuncSig {
        is_entry: f.is_entry(),
        rets: f.return_params().map(p).collect(),
        params: f.params().map(p).collect(),
        ret_names: f
            .return_params()
            .map(|p| p.name().map(|n| n.text().to_string()).unwrap_or_default())
            .collect(),
        param_names: f
            .params()
            .map(|p| p.name().map(|n| n.text().to_string()).unwrap_or_default())
            .collect(),
        defined: f.body().is_some(),
        noreturn: f
            .perf_directives()
            .any(|d| d.name().is_some_and(|n| n.text() == ".noreturn")),
    }
}

impl ModuleScope {
    /// Reads the module-level facts of `file` and checks them.
    pub fn new(file: &ast::SourceFile) -> (ModuleScope, Vec<Diagnostic>) {
        let mut s = ModuleScope {
            address_size: 64,
            ..ModuleScope::default()
        };
        let mut d = Vec::new();
        let isa = ptx::isa();
        let items: Vec<ast::Item> = file.items().collect();
        // `.version` then `.target` must open the file.
        let mut saw_version = false;
        let mut saw_target = false;
        for (i, item) in items.iter().enumerate() {
            match item {
                ast::Item::Version(v) => {
                    saw_version = true;
                    if let Some((maj, min)) = v.major_minor() {
                        let ver = PtxVersion::new(maj as u8, min as u8);
                        s.version = Some(ver);
                        if ver > MAX_VERSION {
                            d.push(Diagnostic::error(
                                range_of(v),
                                format!(
                                    "Unsupported .version {ver}; current version is '{MAX_VERSION}'"
                                ),
                            ));
                        }
                    }
                }
                ast::Item::Target(t) => {
                    saw_target = true;
                    for tok in t.targets() {
                        let name = tok.text();
                        if name == "texmode_independent" {
                            s.texmode_independent = true;
                        }
                        if let Some(sm) = Sm::parse(name)
                            && s.target.is_none()
                        {
                            s.target = Some(sm);
                            if let (Some(ver), Some(intro)) = (s.version, isa.target_introduced(sm))
                                && ver < intro
                            {
                                d.push(Diagnostic::error(
                                    range_of(t),
                                    format!("PTX .version {ver} does not support .target {sm}"),
                                ));
                            }
                        }
                    }
                }
                ast::Item::AddressSize(a) => {
                    if let Some(n) = a.size() {
                        s.address_size = n;
                        s.address_size_explicit = true;
                        if n == 32 {
                            d.push(Diagnostic::error(
                                range_of(a),
                                "32-Bit compilation is no longer supported",
                            ));
                        } else if n != 64 {
                            d.push(Diagnostic::error(
                                range_of(a),
                                format!("Invalid .address_size {n}: only 64 is supported"),
                            ));
                        }
                    }
                }
                ast::Item::FileDirective(_) | ast::Item::Section(_) => {}
                _ => {
                    if !saw_target && saw_version {
                        d.push(Diagnostic::error(
                            range_of(item),
                            "Missing .target directive at start of file (a `.target sm_XX` must follow `.version`)",
                        ));
                        saw_target = true;
                    }
                }
            }
            let _ = i;
        }
        if !saw_version {
            let r = items
                .first()
                .map(range_of)
                .unwrap_or_else(|| file.syntax().text_range());
            d.push(Diagnostic::error(
                r,
                "Missing .version directive at start of file",
            ));
        }

        // Labels inside `.section` blocks (DWARF string and info tables): they need PTX 7.0
        // ("Defining labels in .section"), and share one module-wide namespace (a label may
        // repeat a function's name, but not another section label). Probed with ptxas 13.0.88.
        let mut section_labels: HashMap<String, TextRange> = HashMap::new();
        for item in &items {
            let ast::Item::Section(sec) = item else {
                continue;
            };
            for entry in sec.entries() {
                let ast::SectionEntry::Label(l) = entry else {
                    continue;
                };
                let Some(n) = l.name() else { continue };
                if let Some(v) = s.version
                    && v < PtxVersion::new(7, 0)
                {
                    d.push(Diagnostic::error(
                        n.text_range(),
                        "Feature 'Defining labels in .section' requires PTX ISA .version 7.0 or later",
                    ));
                }
                if section_labels
                    .insert(n.text().to_string(), n.text_range())
                    .is_some()
                {
                    d.push(Diagnostic::error(
                        n.text_range(),
                        format!("Duplicate definition of label '{}'", n.text()),
                    ));
                }
            }
        }

        // `.loc` needs a `.file` somewhere in the module.
        let has_file = items
            .iter()
            .any(|i| matches!(i, ast::Item::FileDirective(_)));
        if !has_file {
            let first_loc = file
                .syntax()
                .descendants_with_tokens()
                .filter_map(|e| e.into_token())
                .find(|t| t.text() == ".loc");
            if let Some(t) = first_loc {
                d.push(Diagnostic::warning(
                    t.text_range(),
                    ".loc directive without .file directive is found, information in generated binary may not be complete",
                ));
            }
        }

        // Globals and functions.
        let mut defined_funcs: HashMap<String, TextRange> = HashMap::new();
        for item in &items {
            match item {
                ast::Item::GlobalVar(g) => {
                    let space = g
                        .state_space()
                        .map(|t| t.text().to_string())
                        .unwrap_or_default();
                    let ty_tok = g.ty();
                    let ty = ty_tok.as_ref().and_then(|t| Ty::parse(t.text()));
                    let is_extern = g.linkage().iter().any(|t| t.text() == ".extern");
                    if ty_tok.as_ref().is_some_and(|t| t.text() == ".samplerref")
                        && !s.texmode_independent
                    {
                        d.push(Diagnostic::error(
                            range_of(g),
                            "Instruction or declaration violates .target texmode_unified setting (.samplerref variables need `.target ..., texmode_independent`)",
                        ));
                    }
                    if let Some(t) = &ty_tok {
                        gate_type(&s, t.text(), t.text_range(), &mut d);
                    }
                    // From PTX 3.0 on, modules use the ABI, which has no module-scope .local
                    // (before, ptxas only warns and disables the ABI). Probed with ptxas 13.0.88.
                    if matches!(space.as_str(), ".local" | ".reg") {
                        if s.version.is_some_and(|v| v >= PtxVersion::new(3, 0)) {
                            d.push(Diagnostic::error(
                                range_of(g),
                                format!("Module-scoped variables in {space} state space are not allowed with ABI (PTX 3.0 and later)"),
                            ));
                        } else {
                            let name = g.name().map(|n| n.text().to_string()).unwrap_or_default();
                            d.push(Diagnostic::warning(
                                range_of(g),
                                format!("Use of module scoped .local or .reg variable '{name}' found, disabling ABI"),
                            ));
                        }
                    }
                    if is_extern && matches!(space.as_str(), ".global" | ".const") {
                        let name = g.name().map(|n| n.text().to_string()).unwrap_or_default();
                        d.push(Diagnostic::warning(
                            range_of(g),
                            format!("Unresolved extern variable '{name}' in whole program compilation, ignoring extern qualifier"),
                        ));
                    }
                    for decl in g.declarators() {
                        let Some(name) = decl.name() else { continue };
                        let incomplete = decl.array_dims().any(|a| a.size().is_none());
                        if incomplete && !is_extern && decl.initializer().is_none() {
                            d.push(Diagnostic::error(
                                range_of(&decl),
                                format!(
                                    "Non-external variable '{}' has incomplete type",
                                    name.text()
                                ),
                            ));
                        }
                        let prev = s.vars.insert(
                            name.text().to_string(),
                            GlobalVar {
                                space: space.clone(),
                                ty,
                                vec: g.vector().unwrap_or(1),
                            },
                        );
                        if prev.is_some() && !is_extern {
                            d.push(Diagnostic::error(
                                name.text_range(),
                                format!("Duplicate definition of variable '{}'", name.text()),
                            ));
                        }
                    }
                }
                ast::Item::Function(f) => {
                    let Some(name) = f.name() else { continue };
                    let sig = sig_of(f);
                    if sig.rets.len() > 1 && sig.defined {
                        d.push(Diagnostic::warning(
                            name.text_range(),
                            format!(
                                "Function '{}' with multiple return values found, disabling ABI",
                                name.text()
                            ),
                        ));
                    }
                    if sig.defined
                        && let Some(_prev) =
                            defined_funcs.insert(name.text().to_string(), name.text_range())
                    {
                        d.push(Diagnostic::error(
                            name.text_range(),
                            format!("Duplicate definition of function '{}'", name.text()),
                        ));
                    }
                    for p in f.return_params().chain(f.params()) {
                        if let Some(t) = p.ty() {
                            gate_type(&s, t.text(), t.text_range(), &mut d);
                        }
                        vector_after_type(&p, &mut d);
                    }
                    if f.is_entry() {
                        for p in f.params() {
                            for decl in p.declarators() {
                                if decl.array_dims().any(|a| a.size().is_none()) {
                                    // ptxas names the token after the declaration.
                                    let after = p
                                        .syntax()
                                        .last_token()
                                        .and_then(|t| {
                                            let mut n = t.next_token();
                                            while let Some(x) = &n {
                                                if !x.kind().is_trivia() {
                                                    break;
                                                }
                                                n = x.next_token();
                                            }
                                            n
                                        })
                                        .map(|t| t.text_range())
                                        .unwrap_or_else(|| range_of(&p));
                                    d.push(Diagnostic::error(
                                        after,
                                        format!(
                                            "Parameter to entry function cannot be an incomplete array ('{}').",
                                            decl.name().map(|n| n.text().to_string()).unwrap_or_default()
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    for pd in f.perf_directives() {
                        if let Some(n) = pd.name() {
                            gate_directive(&s, n.text(), n.text_range(), &mut d);
                        }
                    }
                    match s.funcs.get(name.text()) {
                        Some(old) if old.defined && !sig.defined => {}
                        _ => {
                            s.funcs.insert(name.text().to_string(), sig);
                        }
                    }
                }
                ast::Item::Directive(dir) => gate_directive_words(&s, dir.syntax(), &mut d),
                _ => {}
            }
        }
        (s, d)
    }
}

/// `.version` gating of a directive from the ISA table.
pub(crate) fn gate_directive(
    s: &ModuleScope,
    name: &str,
    range: TextRange,
    d: &mut Vec<Diagnostic>,
) {
    let Some(dir) = ptx::isa().directive(name) else {
        return;
    };
    if let Some(v) = s.version
        && v < dir.min_ptx
    {
        d.push(Diagnostic::error(
            range,
            format!(
                "Feature '{name}' requires PTX ISA .version {} or later",
                dir.min_ptx
            ),
        ));
    }
}

/// Gates a directive and every directive word inside it (`.callprototype ... .abi_preserve 4`).
pub(crate) fn gate_directive_words(
    s: &ModuleScope,
    node: &syntax::SyntaxNode,
    d: &mut Vec<Diagnostic>,
) {
    for t in node
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
    {
        if t.text().starts_with('.') {
            gate_directive(s, t.text(), t.text_range(), d);
        }
    }
}

/// `.param .b32 .v2 x`: the vector size must come before the type.
pub(crate) fn vector_after_type(decl: &impl DeclLike, d: &mut Vec<Diagnostic>) {
    let mut seen_type = false;
    for t in decl.specifiers() {
        if Ty::parse(t.text()).is_some() {
            seen_type = true;
        } else if seen_type && matches!(t.text(), ".v2" | ".v4" | ".v8") {
            d.push(Diagnostic::error(
                t.text_range(),
                format!(
                    "Parsing error near '{}': syntax error (the vector size goes before the type)",
                    t.text()
                ),
            ));
        }
    }
}

/// `.target` gating of half-precision types in declarations.
pub(crate) fn gate_type(s: &ModuleScope, ty: &str, range: TextRange, d: &mut Vec<Diagnostic>) {
    let Some(t) = s.target else { return };
    let (feature, min) = match ty {
        ".f16x2" => ("'.f16x2 packed data-type'", 53),
        ".bf16" | ".bf16x2" => ("'.bf16'", 80),
        _ => return,
    };
    if !t.satisfies(Sm::new(min)) {
        d.push(Diagnostic::error(
            range,
            format!("Feature {feature} requires .target sm_{min} or higher"),
        ));
    }
}
