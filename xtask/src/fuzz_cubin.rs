//! `cargo xtask fuzz-cubin [--seconds N] [--seed S]`: a deterministic mutation fuzzer for the
//! cubin reader (stable Rust, no libFuzzer).
//!
//! Seeds: the cubins in the ptxas cache (`target/kiln-cache/cubins`, up to 200 of at most
//! 512 KiB) plus a built-in from-scratch cubin made with `cubin::builder`. Each round picks a
//! seed and applies 1..8 mutations (truncation, byte flips, random or boundary values written
//! over ELF header / section header / symbol fields, chunk duplication), then reads it; when
//! that succeeds, it also writes it back and renders both listings. A panic is a failure
//! (exit 1, the input saved under `target/kiln-cache/fuzz-cubin/`); so is one input taking
//! longer than the watchdog limit (10 s).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::corpus::{cache_dir, catch, quiet_panics};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn builtin_seed() -> Vec<u8> {
    use cubin::builder::{Builder, Global, Kernel, Param};
    let words: [[u32; 4]; 2] = [
        [0x0000_794d, 0, 0x0380_0000, 0x000f_ea00],
        [0x00fc_7947, 0xffff_fffc, 0x0383_ffff, 0x000f_c000],
    ];
    let mut b = Builder::new(89);
    b.kernels.push(Kernel {
        name: "fuzz_seed".into(),
        code: words
            .iter()
            .flatten()
            .flat_map(|w| w.to_le_bytes())
            .collect(),
        params: vec![Param { size: 8, align: 8 }, Param { size: 4, align: 4 }],
        registers: 8,
        shared_size: 64,
        exit_offsets: vec![0],
        ..Kernel::default()
    });
    b.globals.push(Global {
        name: "g".into(),
        size: 4,
        align: 4,
        init: Some(vec![1, 2, 3, 4]),
    });
    match b.build() {
        Ok(c) => cubin::write(&c),
        Err(_) => Vec::new(),
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let dir = cache_dir("cubins");
    if let Ok(rd) = std::fs::read_dir(&dir) {
        let mut paths: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
            .collect();
        paths.sort();
        for p in paths {
            if out.len() >= 200 {
                break;
            }
            if let Ok(d) = std::fs::read(&p)
                && d.len() <= 512 * 1024
            {
                out.push(d);
            }
        }
    }
    out.push(builtin_seed());
    out
}

const BOUNDARY: [u64; 8] = [
    0,
    1,
    0x7f,
    0xff,
    0xffff,
    0xffff_ffff,
    u64::MAX,
    0x8000_0000_0000_0000,
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    let n = 1 + rng.below(8);
    for _ in 0..n {
        if data.is_empty() {
            return;
        }
        match rng.below(6) {
            0 => {
                let keep = rng.below(data.len());
                data.truncate(keep);
            }
            1 => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            2 | 3 => {
                // A field-sized write at a structurally interesting place: the ELF header,
                // a section header, or anywhere.
                let width = [1usize, 2, 4, 8][rng.below(4)];
                let shoff = data
                    .get(0x28..0x30)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as usize)
                    .unwrap_or(0);
                let at = match rng.below(3) {
                    0 => rng.below(64),
                    1 if shoff < data.len() => shoff + rng.below(data.len() - shoff),
                    _ => rng.below(data.len()),
                };
                let v = if rng.below(2) == 0 {
                    BOUNDARY[rng.below(BOUNDARY.len())]
                } else {
                    rng.next()
                };
                let bytes = v.to_le_bytes();
                for (k, &byte) in bytes.iter().enumerate().take(width) {
                    if let Some(b) = data.get_mut(at + k) {
                        *b = byte;
                    }
                }
            }
            4 => {
                let a = rng.below(data.len());
                let len = rng.below(64.min(data.len() - a) + 1);
                let chunk = data[a..a + len].to_vec();
                let at = rng.below(data.len());
                data.splice(at..at, chunk);
            }
            _ => {
                let i = rng.below(data.len());
                data[i] = rng.next() as u8;
            }
        }
    }
}

/// Reads one input and exercises everything that runs on a read cubin.
fn exercise(data: &[u8]) -> bool {
    let Ok(c) = cubin::read(data) else {
        return false;
    };
    let out = cubin::write(&c);
    let _ = cubin::read(&out);
    let _ = cubin::listing::listing(&c);
    let _ = cubin::listing::json(&c);
    true
}

pub fn run(args: &[String]) -> Result<(), String> {
    let mut seconds = 30u64;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--seconds needs a number")?
            }
            "--seed" => {
                seed = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--seed needs a number")?
            }
            other => return Err(format!("fuzz-cubin: unknown option `{other}`")),
        }
    }
    quiet_panics();
    let seeds = seeds();
    println!(
        "fuzz-cubin: {} seeds, {seconds} s, seed {seed}",
        seeds.len()
    );
    let started = Arc::new(AtomicU64::new(0));
    let busy = Arc::new(AtomicBool::new(false));
    let current: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let t0 = Instant::now();
    let deadline = Duration::from_secs(seconds);
    let (s2, b2, c2) = (started.clone(), busy.clone(), current.clone());
    let worker = std::thread::spawn(move || -> Result<(u64, u64), (String, Vec<u8>)> {
        let mut rng = Rng(seed | 1);
        let (mut runs, mut parsed) = (0u64, 0u64);
        while t0.elapsed() < deadline {
            let mut data = seeds[rng.below(seeds.len())].clone();
            mutate(&mut rng, &mut data);
            if let Ok(mut c) = c2.lock() {
                c.clone_from(&data);
            }
            s2.store(t0.elapsed().as_millis() as u64, Ordering::SeqCst);
            b2.store(true, Ordering::SeqCst);
            let ok = match catch(|| exercise(&data)) {
                Ok(ok) => ok,
                Err(msg) => return Err((msg, data)),
            };
            b2.store(false, Ordering::SeqCst);
            runs += 1;
            parsed += u64::from(ok);
        }
        Ok((runs, parsed))
    });
    // Watchdog: one input may take at most 10 s.
    loop {
        if worker.is_finished() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        let since =
            (t0.elapsed().as_millis() as u64).saturating_sub(started.load(Ordering::SeqCst));
        if busy.load(Ordering::SeqCst) && since > 10_000 {
            let data = current.lock().map(|d| d.clone()).unwrap_or_default();
            let path = save("hang", &data);
            return Err(format!("input took over 10 s (saved to {path})"));
        }
    }
    match worker.join() {
        Ok(Ok((runs, parsed))) => {
            println!("fuzz-cubin: {runs} inputs, {parsed} parsed, 0 panics, 0 hangs");
            Ok(())
        }
        Ok(Err((msg, data))) => {
            let path = save("panic", &data);
            Err(format!("reader panicked: {msg} (input saved to {path})"))
        }
        Err(_) => Err("fuzz worker died".into()),
    }
}

fn save(kind: &str, data: &[u8]) -> String {
    let dir = cache_dir("fuzz-cubin");
    let _ = std::fs::create_dir_all(&dir);
    let p = dir.join(format!(
        "{kind}-{:016x}.cubin",
        crate::corpus::fnv1a64(&[data])
    ));
    let _ = std::fs::write(&p, data);
    p.display().to_string()
}
