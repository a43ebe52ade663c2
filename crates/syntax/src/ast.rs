//! Typed views over the untyped syntax tree.
//!
//! Each wrapper holds a [`SyntaxNode`] of one kind and offers accessors that find children by
//! kind. Accessors return `Option`/iterators because the tree may be incomplete after syntax
//! errors; they never panic.

use crate::SyntaxKind::{self, *};
use crate::{SyntaxNode, SyntaxToken};

/// A typed view of a node of one (or several) kinds.
pub trait AstNode: Sized {
    fn can_cast(kind: SyntaxKind) -> bool;
    fn cast(node: SyntaxNode) -> Option<Self>;
    fn syntax(&self) -> &SyntaxNode;
}

macro_rules! ast_node {
    ($(#[$doc:meta])* $name:ident, $kind:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) syntax: SyntaxNode,
        }
        impl AstNode for $name {
            fn can_cast(kind: SyntaxKind) -> bool {
                kind == $kind
            }
            fn cast(node: SyntaxNode) -> Option<Self> {
                if Self::can_cast(node.kind()) { Some(Self { syntax: node }) } else { None }
            }
            fn syntax(&self) -> &SyntaxNode {
                &self.syntax
            }
        }
    };
}

macro_rules! ast_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident($ty:ident)),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant($ty),)*
        }
        impl AstNode for $name {
            fn can_cast(kind: SyntaxKind) -> bool {
                $($ty::can_cast(kind))||*
            }
            fn cast(node: SyntaxNode) -> Option<Self> {
                $(if $ty::can_cast(node.kind()) { return $ty::cast(node).map($name::$variant); })*
                None
            }
            fn syntax(&self) -> &SyntaxNode {
                match self {
                    $($name::$variant(it) => it.syntax(),)*
                }
            }
        }
    };
}

fn child<N: AstNode>(parent: &SyntaxNode) -> Option<N> {
    parent.children().find_map(N::cast)
}

fn children<N: AstNode>(parent: &SyntaxNode) -> impl Iterator<Item = N> + use<N> {
    parent.children().filter_map(N::cast)
}

fn tokens(parent: &SyntaxNode) -> impl Iterator<Item = SyntaxToken> + use<> {
    parent
        .children_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !t.kind().is_trivia())
}

fn token(parent: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    tokens(parent).find(|t| t.kind() == kind)
}

ast_node!(
    /// The whole file.
    SourceFile, SOURCE_FILE
);
ast_node!(
    /// `.version 8.4`
    Version, VERSION_DIRECTIVE
);
ast_node!(
    /// `.target sm_90a, texmode_independent`
    Target, TARGET_DIRECTIVE
);
ast_node!(
    /// `.address_size 64`
    AddressSize, ADDRESS_SIZE_DIRECTIVE
);
ast_node!(
    /// `.file 1 "kernel.py"`
    FileDirective, FILE_DIRECTIVE
);
ast_node!(
    /// `.section .debug_info { ... }`
    Section, SECTION
);
ast_node!(
    /// `.b8 1, 2` inside a section.
    DataDirective, DATA_DIRECTIVE
);
ast_node!(
    /// `.entry` or `.func`, declaration or definition.
    Function, FUNCTION
);
ast_node!(
    /// `(.reg .b32 r)` before a `.func` name.
    RetParamList, RET_PARAM_LIST
);
ast_node!(
    /// `(.param .u64 a, ...)`
    ParamList, PARAM_LIST
);
ast_node!(
    /// One parameter declaration.
    Param, PARAM
);
ast_node!(
    /// `.maxntid 128, 1, 1`, `.noreturn`, `.pragma "nounroll";` in a function header.
    PerfDirective, PERF_DIRECTIVE
);
ast_node!(
    /// `{ statements }`
    Block, BLOCK
);
ast_node!(
    /// A module-scope variable declaration.
    GlobalVar, GLOBAL_VAR
);
ast_node!(
    /// A variable declaration in a function body.
    VarDecl, VAR_DECL
);
ast_node!(
    /// One declared name: `a[4] = {1, 2, 3, 4}`, `%r<100>`.
    Declarator, DECLARATOR
);
ast_node!(
    /// `.align 16`
    Align, ALIGN
);
ast_node!(
    /// `.attribute(.managed)`
    Attribute, ATTRIBUTE
);
ast_node!(
    /// `[4]` or `[]`
    ArrayDim, ARRAY_DIM
);
ast_node!(
    /// `= value`
    Initializer, INITIALIZER
);
ast_node!(
    /// `{ 1, 2, { 3 } }`
    InitList, INIT_LIST
);
ast_node!(
    /// `name = value` in a `.samplerref`/`.texref`/`.surfref` initializer.
    FieldInit, FIELD_INIT
);
ast_node!(
    /// `name:`
    Label, LABEL
);
ast_node!(
    /// `@p add.s32 %r1, %r2, 1;`
    Instruction, INSTRUCTION
);
ast_node!(
    /// `@p` / `@!p`
    Guard, GUARD
);
ast_node!(
    /// Any other directive (`.loc`, `.pragma`, `.alias`, `.callprototype`, ...).
    Directive, DIRECTIVE
);
ast_node!(
    /// A register, symbol or label reference, with optional components (`%tid.x`).
    NameRef, NAME_REF
);
ast_node!(
    /// A numeric literal.
    Literal, LITERAL
);
ast_node!(
    /// `{a, _, c}`
    VectorOperand, VECTOR_OPERAND
);
ast_node!(
    /// `[r+4]`, `[sym]`, `[tex, {x, y}]`
    Address, ADDRESS
);
ast_node!(
    /// `(a, b)` in `call`.
    ArgList, ARG_LIST
);
ast_node!(
    /// `-x`, `!p`, `~x`, `+x`
    PrefixExpr, PREFIX_EXPR
);
ast_node!(
    /// `a + b`
    BinExpr, BIN_EXPR
);
ast_node!(
    /// `(a)`
    ParenExpr, PAREN_EXPR
);
ast_node!(
    /// `generic(sym)`, `0xff(sym)`
    CallExpr, CALL_EXPR
);
ast_node!(
    /// `(.s64) x`
    CastExpr, CAST_EXPR
);
ast_node!(
    /// `c ? a : b`
    TernaryExpr, TERNARY_EXPR
);

