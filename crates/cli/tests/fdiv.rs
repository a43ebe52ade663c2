//! IEEE f32 division: kiln's `div.rn.f32` code (fast path, FCHK and the inline slow path),
//! compiled for sm_80 and sm_90 and run in the SASS emulator, gives exactly Rust's correctly
//! rounded quotient on 8192 operand pairs: random bit patterns, subnormals, zeros of both
//! signs, infinities, NaNs, and exponents near the ends of the range (overflowing and
//! underflowing quotients, subnormal results).

use std::path::{Path, PathBuf};
use std::process::Command;

fn kiln(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("kiln runs");
    assert!(
        out.status.success(),
        "kiln {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data/codegen/fdiv.ptx")
}

/// xorshift64*, deterministic.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        (self.next() >> 32) % n
    }
}

fn operand(rng: &mut Rng) -> u32 {
    const SPECIAL: [u32; 12] = [
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x7f7f_ffff,
        0x0080_0000,
        1,
        0x3f80_0000,
        0xbf80_0000,
        0x8000_0001,
        0x807f_ffff,
    ];
    let sign = (rng.below(2) as u32) << 31;
    match rng.below(10) {
        0..=2 => rng.next() as u32,
        3 | 4 => sign | (rng.next() as u32 & 0x7f_ffff),
        5 => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
        _ => {
            // Exponents near the ends of the range and around 1.
            let e = match rng.below(3) {
                0 => rng.below(8),
                1 => 120 + rng.below(15),
                _ => 247 + rng.below(8),
            } as u32;
            sign | (e << 23) | (rng.next() as u32 & 0x7f_ffff)
        }
    }
}

#[test]
fn div_rn_f32_is_correctly_rounded() {
    let dir = std::env::temp_dir().join(format!("kiln-fdiv-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let n = 8192usize;
    let mut pairs = Vec::with_capacity(n);
    for i in 0..n {
        let a = operand(&mut rng);
        let mut b = operand(&mut rng);
        if i % 5 == 0 {
            // Quotients of exactly ±1, 2 and neighbours.
            b = [
                a ^ 0x8000_0000,
                a,
                0x3f80_0000,
                a.wrapping_add(1),
                0x4000_0000,
            ][rng.below(5) as usize];
        }
        pairs.push((a, b));
    }
    let input: Vec<u8> = pairs
        .iter()
        .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
        .collect();
    let in_path = dir.join("in.bin");
    std::fs::write(&in_path, &input).unwrap();
    let ex = example();
    for sm in ["sm_80", "sm_90"] {
        let cubin = dir.join(format!("fdiv-{sm}.cubin"));
        kiln(&[
            "build",
            ex.to_str().unwrap(),
            "--arch",
            sm,
            "-o",
            cubin.to_str().unwrap(),
        ]);
        let out_dir = dir.join(format!("out-{sm}"));
        kiln(&[
            "run",
            "--sass",
            cubin.to_str().unwrap(),
            "--kernel",
            "k",
            "--grid",
            "128",
            "--block",
            "64",
            "--arg",
            &format!("zero:{}", 4 * n),
            "--arg",
            &format!("file:{}", in_path.display()),
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let out = std::fs::read(out_dir.join("arg0.bin")).unwrap();
        let mut wrong = Vec::new();
        for (i, (a, b)) in pairs.iter().enumerate() {
            let got = u32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap());
            let q = f32::from_bits(*a) / f32::from_bits(*b);
            // The GPU's NaN is the canonical 0x7fffffff.
            let want = if q.is_nan() { 0x7fff_ffff } else { q.to_bits() };
            if got != want {
                wrong.push(format!("{a:08x} / {b:08x}: got {got:08x}, want {want:08x}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "{sm}: {} of {n} quotients wrong, first: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(8)]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
