//! `kiln lsp` over stdio, driven by a client written here against the protocol's wire format
//! (Content-Length framing, JSON-RPC), independent of the server's own crates: its CodeLens
//! numbers equal `kiln build -v`'s resource report and its SASS view equals `kiln sass`, for
//! every kernel of the test files and both targets.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// Notifications read while waiting for something else.
    notifications: Vec<Value>,
}

impl Server {
    fn start(options: Value) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("kiln lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut s = Server {
            child,
            stdin,
            stdout,
            next_id: 0,
            notifications: Vec::new(),
        };
        let init = s.request(
            "initialize",
            json!({ "processId": null, "capabilities": {}, "initializationOptions": options }),
        );
        assert!(
            init["capabilities"]["codeLensProvider"].is_object(),
            "{init}"
        );
        s.send(json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
        s
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn read(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "server closed"
            );
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = Some(n.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; length.expect("a Content-Length header")];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        loop {
            self.next_id += 1;
            let id = self.next_id;
            self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
            let reply = loop {
                let m = self.read();
                if m["id"] == id {
                    break m;
                }
                if m.get("method").is_some() {
                    self.notifications.push(m);
                }
            };
            match reply.get("error") {
                // Content modified (an edit overtook the request): ask again.
                Some(e) if e["code"] == -32801 => continue,
                Some(e) => panic!("{method}: {e}"),
                None => return reply["result"].clone(),
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The diagnostics published for `uri` at `version`.
    fn diagnostics(&mut self, uri: &str, version: u64) -> Value {
        loop {
            if let Some(i) = self.notifications.iter().position(|n| {
                n["method"] == "textDocument/publishDiagnostics"
                    && n["params"]["uri"] == uri
                    && n["params"]["version"] == version
            }) {
                return self.notifications.remove(i)["params"]["diagnostics"].clone();
            }
            let m = self.read();
            if m.get("method").is_some() {
                self.notifications.push(m);
            }
        }
    }

    fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.send(json!({ "jsonrpc": "2.0", "method": "exit" }));
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
    }
}

/// `(kernel, registers, stack, spill stores, spill loads, occupancy)` from `kiln build -v`
/// (the occupancy as its line words it: `100% at 256 threads`).
fn report(path: &str, arch: &str) -> Vec<(String, u32, u32, u32, u32, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["build", "--arch", arch, "-v", "-o"])
        .arg(std::env::temp_dir().join(format!("kiln-lsp-test-{arch}.cubin")))
        .arg(path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = Vec::new();
    let mut name = String::new();
    let mut frame = (0, 0, 0);
    for line in text.lines() {
        let nums: Vec<u32> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        if let Some(rest) = line.strip_prefix("kiln info    : Function properties for ") {
            name = rest.to_string();
        } else if line.contains("bytes stack frame") {
            frame = (nums[0], nums[1], nums[2]);
        } else if line.contains("Used ") {
            rows.push((
                name.clone(),
                nums[0],
                frame.0,
                frame.1,
                frame.2,
                String::new(),
            ));
        } else if let Some(rest) = line.strip_prefix("kiln info    : Occupancy ") {
            let (summary, _) = rest.split_once(':').unwrap();
            rows.last_mut().unwrap().5 = summary.to_string();
        }
    }
    rows
}

fn kiln_sass(path: &str, arch: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["sass", "--arch", arch, path])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn lens_and_sass_view_equal_the_batch_compiler() {
    let files = [
        "../../test-data/examples/saxpy.ptx",
        "../../test-data/codegen/abs_neg.ptx",
        "../../test-data/codegen/bfi_fold.ptx",
    ];
    let targets = ["sm_80", "sm_90"];
    let mut server = Server::start(json!({ "targets": targets }));
    for path in files {
        let text = std::fs::read_to_string(path).unwrap();
        let uri = format!("file:///{}", path.trim_start_matches("../"));
        server.send(
            json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": { "uri": uri, "languageId": "ptx", "version": 0, "text": text } } }),
        );
        let lenses = server.request(
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": uri } }),
        );
        let titles: Vec<String> = lenses
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["command"]["title"].as_str().unwrap().to_string())
            .collect();
        let mut checked = 0;
        for arch in targets {
            let batch_sass = kiln_sass(path, arch);
            for (kernel, regs, stack, stores, loads, occupancy) in report(path, arch) {
                let want = format!(
                    "{arch} · {regs} regs · {} B spills · {stack} B stack",
                    stores + loads
                );
                let end = format!(" · occupancy {occupancy}");
                assert!(!occupancy.is_empty(), "{path} {kernel}: no occupancy line");
                assert!(
                    titles
                        .iter()
                        .any(|t| t.starts_with(&want) && t.ends_with(&end)),
                    "{path} {kernel}: no lens starting {want:?} and ending {end:?} in {titles:?}"
                );
                let view = server.request(
                    "kiln/viewSass",
                    json!({ "textDocument": { "uri": uri }, "kernel": kernel, "target": arch }),
                );
                let text = view["text"].as_str().unwrap();
                assert!(!text.is_empty(), "{path} {kernel} {arch}: {view}");
                assert!(
                    batch_sass.contains(text),
                    "{path} {kernel} {arch}: the view is not `kiln sass`'s listing"
                );
                checked += 1;
            }
        }
        assert!(checked >= 2, "{path}: nothing compared");
        assert_eq!(
            titles.len(),
            checked,
            "{path}: one lens per kernel and target"
        );
    }
    server.stop();
}

/// The LSP position of byte offset `at`.
fn position(text: &str, at: usize) -> Value {
    let (line, character) = test_support::lsp_position(text, at);
    json!({ "line": line, "character": character })
}

/// Everything the server shows for a file: diagnostics, CodeLens, symbols, and the SASS view
/// of every kernel on every target.
fn everything(s: &mut Server, uri: &str, version: u64, targets: &[&str]) -> Value {
    let diagnostics = s.diagnostics(uri, version);
    let doc = json!({ "textDocument": { "uri": uri } });
    let lenses = s.request("textDocument/codeLens", doc.clone());
    let symbols = s.request("textDocument/documentSymbol", doc);
    let mut views = Vec::new();
    for sym in symbols.as_array().into_iter().flatten() {
        for t in targets {
            let r = s.request(
                "kiln/viewSass",
                json!({ "textDocument": { "uri": uri }, "kernel": sym["name"], "target": t }),
            );
            views.push(r);
        }
    }
    json!({ "diagnostics": diagnostics, "lenses": lenses, "symbols": symbols, "views": views })
}

#[test]
fn a_thousand_random_edits_over_stdio_never_desync() {
    let base = std::fs::read_to_string("../../test-data/codegen/abs_neg.ptx").unwrap();
    let targets = ["sm_90", "sm_80"];
    let options = json!({ "targets": targets });
    let mut s = Server::start(options.clone());
    let uri = "file:///edits.ptx";
    s.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "ptx", "version": 0, "text": base } }),
    );
    let mut text = base.clone();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rand = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let pieces = [
        "",
        "%r1",
        ", ",
        ";\n",
        "add.u32 %r2, %r1, 1;\n",
        "π",
        "😀",
        "}",
        "\n",
    ];
    let edits = 1000;
    for version in 1..=edits {
        let change = if version % 50 == 0 {
            // A whole valid text now and then, so code generation runs between edits.
            text = base.replace("ret;", &format!("ret;\n// edit {version}"));
            json!({ "text": text })
        } else {
            let mut a = rand(text.len() + 1);
            while !text.is_char_boundary(a) {
                a -= 1;
            }
            let mut b = (a + rand(10)).min(text.len());
            while !text.is_char_boundary(b) {
                b -= 1;
            }
            let insert = pieces[rand(pieces.len())];
            let range = json!({ "start": position(&text, a), "end": position(&text, b) });
            text.replace_range(a..b, insert);
            json!({ "range": range, "text": insert })
        };
        s.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [change] }),
        );
        if version % 97 == 0 {
            s.request(
                "textDocument/codeLens",
                json!({ "textDocument": { "uri": uri } }),
            );
        }
    }
    let after_edits = everything(&mut s, uri, edits as u64, &targets);
    s.stop();
    let mut fresh = Server::start(options);
    fresh.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "ptx", "version": 0, "text": text } }),
    );
    let from_scratch = everything(&mut fresh, uri, 0, &targets);
    fresh.stop();
    assert_eq!(after_edits, from_scratch);
}
