//! The server in process, over a memory connection: every feature, edits, cancellation.

mod client;

use client::Client;
use serde_json::{Value, json};

const SAXPY: &str = include_str!("../../../test-data/examples/saxpy.ptx");

const TWO_KERNELS: &str = r#".version 8.0
.target sm_80
.address_size 64

.visible .entry first(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %tid.x;
    st.global.u32 [%rd2], %r1;
    ret;
}

.visible .entry second(.param .u64 p)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r1, %ctaid.x;
    add.u32 %r2, %r1, 7;
    st.global.u32 [%rd2+4], %r2;
    ret;
}
"#;

fn doc(uri: &str) -> Value {
    json!({ "textDocument": { "uri": uri } })
}

fn lens_titles(lenses: &Value) -> Vec<String> {
    lenses
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["command"]["title"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn diagnostics_follow_edits() {
    let mut c = Client::start(json!({}));
    let uri = "file:///k.ptx";
    let broken = TWO_KERNELS.replace("add.u32 %r2, %r1, 7;", "add.u32 %r2, %r1 7;");
    c.open(uri, &broken);
    let d = c.diagnostics(uri, 0);
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0]["severity"], 1);
    let line = broken.lines().position(|l| l.contains("%r1 7")).unwrap();
    assert_eq!(d[0]["range"]["start"]["line"], line);
    // Fix it with an incremental edit: insert the comma after `%r1`.
    let col = broken.lines().nth(line).unwrap().find("%r1 7").unwrap() + 3;
    c.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri, "version": 1 },
            "contentChanges": [{ "range": {
                "start": { "line": line, "character": col },
                "end": { "line": line, "character": col } }, "text": "," }]
        }),
    );
    assert_eq!(c.diagnostics(uri, 1), Vec::<Value>::new());
    // An unsupported instruction for code generation is reported at its span.
    c.notify(
        "textDocument/didChange",
        json!({
            "textDocument": { "uri": uri, "version": 2 },
            "contentChanges": [{ "text": TWO_KERNELS.replace(
                "add.u32 %r2, %r1, 7;",
                "add.u32 %r2, %r1, 7;\n    bar.arrive 3, 64;") }]
        }),
    );
    let d = c.diagnostics(uri, 2);
    assert!(
        d.iter().all(|d| d["severity"] == 1),
        "code generation errors are errors: {d:?}"
    );
    c.shutdown();
}

#[test]
fn code_lens_per_kernel_and_target() {
    let mut c = Client::start(json!({ "targets": ["sm_80", "sm_90"] }));
    let uri = "file:///two.ptx";
    c.open(uri, TWO_KERNELS);
    let titles = lens_titles(&c.ok("textDocument/codeLens", doc(uri)));
    // Checked against `kiln build -v` (the numbers of ptxas's `-v`) for both targets.
    expect_test::expect![[r#"
        [
            "sm_80 · 6 regs · 0 B spills · 0 B stack · 7 instrs",
            "sm_90 · 6 regs · 0 B spills · 0 B stack · 7 instrs",
            "sm_80 · 6 regs · 0 B spills · 0 B stack · 8 instrs",
            "sm_90 · 6 regs · 0 B spills · 0 B stack · 8 instrs",
        ]
    "#]]
    .assert_debug_eq(&titles);
    // Without configured targets, the file's `.target` (sm_80 here).
    let mut c2 = Client::start(json!({}));
    c2.open(uri, TWO_KERNELS);
    let titles = lens_titles(&c2.ok("textDocument/codeLens", doc(uri)));
    assert_eq!(titles.len(), 2);
    assert!(
        titles.iter().all(|t| t.starts_with("sm_80 · ")),
        "{titles:?}"
    );
    c2.shutdown();
    c.shutdown();
}

#[test]
fn view_sass_by_name_position_and_target() {
    let mut c = Client::start(json!({}));
    let uri = "file:///two.ptx";
    c.open(uri, TWO_KERNELS);
    let line = TWO_KERNELS
        .lines()
        .position(|l| l.contains("%ctaid.x"))
        .unwrap();
    let v = c.ok(
        lsp::view_sass::METHOD,
        json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": 4 } }),
    );
    assert_eq!(v["kernel"], "second");
    assert_eq!(v["target"], "sm_80");
    let text = v["text"].as_str().unwrap();
    assert!(
        text.starts_with("//--------------------- .text.second"),
        "{text}"
    );
    assert!(
        text.contains("S2R R") && text.contains("SR_CTAID.X"),
        "{text}"
    );
    assert!(text.contains("EXIT"), "{text}");
    let v = c.ok(
        lsp::view_sass::METHOD,
        json!({ "textDocument": { "uri": uri }, "kernel": "first", "target": "sm_90" }),
    );
    assert_eq!(
        (v["kernel"].as_str(), v["target"].as_str()),
        (Some("first"), Some("sm_90"))
    );
    assert!(v["text"].as_str().unwrap().contains("SR_TID.X"));
    let r = c.request(
        lsp::view_sass::METHOD,
        json!({ "textDocument": { "uri": uri }, "kernel": "nope" }),
    );
    assert!(r.response_result.is_err());
    // Every edit tells the client to refresh its views of the file.
    assert!(
        c.notifications
            .iter()
            .any(|n| n.method == lsp::view_sass::CHANGED && n.params["uri"] == uri)
    );
    c.shutdown();
}

#[test]
fn document_symbols_list_kernels() {
    let mut c = Client::start(json!({}));
    let uri = "file:///two.ptx";
    c.open(uri, TWO_KERNELS);
    let symbols = c.ok("textDocument/documentSymbol", doc(uri));
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "second"]);
    c.shutdown();
}

