//! Investigation helper: counts the instruction words of cubins that `crates/sass` cannot
//! decode, by 12-bit opcode, and writes one sample word per opcode to `OUT.bin` for
//! `nvdisasm --binary SMxx OUT.bin`.
//! Usage: cargo run --release -p emu --example unknowns -- sm_90 OUT.bin FILE.cubin...
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (sm, out, files) = (&args[0], &args[1], &args[2..]);
    let want: u32 = sm.trim_start_matches("sm_").parse().expect("sm_XX");
    if let Ok(op) = std::env::var("DUMP") {
        dump(
            sass::table(sm).expect("table"),
            u16::from_str_radix(&op, 16).expect("hex"),
        );
        return;
    }
    let table = sass::table(sm).expect("table");
    let mut count: BTreeMap<u16, (usize, u128)> = BTreeMap::new();
    let mut total = 0usize;
    let merged = emu::fallback::table(sm).expect("merged");
    let mut fb: Vec<(u128, String)> = Vec::new();
    let mut nofb = 0usize;
    let mut left: Vec<u128> = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        let Ok(c) = cubin::read(&bytes) else { continue };
        if c.header.sm() != want {
            continue;
        }
        for s in &c.sections {
            if !s.name.starts_with(".text.") {
                continue;
            }
            let data = cubin::write::encode_data(&s.data);
            for (i, w) in sass::words(&data).into_iter().enumerate() {
                total += 1;
                if table.decode(w, 16 * i as u64).is_none() {
                    let e = count.entry((w & 0xfff) as u16).or_insert((0, w));
                    e.0 += 1;
                    if let Some(d) = merged.decode(w, 0) {
                        fb.push((w, d.text(&|_| None)));
                    } else {
                        nofb += 1;
                        left.push(w);
                    }
                }
            }
        }
    }
    let mut v: Vec<_> = count.into_iter().collect();
    v.sort_by_key(|(_, (n, _))| std::cmp::Reverse(*n));
    let mut bin = Vec::new();
    for (op, (n, w)) in &v {
        println!("{op:03x} {n}");
        bin.extend_from_slice(&w.to_le_bytes());
    }
    println!(
        "total words {total}; unknown with a merged decoding {}, without {nofb}",
        fb.len()
    );
    // The merged decodings, for comparison with nvdisasm: OUT.fb.bin and OUT.fb.txt.
    fb.sort();
    fb.dedup();
    let mut b = Vec::new();
    let mut t = String::new();
    for (w, text) in &fb {
        b.extend_from_slice(&w.to_le_bytes());
        t.push_str(text);
        t.push('\n');
    }
    std::fs::write(format!("{out}.fb.bin"), b).expect("write");
    std::fs::write(format!("{out}.fb.txt"), t).expect("write");
    // Words still unknown (deduplicated): OUT.left.bin.
    left.sort();
    left.dedup();
    let lb: Vec<u8> = left.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(format!("{out}.left.bin"), lb).expect("write");
    std::fs::write(out, bin).expect("write");
}

/// Prints the encodings of one opcode (debugging aid): `DUMP=824 cargo run ...`.
#[allow(dead_code)]
fn dump(t: &sass::Table, op: u16) {
    for e in t.candidates(op) {
        let kinds: Vec<String> = e
            .slots
            .iter()
            .map(|s| match s {
                sass::table::SlotSpec::Linear { bits, .. } => format!("L{}", bits.len()),
                sass::table::SlotSpec::Float { .. } => "F".into(),
                sass::table::SlotSpec::Const { value, .. } => format!("C{value:#x}"),
            })
            .collect();
        println!(
            "{:032x} {:032x} {} [{}]",
            e.mask,
            e.value,
            e.template,
            kinds.join(" ")
        );
    }
}
