//! The model against what an H100 measured (`../shared/hardware/h100-2026-11-27/triton/`:
//! Triton kernels compiled by ptxas and by kiln, timed with `do_bench` in two runs).

use std::path::{Path, PathBuf};

fn hardware_dir() -> Option<PathBuf> {
    let d = test_support::workspace_root().join("../shared/hardware/h100-2026-11-27/triton");
    if !d.is_dir() {
        println!("skipping: {} not found", d.display());
        return None;
    }
    Some(d)
}

/// The model's figures summed over a cubin's kernels (`.text.*` sections).
fn model(path: &Path) -> perfmodel::Estimate {
    let data = std::fs::read(path).expect("cubin");
    let c = cubin::read(&data).expect("reads");
    c.sections
        .iter()
        .filter(|s| s.name.starts_with(".text."))
        .filter_map(|s| match &s.data {
            cubin::model::SectionData::Bytes(b) => Some(
                perfmodel::estimate("sm_90", b)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            ),
            _ => None,
        })
        .fold(
            perfmodel::Estimate {
                cycles: 0.0,
                issue_slots: 0.0,
                instructions: 0,
                loops: 0,
            },
            |a, e| perfmodel::Estimate {
                cycles: a.cycles + e.cycles,
                issue_slots: a.issue_slots + e.issue_slots,
                instructions: a.instructions + e.instructions,
                loops: a.loops + e.loops,
            },
        )
}

/// Kernel name -> milliseconds, from one run's JSON (`"name": {"ms": 0.07, ...}`).
fn times(path: &Path) -> Vec<(String, f64)> {
    let text = std::fs::read_to_string(path).expect("json");
    let mut out = Vec::new();
    let mut name = None;
    for line in text.lines() {
        let t = line.trim();
        if t.ends_with(": {") {
            name = Some(t.trim_end_matches(": {").trim_matches('"').to_string());
        } else if let Some(v) = t.strip_prefix("\"ms\": ")
            && let (Some(n), Ok(ms)) = (name.take(), v.trim_end_matches(',').parse::<f64>())
        {
            out.push((n, ms));
        }
    }
    out
}

#[test]
fn model_ranks_kiln_against_ptxas_as_the_h100_did() {
    let Some(dir) = hardware_dir() else { return };
    let mut hw: std::collections::BTreeMap<String, (f64, f64, usize)> = Default::default();
    for run in ["run1", "run2"] {
        for (who, idx) in [("kiln", 0), ("ptxas", 1)] {
            for (k, ms) in times(&dir.join(format!("{run}-{who}.json"))) {
                let e = hw.entry(k).or_insert((0.0, 0.0, 0));
                if idx == 0 {
                    e.0 += ms;
                    e.2 += 1;
                } else {
                    e.1 += ms;
                }
            }
        }
    }
    // Where the hardware saw kiln more than 5% slower or faster and neither cubin has a loop
    // (so that the model's assumed trip count plays no part), the model must say the same.
    let mut checked = 0;
    for (k, (kiln_ms, ptxas_ms, _)) in &hw {
        let kc = dir.join(format!("{k}_kernel.kiln.cubin"));
        let pc = dir.join(format!("{k}_kernel.ptxas.cubin"));
        if !kc.is_file() || !pc.is_file() {
            continue;
        }
        let hw_ratio = kiln_ms / ptxas_ms;
        let (kiln, ptxas) = (model(&kc), model(&pc));
        let ratio = kiln.cycles / ptxas.cycles;
        let loops = kiln.loops + ptxas.loops;
        println!(
            "{k:10} hardware kiln/ptxas {hw_ratio:.2}  model cycles {ratio:.2}  issue slots {:.2}  loops {loops}",
            kiln.issue_slots / ptxas.issue_slots
        );
        if (hw_ratio - 1.0).abs() > 0.05 && loops == 0 {
            checked += 1;
            assert_eq!(
                ratio > 1.0,
                hw_ratio > 1.0,
                "{k}: the model ranks kiln against ptxas unlike the H100"
            );
        }
    }
    assert!(
        checked >= 4,
        "the H100's loop-free Triton kernels are all compared"
    );
}
