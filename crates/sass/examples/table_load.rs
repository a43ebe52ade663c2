//! What loading the encoding tables costs: per SM, decompressing the embedded image, reading
//! its header (`Table::from_image`), decoding every opcode, and for comparison parsing the
//! text table. `cargo run --release -p sass --example table_load [sm_90 ...]`.

use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let want: Vec<String> = std::env::args().skip(1).collect();
    println!("sm      packed  image   decompress  load   all-opcodes  text-parse (ms)");
    for (sm, packed) in sass::TABLES {
        if !want.is_empty() && !want.iter().any(|w| w == sm) {
            continue;
        }
        let t = Instant::now();
        let image = lz4_flex::block::decompress_size_prepended(packed).expect("decompresses");
        let decompress = ms(t);
        let image: &'static [u8] = Box::leak(image.into_boxed_slice());
        let t = Instant::now();
        let table = sass::Table::from_image(sm, image).expect("loads");
        let load = ms(t);
        let t = Instant::now();
        for op in 0..0x1000u16 {
            let _ = table.candidates(op).count();
        }
        let all = ms(t);
        let text = std::fs::read_to_string(sass::table_source_path(sm)).expect("text");
        let t = Instant::now();
        let parsed = sass::Table::parse(sm, &text).expect("parses");
        let parse = ms(t);
        assert_eq!(parsed.encodings.len(), table.encodings.len());
        println!(
            "{sm:7} {:5}K  {:5}K  {decompress:10.2}  {load:5.2}  {all:11.2}  {parse:10.2}",
            packed.len() / 1024,
            image.len() / 1024
        );
    }
}
