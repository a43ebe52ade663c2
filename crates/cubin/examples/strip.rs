//! `cargo run -p cubin --example strip -- IN OUT NAME...`: removes the named sections from a
//! cubin (fixing section indices in headers and symbols; symbols of removed sections become
//! undefined; `empty:NAME` empties a section instead) — a tool for finding out which parts of a cubin NVIDIA's tools require.
use cubin::{Placement, SectionData, shf};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut c = cubin::read(&std::fs::read(&a[1]).unwrap()).unwrap();
    for name in &a[3..] {
        if let Some(n) = name.strip_prefix("empty:") {
            for s in c.sections.iter_mut().filter(|s| s.name == n) {
                s.data = SectionData::Bytes(Vec::new());
            }
            continue;
        }
        let Some(r) = c.sections.iter().position(|s| &s.name == name) else {
            eprintln!("no section {name}");
            continue;
        };
        let fix = |i: u32| -> u32 {
            if i as usize == r {
                0
            } else if i as usize > r {
                i - 1
            } else {
                i
            }
        };
        c.sections.remove(r);
        for s in c.sections.iter_mut() {
            s.link = fix(s.link);
            if s.flags & shf::INFO_LINK != 0 {
                s.info = fix(s.info);
            }
            s.placement = Placement::Packed { pad: 0 };
            if let SectionData::Symbols(syms) = &mut s.data {
                for y in syms.iter_mut() {
                    if y.shndx != 0 && y.shndx < 0xff00 {
                        y.shndx = fix(u32::from(y.shndx)) as u16;
                    }
                }
            }
        }
        c.header.shstrndx = fix(u32::from(c.header.shstrndx)) as u16;
    }
    std::fs::write(&a[2], cubin::write(&c)).unwrap();
}
