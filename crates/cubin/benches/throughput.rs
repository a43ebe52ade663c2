//! `cargo bench -p cubin --bench throughput`: read / write / listing throughput over the
//! committed fixtures plus up to 300 cached corpus cubins (`target/kiln-cache/cubins`).

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for dir in [
        root.join("tests/data"),
        root.join("../../target/kiln-cache/cubins"),
    ] {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
            .collect();
        paths.sort();
        for p in paths.into_iter().take(300) {
            if let Ok(d) = std::fs::read(&p) {
                inputs.push(d);
            }
        }
    }
    let bytes: usize = inputs.iter().map(Vec::len).sum();
    let mb = bytes as f64 / 1e6;
    let reps = (200e6 / bytes.max(1) as f64).clamp(1.0, 200.0) as usize;
    let t = Instant::now();
    let mut models = Vec::new();
    for _ in 0..reps {
        models = inputs
            .iter()
            .map(|d| cubin::read(d).expect("fixture reads"))
            .collect();
    }
    let read_s = t.elapsed().as_secs_f64() / reps as f64;
    let t = Instant::now();
    let mut out = 0usize;
    for _ in 0..reps {
        out = models.iter().map(|c| cubin::write(c).len()).sum();
    }
    let write_s = t.elapsed().as_secs_f64() / reps as f64;
    assert_eq!(out, bytes);
    let t = Instant::now();
    let lines: usize = models
        .iter()
        .map(|c| cubin::listing::listing(c).lines().count())
        .sum();
    let list_s = t.elapsed().as_secs_f64();
    println!(
        "{} cubins, {mb:.1} MB: read {:.0} MB/s, write {:.0} MB/s, listing {:.0} cubins/s ({lines} lines)",
        inputs.len(),
        mb / read_s,
        mb / write_s,
        inputs.len() as f64 / list_s
    );
}
