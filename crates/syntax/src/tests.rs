//! Snapshot tests of small PTX snippets: tree dumps and error messages.
//!
//! Each snapshot was checked by eye against the PTX ISA grammar when it was recorded.

use expect_test::{Expect, expect};

use crate::ast::{self, AstNode, DeclLike};
use crate::{SyntaxKind, parse, parse_bytes};

fn check(text: &str, expect: Expect) {
    let parse = parse(text);
    assert_eq!(parse.syntax_node().to_string(), text, "lossless round trip");
    expect.assert_eq(&parse.debug_tree());
}

/// Only the errors (for recovery tests where the tree is long).
fn check_errors(text: &str, expect: Expect) {
    let parse = parse(text);
    assert_eq!(parse.syntax_node().to_string(), text, "lossless round trip");
    let mut out = String::new();
    for e in parse.errors() {
        let start = usize::from(e.range.start());
        let line = text[..start].matches('\n').count() + 1;
        out.push_str(&format!("{line}: {:?} {}\n", e.range, e.message));
    }
    expect.assert_eq(&out);
}

#[test]
fn module_directives() {
    check(
        ".version 8.4\n.target sm_90a, texmode_independent, debug\n.address_size 64\n",
        expect![[r#"
        SOURCE_FILE@0..73
          VERSION_DIRECTIVE@0..12
            DOT_IDENT@0..8 ".version"
            WHITESPACE@8..9 " "
            FLOAT_NUMBER@9..12 "8.4"
          WHITESPACE@12..13 "\n"
          TARGET_DIRECTIVE@13..55
            DOT_IDENT@13..20 ".target"
            WHITESPACE@20..21 " "
            IDENT@21..27 "sm_90a"
            COMMA@27..28 ","
            WHITESPACE@28..29 " "
            IDENT@29..48 "texmode_independent"
            COMMA@48..49 ","
            WHITESPACE@49..50 " "
            IDENT@50..55 "debug"
          WHITESPACE@55..56 "\n"
          ADDRESS_SIZE_DIRECTIVE@56..72
            DOT_IDENT@56..69 ".address_size"
            WHITESPACE@69..70 " "
            INT_NUMBER@70..72 "64"
          WHITESPACE@72..73 "\n"
    "#]],
    );
}

#[test]
fn entry_with_params_and_perf_directives() {
    check(
        ".visible .entry k(\n\t.param .u64 .ptr.global.align 16 k_p0,\n\t.param .u32 n\n)\n.maxntid 128, 1, 1\n.minnctapersm 2\n{\n\tret;\n}\n",
        expect![[r#"
            SOURCE_FILE@0..121
              FUNCTION@0..120
                DOT_IDENT@0..8 ".visible"
                WHITESPACE@8..9 " "
                DOT_IDENT@9..15 ".entry"
                WHITESPACE@15..16 " "
                IDENT@16..17 "k"
                PARAM_LIST@17..75
                  L_PAREN@17..18 "("
                  WHITESPACE@18..20 "\n\t"
                  PARAM@20..57
                    DOT_IDENT@20..26 ".param"
                    WHITESPACE@26..27 " "
                    DOT_IDENT@27..31 ".u64"
                    WHITESPACE@31..32 " "
                    DOT_IDENT@32..36 ".ptr"
                    DOT_IDENT@36..43 ".global"
                    ALIGN@43..52
                      DOT_IDENT@43..49 ".align"
                      WHITESPACE@49..50 " "
                      INT_NUMBER@50..52 "16"
                    WHITESPACE@52..53 " "
                    DECLARATOR@53..57
                      IDENT@53..57 "k_p0"
                  COMMA@57..58 ","
                  WHITESPACE@58..60 "\n\t"
                  PARAM@60..73
                    DOT_IDENT@60..66 ".param"
                    WHITESPACE@66..67 " "
                    DOT_IDENT@67..71 ".u32"
                    WHITESPACE@71..72 " "
                    DECLARATOR@72..73
                      IDENT@72..73 "n"
                  WHITESPACE@73..74 "\n"
                  R_PAREN@74..75 ")"
                WHITESPACE@75..76 "\n"
                PERF_DIRECTIVE@76..94
                  DOT_IDENT@76..84 ".maxntid"
                  WHITESPACE@84..85 " "
                  INT_NUMBER@85..88 "128"
                  COMMA@88..89 ","
                  WHITESPACE@89..90 " "
                  INT_NUMBER@90..91 "1"
                  COMMA@91..92 ","
                  WHITESPACE@92..93 " "
                  INT_NUMBER@93..94 "1"
                WHITESPACE@94..95 "\n"
                PERF_DIRECTIVE@95..110
                  DOT_IDENT@95..108 ".minnctapersm"
                  WHITESPACE@108..109 " "
                  INT_NUMBER@109..110 "2"
                WHITESPACE@110..111 "\n"
                BLOCK@111..120
                  L_CURLY@111..112 "{"
                  WHITESPACE@112..114 "\n\t"
                  INSTRUCTION@114..118
                    IDENT@114..117 "ret"
                    SEMICOLON@117..118 ";"
                  WHITESPACE@118..119 "\n"
                  R_CURLY@119..120 "}"
              WHITESPACE@120..121 "\n"
        "#]],
    );
}

#[test]
fn func_decl_with_return_and_noreturn() {
    check(
        ".extern .func (.param .b32 rv) vprintf(.param .b64 fmt, .param .b64 args);\n.weak .func abort() .noreturn;\n",
        expect![[r#"
            SOURCE_FILE@0..106
              FUNCTION@0..74
                DOT_IDENT@0..7 ".extern"
                WHITESPACE@7..8 " "
                DOT_IDENT@8..13 ".func"
                WHITESPACE@13..14 " "
                RET_PARAM_LIST@14..30
                  L_PAREN@14..15 "("
                  PARAM@15..29
                    DOT_IDENT@15..21 ".param"
                    WHITESPACE@21..22 " "
                    DOT_IDENT@22..26 ".b32"
                    WHITESPACE@26..27 " "
                    DECLARATOR@27..29
                      IDENT@27..29 "rv"
                  R_PAREN@29..30 ")"
                WHITESPACE@30..31 " "
                IDENT@31..38 "vprintf"
                PARAM_LIST@38..73
                  L_PAREN@38..39 "("
                  PARAM@39..54
                    DOT_IDENT@39..45 ".param"
                    WHITESPACE@45..46 " "
                    DOT_IDENT@46..50 ".b64"
                    WHITESPACE@50..51 " "
                    DECLARATOR@51..54
                      IDENT@51..54 "fmt"
                  COMMA@54..55 ","
                  WHITESPACE@55..56 " "
                  PARAM@56..72
                    DOT_IDENT@56..62 ".param"
                    WHITESPACE@62..63 " "
                    DOT_IDENT@63..67 ".b64"
                    WHITESPACE@67..68 " "
                    DECLARATOR@68..72
                      IDENT@68..72 "args"
                  R_PAREN@72..73 ")"
                SEMICOLON@73..74 ";"
              WHITESPACE@74..75 "\n"
              FUNCTION@75..105
                DOT_IDENT@75..80 ".weak"
                WHITESPACE@80..81 " "
                DOT_IDENT@81..86 ".func"
                WHITESPACE@86..87 " "
                IDENT@87..92 "abort"
                PARAM_LIST@92..94
                  L_PAREN@92..93 "("
                  R_PAREN@93..94 ")"
                WHITESPACE@94..95 " "
                PERF_DIRECTIVE@95..104
                  DOT_IDENT@95..104 ".noreturn"
                SEMICOLON@104..105 ";"
              WHITESPACE@105..106 "\n"
        "#]],
    );
}

#[test]
fn variable_declarations() {
    check(
        ".global .align 4 .b8 tbl[2][3] = {{1, 2, 3}, {4, 5, 6}};\n.extern .shared .align 16 .b8 smem[];\n.global .u64 p = generic(tbl);\n.global .attribute(.managed) .v2 .f32 v;\n",
        expect![[r#"
            SOURCE_FILE@0..167
              GLOBAL_VAR@0..56
                DOT_IDENT@0..7 ".global"
                WHITESPACE@7..8 " "
                ALIGN@8..16
                  DOT_IDENT@8..14 ".align"
                  WHITESPACE@14..15 " "
                  INT_NUMBER@15..16 "4"
                WHITESPACE@16..17 " "
                DOT_IDENT@17..20 ".b8"
                WHITESPACE@20..21 " "
                DECLARATOR@21..55
                  IDENT@21..24 "tbl"
                  ARRAY_DIM@24..27
                    L_BRACK@24..25 "["
                    LITERAL@25..26
                      INT_NUMBER@25..26 "2"
                    R_BRACK@26..27 "]"
                  ARRAY_DIM@27..30
                    L_BRACK@27..28 "["
                    LITERAL@28..29
                      INT_NUMBER@28..29 "3"
                    R_BRACK@29..30 "]"
                  WHITESPACE@30..31 " "
                  INITIALIZER@31..55
                    EQ@31..32 "="
                    WHITESPACE@32..33 " "
                    INIT_LIST@33..55
                      L_CURLY@33..34 "{"
                      INIT_LIST@34..43
                        L_CURLY@34..35 "{"
                        LITERAL@35..36
                          INT_NUMBER@35..36 "1"
                        COMMA@36..37 ","
                        WHITESPACE@37..38 " "
                        LITERAL@38..39
                          INT_NUMBER@38..39 "2"
                        COMMA@39..40 ","
                        WHITESPACE@40..41 " "
                        LITERAL@41..42
                          INT_NUMBER@41..42 "3"
                        R_CURLY@42..43 "}"
                      COMMA@43..44 ","
                      WHITESPACE@44..45 " "
                      INIT_LIST@45..54
                        L_CURLY@45..46 "{"
                        LITERAL@46..47
                          INT_NUMBER@46..47 "4"
                        COMMA@47..48 ","
                        WHITESPACE@48..49 " "
                        LITERAL@49..50
                          INT_NUMBER@49..50 "5"
                        COMMA@50..51 ","
                        WHITESPACE@51..52 " "
                        LITERAL@52..53
                          INT_NUMBER@52..53 "6"
                        R_CURLY@53..54 "}"
                      R_CURLY@54..55 "}"
                SEMICOLON@55..56 ";"
              WHITESPACE@56..57 "\n"
              GLOBAL_VAR@57..94
                DOT_IDENT@57..64 ".extern"
                WHITESPACE@64..65 " "
                DOT_IDENT@65..72 ".shared"
                WHITESPACE@72..73 " "
                ALIGN@73..82
                  DOT_IDENT@73..79 ".align"
                  WHITESPACE@79..80 " "
                  INT_NUMBER@80..82 "16"
                WHITESPACE@82..83 " "
                DOT_IDENT@83..86 ".b8"
                WHITESPACE@86..87 " "
                DECLARATOR@87..93
                  IDENT@87..91 "smem"
                  ARRAY_DIM@91..93
                    L_BRACK@91..92 "["
                    R_BRACK@92..93 "]"
                SEMICOLON@93..94 ";"
              WHITESPACE@94..95 "\n"
              GLOBAL_VAR@95..125
                DOT_IDENT@95..102 ".global"
                WHITESPACE@102..103 " "
                DOT_IDENT@103..107 ".u64"
                WHITESPACE@107..108 " "
                DECLARATOR@108..124
                  IDENT@108..109 "p"
                  WHITESPACE@109..110 " "
                  INITIALIZER@110..124
                    EQ@110..111 "="
                    WHITESPACE@111..112 " "
                    CALL_EXPR@112..124
                      NAME_REF@112..119
                        IDENT@112..119 "generic"
                      L_PAREN@119..120 "("
                      NAME_REF@120..123
                        IDENT@120..123 "tbl"
                      R_PAREN@123..124 ")"
                SEMICOLON@124..125 ";"
              WHITESPACE@125..126 "\n"
              GLOBAL_VAR@126..166
                DOT_IDENT@126..133 ".global"
                WHITESPACE@133..134 " "
                ATTRIBUTE@134..154
                  DOT_IDENT@134..144 ".attribute"
                  L_PAREN@144..145 "("
                  DOT_IDENT@145..153 ".managed"
                  R_PAREN@153..154 ")"
                WHITESPACE@154..155 " "
                DOT_IDENT@155..158 ".v2"
                WHITESPACE@158..159 " "
                DOT_IDENT@159..163 ".f32"
                WHITESPACE@163..164 " "
                DECLARATOR@164..165
                  IDENT@164..165 "v"
                SEMICOLON@165..166 ";"
              WHITESPACE@166..167 "\n"
        "#]],
    );
}

#[test]
fn body_statements() {
    check(
        ".entry k() {\n.reg .b32 %r<4>, x;\n$L_1:\n@!%p1 bra $L_1;\nld.global.nc.v2.u32 {%r1, _}, [%rd1+-8];\nmov.u32 %r2, %tid.x;\n{ .reg .pred p; }\n.loc 1 64 0 // c\n}\n",
        expect![[r#"
            SOURCE_FILE@0..154
              FUNCTION@0..153
                DOT_IDENT@0..6 ".entry"
                WHITESPACE@6..7 " "
                IDENT@7..8 "k"
                PARAM_LIST@8..10
                  L_PAREN@8..9 "("
                  R_PAREN@9..10 ")"
                WHITESPACE@10..11 " "
                BLOCK@11..153
                  L_CURLY@11..12 "{"
                  WHITESPACE@12..13 "\n"
                  VAR_DECL@13..32
                    DOT_IDENT@13..17 ".reg"
                    WHITESPACE@17..18 " "
                    DOT_IDENT@18..22 ".b32"
                    WHITESPACE@22..23 " "
                    DECLARATOR@23..28
                      IDENT@23..25 "%r"
                      PARAM_COUNT@25..28
                        LT@25..26 "<"
                        INT_NUMBER@26..27 "4"
                        GT@27..28 ">"
                    COMMA@28..29 ","
                    WHITESPACE@29..30 " "
                    DECLARATOR@30..31
                      IDENT@30..31 "x"
                    SEMICOLON@31..32 ";"
                  WHITESPACE@32..33 "\n"
                  LABEL@33..38
                    IDENT@33..37 "$L_1"
                    COLON@37..38 ":"
                  WHITESPACE@38..39 "\n"
                  INSTRUCTION@39..54
                    GUARD@39..44
                      AT@39..40 "@"
                      BANG@40..41 "!"
                      NAME_REF@41..44
                        IDENT@41..44 "%p1"
                    WHITESPACE@44..45 " "
                    IDENT@45..48 "bra"
                    WHITESPACE@48..49 " "
                    NAME_REF@49..53
                      IDENT@49..53 "$L_1"
                    SEMICOLON@53..54 ";"
                  WHITESPACE@54..55 "\n"
                  INSTRUCTION@55..95
                    IDENT@55..57 "ld"
                    DOT_IDENT@57..64 ".global"
                    DOT_IDENT@64..67 ".nc"
                    DOT_IDENT@67..70 ".v2"
                    DOT_IDENT@70..74 ".u32"
                    WHITESPACE@74..75 " "
                    VECTOR_OPERAND@75..83
                      L_CURLY@75..76 "{"
                      NAME_REF@76..79
                        IDENT@76..79 "%r1"
                      COMMA@79..80 ","
                      WHITESPACE@80..81 " "
                      NAME_REF@81..82
                        IDENT@81..82 "_"
                      R_CURLY@82..83 "}"
                    COMMA@83..84 ","
                    WHITESPACE@84..85 " "
                    ADDRESS@85..94
                      L_BRACK@85..86 "["
                      BIN_EXPR@86..93
                        NAME_REF@86..90
                          IDENT@86..90 "%rd1"
                        PLUS@90..91 "+"
                        PREFIX_EXPR@91..93
                          MINUS@91..92 "-"
                          LITERAL@92..93
                            INT_NUMBER@92..93 "8"
                      R_BRACK@93..94 "]"
                    SEMICOLON@94..95 ";"
                  WHITESPACE@95..96 "\n"
                  INSTRUCTION@96..116
                    IDENT@96..99 "mov"
                    DOT_IDENT@99..103 ".u32"
                    WHITESPACE@103..104 " "
                    NAME_REF@104..107
                      IDENT@104..107 "%r2"
                    COMMA@107..108 ","
                    WHITESPACE@108..109 " "
                    NAME_REF@109..115
                      IDENT@109..113 "%tid"
                      DOT_IDENT@113..115 ".x"
                    SEMICOLON@115..116 ";"
                  WHITESPACE@116..117 "\n"
                  BLOCK@117..134
                    L_CURLY@117..118 "{"
                    WHITESPACE@118..119 " "
                    VAR_DECL@119..132
                      DOT_IDENT@119..123 ".reg"
                      WHITESPACE@123..124 " "
                      DOT_IDENT@124..129 ".pred"
                      WHITESPACE@129..130 " "
                      DECLARATOR@130..131
                        IDENT@130..131 "p"
                      SEMICOLON@131..132 ";"
                    WHITESPACE@132..133 " "
                    R_CURLY@133..134 "}"
                  WHITESPACE@134..135 "\n"
                  DIRECTIVE@135..146
                    DOT_IDENT@135..139 ".loc"
                    WHITESPACE@139..140 " "
                    INT_NUMBER@140..141 "1"
                    WHITESPACE@141..142 " "
                    INT_NUMBER@142..144 "64"
                    WHITESPACE@144..145 " "
                    INT_NUMBER@145..146 "0"
                  WHITESPACE@146..147 " "
                  COMMENT@147..151 "// c"
                  WHITESPACE@151..152 "\n"
                  R_CURLY@152..153 "}"
              WHITESPACE@153..154 "\n"
        "#]],
    );
}

#[test]
fn call_with_prototype() {
    check(
        ".entry k() {\nproto: .callprototype (.param .b32 _) _ (.param .b64 _);\ncall.uni (retval0), vprintf, (param0, param1), proto;\n}\n",
        expect![[r#"
            SOURCE_FILE@0..126
              FUNCTION@0..125
                DOT_IDENT@0..6 ".entry"
                WHITESPACE@6..7 " "
                IDENT@7..8 "k"
                PARAM_LIST@8..10
                  L_PAREN@8..9 "("
                  R_PAREN@9..10 ")"
                WHITESPACE@10..11 " "
                BLOCK@11..125
                  L_CURLY@11..12 "{"
                  WHITESPACE@12..13 "\n"
                  LABEL@13..19
                    IDENT@13..18 "proto"
                    COLON@18..19 ":"
                  WHITESPACE@19..20 " "
                  DIRECTIVE@20..69
                    DOT_IDENT@20..34 ".callprototype"
                    WHITESPACE@34..35 " "
                    RET_PARAM_LIST@35..50
                      L_PAREN@35..36 "("
                      PARAM@36..49
                        DOT_IDENT@36..42 ".param"
                        WHITESPACE@42..43 " "
                        DOT_IDENT@43..47 ".b32"
                        WHITESPACE@47..48 " "
                        DECLARATOR@48..49
                          IDENT@48..49 "_"
                      R_PAREN@49..50 ")"
                    WHITESPACE@50..51 " "
                    IDENT@51..52 "_"
                    WHITESPACE@52..53 " "
                    PARAM_LIST@53..68
                      L_PAREN@53..54 "("
                      PARAM@54..67
                        DOT_IDENT@54..60 ".param"
                        WHITESPACE@60..61 " "
                        DOT_IDENT@61..65 ".b64"
                        WHITESPACE@65..66 " "
                        DECLARATOR@66..67
                          IDENT@66..67 "_"
                      R_PAREN@67..68 ")"
                    SEMICOLON@68..69 ";"
                  WHITESPACE@69..70 "\n"
                  INSTRUCTION@70..123
                    IDENT@70..74 "call"
                    DOT_IDENT@74..78 ".uni"
                    WHITESPACE@78..79 " "
                    ARG_LIST@79..88
                      L_PAREN@79..80 "("
                      NAME_REF@80..87
                        IDENT@80..87 "retval0"
                      R_PAREN@87..88 ")"
                    COMMA@88..89 ","
                    WHITESPACE@89..90 " "
                    NAME_REF@90..97
                      IDENT@90..97 "vprintf"
                    COMMA@97..98 ","
                    WHITESPACE@98..99 " "
                    ARG_LIST@99..115
                      L_PAREN@99..100 "("
                      NAME_REF@100..106
                        IDENT@100..106 "param0"
                      COMMA@106..107 ","
                      WHITESPACE@107..108 " "
                      NAME_REF@108..114
                        IDENT@108..114 "param1"
                      R_PAREN@114..115 ")"
                    COMMA@115..116 ","
                    WHITESPACE@116..117 " "
                    NAME_REF@117..122
                      IDENT@117..122 "proto"
                    SEMICOLON@122..123 ";"
                  WHITESPACE@123..124 "\n"
                  R_CURLY@124..125 "}"
              WHITESPACE@125..126 "\n"
        "#]],
    );
}

#[test]
fn immediates_and_expressions() {
    check(
        ".entry k() {\nmov.f32 %f1, 0f3F800000;\nadd.s32 %r1, %r1, -(1 << 4) * 2U;\nsetp.lt.s32 %p|%q, %r1, 0x10;\n}\n",
        expect![[r#"
        SOURCE_FILE@0..104
          FUNCTION@0..103
            DOT_IDENT@0..6 ".entry"
            WHITESPACE@6..7 " "
            IDENT@7..8 "k"
            PARAM_LIST@8..10
              L_PAREN@8..9 "("
              R_PAREN@9..10 ")"
            WHITESPACE@10..11 " "
            BLOCK@11..103
              L_CURLY@11..12 "{"
              WHITESPACE@12..13 "\n"
              INSTRUCTION@13..37
                IDENT@13..16 "mov"
                DOT_IDENT@16..20 ".f32"
                WHITESPACE@20..21 " "
                NAME_REF@21..24
                  IDENT@21..24 "%f1"
                COMMA@24..25 ","
                WHITESPACE@25..26 " "
                LITERAL@26..36
                  FLOAT_NUMBER@26..36 "0f3F800000"
                SEMICOLON@36..37 ";"
              WHITESPACE@37..38 "\n"
              INSTRUCTION@38..71
                IDENT@38..41 "add"
                DOT_IDENT@41..45 ".s32"
                WHITESPACE@45..46 " "
                NAME_REF@46..49
                  IDENT@46..49 "%r1"
                COMMA@49..50 ","
                WHITESPACE@50..51 " "
                NAME_REF@51..54
                  IDENT@51..54 "%r1"
                COMMA@54..55 ","
                WHITESPACE@55..56 " "
                BIN_EXPR@56..70
                  PREFIX_EXPR@56..65
                    MINUS@56..57 "-"
                    PAREN_EXPR@57..65
                      L_PAREN@57..58 "("
                      BIN_EXPR@58..64
                        LITERAL@58..59
                          INT_NUMBER@58..59 "1"
                        WHITESPACE@59..60 " "
                        SHL@60..62 "<<"
                        WHITESPACE@62..63 " "
                        LITERAL@63..64
                          INT_NUMBER@63..64 "4"
                      R_PAREN@64..65 ")"
                  WHITESPACE@65..66 " "
                  STAR@66..67 "*"
                  WHITESPACE@67..68 " "
                  LITERAL@68..70
                    INT_NUMBER@68..70 "2U"
                SEMICOLON@70..71 ";"
              WHITESPACE@71..72 "\n"
              INSTRUCTION@72..101
                IDENT@72..76 "setp"
                DOT_IDENT@76..79 ".lt"
                DOT_IDENT@79..83 ".s32"
                WHITESPACE@83..84 " "
                BIN_EXPR@84..89
                  NAME_REF@84..86
                    IDENT@84..86 "%p"
                  PIPE@86..87 "|"
                  NAME_REF@87..89
                    IDENT@87..89 "%q"
                COMMA@89..90 ","
                WHITESPACE@90..91 " "
                NAME_REF@91..94
                  IDENT@91..94 "%r1"
                COMMA@94..95 ","
                WHITESPACE@95..96 " "
                LITERAL@96..100
                  INT_NUMBER@96..100 "0x10"
                SEMICOLON@100..101 ";"
              WHITESPACE@101..102 "\n"
              R_CURLY@102..103 "}"
          WHITESPACE@103..104 "\n"
    "#]],
    );
}

#[test]
fn dwarf_section() {
    check(
        ".section .debug_info\n{\n$L__info0:\n.b32 $L__tmp1-$L__tmp0\n.b8 1, 2 // x\n.b64 .debug_abbrev\n}\n",
        expect![[r#"
            SOURCE_FILE@0..92
              SECTION@0..91
                DOT_IDENT@0..8 ".section"
                WHITESPACE@8..9 " "
                DOT_IDENT@9..20 ".debug_info"
                WHITESPACE@20..21 "\n"
                L_CURLY@21..22 "{"
                WHITESPACE@22..23 "\n"
                LABEL@23..33
                  IDENT@23..32 "$L__info0"
                  COLON@32..33 ":"
                WHITESPACE@33..34 "\n"
                DATA_DIRECTIVE@34..56
                  DOT_IDENT@34..38 ".b32"
                  WHITESPACE@38..39 " "
                  BIN_EXPR@39..56
                    NAME_REF@39..47
                      IDENT@39..47 "$L__tmp1"
                    MINUS@47..48 "-"
                    NAME_REF@48..56
                      IDENT@48..56 "$L__tmp0"
                WHITESPACE@56..57 "\n"
                DATA_DIRECTIVE@57..65
                  DOT_IDENT@57..60 ".b8"
                  WHITESPACE@60..61 " "
                  LITERAL@61..62
                    INT_NUMBER@61..62 "1"
                  COMMA@62..63 ","
                  WHITESPACE@63..64 " "
                  LITERAL@64..65
                    INT_NUMBER@64..65 "2"
                WHITESPACE@65..66 " "
                COMMENT@66..70 "// x"
                WHITESPACE@70..71 "\n"
                DATA_DIRECTIVE@71..89
                  DOT_IDENT@71..75 ".b64"
                  WHITESPACE@75..76 " "
                  NAME_REF@76..89
                    DOT_IDENT@76..89 ".debug_abbrev"
                WHITESPACE@89..90 "\n"
                R_CURLY@90..91 "}"
              WHITESPACE@91..92 "\n"
        "#]],
    );
}

#[test]
fn error_missing_semicolon_recovers_on_next_line() {
    check_errors(
        ".entry k() {\nmov.u32 %r1, %r2\nadd.u32 %r1, %r1, 1;\n}\n",
        expect![[r#"
        2: 29..29 expected `;`, found end of line
    "#]],
    );
}

#[test]
fn error_garbage_line_reports_and_continues() {
    check_errors(
        ".version 8.4 extra\n.entry k()\n{\nmov.u32 %r1, ];\n) junk junk;\nret;\n}\n}\n",
        expect![[r#"
            1: 13..18 expected a directive or declaration, found `extra` (instructions belong in a function body)
            4: 45..46 expected an operand, found `]`
            5: 48..49 expected a statement, found `)`
            8: 68..69 expected a directive or declaration, found `}`
        "#]],
    );
}

#[test]
fn error_unterminated_block_and_comment() {
    check_errors(
        ".entry k()\n{\nret;\n/* open comment",
        expect![[r#"
        3: 17..17 expected `}`, found end of file
        4: 18..33 unterminated block comment
    "#]],
    );
}

#[test]
fn deep_nesting_is_reported_not_overflowing() {
    let text = format!(".entry k() {}{}", "{".repeat(100_000), "}".repeat(10));
    let parsed = parse(&text);
    assert_eq!(parsed.syntax_node().to_string(), text);
    assert!(
        parsed
            .errors()
            .iter()
            .any(|e| e.message.contains("nesting deeper"))
    );
    let text = format!("{{ mov.u32 %r1, {}1; }}", "-(".repeat(100_000));
    let parsed = parse(&text);
    assert_eq!(parsed.syntax_node().to_string(), text);
    assert!(
        parsed
            .errors()
            .iter()
            .any(|e| e.message.contains("nesting deeper"))
    );
}

#[test]
fn decode_utf8_reports_each_invalid_sequence() {
    let (text, errors) = crate::decode_utf8(b"ab\xffcd\xe2\x82");
    assert_eq!(text, "ab\u{fffd}cd\u{fffd}");
    let msgs: Vec<_> = errors
        .iter()
        .map(|e| format!("{:?} {}", e.range, e.message))
        .collect();
    assert_eq!(
        msgs,
        [
            "2..5 invalid UTF-8 byte sequence 0xff at byte offset 2",
            "7..10 invalid UTF-8 byte sequence 0xe2 0x82 at byte offset 5",
        ]
    );
}

#[test]
fn invalid_utf8_is_reported_with_byte_offset() {
    let (text, parse) = parse_bytes(b".version 8.4\n\xff\xfe.target sm_90\n");
    assert_eq!(parse.syntax_node().to_string(), text);
    let msgs: Vec<_> = parse
        .errors()
        .iter()
        .map(|e| format!("{:?} {}", e.range, e.message))
        .collect();
    expect![[r#"
        [
            "13..16 invalid UTF-8 byte sequence 0xff at byte offset 13",
            "13..16 unexpected character",
            "13..16 expected a directive or declaration, found `�`",
            "16..19 invalid UTF-8 byte sequence 0xfe at byte offset 14",
            "16..19 unexpected character",
        ]
    "#]]
    .assert_debug_eq(&msgs);
}

#[test]
fn ast_function_accessors() {
    let parse = parse(
        ".visible .entry k(.param .u64 .ptr.global.align 16 a, .param .u32 n[4]) .maxntid 64, 2 { ret; }",
    );
    assert!(parse.errors().is_empty(), "{:?}", parse.errors());
    let f = parse.tree().functions().next().unwrap();
    assert!(f.is_entry() && !f.is_func());
    assert_eq!(f.name().unwrap().text(), "k");
    assert_eq!(
        f.linkage()
            .map(|t| t.text().to_string())
            .collect::<Vec<_>>(),
        [".visible"]
    );
    let params: Vec<_> = f.params().collect();
    assert_eq!(params.len(), 2);
    assert_eq!(params[0].state_space().unwrap().text(), ".param");
    assert_eq!(params[0].ty().unwrap().text(), ".u64");
    assert_eq!(params[0].align(), None);
    assert_eq!(params[0].ptr_align(), Some(16));
    assert_eq!(params[1].name().unwrap().text(), "n");
    let dims: Vec<_> = params[1].declarators()[0].array_dims().collect();
    assert_eq!(dims.len(), 1);
    let perf: Vec<_> = f.perf_directives().collect();
    assert_eq!(perf[0].name().unwrap().text(), ".maxntid");
    assert_eq!(perf[0].int_args(), [Some(64), Some(2)]);
    let body = f.body().unwrap();
    assert_eq!(body.statements().count(), 1);
}

#[test]
fn ast_instruction_accessors() {
    let parse = parse(".entry k() { @!%p1 ld.global.v2.u32 {%r1, _}, [%rd1+8]; }");
    assert!(parse.errors().is_empty(), "{:?}", parse.errors());
    let block = parse
        .syntax_node()
        .descendants()
        .find_map(ast::Block::cast)
        .unwrap();
    let ast::Statement::Instruction(insn) = block.statements().next().unwrap() else {
        panic!("not an instruction")
    };
    let guard = insn.guard().unwrap();
    assert!(guard.is_negated());
    assert_eq!(guard.predicate().unwrap().name().unwrap().text(), "%p1");
    assert_eq!(insn.opcode().unwrap().text(), "ld");
    let mods: Vec<_> = insn.modifiers().map(|t| t.text().to_string()).collect();
    assert_eq!(mods, [".global", ".v2", ".u32"]);
    let ops: Vec<_> = insn.operands().collect();
    assert_eq!(ops.len(), 2);
    let ast::Operand::Vector(v) = &ops[0] else {
        panic!("not a vector")
    };
    let elems: Vec<_> = v.elements().collect();
    assert!(matches!(&elems[1], ast::Operand::Name(n) if n.is_sink()));
    let ast::Operand::Address(a) = &ops[1] else {
        panic!("not an address")
    };
    let ast::Operand::Binary(b) = a.operands().next().unwrap() else {
        panic!("not a sum")
    };
    assert_eq!(b.op().unwrap().kind(), SyntaxKind::PLUS);
}

#[test]
fn literal_values() {
    use ast::LiteralValue::*;
    let parse = parse(
        ".entry k() { mov.b32 %r, 0; mov.b32 %r, 0x1F; mov.b32 %r, 017; mov.b32 %r, 0b101; mov.b32 %r, 7U; mov.f32 %f, 0f3F800000; mov.f64 %d, 0d3FF0000000000000; mov.f64 %d, 1.5e1; }",
    );
    let lits: Vec<_> = parse
        .syntax_node()
        .descendants()
        .filter_map(ast::Literal::cast)
        .map(|l| l.value())
        .collect();
    assert_eq!(
        lits,
        [
            Some(Int {
                value: 0,
                unsigned: false
            }),
            Some(Int {
                value: 31,
                unsigned: false
            }),
            Some(Int {
                value: 15,
                unsigned: false
            }),
            Some(Int {
                value: 5,
                unsigned: false
            }),
            Some(Int {
                value: 7,
                unsigned: true
            }),
            Some(F32Bits(0x3F80_0000)),
            Some(F64Bits(0x3FF0_0000_0000_0000)),
            Some(F64(15.0)),
        ]
    );
}

#[test]
fn items_are_independent_of_surrounding_trivia() {
    let a = parse(".entry a() { ret; }\n.entry b() { ret; }\n");
    let b = parse("// comment\n.entry a() { ret; }\n\n\n.entry b() { ret; }  \n");
    let fa: Vec<_> = a
        .tree()
        .functions()
        .map(|f| f.syntax().green().to_owned())
        .collect();
    let fb: Vec<_> = b
        .tree()
        .functions()
        .map(|f| f.syntax().green().to_owned())
        .collect();
    assert_eq!(fa, fb);
}

#[test]
fn loc_directive_arguments() {
    let parse = parse(
        ".entry k() {\n.loc 2 43 13, function_name $L__info_string0, inlined_at 1 95 26 // x\n.loc 1 7 0\nret;\n}\n",
    );
    assert!(parse.errors().is_empty(), "{:?}", parse.errors());
    let locs: Vec<_> = parse
        .syntax_node()
        .descendants()
        .filter_map(ast::Directive::cast)
        .filter_map(|d| d.loc())
        .collect();
    assert_eq!(locs.len(), 2);
    assert_eq!((locs[0].file, locs[0].line, locs[0].column), (2, 43, 13));
    assert_eq!(
        locs[0].function_name.as_ref().unwrap().text(),
        "$L__info_string0"
    );
    assert_eq!(locs[0].inlined_at, Some((1, 95, 26)));
    assert_eq!(
        (
            locs[1].file,
            locs[1].line,
            locs[1].column,
            locs[1].inlined_at
        ),
        (1, 7, 0, None)
    );
}

#[test]
fn error_noreturn_on_entry() {
    check_errors(
        ".entry k() .noreturn { ret; }\n.func f() .noreturn { ret; }\n",
        expect![[r#"
            1: 11..20 `.noreturn` is only allowed on `.func`, not on `.entry`
        "#]],
    );
}

#[test]
fn error_tree_shape_of_recovery() {
    check(
        ".entry k() {\nadd.s32 %r1, , 1;\n}\n",
        expect![[r#"
        SOURCE_FILE@0..33
          FUNCTION@0..32
            DOT_IDENT@0..6 ".entry"
            WHITESPACE@6..7 " "
            IDENT@7..8 "k"
            PARAM_LIST@8..10
              L_PAREN@8..9 "("
              R_PAREN@9..10 ")"
            WHITESPACE@10..11 " "
            BLOCK@11..32
              L_CURLY@11..12 "{"
              WHITESPACE@12..13 "\n"
              INSTRUCTION@13..30
                IDENT@13..16 "add"
                DOT_IDENT@16..20 ".s32"
                WHITESPACE@20..21 " "
                NAME_REF@21..24
                  IDENT@21..24 "%r1"
                COMMA@24..25 ","
                WHITESPACE@25..26 " "
                ERROR@26..30
                  COMMA@26..27 ","
                  WHITESPACE@27..28 " "
                  INT_NUMBER@28..29 "1"
                  SEMICOLON@29..30 ";"
              WHITESPACE@30..31 "\n"
              R_CURLY@31..32 "}"
          WHITESPACE@32..33 "\n"
        error 26..27: expected an operand, found `,`
    "#]],
    );
}

#[test]
fn many_errors_are_all_reported() {
    check_errors(
        ".version\n.target\n.address_size x\n.global .u32 ;\n.global .u32 7 = 1;\n.entry k( .param .u32 ) {\nmov.u32 %r1 %r2;\n@ bra L;\nld.global.u32 %r1, [%rd1;\nL: ret\n}\n",
        expect![[r#"
            1: 8..8 expected a version number like `8.4`, found end of line
            2: 16..16 expected a target name like `sm_90`, found end of line
            3: 31..32 expected an address size (`32` or `64`), found `x`
            5: 61..62 expected a variable name, found `7`
            6: 90..91 expected a parameter name, found `)`
            7: 106..109 expected `;`, found `%r2`
            9: 144..145 expected `]`, found `;`
            10: 152..152 expected `;`, found end of line
        "#]],
    );
}

#[test]
fn source_file_header_and_int_operands() {
    let parse = parse(
        ".version 8.4\n.target sm_90\n.address_size 64\n.entry k() { add.s32 %r1, %r1, -8; mov.u32 %r2, 0x10; }\n",
    );
    let file = parse.tree();
    assert_eq!(file.version().unwrap().major_minor(), Some((8, 4)));
    assert_eq!(
        file.target()
            .unwrap()
            .targets()
            .map(|t| t.text().to_string())
            .collect::<Vec<_>>(),
        ["sm_90"]
    );
    assert_eq!(file.address_size().unwrap().size(), Some(64));
    let ints: Vec<_> = parse
        .syntax_node()
        .descendants()
        .filter_map(ast::Instruction::cast)
        .flat_map(|i| i.operands().collect::<Vec<_>>())
        .map(|o| o.as_int())
        .collect();
    assert_eq!(
        ints,
        [None, None, Some(8u64.wrapping_neg()), None, Some(16)]
    );
}

#[test]
fn sampler_initializer_fields() {
    check(
        ".global .samplerref s = { addr_mode_0 = clamp_to_edge, filter_mode = nearest };\n",
        expect![[r#"
        SOURCE_FILE@0..80
          GLOBAL_VAR@0..79
            DOT_IDENT@0..7 ".global"
            WHITESPACE@7..8 " "
            DOT_IDENT@8..19 ".samplerref"
            WHITESPACE@19..20 " "
            DECLARATOR@20..78
              IDENT@20..21 "s"
              WHITESPACE@21..22 " "
              INITIALIZER@22..78
                EQ@22..23 "="
                WHITESPACE@23..24 " "
                INIT_LIST@24..78
                  L_CURLY@24..25 "{"
                  WHITESPACE@25..26 " "
                  FIELD_INIT@26..53
                    IDENT@26..37 "addr_mode_0"
                    WHITESPACE@37..38 " "
                    EQ@38..39 "="
                    WHITESPACE@39..40 " "
                    NAME_REF@40..53
                      IDENT@40..53 "clamp_to_edge"
                  COMMA@53..54 ","
                  WHITESPACE@54..55 " "
                  FIELD_INIT@55..76
                    IDENT@55..66 "filter_mode"
                    WHITESPACE@66..67 " "
                    EQ@67..68 "="
                    WHITESPACE@68..69 " "
                    NAME_REF@69..76
                      IDENT@69..76 "nearest"
                  WHITESPACE@76..77 " "
                  R_CURLY@77..78 "}"
            SEMICOLON@78..79 ";"
          WHITESPACE@79..80 "\n"
    "#]],
    );
}

#[test]
fn section_label_difference_with_dotted_labels() {
    let parse = parse(".section .debug_loc\n{\n.b32 .Ltmp1-.Ltmp0\n.b64 .Lfunc_end0+8\n}\n");
    assert!(parse.errors().is_empty(), "{:?}", parse.errors());
    let data: Vec<_> = parse
        .syntax_node()
        .descendants()
        .filter_map(ast::DataDirective::cast)
        .collect();
    assert_eq!(data.len(), 2);
    let ast::Operand::Binary(diff) = data[0].values().next().unwrap() else {
        panic!("difference expected")
    };
    assert_eq!(diff.op().unwrap().kind(), SyntaxKind::MINUS);
    assert_eq!(diff.lhs().unwrap().syntax().to_string(), ".Ltmp1");
    assert_eq!(diff.rhs().unwrap().syntax().to_string(), ".Ltmp0");
}

#[test]
fn error_vector_size_after_type() {
    check_errors(
        ".func f(.param .b32 .v2 x) { ret; }\n.global .v2 .b32 ok;\n",
        expect![[r#"
        1: 20..23 vector size `.v2` must come before the element type
    "#]],
    );
}

#[test]
fn long_operator_chains_do_not_build_deep_trees() {
    for chain in ["+1", "?1:1", "*(1)", "-1"] {
        let text = format!(".entry k() {{ add.s32 %r1, 1{}; }}", chain.repeat(200_000));
        let parsed = parse(&text);
        assert_eq!(parsed.syntax_node().to_string(), text);
        assert!(
            parsed
                .errors()
                .iter()
                .any(|e| e.message.contains("nesting deeper"))
        );
        let depth = parsed
            .syntax_node()
            .descendants()
            .map(|n| n.ancestors().count())
            .max()
            .unwrap();
        assert!(
            depth < 2 * crate::parser::MAX_DEPTH as usize,
            "tree depth {depth}"
        );
        drop(parsed);
    }
    // A chain within the limit is an ordinary expression.
    let parsed = parse(&format!(
        ".entry k() {{ add.s32 %r1, 1{}; }}",
        "+1".repeat(100)
    ));
    assert!(parsed.errors().is_empty(), "{:?}", parsed.errors());
}

#[test]
fn module_header_errors() {
    let errors = |text: &str| -> String {
        parse(text)
            .errors()
            .iter()
            .map(|e| format!("{:?} {}\n", e.range, e.message))
            .collect()
    };
    // A missing `.version`/`.target` is `hir`'s diagnostic (ptxas: "Missing .version
    // directive at start of file", not a parse error).
    expect![""].assert_eq(&errors(".target sm_90\n.visible .entry k() { ret; }\n"));
    expect![[r#"
        9..12 the version number must be on the same line as `.version`
        56..69 `.address_size` must be at the start of the file, before other items
    "#]]
    .assert_eq(&errors(
        ".version\n8.4\n.target sm_90\n.visible .entry k() { ret; }\n.address_size 64\n",
    ));
    // The header may share a line and a `.target` may sit in a body, as in ptxas.
    let ok =
        parse(".version 8.4 .target sm_90 .address_size 64\n.entry k() { .target sm_90\n ret; }\n");
    assert!(ok.errors().is_empty(), "{:?}", ok.errors());
}

#[test]
fn weak_is_a_memory_order_as_well_as_a_linkage() {
    // `ld.weak`/`st.weak` (ptxas 13.0.88 accepts them); `.entry` stays a directive.
    check_errors(
        ".weak .func f() { ld.weak.global.u32 %r1, [%rd1]; st.weak.u32 [%rd1], %r1; ret; }\n\
         .entry k() { ld.entry.u32 %r1, [%rd1]; }\n",
        expect![[r#"
            2: 97..103 `.entry` is a directive, not an instruction modifier
        "#]],
    );
}

#[test]
fn weak_and_alias_are_modifiers_other_directives_are_not() {
    // ptxas 13.0.88 accepts `ld.weak`, `multimem.ld_reduce.weak` and `fence.proxy.alias`
    // and refuses `.visible` as a modifier.
    check_errors(
        ".entry k()\n{\nld.weak.global.u32 %r1, [%rd1];\nfence.proxy.alias;\n\
         multimem.ld_reduce.weak.global.add.u32 %r1, [%rd1];\nld.visible.u32 %r1, [%rd1];\n}\n",
        expect![[r#"
            6: 118..126 `.visible` is a directive, not an instruction modifier
        "#]],
    );
}