ast_node!(
    /// `arr[1]`
    IndexExpr, INDEX_EXPR
);

ast_enum!(
    /// A module-level item.
    Item {
        Version(Version),
        Target(Target),
        AddressSize(AddressSize),
        Function(Function),
        GlobalVar(GlobalVar),
        FileDirective(FileDirective),
        Section(Section),
        Directive(Directive),
    }
);

ast_enum!(
    /// A statement in a function body.
    Statement {
        Instruction(Instruction),
        VarDecl(VarDecl),
        Label(Label),
        Block(Block),
        Directive(Directive),
        FileDirective(FileDirective),
    }
);

ast_enum!(
    /// An instruction operand or constant expression.
    Operand {
        Name(NameRef),
        Immediate(Literal),
        Vector(VectorOperand),
        Address(Address),
        ArgList(ArgList),
        Prefix(PrefixExpr),
        Binary(BinExpr),
        Paren(ParenExpr),
        Call(CallExpr),
        Cast(CastExpr),
        Ternary(TernaryExpr),
        Index(IndexExpr),
    }
);

/// Constant expressions share the operand grammar.
pub type Expr = Operand;

ast_enum!(
    /// A section entry.
    SectionEntry {
        Label(Label),
        Data(DataDirective),
    }
);

ast_enum!(
    /// An initializer value: an expression or a braced list. (The `field = value` entries of
    /// opaque-type initializers are `FieldInit`s, reached by `InitList::fields`.)
    InitValue {
        List(InitList),
        Expr(Operand),
    }
);

impl SourceFile {
    /// The module-level items, in order (nodes that failed to parse are skipped).
    pub fn items(&self) -> impl Iterator<Item = Item> + use<> {
        children(&self.syntax)
    }
    /// The `.version` directive, if any.
    pub fn version(&self) -> Option<Version> {
        child(&self.syntax)
    }
    /// The `.target` directive, if any.
    pub fn target(&self) -> Option<Target> {
        child(&self.syntax)
    }
    /// The `.address_size` directive, if any.
    pub fn address_size(&self) -> Option<AddressSize> {
        child(&self.syntax)
    }
    /// The functions (`.entry` and `.func`), in order.
    pub fn functions(&self) -> impl Iterator<Item = Function> + use<> {
        children(&self.syntax)
    }
}

fn parse_u32(token: Option<SyntaxToken>) -> Option<u32> {
    let t = token?;
    let (v, _) = parse_int(t.text())?;
    u32::try_from(v).ok()
}

