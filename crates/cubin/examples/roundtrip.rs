//! `cargo run -p cubin --example roundtrip -- FILES...`: read, write, compare bytes.
fn main() {
    let (mut ok, mut bad) = (0, 0);
    for f in std::env::args().skip(1) {
        let data = std::fs::read(&f).unwrap();
        match cubin::read(&data) {
            Ok(c) => {
                let out = cubin::write(&c);
                if out == data {
                    ok += 1;
                    if !c.layout_is_rule_based() {
                        println!("{f}: identical but explicit placement");
                    }
                } else {
                    bad += 1;
                    let first = out.iter().zip(&data).position(|(a, b)| a != b);
                    println!(
                        "{f}: DIFF len {} vs {} first {:?}",
                        out.len(),
                        data.len(),
                        first
                    );
                }
            }
            Err(e) => {
                bad += 1;
                println!("{f}: ERR {e}");
            }
        }
    }
    println!("ok {ok} bad {bad}");
}
