//! Calls of device functions (inlined by `call.rs`): the fail-closed cases, each with its
//! message, the function whose tree the range lies in, and the range's text.

use syntax::SyntaxKind;
use syntax::ast::{self, AstNode};

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Lowers kernel `k` of `body` (after the header) for sm_90 with every `.func` of the module
/// available (a definition preferred over a declaration).
fn lower(body: &str) -> (String, Result<lower::Lowered, lower::LowerError>) {
    lower_with(body, &lower::ModuleVars::default())
}

fn lower_with(
    body: &str,
    module: &lower::ModuleVars,
) -> (String, Result<lower::Lowered, lower::LowerError>) {
    let text = format!("{HEADER}{body}");
    let parse = syntax::parse(&text);
    let mut functions = lower::Functions::new();
    let mut kernel = None;
    for n in parse
        .syntax_node()
        .children()
        .filter(|n| n.kind() == SyntaxKind::FUNCTION)
    {
        let f = ast::Function::cast(n.clone()).unwrap();
        let name = f.name().unwrap().text().to_string();
        if f.is_entry() {
            kernel = Some(n);
        } else if f.body().is_some() || !functions.contains(&name) {
            functions.insert(name, n);
        }
    }
    let kernel = kernel.expect("a kernel");
    let r = lower::lower_kernel(
        &kernel,
        lower::LowerTarget::for_sm(90, true),
        module,
        &functions,
    );
    (text, r)
}

/// The error's message, function, and the text of its range (in that function's tree, which
/// is the parse's own here: these trees keep their trivia, so ranges are file offsets).
fn refusal(body: &str) -> (String, Option<String>, String) {
    let (text, r) = lower(body);
    let e = r.expect_err("refused");
    let range = usize::from(e.range.start())..usize::from(e.range.end());
    (e.message, e.function, text[range].to_string())
}

const CALLER: &str = r#"
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), f, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    st.global.u32 [%rd1], %r2;
    ret;
}
"#;

fn func(name: &str, body: &str) -> String {
    format!(
        ".func (.param .b32 func_retval0) {name}(.param .b32 {name}_p)\n{{\n    .reg .b32 %r<4>;\n    ld.param.u32 %r1, [{name}_p];\n{body}    st.param.b32 [func_retval0+0], %r1;\n    ret;\n}}\n"
    )
}

fn call_of(callee: &str) -> String {
    format!(
        "    {{\n    .param .b32 param0;\n    st.param.b32 [param0+0], %r1;\n    .param .b32 retval0;\n    call.uni (retval0), {callee}, (param0);\n    ld.param.b32 %r1, [retval0+0];\n    }}\n"
    )
}

#[test]
fn a_simple_call_lowers() {
    let src = format!("{}{CALLER}", func("f", "    add.s32 %r1, %r1, 1;\n"));
    let (_, r) = lower(&src);
    let l = r.unwrap();
    ir::verify(&l.func).unwrap();
    // The body is inlined: no call instruction, the addition is there.
    let text = ir::print(&l.func, None);
    assert!(text.contains("IADD3"), "{text}");
    assert!(!text.contains("CALL"), "{text}");
}

#[test]
fn direct_recursion_is_refused_in_the_callee() {
    let src = format!("{}{CALLER}", func("f", &call_of("f")));
    let (message, function, at) = refusal(&src);
    assert_eq!(message, "unsupported: recursive calls (`f` → `f`)");
    assert_eq!(function.as_deref(), Some("f"));
    assert_eq!(at, "call.uni (retval0), f, (param0);");
}

#[test]
fn mutual_recursion_is_refused() {
    let src = format!(
        "{}{}{CALLER}",
        func("g", &call_of("f")),
        func("f", &call_of("g"))
    );
    let (message, function, at) = refusal(&src);
    assert_eq!(message, "unsupported: recursive calls (`f` → `g` → `f`)");
    assert_eq!(function.as_deref(), Some("g"));
    assert_eq!(at, "call.uni (retval0), f, (param0);");
}

