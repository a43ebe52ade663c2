//! Lowering never panics: every committed mutant (broken PTX from `cargo xtask mutate`) either
//! lowers or gives a clean error. Skips when the suite is absent.

#[test]
fn lowering_mutants_never_panics() {
    let Some(dir) = test_support::test_data_or_skip("sema-mutations") else {
        return;
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        println!("skipping: {} is unreadable", dir.display());
        return;
    };
    let mut n = 0;
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "ptx") {
            let text = std::fs::read_to_string(&p).unwrap();
            let r = std::panic::catch_unwind(|| interp::Program::from_text(&text).map(|_| ()));
            assert!(r.is_ok(), "lowering panicked on {}", p.display());
            n += 1;
        }
    }
    println!("lowered {n} mutants without a panic");
    assert!(n > 0);
}
