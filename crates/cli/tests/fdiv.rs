//! IEEE f32 division: kiln's `div.rn.f32` code (fast path, FCHK and the inline slow path) and
//! its `div.rz/.rm/.rp.f32` (ptxas's routines), compiled for sm_80 and sm_90 and run in the
//! SASS emulator, give exactly the correctly rounded quotient on 8192 operand pairs: random bit patterns, subnormals, zeros of both
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

/// Operand pairs: random and special values, and quotients of exactly ±1, 2 and neighbours.
fn pairs(n: usize) -> Vec<(u32, u32)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut pairs = Vec::with_capacity(n);
    for i in 0..n {
        let a = operand(&mut rng);
        let mut b = operand(&mut rng);
        if i % 5 == 0 {
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
    pairs
}

/// Compiles `file` for sm_80 and sm_90, runs `kernel` on every pair in the emulator and
/// compares each quotient with `want(a, b)`.
fn check(file: &Path, kernel: &str, want: impl Fn(u32, u32) -> u32) {
    let dir = std::env::temp_dir().join(format!("kiln-fdiv-test-{kernel}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let n = 8192usize;
    let pairs = pairs(n);
    let input: Vec<u8> = pairs
        .iter()
        .flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes()))
        .collect();
    let in_path = dir.join("in.bin");
    std::fs::write(&in_path, &input).unwrap();
    for sm in ["sm_80", "sm_90"] {
        let cubin = dir.join(format!("fdiv-{sm}.cubin"));
        kiln(&[
            "build",
            file.to_str().unwrap(),
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
            kernel,
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
            let want = want(*a, *b);
            if got != want {
                wrong.push(format!("{a:08x} / {b:08x}: got {got:08x}, want {want:08x}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "{kernel} {sm}: {} of {n} quotients wrong, first: {:?}",
            wrong.len(),
            &wrong[..wrong.len().min(8)]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The GPU's NaN is the canonical 0x7fffffff.
fn canonical(q: f32) -> u32 {
    if q.is_nan() { 0x7fff_ffff } else { q.to_bits() }
}

#[test]
fn div_rn_f32_is_correctly_rounded() {
    check(&example(), "k", |a, b| {
        canonical(f32::from_bits(a) / f32::from_bits(b))
    });
}

#[derive(Clone, Copy)]
enum Mode {
    Zero,
    Down,
    Up,
}

/// The f32 quotient rounded in `mode`. The f64 quotient of two f32 values is never closer to
/// an f32 value than 2^-48 of it unless equal (the residual `x*b - a` of 24-bit significands
/// is a multiple of 2^-47 of `x*b`), so rounding it to f64 first keeps its order against
/// every f32 value: its nearest f32 moved one step toward the mode's direction when it lies
/// on the wrong side gives the directed result, subnormals and overflow included.
fn directed(a: u32, b: u32, mode: Mode) -> u32 {
    let q = f64::from(f32::from_bits(a)) / f64::from(f32::from_bits(b));
    if q.is_nan() {
        return 0x7fff_ffff;
    }
    let r = q as f32;
    let up = |x: f32| {
        if x == f32::NEG_INFINITY {
            f32::MIN
        } else {
            x.next_up()
        }
    };
    let down = |x: f32| {
        if x == f32::INFINITY {
            f32::MAX
        } else {
            x.next_down()
        }
    };
    let rf = f64::from(r);
    let r = match mode {
        _ if rf == q => r,
        Mode::Down if rf > q => down(r),
        Mode::Up if rf < q => up(r),
        Mode::Zero if rf.abs() > q.abs() => {
            if q > 0.0 {
                down(r)
            } else {
                up(r)
            }
        }
        _ => r,
    };
    r.to_bits()
}

#[test]
fn div_directed_f32_is_correctly_rounded() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../test-data/codegen/fdiv_modes.ptx");
    for (kernel, mode) in [
        ("k_rz", Mode::Zero),
        ("k_rm", Mode::Down),
        ("k_rp", Mode::Up),
    ] {
        check(&file, kernel, |a, b| directed(a, b, mode));
    }
}
