//! `cargo run -p cubin --example placements -- FILES...`: prints the sections whose file
//! offset the packing rule does not explain (explicit placements) and the padded ones.
use cubin::{Placement, TablePlacement};
fn main() {
    for f in std::env::args().skip(1) {
        let Ok(data) = std::fs::read(&f) else {
            continue;
        };
        let Ok(c) = cubin::read(&data) else { continue };
        for (i, s) in c.sections.iter().enumerate() {
            match s.placement {
                Placement::At(o) => println!(
                    "{f}: [{i}] {} At({o:#x}) size {:#x} type {:#x}",
                    s.name,
                    s.size(),
                    s.sh_type
                ),
                Placement::Packed { pad } if pad > 0 && std::env::var_os("PADS").is_some() => {
                    println!("{f}: [{i}] {} pad {pad}", s.name)
                }
                _ => {}
            }
        }
        if let TablePlacement::At { shoff, phoff } = c.tables {
            println!("{f}: tables at {shoff:#x} {phoff:#x}");
        }
    }
}
