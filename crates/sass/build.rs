//! Turns every committed encoding table (`tables/<sm>.txt`, the reviewable source) into the
//! compact image the crate embeds (`src/image/write.rs` has the layout; each part
//! LZ4-compressed on its own) in `$OUT_DIR`, and writes `$OUT_DIR/tables.rs`: `TABLES`, the
//! SMs with their images.
//!
//! Runs again when a table or the writer changes. `tests/image.rs` checks that each image
//! decodes to what `Table::parse` makes of the text.

use std::fmt::Write as _;
use std::path::Path;

#[path = "src/image/write.rs"]
#[allow(dead_code)]
mod write;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tables");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo::rerun-if-changed=src/image/write.rs");
    println!("cargo::rerun-if-changed=tables");
    let mut sms: Vec<(u32, String)> = std::fs::read_dir(&dir)
        .expect("tables/ exists")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let sm = name.strip_suffix(".txt")?.to_string();
            let n = sm.strip_prefix("sm_")?.parse().ok()?;
            Some((n, sm))
        })
        .collect();
    sms.sort();
    let mut list = String::from(
        "/// SMs with a committed table: (name, its compact image).\n\
         pub const TABLES: &[(&str, &[u8])] = &[\n",
    );
    for (_, sm) in &sms {
        let path = dir.join(format!("{sm}.txt"));
        println!("cargo::rerun-if-changed={}", path.display());
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let lz4 = |b: &[u8]| (write::LZ4, lz4_flex::block::compress_prepend_size(b));
        let packed = write::image_of(sm, &text, &lz4).unwrap_or_else(|e| panic!("{e}"));
        let file = out.join(format!("{sm}.img"));
        std::fs::write(&file, &packed)
            .unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
        let _ = writeln!(
            list,
            "    ({sm:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{sm}.img\"))),"
        );
    }
    list.push_str("];\n");
    std::fs::write(out.join("tables.rs"), list).expect("writing tables.rs");
}