#[test]
fn calls_of_functions_without_a_body_are_refused() {
    let src = format!(".extern .func (.param .b32 func_retval0) f(.param .b32 f_p);\n{CALLER}");
    let (message, function, at) = refusal(&src);
    assert!(
        message.starts_with("unsupported: call of f (a function without a body"),
        "{message}"
    );
    assert_eq!(function, None);
    assert_eq!(at, "call.uni (retval0), f, (param0);");
    // `__assertfail` as nvcc declares it, called with no result.
    let src = r#"
.extern .func __assertfail
(
    .param .b64 __assertfail_param_0,
    .param .b64 __assertfail_param_1,
    .param .b32 __assertfail_param_2,
    .param .b64 __assertfail_param_3,
    .param .b64 __assertfail_param_4
)
.noreturn;
.visible .entry k(.param .u64 out)
{
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [out];
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd1;
    .param .b64 param1;
    st.param.b64 [param1+0], %rd1;
    .param .b32 param2;
    st.param.b32 [param2+0], 7;
    .param .b64 param3;
    st.param.b64 [param3+0], %rd1;
    .param .b64 param4;
    st.param.b64 [param4+0], 1;
    call.uni __assertfail, (param0, param1, param2, param3, param4);
    }
    ret;
}
"#;
    // Without the module's declaration (so no address-table slot), refused.
    let (message, _, _) = refusal(src);
    assert_eq!(
        message,
        "unsupported: call of __assertfail (not declared at module scope)"
    );
    // Declared: a system call, its arguments in R4.. as ptxas places them (R4:R5, R6:R7, R8,
    // R10:R11, R12:R13), the callee's address from the slot after the globals, `LEPC R20`.
    let module = lower::ModuleVars {
        globals: vec!["g".into()],
        system_functions: vec!["__assertfail".into()],
        ..Default::default()
    };
    let (_, r) = lower_with(src, &module);
    let l = r.expect("lowered");
    assert_eq!(l.system_calls, ["__assertfail"]);
    let text: Vec<String> = l
        .func
        .insts()
        .map(|i| ir::inst_text(&l.func, i, None, &|_| "L".into()))
        .collect();
    let from = text
        .iter()
        .position(|t| t.starts_with("MOV R4,"))
        .expect("args");
    let call: Vec<&str> = text[from..].iter().map(String::as_str).collect();
    let dests: Vec<&str> = call
        .iter()
        .take_while(|t| t.starts_with("MOV R"))
        .map(|t| t.split(',').next().unwrap())
        .collect();
    assert_eq!(
        dests,
        [
            "MOV R4", "MOV R5", "MOV R6", "MOV R7", "MOV R8", "MOV R10", "MOV R11", "MOV R12",
            "MOV R13"
        ]
    );
    assert!(
        call.iter()
            .any(|t| t.starts_with("LDC.64") && t.ends_with("c[0x4][0x8]"))
    );
    let lepc = call
        .iter()
        .position(|t| t.starts_with("LEPC R20"))
        .expect("LEPC");
    assert!(call[lepc + 1].starts_with("CALL.ABS.NOINC "), "{call:?}");
}

#[test]
fn indirect_calls_are_refused() {
    let src = format!(
        "{}{}",
        func("f", ""),
        r#"
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u64 %rd2, f;
    mov.u32 %r1, 3;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call.uni (retval0), %rd2, (param0), proto;
    ld.param.b32 %r2, [retval0+0];
    }
    st.global.u32 [%rd1], %r2;
    ret;
}
"#
    );
    // Taking the function's address is refused first; without it, the call itself.
    let (message, _, at) = refusal(&src);
    assert_eq!(message, "unsupported: operand `f`");
    assert_eq!(at, "f");
    let src = src.replace("mov.u64 %rd2, f;", "ld.global.u64 %rd2, [%rd1];");
    let (message, function, at) = refusal(&src);
    assert_eq!(
        message,
        "unsupported: call of %rd2 (an indirect call through a register)"
    );
    assert_eq!(function, None);
    assert_eq!(at, "call.uni (retval0), %rd2, (param0), proto;");
}

#[test]
fn unsupported_code_in_a_callee_names_the_callee() {
    let src = format!(
        "{}{CALLER}",
        func("f", "    .reg .b64 %x<3>;\n    pmevent 1;\n")
    );
    let (message, function, at) = refusal(&src);
    assert_eq!(message, "unsupported: instruction `pmevent`");
    assert_eq!(function.as_deref(), Some("f"));
    assert_eq!(at, "pmevent 1;");
}

#[test]
fn shared_variables_in_a_callee_are_refused() {
    let src = format!(
        "{}{CALLER}",
        func("f", "    .shared .b32 s;\n    st.shared.u32 [s], %r1;\n")
    );
    let (message, function, at) = refusal(&src);
    assert_eq!(
        message,
        "unsupported: .shared variables declared in a device function"
    );
    assert_eq!(function.as_deref(), Some("f"));
    assert_eq!(at, ".shared .b32 s;");
}

#[test]
fn nesting_is_bounded() {
    // f0 → f1 → ... → f17: the 17th nested call is refused.
    let mut src = String::new();
    for i in (0..18).rev() {
        let body = if i < 17 {
            call_of(&format!("f{}", i + 1))
        } else {
            String::new()
        };
        src.push_str(&func(&format!("f{i}"), &body));
    }
    src.push_str(&CALLER.replace(", f, (", ", f0, ("));
    let (message, function, _) = refusal(&src);
    assert_eq!(message, "unsupported: calls nested deeper than 16");
    assert_eq!(function.as_deref(), Some("f15"));
    // 16 levels are fine.
    let shallow = src.replace("call.uni (retval0), f16, (param0);", "");
    let (_, r) = lower(&shallow);
    r.unwrap();
}

#[test]
fn the_address_of_a_param_variable_is_refused() {
    let src = format!(
        "{}{}",
        func("f", ""),
        CALLER.replace(
            "    .param .b32 retval0;\n",
            "    .param .b32 retval0;\n    mov.u64 %rd2, param0;\n"
        )
    );
    let (message, _, at) = refusal(&src);
    assert_eq!(
        message,
        "unsupported: the address of the .param variable `param0`"
    );
    assert_eq!(at, "param0");
}

#[test]
fn parameter_accesses_outside_the_variable_are_refused() {
    let src = CALLER.replace(
        "st.param.b32 [param0+0], %r1;",
        "st.param.b32 [param0+4], %r1;",
    );
    let src = format!("{}{src}", func("f", ""));
    let (message, _, at) = refusal(&src);
    assert_eq!(
        message,
        "unsupported: .param access outside or misaligned in its variable"
    );
    assert_eq!(at, "st.param.b32 [param0+4], %r1;");
}
