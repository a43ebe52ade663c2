//! Consistency checks of the committed tables.

use std::collections::HashSet;

use super::*;

/// PTX ISA versions NVIDIA released (PTX ISA document, "Release Notes").
const RELEASED: &[&str] = &[
    "1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "2.0", "2.1", "2.2", "2.3", "3.0", "3.1", "3.2",
    "4.0", "4.1", "4.2", "4.3", "5.0", "6.0", "6.1", "6.2", "6.3", "6.4", "6.5", "7.0", "7.1",
    "7.2", "7.3", "7.4", "7.5", "7.6", "7.7", "7.8", "8.0", "8.1", "8.2", "8.3", "8.4", "8.5",
    "8.6", "8.7", "8.8", "9.0",
];

fn released(v: PtxVersion) -> bool {
    RELEASED.iter().any(|r| PtxVersion::parse(r) == Some(v))
}

#[test]
fn tables_parse() {
    let isa = isa();
    assert!(
        isa.all_forms().len() > 200,
        "{} forms",
        isa.all_forms().len()
    );
    assert!(isa.special_registers().len() > 30);
    assert!(isa.directives().len() > 30);
}

#[test]
fn versions_are_released_and_targets_known() {
    let isa = isa();
    for (sm, v) in isa.targets() {
        assert!(released(*v), "{sm} introduced in unreleased PTX {v}");
    }
    let check = |what: &str, v: PtxVersion, sm: Sm| {
        assert!(released(v), "{what}: PTX {v} was never released");
        assert!(
            isa.target_introduced(sm).is_some(),
            "{what}: unknown target {sm}"
        );
        // Some target that meets the minimum must exist at the claimed version (shf: PTX 3.1
        // with sm_35, although sm_32 itself came with PTX 4.0).
        let ok = isa
            .targets()
            .iter()
            .any(|(t, intro)| t.satisfies(sm) && *intro <= v);
        assert!(
            ok,
            "{what}: claims PTX {v}, but no target meeting {sm} existed then"
        );
    };
    for f in isa.all_forms() {
        check(
            &format!("isa.txt:{} {}", f.line, f.opcode),
            f.min_ptx,
            f.min_sm,
        );
    }
    for r in isa.special_registers() {
        check(r.name, r.min_ptx, r.min_sm);
    }
    for d in isa.directives() {
        check(d.name, d.min_ptx, d.min_sm);
    }
}

#[test]
fn forms_are_well_formed() {
    let isa = isa();
    let mut seen = HashSet::new();
    for f in isa.all_forms() {
        let key = format!("{} {:?}", f.opcode, f.groups);
        assert!(
            seen.insert(key),
            "isa.txt:{}: duplicate form of {}",
            f.line,
            f.opcode
        );
        for g in &f.groups {
            assert!(!g.choices.is_empty(), "isa.txt:{}: empty group", f.line);
            // The lexer splits `.shared.global` into two modifiers: a choice is one word.
            for c in &g.choices {
                assert!(
                    !c[1..].contains('.'),
                    "isa.txt:{}: choice `{c}` is two modifiers",
                    f.line
                );
            }
            let uniq: HashSet<_> = g.choices.iter().collect();
            assert_eq!(
                uniq.len(),
                g.choices.len(),
                "isa.txt:{}: repeated choice",
                f.line
            );
        }
        let names: HashSet<_> = f.operands.iter().map(|o| o.name).collect();
        assert_eq!(
            names.len(),
            f.operands.len(),
            "isa.txt:{}: operand names repeat",
            f.line
        );
        let variadic = f.operands.iter().filter(|o| o.variadic).count();
        assert!(variadic <= 1, "isa.txt:{}: two variadic operands", f.line);
        if variadic == 1 {
            assert!(
                f.operands.last().unwrap().variadic,
                "isa.txt:{}: variadic not last",
                f.line
            );
        }
        let mut parts = f.section.splitn(2, ' ');
        let num = parts.next().unwrap();
        assert!(
            num.starts_with("9.7.") && num.split('.').all(|p| p.parse::<u32>().is_ok()),
            "isa.txt:{}: section `{}` is not a 9.7.x section number",
            f.line,
            f.section
        );
        assert!(
            parts.next().is_some(),
            "isa.txt:{}: section without title",
            f.line
        );
    }
}