impl Version {
    /// The version number token, e.g. `8.4`.
    pub fn number(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| matches!(t.kind(), FLOAT_NUMBER | INT_NUMBER))
    }
    /// `(major, minor)`, e.g. `(8, 4)`.
    pub fn major_minor(&self) -> Option<(u32, u32)> {
        let t = self.number()?;
        let (a, b) = t.text().split_once('.')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    }
}

impl Target {
    /// The target names and options in order: `sm_90a`, `texmode_independent`, `debug`, ...
    pub fn targets(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax).filter(|t| t.kind() == IDENT)
    }
}

impl AddressSize {
    /// 32 or 64.
    pub fn size(&self) -> Option<u32> {
        parse_u32(token(&self.syntax, INT_NUMBER))
    }
}

impl FileDirective {
    /// The file index.
    pub fn index(&self) -> Option<u32> {
        parse_u32(token(&self.syntax, INT_NUMBER))
    }
    /// The path string token, quotes included.
    pub fn path(&self) -> Option<SyntaxToken> {
        token(&self.syntax, STRING)
    }
}

impl Section {
    /// The section name, e.g. `.debug_info`.
    pub fn name(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax)
            .find(|t| matches!(t.kind(), DOT_IDENT | IDENT) && t.text() != ".section")
    }
    pub fn entries(&self) -> impl Iterator<Item = SectionEntry> + use<> {
        children(&self.syntax)
    }
}

impl DataDirective {
    /// The data type: `.b8`, `.b16`, `.b32`, `.b64`.
    pub fn ty(&self) -> Option<SyntaxToken> {
        token(&self.syntax, DOT_IDENT)
    }
    pub fn values(&self) -> impl Iterator<Item = Operand> + use<> {
        children(&self.syntax)
    }
}

impl Function {
    fn keyword(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax)
            .find(|t| t.kind() == DOT_IDENT && matches!(t.text(), ".entry" | ".func"))
    }
    /// Is this a kernel (`.entry`)?
    pub fn is_entry(&self) -> bool {
        self.keyword().is_some_and(|t| t.text() == ".entry")
    }
    /// Is this a device function (`.func`)?
    pub fn is_func(&self) -> bool {
        self.keyword().is_some_and(|t| t.text() == ".func")
    }
    /// The function name.
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, IDENT)
    }
    /// Linkage words before `.entry`/`.func`: `.visible`, `.extern`, `.weak`, `.common`.
    pub fn linkage(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax)
            .take_while(|t| t.kind() == DOT_IDENT && !matches!(t.text(), ".entry" | ".func"))
    }
    pub fn param_list(&self) -> Option<ParamList> {
        child(&self.syntax)
    }
    pub fn ret_param_list(&self) -> Option<RetParamList> {
        child(&self.syntax)
    }
    /// The parameters (empty when there is no list).
    pub fn params(&self) -> impl Iterator<Item = Param> + use<> {
        self.param_list().into_iter().flat_map(|l| l.params())
    }
    /// The return parameters of a `.func`.
    pub fn return_params(&self) -> impl Iterator<Item = Param> + use<> {
        self.ret_param_list()
            .into_iter()
            .flat_map(|l| children(&l.syntax))
    }
    /// Performance directives and header attributes (`.maxntid`, `.noreturn`, ...).
    pub fn perf_directives(&self) -> impl Iterator<Item = PerfDirective> + use<> {
        children(&self.syntax)
    }
    /// The body; `None` for a declaration (`... ;`).
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl ParamList {
    pub fn params(&self) -> impl Iterator<Item = Param> + use<> {
        children(&self.syntax)
    }
}

impl RetParamList {
    pub fn params(&self) -> impl Iterator<Item = Param> + use<> {
        children(&self.syntax)
    }
}

impl PerfDirective {
    /// The directive word, e.g. `.maxntid`.
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, DOT_IDENT)
    }
    /// The arguments (numbers, strings, names), without commas.
    pub fn args(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax)
            .filter(|t| matches!(t.kind(), INT_NUMBER | FLOAT_NUMBER | STRING | IDENT))
    }
    /// The integer arguments, e.g. `[128, 1, 1]` for `.maxntid 128, 1, 1`.
    pub fn int_args(&self) -> Vec<Option<u64>> {
        self.args()
            .filter(|t| t.kind() == INT_NUMBER)
            .map(|t| parse_int(t.text()).map(|(v, _)| v))
            .collect()
    }
}

/// State-space words.
pub const STATE_SPACES: &[&str] = &[
    ".reg", ".sreg", ".const", ".global", ".local", ".param", ".shared", ".tex",
];

