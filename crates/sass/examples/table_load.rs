//! What loading the encoding tables costs: per SM, loading the embedded image
//! (`Table::from_image`: the global part decompressed), decoding one word, decoding every
//! encoding, and for comparison parsing the text table. `cargo run --release -p sass --example table_load [sm_90 ...]`.

use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let want: Vec<String> = std::env::args().skip(1).collect();
    println!("sm      image   load   first-decode  all-opcodes  text-parse (ms)");
    for (sm, image) in sass::TABLES {
        if !want.is_empty() && !want.iter().any(|w| w == sm) {
            continue;
        }
        let t = Instant::now();
        let table = sass::Table::from_image(sm, image).expect("loads");
        let load = ms(t);
        // One word of the first encoding: its chunk decompressed, one encoding decoded.
        let t = Instant::now();
        let _ = table.lookup(table.encodings[0].value);
        let first = ms(t);
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
            "{sm:7} {:5}K  {load:5.2}  {first:12.2}  {all:11.2}  {parse:10.2}",
            image.len() / 1024
        );
    }
}
