//! The optimizer on hand-built IR: what each pass may and may not do.

use ir::{Class, Func, Guard, Inst, Opcode, Operand, Reg, op};

fn mov(d: Reg, s: Operand) -> Inst {
    Inst::new(op!("MOV"), vec![Operand::r(d), s], vec![0])
}

fn stg(addr: Reg, v: Reg) -> Inst {
    Inst::new(
        op!("STG.E"),
        vec![
            Operand::Mem {
                base: addr,
                offset: 0,
                desc: Some(Reg::Phys {
                    class: Class::UR,
                    index: 4,
                    width: 2,
                }),
            },
            Operand::r(v),
        ],
        vec![],
    )
}

fn text(f: &Func) -> String {
    ir::print(f, None)
}

/// `x = 5; y = x; loop: { z = y + 1; y = z; } store y`: the copy `y = x` must not be
/// propagated into the loop, where `y` is reassigned.
#[test]
fn copies_are_not_propagated_past_a_reassignment_in_a_loop() {
    let mut f = Func::new("k");
    let (b0, b1, b2) = (f.new_block(), f.new_block(), f.new_block());
    f.order = vec![b0, b1, b2];
    let a = f.new_vreg(Class::R, 2, "a");
    let x = f.new_vreg(Class::R, 1, "x");
    let y = f.new_vreg(Class::R, 1, "y");
    let z = f.new_vreg(Class::R, 1, "z");
    let p = f.new_vreg(Class::P, 1, "p");
    f.blocks[b0].insts = vec![
        Inst::new(
            op!("LDC.64"),
            vec![
                Operand::r(Reg::v(a, 2)),
                Operand::Const {
                    bank: 0,
                    offset: 0x210,
                },
            ],
            vec![0],
        ),
        mov(Reg::v(x, 1), Operand::Imm(5)),
        mov(Reg::v(y, 1), Operand::r(Reg::v(x, 1))),
    ];
    let mut bra = Inst::new(op!("BRA"), vec![Operand::Label(b1)], vec![]);
    bra.guard = Some(Guard {
        pred: Reg::v(p, 1),
        negated: false,
    });
    f.blocks[b1].insts = vec![
        Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(Reg::v(z, 1)),
                Operand::r(Reg::v(y, 1)),
                Operand::r(Reg::v(x, 1)),
                Operand::rz(),
            ],
            vec![0],
        ),
        mov(Reg::v(y, 1), Operand::r(Reg::v(z, 1))),
        Inst::new(
            op!("ISETP.GE.AND"),
            vec![
                Operand::r(Reg::v(p, 1)),
                Operand::pt(),
                Operand::r(Reg::v(y, 1)),
                Operand::r(Reg::v(x, 1)),
                Operand::pt(),
            ],
            vec![0],
        ),
        bra,
    ];
    f.blocks[b2].insts = vec![
        stg(Reg::v(a, 2), Reg::v(y, 1)),
        Inst::new(op!("EXIT"), vec![], vec![]),
    ];
    opt::optimize(&mut f, target::Profile::of(90).unwrap(), 3);
    expect_test::expect![[r#"
        func k
        bb0:
            LDC.64 a.0, c[0x0][0x210]
            MOV y, 0x5
        bb1:
            IADD3 z, y, 0x5, RZ
            MOV y, z
            ISETP.GE.AND p, PT, z, 0x5, PT
            @p BRA bb1
        bb2:
            STG.E desc[UR4][a.0.64], z
            EXIT
    "#]]
    .assert_eq(&text(&f));
}

/// A 64-bit value built from two halves, one written under a guard: facts of the guarded
/// half are dropped, the other half's copy is used.
#[test]
fn guarded_writes_kill_facts() {
    let mut f = Func::new("k");
    let b0 = f.new_block();
    f.order = vec![b0];
    let a = f.new_vreg(Class::R, 2, "a");
    let d = f.new_vreg(Class::R, 2, "d");
    let p = f.new_vreg(Class::P, 1, "p");
    let mut guarded = mov(Reg::part(d, 1), Operand::Imm(7));
    guarded.guard = Some(Guard {
        pred: Reg::v(p, 1),
        negated: true,
    });
    f.blocks[b0].insts = vec![
        Inst::new(
            op!("LDC.64"),
            vec![
                Operand::r(Reg::v(a, 2)),
                Operand::Const {
                    bank: 0,
                    offset: 0x210,
                },
            ],
            vec![0],
        ),
        Inst::new(
            op!("ISETP.GE.AND"),
            vec![
                Operand::r(Reg::v(p, 1)),
                Operand::pt(),
                Operand::r(Reg::part(a, 0)),
                Operand::rz(),
                Operand::pt(),
            ],
            vec![0],
        ),
        mov(Reg::part(d, 0), Operand::r(Reg::part(a, 0))),
        mov(Reg::part(d, 1), Operand::r(Reg::part(a, 1))),
        guarded,
        stg(Reg::v(a, 2), Reg::part(d, 0)),
        stg(Reg::v(a, 2), Reg::part(d, 1)),
        Inst::new(op!("EXIT"), vec![], vec![]),
    ];
    opt::optimize(&mut f, target::Profile::of(90).unwrap(), 3);
    let t = text(&f);
    // The unguarded half's fact is used: its copy (`a.0`) or, where the table has the
    // constant-operand forms, the constant it was loaded from.
    assert!(
        t.contains("STG.E desc[UR4][a.0.64], a.0")
            || (t.contains("MOV d.0, c[0x0][0x210]") && t.contains("STG.E desc[UR4][a.0.64], d.0")),
        "{t}"
    );
    // The guarded half's facts are dropped: it is stored as written.
    assert!(t.contains("STG.E desc[UR4][a.0.64], d.1"), "{t}");
    assert!(!t.contains("STG.E desc[UR4][a.0.64], a.1"), "{t}");
    assert!(t.contains("@!p MOV d.1, 0x7"), "{t}");
}

/// Dead pure instructions go; stores, and instructions writing fixed registers, stay.
#[test]
fn dead_code() {
    let mut f = Func::new("k");
    let b0 = f.new_block();
    f.order = vec![b0];
    let a = f.new_vreg(Class::R, 2, "a");
    let x = f.new_vreg(Class::R, 1, "x");
    let dead = f.new_vreg(Class::R, 1, "dead");
    let sp = Reg::Phys {
        class: Class::R,
        index: 1,
        width: 1,
    };
    f.blocks[b0].insts = vec![
        mov(
            sp,
            Operand::Const {
                bank: 0,
                offset: 0x28,
            },
        ),
        Inst::new(
            op!("LDC.64"),
            vec![
                Operand::r(Reg::v(a, 2)),
                Operand::Const {
                    bank: 0,
                    offset: 0x210,
                },
            ],
            vec![0],
        ),
        Inst::new(
            op!("S2R"),
            vec![Operand::r(Reg::v(x, 1)), Operand::Special("SR_TID.X")],
            vec![0],
        ),
        Inst::new(
            op!("IADD3"),
            vec![
                Operand::r(Reg::v(dead, 1)),
                Operand::r(Reg::v(x, 1)),
                Operand::r(Reg::v(x, 1)),
                Operand::rz(),
            ],
            vec![0],
        ),
        stg(Reg::v(a, 2), Reg::v(x, 1)),
        Inst::new(op!("EXIT"), vec![], vec![]),
    ];
    opt::optimize(&mut f, target::Profile::of(90).unwrap(), 3);
    expect_test::expect![[r#"
        func k
        bb0:
            MOV R1, c[0x0][0x28]
            LDC.64 a.0, c[0x0][0x210]
            S2R x, SR_TID.X
            STG.E desc[UR4][a.0.64], x
            EXIT
    "#]]
    .assert_eq(&text(&f));
}

/// -O0 leaves the code as lowered.
#[test]
fn level_zero_does_nothing() {
    let mut f = Func::new("k");
    let b0 = f.new_block();
    f.order = vec![b0];
    let x = f.new_vreg(Class::R, 1, "x");
    f.blocks[b0].insts = vec![
        mov(Reg::v(x, 1), Operand::Imm(1)),
        Inst::new(op!("EXIT"), vec![], vec![]),
    ];
    let before = text(&f);
    opt::optimize(&mut f, target::Profile::of(90).unwrap(), 0);
    assert_eq!(before, text(&f));
}

fn alu(op: Opcode, d: Reg, srcs: Vec<Operand>) -> Inst {
    let mut ops = vec![Operand::r(d)];
    ops.extend(srcs);
    Inst::new(op, ops, vec![0])
}

/// `mul.lo` + `add` and `shl` + `add` as nvcc writes them: one `IMAD` and one `LEA`, with the
/// parameter compared against through a mirrored `ISETP` (sm_90 has no `c[][]` operand there;
/// the uniform register must be the second input).
#[test]
fn products_and_shifts_fold_into_their_adds() {
    let mut f = Func::new("k");
    let b0 = f.new_block();
    f.order = vec![b0];
    let a = f.new_vreg(Class::R, 2, "a");
    let n = f.new_vreg(Class::R, 1, "n");
    let t = f.new_vreg(Class::R, 1, "t");
    let x = f.new_vreg(Class::R, 1, "x");
    let m = f.new_vreg(Class::R, 1, "m");
    let s = f.new_vreg(Class::R, 1, "s");
    let k = f.new_vreg(Class::R, 1, "k");
    let d = f.new_vreg(Class::R, 1, "d");
    let e = f.new_vreg(Class::R, 1, "e");
    let p = f.new_vreg(Class::P, 1, "p");
    let r = |v| Operand::r(Reg::v(v, 1));
    f.blocks[b0].insts = vec![
        Inst::new(
            op!("LDC.64"),
            vec![
                Operand::r(Reg::v(a, 2)),
                Operand::Const {
                    bank: 0,
                    offset: 0x210,
                },
            ],
            vec![0],
        ),
        Inst::new(
            op!("LDC"),
            vec![
                Operand::r(Reg::v(n, 1)),
                Operand::Const {
                    bank: 0,
                    offset: 0x218,
                },
            ],
            vec![0],
        ),
        alu(op!("S2R"), Reg::v(t, 1), vec![Operand::Special("SR_TID.X")]),
        alu(
            op!("S2R"),
            Reg::v(x, 1),
            vec![Operand::Special("SR_CTAID.X")],
        ),
        alu(op!("IMAD"), Reg::v(m, 1), vec![r(x), r(t), Operand::rz()]),
        alu(op!("IADD3"), Reg::v(d, 1), vec![r(m), r(t), Operand::rz()]),
        mov(Reg::v(k, 1), Operand::Imm(4)),
        alu(
            op!("SHF.L.U32"),
            Reg::v(s, 1),
            vec![r(d), r(k), Operand::rz()],
        ),
        alu(op!("IADD3"), Reg::v(e, 1), vec![r(x), r(s), Operand::rz()]),
        Inst::new(
            op!("ISETP.LT.U32.AND"),
            vec![r(p), Operand::pt(), r(n), r(e), Operand::pt()],
            vec![0],
        ),
        Inst::new(op!("SEL"), vec![r(d), r(e), r(d), r(p)], vec![0]),
        stg(Reg::v(a, 2), Reg::v(d, 1)),
        Inst::new(op!("EXIT"), vec![], vec![]),
    ];
    opt::optimize(&mut f, target::Profile::of(90).unwrap(), 3);
    expect_test::expect![[r#"
        func k
        bb0:
            LDC.64 a.0, c[0x0][0x210]
            S2R t, SR_TID.X
            S2R x, SR_CTAID.X
            IMAD d, x, t, t
            LEA e, d, x, 0x4
            ISETP.GT.U32.AND p, PT, e, c[0x0][0x218], PT
            SEL d~1, e, d, p
            STG.E desc[UR4][a.0.64], d~1
            EXIT
    "#]]
    .assert_eq(&text(&f));
}

/// `d = s; s = ...; use d`: the use keeps `d` (its copy of the old `s`).
#[test]
fn writing_a_source_kills_its_copies() {
    let mut f = Func::new("k");
    let b0 = f.new_block();
    f.order = vec![b0];
    let a = f.new_vreg(Class::R, 2, "a");
    let s = f.new_vreg(Class::R, 1, "s");
    let d = f.new_vreg(Class::R, 1, "d");
    f.blocks[b0].insts = vec![
        Inst::new(
            op!("LDC.64"),
            vec![
                Operand::r(Reg::v(a, 2)),
                Operand::Const {
                    bank: 0,
                    offset: 0x210,
                },
            ],
            vec![0],
        ),
        alu(op!("S2R"), Reg::v(s, 1), vec![Operand::Special("SR_TID.X")]),
        mov(Reg::v(d, 1), Operand::r(Reg::v(s, 1))),
        alu(
            op!("S2R"),
            Reg::v(s, 1),
            vec![Operand::Special("SR_CTAID.X")],
        ),
        stg(Reg::v(a, 2), Reg::v(d, 1)),
        stg(Reg::v(a, 2), Reg::v(s, 1)),
        Inst::new(op!("EXIT"), vec![], vec![]),
    ];
    opt::optimize(&mut f, target::Profile::of(90).unwrap(), 3);
    // `s` is two values (`opt::webs`): the thread index keeps the name, the block index is
    // `s~1`. The first store stores the thread index (through `d` or directly), the second
    // the block index.
    let t = text(&f);
    let stores: Vec<&str> = t.lines().filter(|l| l.contains("STG")).collect();
    let tid = t
        .lines()
        .find(|l| l.contains("SR_TID.X"))
        .and_then(|l| l.split_whitespace().nth(1))
        .map(|r| r.trim_end_matches(','))
        .unwrap_or_else(|| panic!("{t}"));
    assert!(
        stores[0].ends_with(&format!(", {tid}")) || stores[0].ends_with(", d"),
        "{t}"
    );
    assert!(stores[1].ends_with(", s~1"), "{t}");
}
