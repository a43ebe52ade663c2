//! The server in process, over a memory connection: every feature, edits, cancellation.

mod client;

use client::Client;
use serde_json::{Value, json};

const SAXPY: &str = include_str!("../../../test-data/examples/saxpy.ptx");

/// Two small kernels (`.target sm_80`), shared with `kiln watch`'s test.
const TWO_KERNELS: &str = include_str!("../../../test-data/lsp/two_kernels.ptx");

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
    // Checked against `kiln build -v` (the numbers of ptxas's `-v`, and kiln's occupancy line:
    // 6 registers, 256-thread blocks: 8 blocks, the warps limit) for both targets.
    expect_test::expect![[r#"
        [
            "sm_80 · 6 regs · 0 B spills · 0 B stack · 7 instrs · occupancy 100% at 256 threads",
            "sm_90 · 6 regs · 0 B spills · 0 B stack · 7 instrs · occupancy 100% at 256 threads",
            "sm_80 · 6 regs · 0 B spills · 0 B stack · 8 instrs · occupancy 100% at 256 threads",
            "sm_90 · 6 regs · 0 B spills · 0 B stack · 8 instrs · occupancy 100% at 256 threads",
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
    // The line map: one entry per SASS line; `S2R ... SR_CTAID.X` comes from `%ctaid.x`'s line.
    let map = v["lines"].as_array().unwrap();
    assert_eq!(map.len(), text.lines().count());
    let ctaid = text.lines().position(|l| l.contains("SR_CTAID.X")).unwrap();
    assert_eq!(map[ctaid], line, "{map:?}");
    assert!(map[0].is_null(), "the header line maps to nothing");
    // Hover on the instruction shows the SASS its line became.
    let add = TWO_KERNELS
        .lines()
        .position(|l| l.contains("add.u32"))
        .unwrap();
    let h = c.ok(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": add, "character": 5 } }),
    );
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("sm_80 SASS:") && md.contains("IADD3"), "{md}");
    let v = c.ok(
        lsp::view_sass::METHOD,
        json!({ "textDocument": { "uri": uri }, "kernel": "first", "target": "sm_90",
                "controlCodes": true }),
    );
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .lines()
            .skip(1)
            .all(|l| l.trim_start().starts_with("[B")),
        "control codes before every instruction: {v}"
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
    // Across open files.
    c.open("file:///calls.ptx", CALLS);
    let found = c.ok("workspace/symbol", json!({ "query": "SEC" }));
    let found: Vec<(&str, &str)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["location"]["uri"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, [("second", uri)]);
    let all = c.ok("workspace/symbol", json!({ "query": "" }));
    assert_eq!(all.as_array().unwrap().len(), 5, "{all}");
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

/// The LSP position of byte offset `at`.
fn position(text: &str, at: usize) -> Value {
    let (line, character) = test_support::lsp_position(text, at);
    json!({ "line": line, "character": character })
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

const CALLS: &str = r#".version 8.0
.target sm_80
.address_size 64

.global .u32 counter;

.func (.reg .b32 r) twice(.reg .b32 x)
{
    add.u32 r, x, x;
    ret;
}

.visible .entry main(.param .u64 out)
{
    .reg .b32 %v;
    .reg .b32 %r<3>;
    .reg .pred %p;
    .reg .b64 %a;
    ld.param.u64 %a, [out];
    mov.u32 %v, %tid.x;
    setp.eq.u32 %p, %v, 0;
    @%p bra DONE;
    call (%r1), twice, (%v);
    st.global.u32 [counter], %r1;
DONE:
    st.global.u32 [%a], %v;
    ret;
}
"#;

/// The LSP position of the `n`-th occurrence of `needle` (plus `delta` columns).
fn at(text: &str, needle: &str, n: usize, delta: usize) -> Value {
    let offset = text.match_indices(needle).nth(n).unwrap().0 + delta;
    position(text, offset)
}

fn tdp(uri: &str, pos: Value) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": pos })
}

#[test]
fn navigation_definition_references_rename_hover() {
    let mut c = Client::start(json!({}));
    let uri = "file:///calls.ptx";
    c.open(uri, CALLS);
    assert_eq!(c.diagnostics(uri, 0), Vec::<Value>::new(), "a valid module");
    // `%v` used in `setp` → its `.reg` declaration.
    let d = c.ok("textDocument/definition", tdp(uri, at(CALLS, "%v", 2, 1)));
    assert_eq!(d["range"]["start"], at(CALLS, "%v", 0, 0));
    // The label used by `bra` → the label.
    let d = c.ok("textDocument/definition", tdp(uri, at(CALLS, "DONE", 0, 1)));
    assert_eq!(d["range"]["start"], at(CALLS, "DONE:", 0, 0));
    // `twice` in the call → the device function's name; `counter` → the global.
    let d = c.ok(
        "textDocument/definition",
        tdp(uri, at(CALLS, "twice", 1, 0)),
    );
    assert_eq!(d["range"]["start"], at(CALLS, "twice", 0, 0));
    let d = c.ok(
        "textDocument/definition",
        tdp(uri, at(CALLS, "counter", 1, 2)),
    );
    assert_eq!(d["range"]["start"], at(CALLS, "counter", 0, 0));
    // `%r1` belongs to the family `%r<3>`.
    let d = c.ok("textDocument/definition", tdp(uri, at(CALLS, "%r1", 0, 1)));
    assert_eq!(d["range"]["start"], at(CALLS, "%r<3>", 0, 0));
    // A parameter of the device function, used twice.
    let d = c.ok("textDocument/definition", tdp(uri, at(CALLS, "x, x", 0, 0)));
    assert_eq!(d["range"]["start"], at(CALLS, "x)", 0, 0));

    // References of `%v`: the declaration and four uses.
    let refs = c.ok(
        "textDocument/references",
        json!({ "textDocument": { "uri": uri }, "position": at(CALLS, "%v", 0, 1),
                "context": { "includeDeclaration": true } }),
    );
    assert_eq!(refs.as_array().unwrap().len(), 5, "{refs}");

    // Rename `%v` to `%tid_x`: every occurrence, and the result still compiles clean.
    let edit = c.ok(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": at(CALLS, "%v", 3, 1),
                "newName": "%tid_x" }),
    );
    let edits = edit["changes"][uri].as_array().unwrap();
    assert_eq!(edits.len(), 5);
    let mut renamed = CALLS.to_string();
    let mut starts: Vec<usize> = edits
        .iter()
        .map(|e| {
            let (line, col) = (
                e["range"]["start"]["line"].as_u64().unwrap(),
                e["range"]["start"]["character"].as_u64().unwrap(),
            );
            let line_start: usize = CALLS.lines().take(line as usize).map(|l| l.len() + 1).sum();
            line_start + col as usize
        })
        .collect();
    starts.sort_unstable_by(|a, b| b.cmp(a));
    for st in starts {
        renamed.replace_range(st..st + 2, "%tid_x");
    }
    assert_eq!(renamed.matches("%tid_x").count(), 5);
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 1 }, "contentChanges": [{ "text": renamed }] }),
    );
    assert_eq!(
        c.diagnostics(uri, 1),
        Vec::<Value>::new(),
        "the renamed module is valid"
    );
    // One register of a family cannot be renamed alone.
    let r = c.request(
        "textDocument/rename",
        json!({ "textDocument": { "uri": uri }, "position": at(CALLS, "%r1", 0, 1),
                "newName": "%x" }),
    );
    assert!(r.response_result.is_err());

    // Hover: a register shows its declaration; an instruction its PTX ISA form.
    let h = c.ok("textDocument/hover", tdp(uri, at(CALLS, "%p", 1, 1)));
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(
        md.starts_with("register `%p`") && md.contains(".reg .pred %p;"),
        "{md}"
    );
    let h = c.ok("textDocument/hover", tdp(uri, at(CALLS, "setp", 0, 1)));
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(
        md.starts_with("`setp.eq.u32`") && md.contains("PTX ISA §9.7"),
        "{md}"
    );
    c.shutdown();
}

