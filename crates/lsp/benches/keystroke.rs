//! Keystroke latency of the language server, in process over a memory connection.
//!
//! `cargo bench -p lsp --bench keystroke`: a module of 180 kernels (about 5,000 lines) is
//! opened for sm_90; then 1,000 one-character edits inside one kernel (its immediate changes),
//! each timed from sending `didChange` to receiving that version's `publishDiagnostics`, and
//! then to the answer of a `codeLens` request. Prints p50/p95/max and the process's resident
//! memory before and after the edits (`/proc/self/status`).

use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

#[path = "../tests/incremental.rs"]
#[allow(dead_code, unused_imports)]
mod incremental;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn wait(conn: &Connection, mut done: impl FnMut(&Message) -> bool) {
    loop {
        let m = conn
            .receiver
            .recv_timeout(Duration::from_secs(600))
            .expect("server answers");
        if done(&m) {
            return;
        }
    }
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    let (server, conn) = Connection::memory();
    let thread = std::thread::spawn(move || lsp::main_loop(server).unwrap());
    let mut id = 0;
    let mut request = |conn: &Connection, method: &str, params: Value| {
        id += 1;
        let rid = RequestId::from(id);
        conn.sender
            .send(Request::new(rid.clone(), method.into(), params).into())
            .unwrap();
        wait(conn, |m| matches!(m, Message::Response(r) if r.id == rid));
    };
    request(
        &conn,
        "initialize",
        json!({ "capabilities": {}, "initializationOptions": { "targets": ["sm_90"] } }),
    );
    let notify = |conn: &Connection, method: &str, params: Value| {
        conn.sender
            .send(Notification::new(method.into(), params).into())
            .unwrap();
    };
    notify(&conn, "initialized", json!({}));
    let uri = "file:///bench.ptx";
    let text = incremental::module(180);
    let lines = text.lines().count();
    let published = |version: i64| {
        move |m: &Message| {
            matches!(m, Message::Notification(n)
                if n.method == "textDocument/publishDiagnostics" && n.params["version"] == version)
        }
    };
    let rss0 = rss_kib();
    let t = Instant::now();
    notify(
        &conn,
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "ptx", "version": 0, "text": text } }),
    );
    wait(&conn, published(0));
    let cold_diag = t.elapsed();
    request(
        &conn,
        "textDocument/codeLens",
        json!({ "textDocument": { "uri": uri } }),
    );
    let cold_lens = t.elapsed();
    let rss_open = rss_kib();
    // The immediate of kernel k90's `add.u32 %r7, %r6, 90;`: its last digit is retyped.
    let at = text.find("%r6, 90;").unwrap() + "%r6, 9".len();
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').unwrap() - 1;
    let (mut diag, mut lens) = (Vec::new(), Vec::new());
    let edits = 1000;
    for v in 1..=edits {
        let t = Instant::now();
        notify(
            &conn,
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": v },
                "contentChanges": [{ "range": {
                    "start": { "line": line, "character": col },
                    "end": { "line": line, "character": col + 1 } },
                    "text": (v % 10).to_string() }] }),
        );
        wait(&conn, published(v));
        diag.push(t.elapsed().as_secs_f64() * 1e3);
        request(
            &conn,
            "textDocument/codeLens",
            json!({ "textDocument": { "uri": uri } }),
        );
        lens.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let rss_end = rss_kib();
    println!("keystroke: {lines}-line module, 180 kernels, sm_90, {edits} edits in one kernel");
    println!(
        "  open: diagnostics {:.0} ms, CodeLens {:.0} ms (cold: every kernel compiled)",
        cold_diag.as_secs_f64() * 1e3,
        cold_lens.as_secs_f64() * 1e3
    );
    for (name, v) in [
        ("edit -> diagnostics", &mut diag),
        ("edit -> CodeLens", &mut lens),
    ] {
        let (p50, p95, max) = (percentile(v, 0.5), percentile(v, 0.95), percentile(v, 1.0));
        println!("  {name}: p50 {p50:.2} ms, p95 {p95:.2} ms, max {max:.2} ms");
    }
    println!(
        "  resident memory: {} MiB before open, {} MiB after open, {} MiB after {edits} edits",
        rss0 / 1024,
        rss_open / 1024,
        rss_end / 1024
    );
    request(&conn, "shutdown", Value::Null);
    notify(&conn, "exit", Value::Null);
    thread.join().unwrap();
}