#[test]
fn every_set_is_used() {
    let isa = isa();
    let text = ISA_TABLE;
    for (name, _) in isa.sets() {
        let uses = text.matches(&format!("${name}")).count();
        assert!(uses > 0, "modifier set ${name} is never used");
    }
}

#[test]
fn special_registers_and_directives_are_unique() {
    let isa = isa();
    let mut names = HashSet::new();
    for r in isa.special_registers() {
        assert!(r.name.starts_with('%'), "{}", r.name);
        assert!(names.insert(r.name), "duplicate {}", r.name);
        assert!(r.ty.starts_with('.'));
    }
    let mut names = HashSet::new();
    for d in isa.directives() {
        assert!(d.name.starts_with('.'), "{}", d.name);
        assert!(names.insert(d.name), "duplicate {}", d.name);
    }
}

#[test]
fn lookup_matches_modifiers_in_any_order() {
    let isa = isa();
    assert!(!isa.lookup("add", &[".s32"]).is_empty());
    assert!(!isa.lookup("add", &[".sat", ".s32"]).is_empty());
    assert!(isa.lookup("add", &[".s32", ".bogus"]).is_empty());
    // ld.global.nc.v4.f32 and ld.nc.global.v4.f32 both match.
    assert!(
        !isa.lookup("ld", &[".global", ".nc", ".v4", ".f32"])
            .is_empty()
    );
    assert!(
        !isa.lookup("ld", &[".nc", ".global", ".v4", ".f32"])
            .is_empty()
    );
    // setp needs a comparison and a type.
    assert!(isa.lookup("setp", &[".s32"]).is_empty());
    assert!(!isa.lookup("setp", &[".ge", ".u32"]).is_empty());
    // `#` patterns.
    assert!(
        !isa.lookup(
            "wgmma",
            &[
                ".mma_async",
                ".sync",
                ".aligned",
                ".m64n128k16",
                ".f32",
                ".f16",
                ".f16"
            ]
        )
        .is_empty()
    );
    assert!(
        isa.lookup(
            "wgmma",
            &[
                ".mma_async",
                ".sync",
                ".aligned",
                ".m64nk16",
                ".f32",
                ".f16",
                ".f16"
            ]
        )
        .is_empty()
    );
}

#[test]
fn gating_facts() {
    let isa = isa();
    let redux = isa.lookup("redux", &[".sync", ".add", ".u32"]);
    assert_eq!(redux.len(), 1);
    assert_eq!(redux[0].min_sm, Sm::new(80));
    let vote = isa.lookup("vote", &[".ballot", ".b32"]);
    assert!(
        vote.iter()
            .all(|f| !f.groups.iter().any(|g| g.accepts(".sync")))
    );
    assert!(
        Sm::parse("sm_90a")
            .unwrap()
            .satisfies(Sm::parse_short("90a").unwrap())
    );
    assert!(
        !Sm::parse("sm_100a")
            .unwrap()
            .satisfies(Sm::parse_short("90a").unwrap())
    );
    assert!(Sm::parse("sm_100").unwrap().satisfies(Sm::new(90)));
    assert!(
        Sm::parse("sm_103f")
            .unwrap()
            .satisfies(Sm::parse_short("100f").unwrap())
    );
    assert!(
        !Sm::parse("sm_120f")
            .unwrap()
            .satisfies(Sm::parse_short("100f").unwrap())
    );
    assert!(isa.special_register("%pm3").is_some());
    assert!(isa.special_register("%pm8").is_none());
    assert!(isa.special_register("%envreg31").is_some());
    assert!(isa.special_register("%tid").is_some());
    assert!(isa.directive(".noreturn").is_some());
}
