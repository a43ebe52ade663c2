//! Code-generation throughput and incremental recompilation.
//!
//! `cargo bench -p db --bench codegen`: (1) cold compiles of the `test-data/codegen` examples
//! and the SAXPY example for sm_80 and sm_90, each in a fresh database (kernels/s, PTX KB/s);
//! (2) a module of 64 kernels compiled once, then one kernel edited and the cubin rebuilt:
//! time of the incremental rebuild against the cold build. Best of 5 rounds.

use std::time::Instant;

use db::{FileTarget, RootDatabase, Sm, Target};

fn examples() -> Vec<(String, String)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../test-data");
    let mut v = vec![(
        "saxpy.ptx".to_string(),
        std::fs::read_to_string(format!("{root}/examples/saxpy.ptx")).unwrap(),
    )];
    let mut files: Vec<_> = std::fs::read_dir(format!("{root}/codegen"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    files.sort();
    for p in files {
        v.push((
            p.file_name().unwrap().to_string_lossy().into_owned(),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    v
}

fn best<F: FnMut() -> usize>(rounds: usize, mut f: F) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, n)
}

fn main() {
    let ex = examples();
    let bytes: usize = ex.iter().map(|(_, t)| t.len()).sum::<usize>() * 2;
    let (secs, kernels) = best(5, || {
        let mut n = 0;
        for sm in ["sm_80", "sm_90"] {
            for (name, text) in &ex {
                let mut db = RootDatabase::default();
                let file = db.add_file(name, text.as_bytes());
                let t = Target::new(Sm::parse(sm).unwrap());
                let out = db::cubin(&db, FileTarget::new(&db, file, t.clone()));
                if out.bytes.is_some() {
                    n += db::kernel_targets(&db, file, &t).len();
                }
            }
        }
        n
    });
    println!(
        "cold: {kernels} kernels in {:.1} ms: {:.0} kernels/s, {:.0} KB/s of PTX",
        secs * 1e3,
        kernels as f64 / secs,
        bytes as f64 / secs / 1e3
    );

    // A module of 64 loop kernels.
    let body = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../test-data/codegen/loop.ptx"
    ))
    .unwrap();
    let (header, kernel) = body.split_at(body.find(".visible .entry").unwrap());
    let mut module = header.to_string();
    for k in 0..64 {
        module.push_str(&kernel.replace("sumloop", &format!("sumloop{k}")));
    }
    let t = Target::new(Sm::parse("sm_90").unwrap());
    let mut cold = f64::MAX;
    let mut incr = f64::MAX;
    for round in 0..5 {
        let mut db = RootDatabase::default();
        let file = db.add_file("many.ptx", module.as_bytes());
        let s = Instant::now();
        assert!(
            db::cubin(&db, FileTarget::new(&db, file, t.clone()))
                .bytes
                .is_some()
        );
        cold = cold.min(s.elapsed().as_secs_f64());
        // Edit one kernel (a different constant each round).
        let edited = module.replacen(
            "add.s32 %r3, %r3, 1;",
            &format!("add.s32 %r3, %r3, {};", round + 2),
            1,
        );
        db.set_text(file, &edited);
        let s = Instant::now();
        assert!(
            db::cubin(&db, FileTarget::new(&db, file, t.clone()))
                .bytes
                .is_some()
        );
        incr = incr.min(s.elapsed().as_secs_f64());
    }
    println!(
        "64-kernel module, sm_90: cold build {:.1} ms, rebuild after editing one kernel {:.2} ms ({:.0}x)",
        cold * 1e3,
        incr * 1e3,
        cold / incr
    );
}
