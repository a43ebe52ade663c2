//! `cargo run -p cubin --example cmplist -- FILES...`: compare our listing with FILE.elf.txt.
fn main() {
    let (mut ok, mut bad) = (0, 0);
    for f in std::env::args().skip(1) {
        let data = std::fs::read(&f).unwrap();
        let c = cubin::read(&data).unwrap();
        let theirs = std::fs::read_to_string(format!("{f}.elf.txt")).unwrap();
        match cubin::listing::compare_with_cuobjdump(&c, &theirs) {
            Ok(()) => {
                ok += 1;
                if std::env::var_os("SHOW").is_some() {
                    print!("{}", cubin::listing::listing(&c));
                }
            }
            Err(e) => {
                bad += 1;
                println!("{f}: {e}");
            }
        }
    }
    println!("ok {ok} bad {bad}");
}