#[test]
fn semantic_tokens_and_folding() {
    let mut c = Client::start(json!({}));
    let uri = "file:///calls.ptx";
    c.open(uri, CALLS);
    let tokens = c.ok("textDocument/semanticTokens/full", doc(uri));
    let data: Vec<u64> = tokens["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    // Decode (line, column, length, type, modifiers) and name each token by its text.
    let types = [
        "keyword",
        "modifier",
        "macro",
        "variable",
        "parameter",
        "label",
        "function",
        "number",
        "string",
        "comment",
    ];
    let lines: Vec<&str> = CALLS.lines().collect();
    let (mut line, mut col) = (0, 0);
    let mut seen = Vec::new();
    for t in data.chunks(5) {
        if t[0] > 0 {
            col = 0;
        }
        line += t[0] as usize;
        col += t[1] as usize;
        let text: String = lines[line].chars().skip(col).take(t[2] as usize).collect();
        seen.push(format!("{text}:{}:{}", types[t[3] as usize], t[4]));
    }
    for want in [
        "twice:function:0",
        "add:keyword:0",
        ".u32:modifier:0",
        "x:parameter:0",
        "%v:variable:0",
        "%tid:variable:1",
        ".x:modifier:0",
        "counter:variable:2",
        "DONE:label:0",
        "0:number:0",
        ".version:macro:0",
    ] {
        assert!(seen.iter().any(|s| s == want), "no {want} in {seen:?}");
    }
    let folds = c.ok("textDocument/foldingRange", doc(uri));
    assert_eq!(folds.as_array().unwrap().len(), 2, "{folds}");
    c.shutdown();
}

#[test]
fn register_pressure_peaks_as_inlay_hints() {
    let mut c = Client::start(json!({}));
    let uri = "file:///calls.ptx";
    c.open(uri, CALLS);
    let hints = c.ok(
        "textDocument/inlayHint",
        json!({ "textDocument": { "uri": uri }, "range": {
            "start": { "line": 0, "character": 0 }, "end": { "line": 99, "character": 0 } } }),
    );
    let hints = hints.as_array().unwrap();
    assert!(!hints.is_empty());
    for h in hints {
        let label = h["label"].as_str().unwrap();
        let line = CALLS
            .lines()
            .nth(h["position"]["line"].as_u64().unwrap() as usize)
            .unwrap();
        // At the end of an instruction line of `main`, naming the live PTX registers.
        assert_eq!(
            h["position"]["character"].as_u64().unwrap() as usize,
            line.len()
        );
        assert!(
            label.contains("sm_80: ") && label.contains(" regs live"),
            "{label}"
        );
        assert!(
            label.contains("%a"),
            "the output pointer is live to the end: {label}"
        );
    }
    c.shutdown();
}