/// Fundamental and opaque type words.
pub const TYPES: &[&str] = &[
    ".b8",
    ".b16",
    ".b32",
    ".b64",
    ".b128",
    ".u8",
    ".u16",
    ".u32",
    ".u64",
    ".s8",
    ".s16",
    ".s32",
    ".s64",
    ".f16",
    ".f16x2",
    ".f32",
    ".f64",
    ".bf16",
    ".bf16x2",
    ".e4m3",
    ".e5m2",
    ".e4m3x2",
    ".e5m2x2",
    ".tf32",
    ".pred",
    ".texref",
    ".samplerref",
    ".surfref",
];

/// Accessors shared by [`GlobalVar`], [`VarDecl`] and [`Param`]: the dotted specifiers and
/// the declarators.
pub trait DeclLike: AstNode {
    /// The state space word (`.reg`, `.global`, `.param`, ...).
    fn state_space(&self) -> Option<SyntaxToken> {
        self.specifiers().find(|t| STATE_SPACES.contains(&t.text()))
    }
    /// Linkage words (`.extern`, `.visible`, `.weak`, `.common`).
    fn linkage(&self) -> Vec<SyntaxToken> {
        self.specifiers()
            .filter(|t| matches!(t.text(), ".extern" | ".visible" | ".weak" | ".common"))
            .collect()
    }
    /// The dotted words before the first name (excluding `.align N`/`.attribute(..)`).
    fn specifiers(&self) -> Box<dyn Iterator<Item = SyntaxToken>> {
        Box::new(tokens(self.syntax()).filter(|t| t.kind() == DOT_IDENT))
    }
    /// The variable's own `.align N` (not the pointee alignment after `.ptr`).
    fn align(&self) -> Option<u32> {
        for e in self.syntax().children_with_tokens() {
            match e {
                rowan::NodeOrToken::Token(t) if t.text() == ".ptr" => return None,
                rowan::NodeOrToken::Node(n) if n.kind() == ALIGN => {
                    return parse_u32(token(&n, INT_NUMBER));
                }
                _ => {}
            }
        }
        None
    }
    /// For `.ptr` parameters, the pointee alignment (`.ptr.global.align 16`).
    fn ptr_align(&self) -> Option<u32> {
        let mut after_ptr = false;
        for e in self.syntax().children_with_tokens() {
            match e {
                rowan::NodeOrToken::Token(t) if t.text() == ".ptr" => after_ptr = true,
                rowan::NodeOrToken::Node(n) if n.kind() == ALIGN && after_ptr => {
                    return parse_u32(token(&n, INT_NUMBER));
                }
                _ => {}
            }
        }
        None
    }
    /// The element type word (`.u32`, `.f16x2`, `.texref`, ...).
    fn ty(&self) -> Option<SyntaxToken> {
        self.specifiers().find(|t| TYPES.contains(&t.text()))
    }
    /// The vector width of `.v2`/`.v4`/`.v8`.
    fn vector(&self) -> Option<u32> {
        self.specifiers().find_map(|t| match t.text() {
            ".v2" => Some(2),
            ".v4" => Some(4),
            ".v8" => Some(8),
            _ => None,
        })
    }
    fn attributes(&self) -> Vec<Attribute> {
        children(self.syntax()).collect()
    }
    fn declarators(&self) -> Vec<Declarator> {
        children(self.syntax()).collect()
    }
    /// The first declared name.
    fn name(&self) -> Option<SyntaxToken> {
        self.declarators().first()?.name()
    }
}

impl DeclLike for GlobalVar {}
impl DeclLike for VarDecl {}
impl DeclLike for Param {}

impl Declarator {
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, IDENT)
    }
    /// `N` of `%r<N>`.
    pub fn param_count(&self) -> Option<u32> {
        let pc = self.syntax.children().find(|n| n.kind() == PARAM_COUNT)?;
        parse_u32(token(&pc, INT_NUMBER))
    }
    pub fn array_dims(&self) -> impl Iterator<Item = ArrayDim> + use<> {
        children(&self.syntax)
    }
    pub fn initializer(&self) -> Option<Initializer> {
        child(&self.syntax)
    }
}

impl ArrayDim {
    /// The size expression; `None` for `[]`.
    pub fn size(&self) -> Option<Operand> {
        child(&self.syntax)
    }
}

impl Initializer {
    pub fn value(&self) -> Option<InitValue> {
        child(&self.syntax)
    }
}

