//! The instruction forms code generation needs (`tests/data/forms_common.txt` for every SM
//! with a table, plus `forms_<sm>.txt`): plain `IMAD R, R, R, R`, immediates in IMAD / IADD3 /
//! LOP3 / ISETP / SEL, `c[][]` operands (sm_80; ptxas 13 emits them on sm_90 only in
//! LDC/ULDC), loads, stores, shuffles, control flow. Each line must assemble; when nvdisasm
//! is installed, every assembled word must also print back as exactly that line (the oracle
//! check), else the test prints why it skips that part.

use std::io::Write;

fn lines(extra: &str) -> Vec<String> {
    include_str!("data/forms_common.txt")
        .lines()
        .chain(extra.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        // ptxas's usual control field (no scoreboards): a zero field sets write scoreboard 0,
        // which nvdisasm rejects for instructions without a destination (EXIT, STS, BAR).
        .map(|l| format!("[B------:R-:W-:Y:S01] {l}"))
        .collect()
}

fn check(sm: &str, extra: &str) {
    let Some(table) = sass::table(sm) else {
        println!("skipping: no {sm} table");
        return;
    };
    let lines = lines(extra);
    let mut words = Vec::new();
    let mut failures = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match sass::encode::assemble_line(table, l, (i * 16) as u64, &|_| None) {
            Ok(w) => words.push(w),
            Err(e) => failures.push(format!("{l}: {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{sm}: cannot assemble:\n{}",
        failures.join("\n")
    );
    let Some(nvdisasm) = test_support::oracle_tool_or_skip("nvdisasm") else {
        return;
    };
    // One folder per test: the tests run in parallel and each removes its own folder.
    let dir = std::env::temp_dir().join(format!("kiln-sass-forms-{}-{sm}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join(format!("{sm}.bin"));
    let mut f = std::fs::File::create(&bin).unwrap();
    for w in &words {
        f.write_all(&w.to_le_bytes()).unwrap();
    }
    drop(f);
    let arch = format!("SM{}", sm.trim_start_matches("sm_"));
    let out = std::process::Command::new(nvdisasm)
        .arg("--binary")
        .arg(&arch)
        .arg(&bin)
        .output()
        .expect("run nvdisasm");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "{sm}: nvdisasm: {stderr}"
    );
    let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix("/*")?;
            let (addr, text) = rest.split_once("*/")?;
            u64::from_str_radix(addr, 16).ok()?;
            let text = text.split(';').next()?.split_whitespace();
            Some(text.collect::<Vec<_>>().join(" "))
        })
        .collect();
    assert_eq!(
        printed.len(),
        lines.len(),
        "{sm}: nvdisasm printed another count"
    );
    for (l, p) in lines.iter().zip(&printed) {
        let want = l.split_once("] ").unwrap().1.split_whitespace();
        assert_eq!(p, &want.collect::<Vec<_>>().join(" "), "{sm}");
    }
    println!(
        "{sm}: {} forms assemble and print back identically in nvdisasm",
        lines.len()
    );
}

#[test]
fn sm_80_common_forms_assemble() {
    check("sm_80", include_str!("data/forms_sm_80.txt"));
}

#[test]
fn sm_90_common_forms_assemble() {
    check("sm_90", include_str!("data/forms_sm_90.txt"));
}
