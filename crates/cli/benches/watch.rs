//! `kiln watch` latency: save → cubin rewritten.
//!
//! `cargo bench -p kiln-cli --bench watch`: a 64-kernel module is watched for sm_90; then 60
//! saves (each a temporary file renamed over the original, as editors save) change one
//! kernel's immediate, and each is timed from the rename to the moment the cubin's bytes
//! differ from the previous ones (polled every 0.2 ms). Prints p50/p95/max.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../../lsp/tests/incremental.rs"]
#[allow(dead_code, unused_imports)]
mod incremental;

fn main() {
    let dir = std::env::temp_dir().join(format!("kiln-watch-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let ptx = dir.join("m.ptx");
    let text = incremental::module(64);
    std::fs::write(&ptx, &text).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .arg("watch")
        .arg(&ptx)
        .args(["--arch", "sm_90"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("cubins written") {
        line.clear();
        out.read_line(&mut line).unwrap();
    }
    std::thread::spawn(move || for _ in out.lines() {});
    let cubin = dir.join("m.sm_90.cubin");
    let mut last = std::fs::read(&cubin).unwrap();
    let mut times = Vec::new();
    for i in 0..60 {
        let edited = text.replace("%r6, 30;", &format!("%r6, {};", 100 + i));
        assert_ne!(edited, text, "the edit changes the text");
        let tmp = dir.join("m.ptx.swp");
        std::fs::write(&tmp, edited).unwrap();
        let t = Instant::now();
        std::fs::rename(&tmp, &ptx).unwrap();
        loop {
            if let Ok(now) = std::fs::read(&cubin)
                && now != last
            {
                last = now;
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "no rebuild: {:?}",
                child.try_wait()
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        times.push(t.elapsed().as_secs_f64() * 1e3);
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    times.sort_by(f64::total_cmp);
    let p = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "watch: 64-kernel module, sm_90, 60 saves of a one-kernel edit: save -> cubin rewritten p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        p(0.5),
        p(0.95),
        p(1.0)
    );
}