impl InitList {
    /// The values in order (`field = value` entries excluded).
    pub fn values(&self) -> impl Iterator<Item = InitValue> + use<> {
        children(&self.syntax)
    }
    /// The `field = value` entries of a `.samplerref`/`.texref`/`.surfref` initializer.
    pub fn fields(&self) -> impl Iterator<Item = FieldInit> + use<> {
        children(&self.syntax)
    }
}

impl FieldInit {
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, IDENT)
    }
    pub fn value(&self) -> Option<InitValue> {
        child(&self.syntax)
    }
}

impl Attribute {
    /// The attribute words inside the parentheses, e.g. `.managed`.
    pub fn words(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax)
            .filter(|t| t.kind() == DOT_IDENT)
            .skip(1)
    }
}

impl Block {
    pub fn statements(&self) -> impl Iterator<Item = Statement> + use<> {
        children(&self.syntax)
    }
}

impl Label {
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, IDENT)
    }
}

/// The arguments of a `.loc` directive:
/// `.loc file line column [, function_name sym, inlined_at file line column]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocInfo {
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// The `function_name` label (into `.debug_str`), if given.
    pub function_name: Option<SyntaxToken>,
    /// `(file, line, column)` of the call site this location was inlined at.
    pub inlined_at: Option<(u32, u32, u32)>,
}

impl Directive {
    /// The parsed arguments if this is a well-formed `.loc` directive.
    pub fn loc(&self) -> Option<LocInfo> {
        if self.name()?.text() != ".loc" {
            return None;
        }
        let args: Vec<SyntaxToken> = self.args().collect();
        let num = |i: usize| -> Option<u32> {
            let t = args.get(i)?;
            if t.kind() != INT_NUMBER {
                return None;
            }
            parse_u32(Some(t.clone()))
        };
        let mut info = LocInfo {
            file: num(0)?,
            line: num(1)?,
            column: num(2)?,
            function_name: None,
            inlined_at: None,
        };
        let mut i = 3;
        while i < args.len() {
            match args[i].text() {
                "function_name" => {
                    info.function_name = Some(args.get(i + 1)?.clone());
                    i += 2;
                }
                "inlined_at" => {
                    info.inlined_at = Some((num(i + 1)?, num(i + 2)?, num(i + 3)?));
                    i += 4;
                }
                _ => return None,
            }
        }
        Some(info)
    }

    /// The directive word, e.g. `.loc`.
    pub fn name(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax)
            .next()
            .filter(|t| t.kind() == DOT_IDENT)
    }
    /// The argument tokens after the name (commas and `;` excluded).
    pub fn args(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax)
            .skip(1)
            .filter(|t| !matches!(t.kind(), COMMA | SEMICOLON))
    }
}

impl Instruction {
    pub fn guard(&self) -> Option<Guard> {
        child(&self.syntax)
    }
    /// The opcode, e.g. `ld` in `ld.global.u32`.
    pub fn opcode(&self) -> Option<SyntaxToken> {
        token(&self.syntax, IDENT)
    }
    /// The dotted modifiers after the opcode, e.g. `.global`, `.u32`.
    pub fn modifiers(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax).filter(|t| t.kind() == DOT_IDENT)
    }
    pub fn operands(&self) -> impl Iterator<Item = Operand> + use<> {
        children(&self.syntax)
    }
}

impl Guard {
    /// `@!p`
    pub fn is_negated(&self) -> bool {
        token(&self.syntax, BANG).is_some()
    }
    pub fn predicate(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
}

impl NameRef {
    /// The name token, e.g. `%tid` in `%tid.x`.
    pub fn name(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).next()
    }
    /// Components after the name, e.g. `.x` in `%tid.x`.
    pub fn components(&self) -> impl Iterator<Item = SyntaxToken> + use<> {
        tokens(&self.syntax).skip(1)
    }
    /// Whether the name is spelled with a leading `%` (registers, special registers).
    pub fn is_percent_name(&self) -> bool {
        self.name().is_some_and(|t| t.text().starts_with('%'))
    }
    /// The `_` sink.
    pub fn is_sink(&self) -> bool {
        self.name().is_some_and(|t| t.text() == "_")
    }
}

/// The value of a numeric literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LiteralValue {
    /// An integer; `unsigned` is true when written with a `U` suffix.
    Int { value: u64, unsigned: bool },
    /// `0fXXXXXXXX`: exact single-precision bits.
    F32Bits(u32),
    /// `0dXXXXXXXXXXXXXXXX`: exact double-precision bits.
    F64Bits(u64),
    /// A decimal float such as `1.5e3` (PTX treats these as double precision).
    F64(f64),
}

