//! Prints the model's figures for every kernel of cubins:
//! `cargo run -p perfmodel --example cubin_model -- sm_90 a.cubin b.cubin ...`.

fn main() {
    let mut args = std::env::args().skip(1);
    let sm = args.next().expect("usage: cubin_model SM CUBIN...");
    for path in args {
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) => {
                println!("{path}\terror\t{e}");
                continue;
            }
        };
        let c = match cubin::read(&data) {
            Ok(c) => c,
            Err(e) => {
                println!("{path}\terror\t{e}");
                continue;
            }
        };
        for s in &c.sections {
            let (Some(name), cubin::model::SectionData::Bytes(code)) =
                (s.name.strip_prefix(".text."), &s.data)
            else {
                continue;
            };
            match perfmodel::estimate(&sm, code) {
                Ok(e) => println!(
                    "{path}\t{name}\t{:.0}\t{:.0}\t{}\t{}",
                    e.cycles, e.issue_slots, e.instructions, e.loops
                ),
                Err(e) => println!("{path}\t{name}\terror\t{e}"),
            }
        }
    }
}