#[test]
fn cancelled_requests_are_answered() {
    let mut c = Client::start(json!({ "targets": ["sm_90"] }));
    let uri = "file:///s.ptx";
    c.open(uri, SAXPY);
    let id = c.send_request("textDocument/codeLens", doc(uri));
    c.notify("$/cancelRequest", json!({ "id": id }));
    let r = c.response(&id);
    if let Err(e) = r.response_result {
        assert_eq!(e.code, lsp_server::ErrorCode::RequestCanceled as i32);
    }
    // The server goes on serving.
    assert_eq!(
        lens_titles(&c.ok("textDocument/codeLens", doc(uri))).len(),
        1
    );
    c.shutdown();
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// (line, UTF-16 column) of byte offset `at`.
fn position(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": line, "character": text[start..at].encode_utf16().count() })
}

#[test]
fn random_edits_never_desync() {
    let options = json!({ "targets": ["sm_90"] });
    let mut c = Client::start(options.clone());
    let uri = "file:///edit.ptx";
    let mut text = TWO_KERNELS.to_string();
    c.open(uri, &text);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let pieces = [
        "",
        "%r1",
        ", ",
        ";\n",
        "add.u32 %r2, %r1, 1;\n",
        "π",
        "😀",
        "}",
        "\n\n",
    ];
    let edits = 300;
    for version in 1..=edits {
        let mut a = rng.below(text.len() + 1);
        while !text.is_char_boundary(a) {
            a -= 1;
        }
        let mut b = (a + rng.below(12)).min(text.len());
        while !text.is_char_boundary(b) {
            b -= 1;
        }
        let insert = pieces[rng.below(pieces.len())];
        let change = if version % 40 == 0 {
            // Now and then a whole valid text, so that code generation runs between edits.
            text = TWO_KERNELS.replace(
                "add.u32 %r2, %r1, 7;",
                &format!("add.u32 %r2, %r1, {version};"),
            );
            json!({ "text": text })
        } else {
            let range = json!({ "start": position(&text, a), "end": position(&text, b) });
            text.replace_range(a..b, insert);
            json!({ "range": range, "text": insert })
        };
        c.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [change] }),
        );
        // Now and then ask for something while edits are in flight.
        if version % 25 == 0 {
            c.ok("textDocument/codeLens", doc(uri));
        }
    }
    let diagnostics = c.diagnostics(uri, edits as i64);
    let lenses = c.ok("textDocument/codeLens", doc(uri));
    let symbols = c.ok("textDocument/documentSymbol", doc(uri));
    let mut fresh = Client::start(options);
    fresh.open(uri, &text);
    assert_eq!(diagnostics, fresh.diagnostics(uri, 0), "diagnostics");
    assert_eq!(
        lenses,
        fresh.ok("textDocument/codeLens", doc(uri)),
        "lenses"
    );
    assert_eq!(
        symbols,
        fresh.ok("textDocument/documentSymbol", doc(uri)),
        "symbols"
    );
    fresh.shutdown();
    c.shutdown();
}