/// Parses a PTX integer literal (decimal, `0x` hex, `0b` binary, leading-`0` octal, optional
/// `U` suffix). Returns `None` on overflow or bad digits.
pub fn parse_int(text: &str) -> Option<(u64, bool)> {
    let (body, unsigned) = match text.strip_suffix('U') {
        Some(b) => (b, true),
        None => (text, false),
    };
    let value = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        u64::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse::<u64>().ok()?
    };
    Some((value, unsigned))
}

impl Literal {
    pub fn token(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).next()
    }
    /// The literal's value, or `None` if malformed or out of range.
    pub fn value(&self) -> Option<LiteralValue> {
        let t = self.token()?;
        let text = t.text();
        match t.kind() {
            INT_NUMBER => {
                parse_int(text).map(|(value, unsigned)| LiteralValue::Int { value, unsigned })
            }
            FLOAT_NUMBER => {
                let b = text.as_bytes();
                if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'f' | b'F') {
                    u32::from_str_radix(&text[2..], 16)
                        .ok()
                        .map(LiteralValue::F32Bits)
                } else if b.len() > 2 && b[0] == b'0' && matches!(b[1], b'd' | b'D') {
                    u64::from_str_radix(&text[2..], 16)
                        .ok()
                        .map(LiteralValue::F64Bits)
                } else {
                    text.parse::<f64>().ok().map(LiteralValue::F64)
                }
            }
            _ => None,
        }
    }
}

impl Operand {
    /// The value of an integer literal operand, allowing one leading `-` (`-8` is a
    /// `PREFIX_EXPR` in the tree). Wraps like PTX's 64-bit constant arithmetic: `-1` is
    /// `u64::MAX`. `None` for anything else.
    pub fn as_int(&self) -> Option<u64> {
        match self {
            Operand::Immediate(lit) => match lit.value()? {
                LiteralValue::Int { value, .. } => Some(value),
                _ => None,
            },
            Operand::Prefix(p) if p.op()?.kind() == MINUS => match p.expr()? {
                Operand::Immediate(_) => p.expr()?.as_int().map(u64::wrapping_neg),
                _ => None,
            },
            _ => None,
        }
    }
}

impl VectorOperand {
    pub fn elements(&self) -> impl Iterator<Item = Operand> + use<> {
        children(&self.syntax)
    }
}

impl Address {
    /// The operands inside the brackets (one for memory addresses, several for texture
    /// operands such as `[tex, sampler, {x, y}]`).
    pub fn operands(&self) -> impl Iterator<Item = Operand> + use<> {
        children(&self.syntax)
    }
}

impl ArgList {
    pub fn args(&self) -> impl Iterator<Item = Operand> + use<> {
        children(&self.syntax)
    }
}

impl PrefixExpr {
    pub fn op(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).next()
    }
    pub fn expr(&self) -> Option<Operand> {
        child(&self.syntax)
    }
}

impl BinExpr {
    pub fn lhs(&self) -> Option<Operand> {
        children(&self.syntax).next()
    }
    pub fn rhs(&self) -> Option<Operand> {
        children(&self.syntax).nth(1)
    }
    pub fn op(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).next()
    }
}

impl ParenExpr {
    pub fn expr(&self) -> Option<Operand> {
        child(&self.syntax)
    }
}

impl CallExpr {
    /// `generic` in `generic(sym)`, `0xff` in `0xff(sym)`.
    pub fn callee(&self) -> Option<Operand> {
        children(&self.syntax).next()
    }
    pub fn arg(&self) -> Option<Operand> {
        children(&self.syntax).nth(1)
    }
}

impl CastExpr {
    /// The type word, e.g. `.s64`.
    pub fn ty(&self) -> Option<SyntaxToken> {
        token(&self.syntax, DOT_IDENT)
    }
    pub fn expr(&self) -> Option<Operand> {
        child(&self.syntax)
    }
}

impl IndexExpr {
    /// The array, e.g. `arr` in `arr[1]`.
    pub fn base(&self) -> Option<Operand> {
        children(&self.syntax).next()
    }
    pub fn index(&self) -> Option<Operand> {
        children(&self.syntax).nth(1)
    }
}

impl TernaryExpr {
    pub fn condition(&self) -> Option<Operand> {
        children(&self.syntax).next()
    }
    pub fn then_value(&self) -> Option<Operand> {
        children(&self.syntax).nth(1)
    }
    pub fn else_value(&self) -> Option<Operand> {
        children(&self.syntax).nth(2)
    }
}
