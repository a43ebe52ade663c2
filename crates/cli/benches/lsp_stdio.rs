//! Keystroke latency of `kiln lsp` over stdio (the real binary, as an editor runs it).
//!
//! `cargo bench -p kiln-cli --bench lsp_stdio`: the same workload as `cargo bench -p lsp
//! --bench keystroke` — a 180-kernel module compiled for sm_90, 300 one-character edits inside
//! one kernel — timed from writing `didChange` to reading that version's
//! `publishDiagnostics`, then to the answer of a `codeLens` request. Prints p50/p95/max.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

#[path = "../../lsp/tests/incremental.rs"]
#[allow(dead_code, unused_imports)]
mod incremental;

fn send(w: &mut ChildStdin, msg: Value) {
    let body = msg.to_string();
    write!(w, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    w.flush().unwrap();
}

fn read(r: &mut BufReader<ChildStdout>) -> Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

fn until(r: &mut BufReader<ChildStdout>, done: impl Fn(&Value) -> bool) {
    while !done(&read(r)) {}
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = child.stdin.take().unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut w,
        json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "capabilities": {}, "initializationOptions": { "targets": ["sm_90"] } } }),
    );
    until(&mut r, |m| m["id"] == 0);
    send(
        &mut w,
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
    );
    let uri = "file:///bench.ptx";
    let text = incremental::module(180);
    let published = |v: i64| {
        move |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == v
        }
    };
    let t = Instant::now();
    send(
        &mut w,
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": { "uri": uri, "languageId": "ptx", "version": 0, "text": text } } }),
    );
    until(&mut r, published(0));
    let cold = t.elapsed();
    let at = text.find("%r6, 90;").unwrap() + "%r6, 9".len();
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').unwrap() - 1;
    let (mut diag, mut lens) = (Vec::new(), Vec::new());
    let edits = 300;
    for v in 1..=edits {
        let t = Instant::now();
        send(
            &mut w,
            json!({ "jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": { "uri": uri, "version": v },
                "contentChanges": [{ "range": {
                    "start": { "line": line, "character": col },
                    "end": { "line": line, "character": col + 1 } },
                    "text": (v % 10).to_string() }] } }),
        );
        until(&mut r, published(v));
        diag.push(t.elapsed().as_secs_f64() * 1e3);
        send(
            &mut w,
            json!({ "jsonrpc": "2.0", "id": v, "method": "textDocument/codeLens",
                "params": { "textDocument": { "uri": uri } } }),
        );
        until(&mut r, |m| m["id"] == v);
        lens.push(t.elapsed().as_secs_f64() * 1e3);
    }
    send(
        &mut w,
        json!({ "jsonrpc": "2.0", "id": -1, "method": "shutdown" }),
    );
    until(&mut r, |m| m["id"] == -1);
    send(&mut w, json!({ "jsonrpc": "2.0", "method": "exit" }));
    child.wait().unwrap();
    println!(
        "lsp over stdio: 180-kernel module, sm_90, {edits} edits; open {:.0} ms",
        cold.as_secs_f64() * 1e3
    );
    for (name, v) in [
        ("edit -> diagnostics", &mut diag),
        ("edit -> CodeLens", &mut lens),
    ] {
        println!(
            "  {name}: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms",
            percentile(v, 0.5),
            percentile(v, 0.95),
            percentile(v, 1.0)
        );
    }
}
